// SPDX-License-Identifier: Apache-2.0
#include "unwind/table_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unwind/delta_pages.h"
#include "util/stat_memo.h"
#include "util/clock.h"
#include "util/log.h"

#define CACHE_MAGIC "OPTABLE1"
/* 2: the checksum (cache_sum) in place of SHA-256; files of 1 are refused and replaced. */
#define CACHE_VERSION 2
/* The version is in the name: agents of two versions on one host (an upgrade, a
 * build beside another) keep their own files instead of refusing and removing
 * each other's; the old ones are trimmed like any file (least recently used). */
#define CACHE_SUFFIX	 ".tb2"
#define CACHE_TMP_PREFIX ".tmp-"
#define CACHE_DIGEST_LEN 32
/* A table read back touches its file (for the trim order) at most this often. */
#define TABLE_CACHE_TOUCH_SEC 600
/* More deltas than any file has (libLLVM-14: 0.8M): a header past it is refused
 * before anything is allocated. */
#define CACHE_MAX_DELTAS (64ull << 20)
/* Deltas read at once (128 KiB): a block is digested and checked while it is
 * in the CPU's cache. */
#define CACHE_READ_DELTAS 8192u

/* The file: this header, then n struct stack_delta. Fixed-width, host order (the
 * cache is this machine's). */
struct cache_header {
	char magic[8];
	uint32_t version;
	uint32_t delta_size; /* sizeof(struct stack_delta) */
	uint8_t id[STACK_DELTAS_ID_LEN];
	uint64_t n;
	uint64_t stats[4]; /* cies, fdes, unsupported, bad_entries */
	/* The checksum (cache_sum) of this header (with it zeroed) and the deltas. */
	uint8_t digest[CACHE_DIGEST_LEN];
};
_Static_assert(sizeof(struct cache_header) == 104, "cache header layout");
_Static_assert(sizeof(struct stack_delta) == 16, "delta layout");

struct table_cache {
	int dir_fd;
	uint64_t max_bytes;
	int refs;
	struct table_cache_stats stats; /* updated with __atomic builtins */
};

#define STAT_ADD(tc, field, v) __atomic_fetch_add(&(tc)->stats.field, (v), __ATOMIC_RELAXED)

void table_cache__name(const uint8_t id[STACK_DELTAS_ID_LEN], char buf[40])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < STACK_DELTAS_ID_LEN; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	memcpy(buf + 2 * STACK_DELTAS_ID_LEN, CACHE_SUFFIX, sizeof(CACHE_SUFFIX));
}

int table_cache__open(const char *dir, uint64_t max_bytes, struct table_cache **out)
{
	struct table_cache *tc = NULL;
	struct stat st;
	int fd, err;

	*out = NULL;
	/* Only the last component is created: the parent (/var/cache) is the system's. */
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOTDIR ? -ELOOP : -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	/* Anyone else able to write here could hand the unwinder any rules. */
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		err = -EPERM;
		goto cleanup;
	}
	tc = calloc(1, sizeof(*tc));
	if (!tc) {
		err = -ENOMEM;
		goto cleanup;
	}
	tc->dir_fd = fd;
	tc->max_bytes = max_bytes ? max_bytes : TABLE_CACHE_DEFAULT_BYTES;
	tc->refs = 1;
	*out = tc;
	return 0;
cleanup:
	close(fd);
	return err;
}

struct table_cache *table_cache__get(struct table_cache *tc)
{
	if (tc)
		__atomic_fetch_add(&tc->refs, 1, __ATOMIC_RELAXED);
	return tc;
}

void table_cache__put(struct table_cache *tc)
{
	if (!tc || __atomic_sub_fetch(&tc->refs, 1, __ATOMIC_ACQ_REL))
		return;
	close(tc->dir_fd);
	free(tc);
}

void table_cache__stats(const struct table_cache *tc, struct table_cache_stats *out)
{
	const uint64_t *src = (const uint64_t *)&tc->stats;
	uint64_t *dst = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/*
 * The files' checksum: four 64-bit lanes, word i of the file (the header with
 * its checksum zeroed, then the deltas, as host-order u64s) mixed into lane
 * i % 4 by a multiply and a rotation, each lane then avalanched with the word
 * count: 32 bytes. It is there against torn, truncated or damaged files; the
 * folder's owner and mode are what keep everyone else out (see
 * table_cache__open), so a cryptographic digest bought nothing more, and
 * SHA-256 cost 9 ns a byte here, 66 ms for cc1's table on each first read of
 * a run: most of a cold start's table work.
 */
struct cache_sum {
	uint64_t lane[4];
	uint64_t n; /* words so far */
};

#define SUM_P1 0x9e3779b185ebca87ull
#define SUM_P2 0xc2b2ae3d27d4eb4full
#define SUM_P3 0x165667b19e3779f9ull

_Static_assert(sizeof(struct cache_header) % 8 == 0 && sizeof(struct stack_delta) % 8 == 0,
	       "the checksum reads whole words");

static inline uint64_t sum_round(uint64_t acc, uint64_t w)
{
	acc += w * SUM_P2;
	acc = (acc << 31) | (acc >> 33);
	return acc * SUM_P1;
}

/* Adds len bytes (a multiple of 8) of data. */
static void sum_update(struct cache_sum *s, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t words = len / 8, i = 0;
	uint64_t w[4];

	for (; i < words && (s->n & 3); i++, s->n++) {
		memcpy(w, p + 8 * i, 8);
		s->lane[s->n & 3] = sum_round(s->lane[s->n & 3], w[0]);
	}
	/* Four independent lanes a step: the multiplies overlap. */
	for (; i + 4 <= words; i += 4, s->n += 4) {
		memcpy(w, p + 8 * i, sizeof(w));
		s->lane[0] = sum_round(s->lane[0], w[0]);
		s->lane[1] = sum_round(s->lane[1], w[1]);
		s->lane[2] = sum_round(s->lane[2], w[2]);
		s->lane[3] = sum_round(s->lane[3], w[3]);
	}
	for (; i < words; i++, s->n++) {
		memcpy(w, p + 8 * i, 8);
		s->lane[s->n & 3] = sum_round(s->lane[s->n & 3], w[0]);
	}
}

/* Starts the checksum of a file with header h (its checksum field zeroed). */
static void sum_begin(struct cache_sum *s, const struct cache_header *h)
{
	struct cache_header copy = *h;

	memset(copy.digest, 0, sizeof(copy.digest));
	s->lane[0] = SUM_P1 + SUM_P2;
	s->lane[1] = SUM_P2;
	s->lane[2] = 0;
	s->lane[3] = 0 - SUM_P1;
	s->n = 0;
	sum_update(s, &copy, sizeof(copy));
}

static void sum_end(const struct cache_sum *s, uint8_t digest[CACHE_DIGEST_LEN])
{
	for (int k = 0; k < 4; k++) {
		uint64_t x = s->lane[k] ^ (s->n * SUM_P3) ^ (uint64_t)k;

		x ^= x >> 33;
		x *= SUM_P2;
		x ^= x >> 29;
		x *= SUM_P3;
		x ^= x >> 32;
		memcpy(digest + 8 * k, &x, sizeof(x));
	}
}

/* The checksum of h (its own field zeroed) and the deltas into digest. */
static void cache_digest(const struct cache_header *h, const struct stack_delta *deltas, size_t n,
			 uint8_t digest[CACHE_DIGEST_LEN])
{
	struct cache_sum s;

	sum_begin(&s, h);
	if (n)
		sum_update(&s, deltas, n * sizeof(*deltas));
	sum_end(&s, digest);
}

/* Reads exactly len bytes at the file's position: 0, -EBADMSG when short, -errno. */
static int read_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EBADMSG;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Checks and reads the open cache file fd of id into out, or into leaves and
 * *stats when out is NULL (*mtime: the file's). 0, -EBADMSG or -errno. The digest is
 * computed once per run per unchanged file (util/stat_memo.h): a file read
 * back again with the same device, inode, size, mtime and ctime holds the
 * bytes checked the first time.
 */
static int read_table(int fd, const uint8_t id[STACK_DELTAS_ID_LEN], struct stack_delta_table *out,
		      struct delta_leaves *leaves, struct stack_delta_stats *stats,
		      struct timespec *mtime)
{
	uint8_t digest[CACHE_DIGEST_LEN], seen[CACHE_DIGEST_LEN];
	struct stack_delta *deltas = NULL, *block, prev = {0};
	struct delta_leaves l = {0};
	struct stat_memo_key before, after;
	struct cache_sum sum;
	struct cache_header h;
	bool check;
	struct stat st;
	bool keyed;
	int err;

	if (fstat(fd, &st))
		return -errno;
	*mtime = st.st_mtim;
	keyed = stat_memo__key(fd, STAT_MEMO_CACHE_DIGEST, &before);
	/* Ours alone: a file another user could have written (hard-linked in) is not. */
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) ||
	    st.st_nlink != 1 || (uint64_t)st.st_size < sizeof(h))
		return -EBADMSG;
	err = read_all(fd, &h, sizeof(h));
	if (err)
		return err;
	if (memcmp(h.magic, CACHE_MAGIC, sizeof(h.magic)) || h.version != CACHE_VERSION ||
	    h.delta_size != sizeof(struct stack_delta) || memcmp(h.id, id, STACK_DELTAS_ID_LEN) ||
	    h.n > CACHE_MAX_DELTAS ||
	    (uint64_t)st.st_size != sizeof(h) + h.n * sizeof(struct stack_delta))
		return -EBADMSG;
	/* The checksum is checked when this run has not seen this very file checked. */
	check = !keyed || !stat_memo__find(&before, seen, sizeof(seen)) ||
		memcmp(seen, h.digest, sizeof(seen));
	if (check)
		sum_begin(&sum, &h);
	if (h.n) {
		/*
		 * The deltas whole, or (leaves) one block at a time laid out as
		 * leaves: 16 bytes a delta becomes 6 on the worker (issue 22).
		 */
		deltas = malloc((out ? h.n : CACHE_READ_DELTAS) * sizeof(*deltas));
		if (!deltas) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (!out) {
			err = delta_leaves__init(&l, h.n);
			if (err)
				goto cleanup;
		}
	}
	/*
	 * Block by block, each digested and its order checked (the delta search
	 * relies on it; a digest only says the bytes are the ones written) right
	 * after its read, while it is still in the CPU's cache: a table read whole
	 * and then walked twice went to memory three times (libLLVM's is 15 MiB).
	 */
	for (uint64_t at = 0; at < h.n; at += CACHE_READ_DELTAS) {
		uint64_t k = h.n - at < CACHE_READ_DELTAS ? h.n - at : CACHE_READ_DELTAS;

		block = out ? &deltas[at] : deltas;
		err = read_all(fd, block, k * sizeof(*deltas));
		if (err)
			goto cleanup;
		if (check)
			sum_update(&sum, block, k * sizeof(*deltas));
		if (at && block[0].addr <= prev.addr) {
			err = -EBADMSG;
			goto cleanup;
		}
		for (uint64_t i = 1; i < k; i++) {
			if (block[i].addr <= block[i - 1].addr) {
				err = -EBADMSG;
				goto cleanup;
			}
		}
		prev = block[k - 1];
		if (!out) {
			err = delta_leaves__add(&l, block, k);
			if (err)
				goto cleanup;
		}
	}
	if (check) {
		sum_end(&sum, digest);
		if (memcmp(digest, h.digest, sizeof(digest))) {
			err = -EBADMSG;
			goto cleanup;
		}
		/* Remembered only when nothing changed while it was read. */
		if (keyed && stat_memo__key(fd, STAT_MEMO_CACHE_DIGEST, &after) &&
		    !memcmp(&before, &after, sizeof(before)))
			stat_memo__add(&before, digest, sizeof(digest));
	}
	if (!out) {
		free(deltas);
		delta_leaves__finish(&l);
		*leaves = l;
	} else {
		out->deltas = deltas;
		out->n = h.n;
		stats = &out->stats;
	}
	stats->cies = h.stats[0];
	stats->fdes = h.stats[1];
	stats->unsupported = h.stats[2];
	stats->bad_entries = h.stats[3];
	if (!out)
		return 0;
	memcpy(out->id, id, STACK_DELTAS_ID_LEN);
	out->has_id = true;
	return 0;
cleanup:
	delta_leaves__free(&l);
	free(deltas);
	return err;
}

/* table_cache__load() into out, or into leaves and *stats when out is NULL. */
static int load(struct table_cache *tc, const uint8_t id[STACK_DELTAS_ID_LEN],
		struct stack_delta_table *out, struct delta_leaves *leaves,
		struct stack_delta_stats *stats)
{
	uint64_t start = clock__now_ns();
	struct timespec mtime = {0}, now;
	char name[40];
	int fd, err;

	if (out)
		memset(out, 0, sizeof(*out));
	else
		memset(leaves, 0, sizeof(*leaves));
	table_cache__name(id, name);
	/* O_NONBLOCK: a FIFO put here would not hold the worker (it is refused next). */
	fd = openat(tc->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT) {
			STAT_ADD(tc, misses, 1);
			return err;
		}
		if (err != -ELOOP) {
			STAT_ADD(tc, errors, 1);
			return err;
		}
		err = -EBADMSG; /* a symlink */
	} else {
		err = read_table(fd, id, out, leaves, stats, &mtime);
		close(fd);
	}
	if (err == -EBADMSG) {
		STAT_ADD(tc, refused, 1);
		pr_info("table cache: %s refused (not a table this cache wrote), removed", name);
		/* Removes the name (a symlink itself, not its target). */
		unlinkat(tc->dir_fd, name, 0);
		return err;
	}
	if (err) {
		STAT_ADD(tc, errors, 1);
		return err;
	}
	/*
	 * Recently used: kept the longest when the folder is trimmed. Touched at
	 * most every TABLE_CACHE_TOUCH_SEC: a touch changes the file's ctime, so
	 * touching on every read would make each read check the digest again.
	 */
	if (!clock_gettime(CLOCK_REALTIME, &now) &&
	    (now.tv_sec < mtime.tv_sec || now.tv_sec - mtime.tv_sec >= TABLE_CACHE_TOUCH_SEC))
		utimensat(tc->dir_fd, name, NULL, AT_SYMLINK_NOFOLLOW);
	STAT_ADD(tc, hits, 1);
	STAT_ADD(tc, read_ns, clock__now_ns() - start);
	return 0;
}

int table_cache__load(struct table_cache *tc, const uint8_t id[STACK_DELTAS_ID_LEN],
		      struct stack_delta_table *out)
{
	return load(tc, id, out, NULL, NULL);
}

int table_cache__load_leaves(struct table_cache *tc, const uint8_t id[STACK_DELTAS_ID_LEN],
			     struct delta_leaves *out, struct stack_delta_stats *stats)
{
	return load(tc, id, NULL, out, stats);
}

uint64_t table_cache__load_bytes(struct table_cache *tc, const uint8_t id[STACK_DELTAS_ID_LEN])
{
	char name[40];
	struct stat st;

	table_cache__name(id, name);
	if (fstatat(tc->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < sizeof(struct cache_header))
		return 0;
	return (uint64_t)st.st_size - sizeof(struct cache_header);
}

uint64_t table_cache__load_leaves_bytes(struct table_cache *tc,
					const uint8_t id[STACK_DELTAS_ID_LEN])
{
	uint64_t bytes = table_cache__load_bytes(tc, id);

	/* Its leaves, and the block read into beside them. */
	return bytes ? delta_leaves__bytes(bytes / sizeof(struct stack_delta)) +
			   CACHE_READ_DELTAS * sizeof(struct stack_delta)
		     : 0;
}

struct cache_entry {
	char name[64];
	uint64_t size;
	struct timespec mtime;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return 0;
}

/* Removes the least recently used tables while the folder holds more than its
 * bound (keep: the name just written, removed last of all). */
static void trim(struct table_cache *tc, const char *keep)
{
	struct cache_entry *entries = NULL, *grown;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;
	DIR *d;
	int fd = openat(tc->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;
		size_t len = strlen(de->d_name);

		if (len >= sizeof(entries->name) || de->d_name[0] == '.' ||
		    fstatat(tc->dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			/* A temporary file a killed writer left: gone after ten minutes. */
			if (!strncmp(de->d_name, CACHE_TMP_PREFIX, strlen(CACHE_TMP_PREFIX)) &&
			    !fstatat(tc->dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
			    st.st_mtim.tv_sec + 600 < time(NULL))
				unlinkat(tc->dir_fd, de->d_name, 0);
			continue;
		}
		total += (uint64_t)st.st_size;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			grown = realloc(entries, cap * sizeof(*entries));
			if (!grown)
				goto cleanup;
			entries = grown;
		}
		memcpy(entries[n].name, de->d_name, len + 1);
		entries[n].size = (uint64_t)st.st_size;
		entries[n].mtime = st.st_mtim;
		/* The new table goes last whatever its clock says. */
		if (!strcmp(de->d_name, keep))
			entries[n].mtime.tv_sec = INT64_MAX;
		n++;
	}
	if (total <= tc->max_bytes)
		goto cleanup;
	qsort(entries, n, sizeof(*entries), entry_cmp);
	for (size_t i = 0; i < n && total > tc->max_bytes; i++) {
		if (unlinkat(tc->dir_fd, entries[i].name, 0))
			continue;
		total -= entries[i].size;
		STAT_ADD(tc, evicted, 1);
	}
cleanup:
	free(entries);
	closedir(d);
}

int table_cache__store(struct table_cache *tc, const struct stack_delta_table *t)
{
	char name[40], tmp[64];
	struct cache_header h = {0};
	unsigned int rnd;
	int fd = -1, err;

	if (!t->has_id)
		return -EINVAL;
	if (sizeof(h) + t->n * sizeof(*t->deltas) > tc->max_bytes)
		return -EFBIG;
	memcpy(h.magic, CACHE_MAGIC, sizeof(h.magic));
	h.version = CACHE_VERSION;
	h.delta_size = sizeof(struct stack_delta);
	memcpy(h.id, t->id, STACK_DELTAS_ID_LEN);
	h.n = t->n;
	h.stats[0] = t->stats.cies;
	h.stats[1] = t->stats.fdes;
	h.stats[2] = t->stats.unsupported;
	h.stats[3] = t->stats.bad_entries;
	cache_digest(&h, t->deltas, t->n, h.digest);
	table_cache__name(t->id, name);
	/* A name no one else uses (two workers may store the same table at once):
	 * O_EXCL never opens an existing file or follows a symlink. */
	for (int tries = 0;; tries++) {
		rnd = (unsigned int)(clock__now_ns() ^ ((uint64_t)gettid() << 20)) +
		      (unsigned int)tries;
		snprintf(tmp, sizeof(tmp), CACHE_TMP_PREFIX "%08x-%s", rnd, name);
		fd = openat(tc->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0)
			break;
		if (errno != EEXIST || tries == 16) {
			err = -errno;
			goto cleanup;
		}
	}
	err = write_all(fd, &h, sizeof(h));
	if (!err && t->n)
		err = write_all(fd, t->deltas, t->n * sizeof(*t->deltas));
	if (!err && close(fd))
		err = -errno;
	fd = -1;
	/* Replaces whatever has the name (a symlink is replaced, not followed). */
	if (!err && renameat(tc->dir_fd, tmp, tc->dir_fd, name))
		err = -errno;
	if (err) {
		unlinkat(tc->dir_fd, tmp, 0);
		goto cleanup;
	}
	STAT_ADD(tc, stores, 1);
	trim(tc, name);
cleanup:
	if (fd >= 0)
		close(fd);
	if (err)
		STAT_ADD(tc, errors, 1);
	return err;
}
