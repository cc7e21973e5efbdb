// SPDX-License-Identifier: Apache-2.0
#include "symbol/debuginfo.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "util/hashmap.h"
#include "util/log.h"
#include "util/safe_open.h"
#include "util/clock.h"
#include "util/debuginfod_api.h"

/* An inflated copy larger than this is not written (libc6-dbg's libc: 10 MB). */
#define INFLATED_MAX_BYTES (256ull << 20)
/*
 * Nor past this many bytes written by one run: a target can name many debug
 * files (its own root's), and the folder is trimmed only when a table is
 * stored, so without it a hostile process could fill the disk between trims.
 * Past it a debug file is inflated in memory, as without a folder.
 */
#define INFLATED_RUN_BYTES (256ull << 20)

int debuginfo__init(struct debuginfo *d, const char *const *dirs, size_t n, bool use_debuginfod)
{
	memset(d, 0, sizeof(*d));
	d->inflate_dir_fd = -1;
	d->inflated_budget = INFLATED_RUN_BYTES;
	d->roots = calloc(n + 1, sizeof(*d->roots));
	if (!d->roots)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		d->roots[i] = strdup(dirs[i]);
		if (!d->roots[i])
			goto enomem;
		d->n_roots++;
	}
	d->roots[n] = strdup(DEBUGINFO_GLOBAL_DIR);
	if (!d->roots[n])
		goto enomem;
	d->n_roots++;
	d->use_debuginfod = use_debuginfod;
	return 0;
enomem:
	debuginfo__clear(d);
	return -ENOMEM;
}

void debuginfo__clear(struct debuginfo *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_roots; i++)
		free(d->roots[i]);
	free(d->roots);
	if (d->debuginfod) /* a client: the library is loaded */
		debuginfod_api__get(NULL)->end(d->debuginfod);
	if (d->inflate_dir_fd >= 0)
		close(d->inflate_dir_fd);
	memset(d, 0, sizeof(*d));
	d->inflate_dir_fd = -1;
}

/* The GNU build id of the ELF file open on fd into buf: its length, 0 when it has none. */
static size_t file_build_id(int fd, uint8_t *buf, size_t size)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t found = 0;

	if (!elf)
		return 0;
	while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		GElf_Nhdr nhdr;
		Elf_Data *data;
		size_t off = 0, next, name_off, desc_off;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		while (off < data->d_size &&
		       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
			off = next;
			if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + name_off, "GNU", 4) && nhdr.n_descsz &&
			    nhdr.n_descsz <= size) {
				memcpy(buf, (char *)data->d_buf + desc_off, nhdr.n_descsz);
				found = nhdr.n_descsz;
				break;
			}
		}
	}
	elf_end(elf);
	return found;
}

/*
 * Whether the CRC32 of the whole file is want. fd went through safe_open, so
 * the file is regular and at most SAFE_OPEN_MAX_ELF bytes; the loop still
 * stops at the size fstat gave, whatever the file does meanwhile.
 */
static bool file_crc_matches(struct debuginfo *d, int fd, uint32_t want)
{
	unsigned char buf[64 * 1024];
	uLong crc = crc32(0, Z_NULL, 0);
	struct stat st;
	off_t off = 0, size;

	if (fstat(fd, &st) || st.st_size < 0 || (uint64_t)st.st_size > SAFE_OPEN_MAX_ELF)
		return false;
	size = st.st_size;
	while (off < size) {
		size_t want_n =
		    (size_t)(size - off) < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		ssize_t n = pread(fd, buf, want_n, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false; /* shorter than it said: not the file the link names */
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	d->stats.crc_bytes += (uint64_t)off;
	return (uint32_t)crc == want;
}

/*
 * Checks the candidate open on fd (owned) is the right debug file. Returns
 * fd, or -ENOENT (the binary itself), -EBADF when it does not match.
 */
static int check_candidate(struct debuginfo *d, int fd, const char *candidate,
			   const struct debuginfo_query *q, bool check_crc)
{
	uint8_t got[64];
	struct stat st, self;
	size_t got_len;

	if (fstat(fd, &st) || (q->self_fd >= 0 && !fstat(q->self_fd, &self) &&
			       self.st_dev == st.st_dev && self.st_ino == st.st_ino)) {
		close(fd);
		return -ENOENT;
	}
	if (q->build_id_len) {
		got_len = file_build_id(fd, got, sizeof(got));
		if (got_len == q->build_id_len && !memcmp(got, q->build_id, got_len))
			return fd;
		/* A debuglink target without a build id is judged by its CRC. */
		if (!(got_len == 0 && check_crc && file_crc_matches(d, fd, q->crc)))
			goto mismatch;
		return fd;
	}
	if (check_crc && !file_crc_matches(d, fd, q->crc))
		goto mismatch;
	return fd;
mismatch:
	d->stats.mismatched++;
	pr_debug("%s: not the debug file of %s (build id or CRC differs)", candidate,
		 q->path ? q->path : "the binary");
	close(fd);
	return -EBADF;
}

/* A candidate under a folder the host controls (debug roots). */
static int try_host_candidate(struct debuginfo *d, const char *candidate,
			      const struct debuginfo_query *q, bool check_crc)
{
	/* Symlinks are followed: distributions link .build-id entries to the files. */
	int fd = safe_open(candidate, 0, SAFE_OPEN_MAX_ELF);

	if (fd < 0) {
		d->stats.refused += safe_open__is_refusal(fd);
		return -ENOENT;
	}
	return check_candidate(d, fd, candidate, q, check_crc);
}

/* A candidate next to the binary: inside the root the binary came from. */
static int try_root_candidate(struct debuginfo *d, int root_fd, const char *candidate,
			      const struct debuginfo_query *q)
{
	int fd = safe_open_in_root(root_fd, candidate, 0, SAFE_OPEN_MAX_ELF, NULL);

	if (fd < 0) {
		d->stats.refused += safe_open__is_refusal(fd);
		return -ENOENT;
	}
	return check_candidate(d, fd, candidate, q, true);
}

static int by_build_id(struct debuginfo *d, const struct debuginfo_query *q, char **found)
{
	char cand[PATH_MAX], hex[2 * 64 + 1];
	size_t len = q->build_id_len;

	if (len < 2 || len > 64)
		return -ENOENT;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", q->build_id[i]);
	for (size_t r = 0; r < d->n_roots; r++) {
		int fd;

		snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s.debug", d->roots[r], hex,
			 hex + 2);
		fd = try_host_candidate(d, cand, q, false);
		if (fd >= 0) {
			*found = strdup(cand);
			if (!*found) {
				close(fd);
				return -ENOMEM;
			}
			return fd;
		}
	}
	return -ENOENT;
}

/*
 * A .gnu_debuglink comes from the target's file: only a plain file name is
 * looked up, never a path, "." or "..", nor anything with control bytes.
 */
static bool debuglink_name_ok(const char *link)
{
	size_t n = link ? strlen(link) : 0;

	if (!n || n > NAME_MAX || strchr(link, '/') || strstr(link, ".."))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)link[i] < 0x20 || link[i] == 0x7f)
			return false;
	return strcmp(link, ".") != 0;
}

/* The binary's folder as the process named it: absolute, no "." or ".." components. */
static bool binary_dir_ok(const char *dir)
{
	return dir[0] == '/' && !strstr(dir, "/../") && !strstr(dir, "/./") &&
	       !(strlen(dir) >= 3 && !strcmp(dir + strlen(dir) - 3, "/..")) &&
	       !(strlen(dir) >= 2 && !strcmp(dir + strlen(dir) - 2, "/."));
}

/* The folder the binary's root is: /proc/PID/root, or the host's. An O_PATH fd or -errno. */
static int open_binary_root(const struct debuginfo_query *q)
{
	char root[64];
	int fd;

	if (q->root_pid > 0)
		snprintf(root, sizeof(root), "/proc/%d/root", q->root_pid);
	else
		snprintf(root, sizeof(root), "/");
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

static int by_debuglink(struct debuginfo *d, const struct debuginfo_query *q, char **found)
{
	char dir[PATH_MAX], cand[PATH_MAX];
	const char *link = q->debuglink, *path = q->path;
	const char *slash;
	int fd = -ENOENT, root_fd = -1;

	if (!link)
		return -ENOENT;
	if (!debuglink_name_ok(link)) {
		d->stats.bad_links++;
		if (!d->logged_bad_link) {
			d->logged_bad_link = true;
			pr_warn("ignoring a .gnu_debuglink that is not a plain file name (in %s); "
				"further ones are only counted",
				path ? path : "a binary");
		}
		return -ENOENT;
	}
	dir[0] = '\0';
	slash = path ? strrchr(path, '/') : NULL;
	if (slash) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		if (!binary_dir_ok(slash == path ? "/" : dir))
			slash = NULL;
	}
	if (slash) {
		root_fd = open_binary_root(q);
		if (root_fd < 0)
			d->stats.root_gone++; /* the process left: its folder is out of reach */
	}
	if (root_fd >= 0) {
		const char *const fmts[] = {"%s/%s", "%s/.debug/%s"};

		for (size_t i = 0; i < 2 && fd < 0; i++) {
			snprintf(cand, sizeof(cand), fmts[i], dir, link);
			fd = try_root_candidate(d, root_fd, cand, q);
		}
		close(root_fd);
	}
	for (size_t r = 0; r < d->n_roots && fd < 0; r++) {
		if (slash) {
			snprintf(cand, sizeof(cand), "%s%s/%s", d->roots[r], dir, link);
			fd = try_host_candidate(d, cand, q, true);
		}
		/* The --debug-dir roots may also be flat folders of debug files. */
		if (fd < 0 && r + 1 < d->n_roots) {
			snprintf(cand, sizeof(cand), "%s/%s", d->roots[r], link);
			fd = try_host_candidate(d, cand, q, true);
		}
	}
	if (fd >= 0) {
		*found = strdup(cand);
		if (!*found) {
			close(fd);
			return -ENOMEM;
		}
	}
	return fd >= 0 ? fd : -ENOENT;
}

/* Monotonic seconds. */
static double now_s(void)
{
	return (double)clock__now_ns() / 1e9;
}

/* The user's cap in an environment variable (a positive number), or def. */
static uint64_t env_cap(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return def;
	n = strtoull(v, &end, 10);
	return (*end || !n || n > def) ? def : n;
}

/*
 * Called by libdebuginfod while a request runs (about once a second even
 * when nothing arrives, and as data comes): a non-zero return aborts it.
 * a is what was received so far, b the announced size (0 unknown).
 */
static int debuginfod_progress(debuginfod_client *c, long a, long b)
{
	struct debuginfo *d = debuginfod_api__get(NULL)->get_user_data(c);

	if ((a > 0 && (uint64_t)a > d->dfd_max_bytes) ||
	    (b > 0 && (uint64_t)b > d->dfd_max_bytes)) {
		d->dfd_abort = DEBUGINFOD_ABORT_TOO_BIG;
		return 1;
	}
	if (now_s() > d->dfd_request_deadline) {
		d->dfd_abort = DEBUGINFOD_ABORT_TIMEOUT;
		return 1;
	}
	return 0;
}

static bool debuginfod_client_ready(struct debuginfo *d)
{
	const struct debuginfod_api *dfd;
	const char *why;

	if (d->debuginfod_tried)
		return d->debuginfod != NULL;
	d->debuginfod_tried = true;
	/*
	 * libdebuginfod waits DEBUGINFOD_TIMEOUT (90 s by default) for a server
	 * that accepted the connection and says nothing: ours unless the user
	 * chose one. It is read at each request, from the environment.
	 */
	if (!getenv(DEBUGINFOD_TIMEOUT_ENV_VAR))
		setenv(DEBUGINFOD_TIMEOUT_ENV_VAR, DEBUGINFOD_STALL_S_STR, 0);
	d->dfd_max_bytes = env_cap(DEBUGINFOD_MAXSIZE_ENV_VAR, DEBUGINFOD_MAX_BYTES);
	d->dfd_request_s = (double)env_cap(DEBUGINFOD_MAXTIME_ENV_VAR, DEBUGINFOD_REQUEST_S);
	d->dfd_total_deadline = now_s() + DEBUGINFOD_TOTAL_S;
	/* Opened here, not linked: most runs never ask a server (util/debuginfod_api.h). */
	dfd = debuginfod_api__get(&why);
	if (!dfd) {
		pr_warn("debuginfod: %s; debug files come from disk only", why);
		return false;
	}
	d->debuginfod = dfd->begin();
	if (!d->debuginfod) {
		pr_warn("debuginfod: cannot start a client; debug files come from disk only");
		return false;
	}
	dfd->set_user_data(d->debuginfod, d);
	dfd->set_progressfn(d->debuginfod, debuginfod_progress);
	return true;
}

/* Logs the first of each kind of debuginfod failure; the rest are counted. */
static void debuginfod_note(struct debuginfo *d, unsigned kind, const char *fmt, const char *arg)
{
	if (d->dfd_logged & kind)
		return;
	d->dfd_logged |= kind;
	pr_warn(fmt, arg);
}

static int by_debuginfod(struct debuginfo *d, const struct debuginfo_query *q, char **found)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	char hex[2 * 64 + 1];
	uint8_t got[64];
	size_t got_len;
	double now;
	int fd, err;

	if (!d->use_debuginfod || !q->build_id_len || q->build_id_len > 64 || !urls || !*urls)
		return -ENOENT;
	if (!debuginfod_client_ready(d))
		return -ENOENT;
	now = now_s();
	if (now >= d->dfd_total_deadline) {
		d->stats.debuginfod_skipped++;
		debuginfod_note(d, 1, "debuginfod: %s spent; further build ids are not asked for",
				"the time budget (" DEBUGINFOD_TOTAL_S_STR " s per run)");
		return -ENOENT;
	}
	d->dfd_abort = DEBUGINFOD_ABORT_NONE;
	d->dfd_request_deadline = now + d->dfd_request_s;
	if (d->dfd_request_deadline > d->dfd_total_deadline)
		d->dfd_request_deadline = d->dfd_total_deadline;
	fd = debuginfod_api__get(NULL)->find_debuginfo(d->debuginfod, q->build_id,
						       (int)q->build_id_len, found);
	for (size_t i = 0; i < q->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", q->build_id[i]);
	if (fd < 0) {
		if (d->dfd_abort == DEBUGINFOD_ABORT_TOO_BIG) {
			d->stats.debuginfod_too_big++;
			debuginfod_note(d, 2,
					"debuginfod: the debug file of %s is over the size cap "
					"(DEBUGINFOD_MAXSIZE); not downloaded",
					hex);
		} else if (d->dfd_abort == DEBUGINFOD_ABORT_TIMEOUT || fd == -ETIME ||
			   fd == -ETIMEDOUT) {
			d->stats.debuginfod_timeouts++;
			debuginfod_note(d, 4, "debuginfod: no answer in time for %s; given up",
					hex);
		} else {
			pr_debug("debuginfod: no debug file for %s: %s", hex, strerror(-fd));
		}
		return -ENOENT;
	}
	/* What came back must be a sane file and the debug file asked for. */
	err = safe_open__check(fd, d->dfd_max_bytes);
	got_len = err ? 0 : file_build_id(fd, got, sizeof(got));
	if (err || got_len != q->build_id_len || memcmp(got, q->build_id, got_len)) {
		d->stats.debuginfod_invalid++;
		debuginfod_note(d, 8,
				"debuginfod: the file served for %s is not its debug file; "
				"removed from the cache",
				hex);
		close(fd);
		/* libdebuginfod's own cache: nothing there may claim to be this build id. */
		if (*found && unlink(*found))
			pr_debug("debuginfod: cannot remove %s: %s", *found, strerror(errno));
		free(*found);
		*found = NULL;
		return -ENOENT;
	}
	return fd;
}

int debuginfo__find_by_build_id(struct debuginfo *d, const void *id, size_t len, char **found)
{
	struct debuginfo_query q = {.self_fd = -1, .build_id = id, .build_id_len = len};

	*found = NULL;
	return by_build_id(d, &q, found);
}

int debuginfo__find(struct debuginfo *d, const struct debuginfo_query *q, char **found)
{
	int fd;

	*found = NULL;
	fd = by_build_id(d, q, found);
	if (fd >= 0 || fd == -ENOMEM) {
		d->stats.by_build_id += fd >= 0;
		return fd;
	}
	fd = by_debuglink(d, q, found);
	if (fd >= 0 || fd == -ENOMEM) {
		d->stats.by_debuglink += fd >= 0;
		return fd;
	}
	fd = by_debuginfod(d, q, found);
	if (fd >= 0) {
		d->stats.by_debuginfod++;
		return fd;
	}
	d->stats.not_found++;
	return -ENOENT;
}

/* A copy read back is touched (for the folder's trim order) at most this often. */
#define INFLATED_TOUCH_SEC 600
#define INFLATED_SUFFIX	   ".dbg1"
#define INFLATED_TMP	   ".tmp-"

int debuginfo__set_inflate_dir(struct debuginfo *d, const char *dir)
{
	struct stat st;
	int fd;

	if (d->inflate_dir_fd >= 0)
		close(d->inflate_dir_fd);
	d->inflate_dir_fd = -1;
	if (!dir)
		return 0;
	/* Only the last component is created, as the table cache does. */
	if (mkdir(dir, 0700) && errno != EEXIST) {
		pr_debug("%s: %s (debug files inflated in memory)", dir, strerror(errno));
		return 0;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* Anyone else able to write here could hand libdw any DWARF. */
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		pr_debug("%s: not this user's own folder (debug files inflated in memory)", dir);
		close(fd);
		return 0;
	}
	d->inflate_dir_fd = fd;
	return 0;
}

/*
 * The size of the file open as elf once its compressed debug sections are
 * inflated, or 0 when it has none (or one that is not a debug section, or
 * a header that cannot be read: then libdw deals with the file as it is).
 */
static uint64_t inflated_size(Elf *elf, uint64_t file_size)
{
	uint64_t grow = 0;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	bool any = false;

	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		GElf_Chdr chdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_COMPRESSED))
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name || strncmp(name, ".debug_", 7) || !gelf_getchdr(scn, &chdr) ||
		    chdr.ch_size > INFLATED_MAX_BYTES)
			return 0;
		any = true;
		grow += chdr.ch_size + chdr.ch_addralign; /* alignment: libelf may pad */
	}
	return any ? file_size + grow : 0;
}

/*
 * The copy's name (42 bytes: the table cache's trim counts and removes only
 * names under 64): the build id's first 10 bytes, then a hash of the whole
 * build id and the debug file's device, inode, size and modification time.
 * A debug file found inside a target's root carries the build id its binary
 * claims: with the inode in the name, it cannot pass for (and have its copy
 * used as) the host's file of that build id.
 */
static void inflated_name(char *buf, size_t size, const uint8_t *id, size_t id_len,
			  const struct stat *st)
{
	const uint64_t fields[] = {st->st_dev, st->st_ino, (uint64_t)st->st_size,
				   (uint64_t)st->st_mtim.tv_sec, (uint64_t)st->st_mtim.tv_nsec};
	uint64_t h = hash_bytes(fields, sizeof(fields), hash_bytes(id, id_len, 0));
	size_t o = 0;

	for (size_t i = 0; i < id_len && i < 10 && o + 3 < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%02x", id[i]);
	snprintf(buf + o, size - o, "-%016llx" INFLATED_SUFFIX, (unsigned long long)h);
}

/* The copy called name, when it is one: an fd, or -1. */
static int open_inflated(struct debuginfo *d, const char *name, const uint8_t *id, size_t id_len)
{
	uint8_t got[64];
	struct stat st;
	int fd = openat(d->inflate_dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size > SAFE_OPEN_MAX_ELF ||
	    file_build_id(fd, got, sizeof(got)) != id_len || memcmp(got, id, id_len)) {
		close(fd);
		return -1;
	}
	if (st.st_mtim.tv_sec + INFLATED_TOUCH_SEC < time(NULL))
		futimens(fd, NULL); /* recently used: trimmed last */
	return fd;
}

/* Copies the whole file src (size bytes) to dst. 0 or -errno. */
static int copy_file(int src, int dst, uint64_t size)
{
	char buf[64 * 1024];
	uint64_t off = 0;

	while (off < size) {
		size_t want = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		ssize_t n = pread(src, buf, want, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		for (ssize_t w = 0; w < n;) {
			ssize_t k = write(dst, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return k < 0 ? -errno : -EIO;
			w += k;
		}
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * Writes the inflated copy of src (size bytes) to tmp (open for reading and
 * writing, empty): the file copied, then libelf inflates each compressed
 * section and lays the file out again. 0 or -errno.
 */
static int write_inflated(int src, int tmp, uint64_t size)
{
	Elf_Scn *scn = NULL;
	Elf *elf;
	int err = copy_file(src, tmp, size);

	if (err)
		return err;
	elf = elf_begin(tmp, ELF_C_RDWR, NULL);
	if (!elf)
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;

		if (gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_COMPRESSED) &&
		    elf_compress(scn, 0, 0) < 0) {
			err = -EINVAL;
			goto cleanup;
		}
	}
	if (elf_update(elf, ELF_C_WRITE) < 0)
		err = -EIO;
	else if (fdatasync(tmp))
		err = -errno;
cleanup:
	elf_end(elf);
	return err;
}

int debuginfo__inflated(struct debuginfo *d, int fd, const uint8_t *id, size_t id_len)
{
	char name[2 * 64 + 128], tmp[sizeof(name) + 32];
	uint64_t want;
	struct stat st;
	Elf *elf;
	int copy, out = -1, err;

	if (d->inflate_dir_fd < 0 || id_len < 2 || id_len > 64 || fstat(fd, &st))
		return fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	want = elf ? inflated_size(elf, (uint64_t)st.st_size) : 0;
	elf_end(elf);
	if (!want)
		return fd;
	inflated_name(name, sizeof(name), id, id_len, &st);
	copy = open_inflated(d, name, id, id_len);
	if (copy >= 0)
		goto found;
	if (want > INFLATED_MAX_BYTES || d->inflated_bytes > d->inflated_budget ||
	    want > d->inflated_budget - d->inflated_bytes) {
		err = -EFBIG;
		goto failed;
	}
	d->inflated_bytes += want;
	snprintf(tmp, sizeof(tmp), INFLATED_TMP "%d-%s", (int)getpid(), name);
	out = openat(d->inflate_dir_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (out < 0) {
		err = -errno;
		goto failed;
	}
	err = write_inflated(fd, out, (uint64_t)st.st_size);
	if (!err && renameat(d->inflate_dir_fd, tmp, d->inflate_dir_fd, name))
		err = -errno;
	close(out);
	if (err) {
		unlinkat(d->inflate_dir_fd, tmp, 0);
		goto failed;
	}
	d->stats.inflated_written++;
	copy = open_inflated(d, name, id, id_len);
	if (copy < 0) {
		err = -EBADF;
		goto failed;
	}
found:
	d->stats.inflated_used++;
	close(fd);
	return copy;
failed:
	d->stats.inflated_failed++;
	pr_debug("inflated copy %s: %s (inflated in memory)", name, strerror(-err));
	return fd;
}
