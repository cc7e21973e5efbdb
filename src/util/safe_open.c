// SPDX-License-Identifier: Apache-2.0
#include "util/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/log.h"

/* Symlinks followed in one in-root walk, as the kernel's MAXSYMLINKS. */
#define WALK_MAX_LINKS 40
/* Folders deep a walk may go (the stack of descriptors ".." returns to). */
#define WALK_MAX_DEPTH 256

static uint64_t n_opened;
static uint64_t n_refused[SAFE_OPEN_R__COUNT];
static bool logged[SAFE_OPEN_R__COUNT];

static const char *const reason_names[SAFE_OPEN_R__COUNT] = {
    [SAFE_OPEN_R_SYMLINK] = "a symlink",
    [SAFE_OPEN_R_DIR] = "a directory",
    [SAFE_OPEN_R_FIFO] = "a FIFO",
    [SAFE_OPEN_R_SOCKET] = "a socket",
    [SAFE_OPEN_R_DEVICE] = "a device",
    [SAFE_OPEN_R_PSEUDO_FS] = "on a pseudo filesystem (/proc, /sys, /dev, ...)",
    [SAFE_OPEN_R_TOO_BIG] = "larger than the size cap",
    [SAFE_OPEN_R_ESCAPE] = "a magic link or symlink loop inside a process's root",
    [SAFE_OPEN_R_MISMATCH] = "not the file the process maps (device/inode differ)",
};

const char *safe_open__reason_name(enum safe_open_reason r)
{
	return r < SAFE_OPEN_R__COUNT ? reason_names[r] : "?";
}

void safe_open__refuse(enum safe_open_reason r, const char *what)
{
	if (r >= SAFE_OPEN_R__COUNT)
		return;
	__atomic_add_fetch(&n_refused[r], 1, __ATOMIC_RELAXED);
	/* One line per kind for the process's life: a hostile process can make thousands. */
	if (!__atomic_exchange_n(&logged[r], true, __ATOMIC_RELAXED))
		pr_warn("refused to open %s: %s (further refusals of this kind are only counted: "
			"record -v)",
			what ? what : "a file", reason_names[r]);
}

void safe_open__stats(struct safe_open_stats *out)
{
	out->opened = __atomic_load_n(&n_opened, __ATOMIC_RELAXED);
	for (int i = 0; i < SAFE_OPEN_R__COUNT; i++)
		out->refused[i] = __atomic_load_n(&n_refused[i], __ATOMIC_RELAXED);
}

static dev_t host_dev_dev;
static bool host_dev_known;

static void host_dev_init(void)
{
	struct stat st;

	if (!stat("/dev", &st)) {
		host_dev_dev = st.st_dev;
		host_dev_known = true;
	}
}

static bool pseudo_fs(int fd, const struct stat *st)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct statfs sf;

	pthread_once(&once, host_dev_init);
	/* devtmpfs says TMPFS_MAGIC: the host's /dev is recognised by its device. */
	if (host_dev_known && st->st_dev == host_dev_dev)
		return true;
	if (fstatfs(fd, &sf))
		return true; /* cannot tell: refuse */
	switch ((unsigned long)sf.f_type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case BPF_FS_MAGIC:
	case PSTOREFS_MAGIC:
	case EFIVARFS_MAGIC:
	case DEVPTS_SUPER_MAGIC:
	case SELINUX_MAGIC:
	case SMACK_MAGIC:
	case BINFMTFS_MAGIC:
	case NSFS_MAGIC:
	case 0x62656570: /* configfs */
	case 0x65735543: /* fusectl */
		return true;
	default:
		return false;
	}
}

/* The refusal of what fd refers to, or -1 when it is acceptable. */
static int classify(int fd, uint64_t max_size)
{
	struct stat st;

	if (fstat(fd, &st))
		return -2;
	if (S_ISLNK(st.st_mode))
		return SAFE_OPEN_R_SYMLINK;
	if (S_ISDIR(st.st_mode))
		return SAFE_OPEN_R_DIR;
	if (S_ISFIFO(st.st_mode))
		return SAFE_OPEN_R_FIFO;
	if (S_ISSOCK(st.st_mode))
		return SAFE_OPEN_R_SOCKET;
	if (!S_ISREG(st.st_mode))
		return SAFE_OPEN_R_DEVICE;
	if (pseudo_fs(fd, &st))
		return SAFE_OPEN_R_PSEUDO_FS;
	if ((uint64_t)st.st_size > max_size)
		return SAFE_OPEN_R_TOO_BIG;
	return -1;
}

static int reason_errno(int r)
{
	switch (r) {
	case SAFE_OPEN_R_SYMLINK:
	case SAFE_OPEN_R_ESCAPE:
		return -ELOOP;
	case SAFE_OPEN_R_DIR:
		return -EISDIR;
	case SAFE_OPEN_R_FIFO:
		return -ESPIPE;
	case SAFE_OPEN_R_SOCKET:
		return -ENXIO;
	case SAFE_OPEN_R_DEVICE:
		return -ENODEV;
	case SAFE_OPEN_R_PSEUDO_FS:
		return -EXDEV;
	case SAFE_OPEN_R_TOO_BIG:
		return -EFBIG;
	default:
		return -EPERM;
	}
}

bool safe_open__is_refusal(int err)
{
	switch (err) {
	case -ELOOP:
	case -EISDIR:
	case -ESPIPE:
	case -ENXIO:
	case -ENODEV:
	case -EXDEV:
	case -EFBIG:
	case -ESTALE:
		return true;
	default:
		return false;
	}
}

int safe_open__check(int fd, uint64_t max_size)
{
	int r = classify(fd, max_size);

	if (r == -2)
		return -errno;
	return r < 0 ? 0 : reason_errno(r);
}

/*
 * Checks the O_PATH descriptor pfd (closed here) and reopens its inode for
 * reading. Returns the new fd or -errno.
 */
static int check_and_reopen(int pfd, uint64_t max_size, const char *what,
			    const struct safe_open_id *want)
{
	char self[64];
	int r = classify(pfd, max_size), fd, flags;
	struct stat st;

	if (r == -2) {
		r = -errno;
		close(pfd);
		return r;
	}
	if (r >= 0) {
		close(pfd);
		safe_open__refuse(r, what);
		return reason_errno(r);
	}
	if (want && (fstat(pfd, &st) || st.st_ino != want->inode ||
		     major(st.st_dev) != want->dev_major || minor(st.st_dev) != want->dev_minor)) {
		close(pfd);
		safe_open__refuse(SAFE_OPEN_R_MISMATCH, what);
		return -ESTALE;
	}
	/* The checked inode itself, not the path again: nothing can be swapped in between. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	r = fd < 0 ? -errno : 0;
	close(pfd);
	if (r)
		return r;
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	__atomic_add_fetch(&n_opened, 1, __ATOMIC_RELAXED);
	return fd;
}

int safe_open(const char *path, unsigned flags, uint64_t max_size)
{
	int pfd = open(path, O_PATH | O_CLOEXEC | (flags & SAFE_OPEN_NOFOLLOW ? O_NOFOLLOW : 0));

	if (pfd < 0)
		return -errno;
	return check_and_reopen(pfd, max_size, path, NULL);
}

/* A symlink on procfs is a magic link (/proc/PID/fd/N, /proc/PID/root, ...) or /proc/self. */
static bool on_procfs(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) || sf.f_type == PROC_SUPER_MAGIC;
}

/*
 * Resolves path under root_fd one component at a time, the way
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS does: a stack of the folders
 * walked through, ".." pops it (never below the root), an absolute symlink
 * empties it. Every step is an O_PATH | O_NOFOLLOW open, so no symlink is
 * ever followed by the kernel. Returns an O_PATH fd or -errno.
 */
static int walk_in_root(int root_fd, const char *path, bool nofollow_last)
{
	int stack[WALK_MAX_DEPTH] = {-1}, depth = 0, links = 0, ret = -ENOENT;
	size_t cap = 2 * PATH_MAX;
	char *rest = malloc(cap), *target = malloc(PATH_MAX), *p;

	if (!rest || !target) {
		ret = -ENOMEM;
		goto cleanup;
	}
	if (strlen(path) >= PATH_MAX) {
		ret = -ENAMETOOLONG;
		goto cleanup;
	}
	strcpy(rest, path);
	stack[0] = openat(root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (stack[0] < 0) {
		ret = -errno;
		goto cleanup;
	}
	p = rest;
	for (;;) {
		char *comp, *end;
		struct stat st;
		bool last;
		int fd;
		ssize_t n;

		while (*p == '/')
			p++;
		if (!*p) {
			/* The path named a folder (or was empty): that is the result. */
			ret = fcntl(stack[depth], F_DUPFD_CLOEXEC, 0);
			if (ret < 0)
				ret = -errno;
			goto cleanup;
		}
		comp = p;
		end = strchr(p, '/');
		if (end) {
			*end = '\0';
			p = end + 1;
		} else {
			p += strlen(p);
		}
		last = !*p || (strspn(p, "/") == strlen(p));
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			if (depth > 0)
				close(stack[depth--]);
			continue;
		}
		fd = openat(stack[depth], comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			goto cleanup;
		}
		if (fstat(fd, &st)) {
			ret = -errno;
			close(fd);
			goto cleanup;
		}
		if (S_ISLNK(st.st_mode)) {
			size_t tlen, rlen;

			if (last && nofollow_last) {
				close(fd);
				ret = -ELOOP;
				goto cleanup;
			}
			if (on_procfs(fd) || ++links > WALK_MAX_LINKS) {
				close(fd);
				ret = -ELOOP;
				goto cleanup;
			}
			n = readlinkat(fd, "", target, PATH_MAX);
			close(fd);
			if (n < 0 || n >= PATH_MAX) {
				ret = n < 0 ? -errno : -ENAMETOOLONG;
				goto cleanup;
			}
			target[n] = '\0';
			/* The rest of the path now follows the link's target. */
			tlen = (size_t)n;
			rlen = strlen(p);
			if (tlen + 1 + rlen + 1 > cap) {
				ret = -ENAMETOOLONG;
				goto cleanup;
			}
			memmove(rest + tlen + 1, p, rlen + 1);
			memcpy(rest, target, tlen);
			rest[tlen] = '/';
			p = rest;
			if (target[0] == '/')
				while (depth > 0)
					close(stack[depth--]);
			continue;
		}
		if (last) {
			ret = fd;
			goto cleanup;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			ret = -ENOTDIR;
			goto cleanup;
		}
		if (depth + 1 >= WALK_MAX_DEPTH) {
			close(fd);
			ret = -ENAMETOOLONG;
			goto cleanup;
		}
		stack[++depth] = fd;
	}
cleanup:
	for (int i = 0; i <= depth; i++)
		if (stack[i] >= 0)
			close(stack[i]);
	free(rest);
	free(target);
	return ret;
}

static int openat2_in_root(int root_fd, const char *path, bool nofollow_last)
{
	struct open_how how = {
	    .flags = O_PATH | O_CLOEXEC | (nofollow_last ? O_NOFOLLOW : 0),
	    /*
	     * IN_ROOT: "/" and ".." stop at the root, so absolute symlinks the
	     * process planted resolve inside it, as they do for the process.
	     * NO_MAGICLINKS: /proc/PID/fd/N and friends jump anywhere. Not
	     * NO_XDEV: a container's root holds many mounts (volumes, /usr).
	     * Not NO_SYMLINKS: the process's own files may be reached through
	     * its symlinks, which stay inside the root.
	     */
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	/* EAGAIN: a rename raced with ".." resolution; the kernel asks to retry. */
	for (int i = 0; i < 8; i++) {
		fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd >= 0 ? (int)fd : -errno;
}

int safe_open_in_root(int root_fd, const char *path, unsigned flags, uint64_t max_size,
		      const struct safe_open_id *want)
{
	static bool no_openat2;
	bool nofollow = flags & SAFE_OPEN_NOFOLLOW;
	int pfd = -ENOSYS;

	if (!(flags & SAFE_OPEN_WALK) && !__atomic_load_n(&no_openat2, __ATOMIC_RELAXED)) {
		pfd = openat2_in_root(root_fd, path, nofollow);
		if (pfd == -ENOSYS)
			__atomic_store_n(&no_openat2, true, __ATOMIC_RELAXED);
	}
	if (pfd == -ENOSYS)
		pfd = walk_in_root(root_fd, path, nofollow);
	if (pfd == -ELOOP) {
		safe_open__refuse(nofollow ? SAFE_OPEN_R_SYMLINK : SAFE_OPEN_R_ESCAPE, path);
		return pfd;
	}
	if (pfd < 0)
		return pfd;
	return check_and_reopen(pfd, max_size, path, want);
}

int safe_open_in_pid_root(pid_t pid, const char *path, unsigned flags, uint64_t max_size,
			  const struct safe_open_id *want)
{
	char root[64];
	int root_fd, fd;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	/* Following this one magic link is the point: it is the process's root. */
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return -errno;
	fd = safe_open_in_root(root_fd, path, flags, max_size, want);
	close(root_fd);
	return fd;
}
