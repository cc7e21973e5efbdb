// SPDX-License-Identifier: Apache-2.0
#include "export/output_set.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"

/* How long to wait for another omniprof writing the same folder. */
#define LOCK_WAIT_MS 10000
/* Bound on the entries looked at when removing leftovers. */
#define MAX_SCAN_ENTRIES 100000

/* ---- who may own the folder ------------------------------------------------ */

/* The invoking user: SUDO_UID/SUDO_GID when root runs through sudo, else us. */
static void invoking_user(uid_t *uid, gid_t *gid)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	char *end;
	unsigned long u, g;

	*uid = geteuid();
	*gid = getegid();
	if (*uid || !su || !sg)
		return;
	u = strtoul(su, &end, 10);
	if (*su == '\0' || *end || u == 0 || u >= UINT32_MAX)
		return;
	g = strtoul(sg, &end, 10);
	if (*sg == '\0' || *end || g >= UINT32_MAX)
		return;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
}

static bool trusted_owner(uid_t owner)
{
	uid_t uid;
	gid_t gid;

	invoking_user(&uid, &gid);
	return owner == 0 || owner == geteuid() || owner == uid;
}

/* ---- opening the folder ---------------------------------------------------- */

static void refuse(const char *path, const char *why)
{
	pr_err("cannot write to output folder '%s': %s (choose another with -o DIR)", path, why);
}

/*
 * A symlink on the way to the folder is followed only when root or the
 * invoking user made it: one planted by another user in a folder they can
 * write must not send root's files elsewhere.
 */
static int check_prefixes(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);
	struct stat st;

	memcpy(buf, path, len + 1);
	for (size_t i = 1; i < len; i++) {
		if (buf[i] != '/' || buf[i - 1] == '/')
			continue;
		buf[i] = '\0';
		if (!lstat(buf, &st) && S_ISLNK(st.st_mode) && !trusted_owner(st.st_uid)) {
			pr_err("cannot write to output folder '%s': '%s' is a symbolic link owned "
			       "by uid %u (choose another with -o DIR)",
			       path, buf, (unsigned)st.st_uid);
			return -EPERM;
		}
		buf[i] = '/';
	}
	return 0;
}

/* Creates the missing parents of path (mode 0755). 0 or -errno. */
static int mkdir_parents(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	memcpy(buf, path, len + 1);
	for (size_t i = 1; i < len; i++) {
		if (buf[i] != '/' || buf[i - 1] == '/')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		buf[i] = '/';
	}
	return 0;
}

int output_dir__open(struct output_dir *d, const char *path, unsigned flags)
{
	bool created = false;
	struct stat st;
	size_t len;
	uid_t uid;
	gid_t gid;
	int fd = -1, err;

	d->fd = -1;
	d->path = NULL;
	len = path ? strlen(path) : 0;
	if (len == 0 || len >= PATH_MAX) {
		refuse(path ? path : "", "empty or too long a path");
		return -ENAMETOOLONG;
	}
	err = check_prefixes(path);
	if (err)
		return err;
	if (flags & OUTPUT_DIR_CREATE) {
		err = mkdir_parents(path);
		if (!err && mkdir(path, 0755) == 0)
			created = true;
		else if (!err && errno != EEXIST)
			err = -errno;
		if (err) {
			refuse(path, strerror(-err));
			return err;
		}
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (!lstat(path, &st) && S_ISLNK(st.st_mode))
			refuse(path, "it is a symbolic link; name the folder itself");
		else
			refuse(path, strerror(-err));
		return err == -ELOOP ? -ENOTDIR : err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		refuse(path, strerror(-err));
		goto cleanup;
	}
	invoking_user(&uid, &gid);
	/* Only a folder this call made (still ours, as mkdir left it) is handed over. */
	if (created && st.st_uid == geteuid()) {
		if (fchmod(fd, 0755) ||
		    ((st.st_uid != uid || st.st_gid != gid) && fchown(fd, uid, gid)) ||
		    fstat(fd, &st)) {
			err = -errno;
			refuse(path, strerror(-err));
			goto cleanup;
		}
	}
	if (!trusted_owner(st.st_uid)) {
		char why[128];

		snprintf(why, sizeof(why), "it belongs to uid %u, not to root or the invoking user",
			 (unsigned)st.st_uid);
		refuse(path, why);
		err = -EPERM;
		goto cleanup;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		refuse(path, "other users may write to it (group or other write permission)");
		err = -EPERM;
		goto cleanup;
	}
	d->path = strdup(path);
	if (!d->path) {
		err = -ENOMEM;
		refuse(path, "out of memory");
		goto cleanup;
	}
	d->fd = fd;
	fd = -1;
cleanup:
	if (fd >= 0)
		close(fd);
	return err;
}

void output_dir__close(struct output_dir *d)
{
	if (!d)
		return;
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	free(d->path);
	d->path = NULL;
}

/* ".omniprof-<kind><16 hex digits>" in buf. 0 or -errno. */
static int random_name(char *buf, size_t len, const char *prefix)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		return errno ? -errno : -EIO;
	snprintf(buf, len, "%s%016llx", prefix, (unsigned long long)r);
	return 0;
}

/* Creates a new file under a fresh random name. The fd, or -errno. */
static int create_tmp(int dirfd, char *name, size_t len)
{
	for (int tries = 0; tries < 8; tries++) {
		int fd, err = random_name(name, len, OUTPUT_TMP_PREFIX);

		if (err)
			return err;
		fd =
		    openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

int output_dir__probe(struct output_dir *d)
{
	char name[64];
	int fd = create_tmp(d->fd, name, sizeof(name));

	if (fd < 0) {
		refuse(d->path, strerror(-fd));
		return fd;
	}
	close(fd);
	unlinkat(d->fd, name, 0);
	return 0;
}

/* ---- writing --------------------------------------------------------------- */

static void report(const struct output_dir *d, const char *name, int err)
{
	pr_err("cannot write %s/%s: %s", d->path, name, strerror(-err));
}

int output_fd__stdio(int fd, int (*fn)(FILE *f, void *ctx), void *ctx)
{
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0), err;
	FILE *f;

	if (copy < 0)
		return -errno;
	f = fdopen(copy, "w");
	if (!f) {
		err = -errno;
		close(copy);
		return err;
	}
	errno = 0;
	err = fn(f, ctx);
	/* The exporters say -EIO for any stream error: keep the kernel's reason. */
	if (err == -EIO && errno)
		err = -errno;
	if (fflush(f) && !err)
		err = errno ? -errno : -EIO;
	if (ferror(f) && !err)
		err = errno ? -errno : -EIO;
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	return err;
}

/* Runs write on fd, then fsync and close, every step checked; fd is closed. */
static int finish_file(int fd, output_write_fn write, void *ctx)
{
	int err = write(fd, ctx);

	/* Data on disk before any name points at it, or a crash could show an empty file. */
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int output_file__write(struct output_dir *d, const char *name, output_write_fn write, void *ctx)
{
	char tmp[64];
	int fd, err;

	fd = create_tmp(d->fd, tmp, sizeof(tmp));
	if (fd < 0) {
		report(d, name, fd);
		return fd;
	}
	err = finish_file(fd, write, ctx);
	/* renameat replaces whatever the name was (a planted symlink included) without
	 * following it. */
	if (!err && renameat(d->fd, tmp, d->fd, name))
		err = -errno;
	if (!err && fsync(d->fd))
		err = -errno;
	if (err) {
		unlinkat(d->fd, tmp, 0);
		report(d, name, err);
	}
	return err;
}

/* ---- sets ------------------------------------------------------------------ */

static unsigned pause_ms(void)
{
	const char *v = getenv(OUTPUT_PAUSE_ENV);

	return v ? (unsigned)strtoul(v, NULL, 10) : 0;
}

/* Fault injection for the tests that kill a run between two steps. */
static void step(const char *what)
{
	unsigned ms = pause_ms();
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	if (!ms)
		return;
	fprintf(stderr, "omniprof-test: output step %s\n", what);
	fflush(stderr);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static bool is_gen_name(const char *s)
{
	size_t n = strlen(OUTPUT_SET_GEN_PREFIX);

	return !strncmp(s, OUTPUT_SET_GEN_PREFIX, n) && s[n] && !strchr(s, '/') &&
	       strcmp(s + n, ".") && strcmp(s + n, "..");
}

/* The generation ".omniprof-current" names, in buf ("" when none). */
static void current_gen(int dirfd, char *buf, size_t len)
{
	ssize_t n = readlinkat(dirfd, OUTPUT_SET_CURRENT, buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (!is_gen_name(buf))
		buf[0] = '\0';
}

/*
 * Removes one of our generation folders: only a real folder (O_NOFOLLOW)
 * that this user owns, only its plain entries. A link inside is removed,
 * never followed.
 */
static void remove_gen(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	struct stat st;
	DIR *dir;
	size_t seen = 0;

	if (fd < 0) {
		/* Not a folder (a stray file or link of that name): drop the name only. */
		if (errno == ENOTDIR || errno == ELOOP)
			unlinkat(dirfd, name, 0);
		return;
	}
	if (fstat(fd, &st) || st.st_uid != geteuid()) {
		close(fd);
		return;
	}
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while ((e = readdir(dir)) && seen++ < MAX_SCAN_ENTRIES) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		unlinkat(fd, e->d_name, 0);
	}
	closedir(dir);
	if (unlinkat(dirfd, name, AT_REMOVEDIR))
		pr_warn("could not remove old output generation %s: %s", name, strerror(errno));
}

/* Removes what killed runs left: temporaries and generations other than keep. */
static void clean_stale(int dirfd, const char *keep, const char *also_keep)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t seen = 0, n_tmp = strlen(OUTPUT_TMP_PREFIX);
	struct dirent *e;
	DIR *dir;

	if (fd < 0)
		return;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while ((e = readdir(dir)) && seen++ < MAX_SCAN_ENTRIES) {
		const char *s = e->d_name;

		if (!strncmp(s, OUTPUT_TMP_PREFIX, n_tmp) || !strcmp(s, ".omniprof-write-test") ||
		    !strcmp(s, "profile.pb.gz.tmp")) {
			/* unlinkat removes the name: a link is never followed. */
			unlinkat(dirfd, s, 0);
		} else if (is_gen_name(s) && strcmp(s, keep) && strcmp(s, also_keep)) {
			remove_gen(dirfd, s);
		}
	}
	closedir(dir);
}

/* Bounded wait for the folder's lock: another run may be writing there. */
static int lock_dir(int dirfd)
{
	for (int waited = 0;; waited += 50) {
		struct timespec ts = {0, 50 * 1000000L};

		if (!flock(dirfd, LOCK_EX | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK)
			return -errno;
		if (waited >= LOCK_WAIT_MS)
			return -EBUSY;
		nanosleep(&ts, NULL);
	}
}

/* Points name at target through a temporary link and renameat(): atomic, and a
 * planted link or file at name is replaced, never followed. 0 or -errno. */
static int replace_link(int dirfd, const char *target, const char *name)
{
	char tmp[64];
	int err = 0;

	for (int tries = 0; tries < 8; tries++) {
		err = random_name(tmp, sizeof(tmp), OUTPUT_TMP_PREFIX);
		if (err)
			return err;
		if (!symlinkat(target, dirfd, tmp))
			break;
		err = -errno;
		if (err != -EEXIST)
			return err;
	}
	if (err)
		return err;
	if (renameat(dirfd, tmp, dirfd, name)) {
		err = -errno;
		unlinkat(dirfd, tmp, 0);
	}
	return err;
}

/* Whether name already is the link "OUTPUT_SET_CURRENT/name". */
static bool link_in_place(int dirfd, const char *name, bool *missing)
{
	char want[PATH_MAX], got[PATH_MAX];
	ssize_t n = readlinkat(dirfd, name, got, sizeof(got) - 1);

	*missing = n < 0 && errno == ENOENT;
	if (n < 0)
		return false;
	got[n] = '\0';
	snprintf(want, sizeof(want), "%s/%s", OUTPUT_SET_CURRENT, name);
	return !strcmp(got, want);
}

static bool valid_name(const char *s)
{
	return s && *s && *s != '.' && !strchr(s, '/') && strlen(s) < NAME_MAX;
}

int output_set__write(struct output_dir *d, const struct output_item *items, size_t n)
{
	char gen[64], old[256], target[PATH_MAX];
	bool gen_made = false, missing;
	int genfd = -1, err = 0;
	const char *failed = NULL;
	struct stat st;

	for (size_t i = 0; i < n; i++)
		if (!valid_name(items[i].name))
			return -EINVAL;
	err = lock_dir(d->fd);
	if (err) {
		pr_err("cannot write to output folder '%s': %s", d->path,
		       err == -EBUSY ? "another omniprof is writing there" : strerror(-err));
		return err;
	}
	current_gen(d->fd, old, sizeof(old));
	step("clean");
	clean_stale(d->fd, old, "");

	for (int tries = 0; tries < 8; tries++) {
		err = random_name(gen, sizeof(gen), OUTPUT_SET_GEN_PREFIX);
		if (err)
			break;
		if (!mkdirat(d->fd, gen, 0755)) {
			gen_made = true;
			break;
		}
		err = -errno;
		if (err != -EEXIST)
			break;
	}
	if (!gen_made) {
		failed = gen;
		goto cleanup;
	}
	genfd = openat(d->fd, gen, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (genfd < 0 || fstat(genfd, &st) || st.st_uid != geteuid()) {
		err = genfd < 0 ? -errno : -EPERM;
		failed = gen;
		goto cleanup;
	}
	/* The folder's mode came through the umask: a reader must be able to enter it. */
	fchmod(genfd, 0755);

	/* 1. Every file, whole and on disk, in the new generation (invisible yet). */
	for (size_t i = 0; i < n; i++) {
		int fd;

		step(items[i].name);
		fd = openat(genfd, items[i].name,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		err = fd < 0 ? -errno : finish_file(fd, items[i].write, items[i].ctx);
		if (err) {
			failed = items[i].name;
			goto cleanup;
		}
	}
	if (fsync(genfd)) {
		err = -errno;
		failed = gen;
		goto cleanup;
	}

	/* 2. Names seen for the first time point at the current set before it exists:
	 * until the switch they dangle, which readers see as no set at all. */
	step("links");
	for (size_t i = 0; i < n; i++) {
		if (link_in_place(d->fd, items[i].name, &missing) || !missing)
			continue;
		snprintf(target, sizeof(target), "%s/%s", OUTPUT_SET_CURRENT, items[i].name);
		err = replace_link(d->fd, target, items[i].name);
		if (err) {
			failed = items[i].name;
			goto cleanup;
		}
	}

	/* 3. The switch: one rename moves every name to the new set. */
	step("switch");
	err = replace_link(d->fd, gen, OUTPUT_SET_CURRENT);
	if (!err && fsync(d->fd))
		err = -errno;
	if (err) {
		failed = OUTPUT_SET_CURRENT;
		goto cleanup;
	}
	gen_made = false; /* it is the current set now */

	/* 4. Names that held something else (a file of an older omniprof, a link someone
	 * planted) become our links; each rename replaces the name, never follows it. */
	step("relink");
	for (size_t i = 0; i < n; i++) {
		if (link_in_place(d->fd, items[i].name, &missing))
			continue;
		snprintf(target, sizeof(target), "%s/%s", OUTPUT_SET_CURRENT, items[i].name);
		err = replace_link(d->fd, target, items[i].name);
		if (err) {
			failed = items[i].name;
			goto cleanup;
		}
	}
	if (fsync(d->fd)) {
		err = -errno;
		failed = OUTPUT_SET_CURRENT;
		goto cleanup;
	}

	/* 5. The previous generation is no longer reachable. */
	step("remove-old");
	if (old[0] && strcmp(old, gen))
		remove_gen(d->fd, old);
cleanup:
	if (genfd >= 0)
		close(genfd);
	if (gen_made)
		remove_gen(d->fd, gen);
	if (err)
		report(d, failed ? failed : "", err);
	flock(d->fd, LOCK_UN);
	return err;
}
