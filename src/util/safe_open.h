/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opening files that another process names (the files it maps, its
 * .gnu_debuglink targets, paths inside its root) without letting it hang,
 * trick or flood the profiler, which runs as root:
 *
 *   - the path is first opened with O_PATH: that never calls a driver's or a
 *     FIFO's open(), so nothing can block or have a side effect yet;
 *   - fstat/fstatfs of that descriptor decide: only a regular file of at most
 *     max_size bytes is accepted; a directory, symlink, FIFO, socket, device,
 *     or any file on a pseudo filesystem (procfs, sysfs, debugfs, tracefs,
 *     cgroupfs, bpffs, ..., and the host's /dev) is refused with its own
 *     -errno (below) and counted;
 *   - only then is the very same inode reopened for reading (through
 *     /proc/self/fd, O_RDONLY | O_NONBLOCK | O_CLOEXEC; O_NONBLOCK is cleared
 *     afterwards), so what was checked is what is read.
 *
 * Refusals (-errno returned):
 *   -ELOOP    the last component is a symlink (SAFE_OPEN_NOFOLLOW), or a
 *             magic link / too many symlinks while resolving in a root
 *   -EISDIR   a directory
 *   -ESPIPE   a FIFO
 *   -ENXIO    a socket
 *   -ENODEV   a character or block device
 *   -EXDEV    a file on a pseudo filesystem or in the host's /dev
 *   -EFBIG    larger than max_size
 * Other values are the open's own errors (-ENOENT, -EACCES, ...).
 *
 * Files of a target are read only through these functions. The agent may
 * open files from several threads: the counters are atomic.
 */
#ifndef OMNIPROF_UTIL_SAFE_OPEN_H
#define OMNIPROF_UTIL_SAFE_OPEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Largest ELF or debug file opened on behalf of a target: bigger than any
 * real binary or debug file (libxul's debug file is about 3 GiB), small
 * enough that a sparse or endless file is refused.
 */
#define SAFE_OPEN_MAX_ELF (4ULL << 30)

/* flags */
#define SAFE_OPEN_NOFOLLOW 0x1 /* refuse a symlink as the last component */
/* In-root resolution: walk component by component even when openat2 exists (tests). */
#define SAFE_OPEN_WALK 0x2

enum safe_open_reason {
	SAFE_OPEN_R_SYMLINK, /* symlink or magic link where none may be */
	SAFE_OPEN_R_DIR,
	SAFE_OPEN_R_FIFO,
	SAFE_OPEN_R_SOCKET,
	SAFE_OPEN_R_DEVICE,
	SAFE_OPEN_R_PSEUDO_FS, /* procfs, sysfs, ..., the host's /dev */
	SAFE_OPEN_R_TOO_BIG,
	SAFE_OPEN_R_ESCAPE,   /* in-root resolution refused (magic link, ..) */
	SAFE_OPEN_R_MISMATCH, /* not the inode the caller expected (file_cache) */
	SAFE_OPEN_R__COUNT,
};

struct safe_open_stats {
	uint64_t opened;
	uint64_t refused[SAFE_OPEN_R__COUNT];
};

/*
 * Opens path (absolute, or relative to the current folder) for reading.
 * Intermediate symlinks are followed (callers pass paths under folders the
 * host controls, or /proc/PID/map_files/ links, whose magic link is the
 * point); the last one only without SAFE_OPEN_NOFOLLOW.
 * Returns an fd (O_RDONLY | O_CLOEXEC, blocking mode) or -errno.
 */
int safe_open(const char *path, unsigned flags, uint64_t max_size);

/* The file a caller expects (as /proc/PID/maps states it). */
struct safe_open_id {
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
};

/*
 * Opens path inside the folder root_fd as if root_fd were "/": ".." and
 * absolute symlinks never leave it, magic links (/proc/PID/fd/N, ...) are
 * refused; symlinks inside are followed. openat2(RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS); without openat2 (ENOSYS) or with SAFE_OPEN_WALK,
 * an equivalent walk one component at a time with O_PATH | O_NOFOLLOW.
 * Then the same checks as safe_open(), and when want is not NULL, the file
 * must be that (device, inode): checked before the file is opened for
 * reading, so another file is never opened at all (-ESTALE, counted as
 * SAFE_OPEN_R_MISMATCH). Returns an fd or -errno.
 */
int safe_open_in_root(int root_fd, const char *path, unsigned flags, uint64_t max_size,
		      const struct safe_open_id *want);

/* safe_open_in_root() in /proc/PID/root, the root process pid sees. */
int safe_open_in_pid_root(pid_t pid, const char *path, unsigned flags, uint64_t max_size,
			  const struct safe_open_id *want);

/* Checks an fd opened elsewhere by the same rules. 0 or the refusal's -errno (fd untouched). */
int safe_open__check(int fd, uint64_t max_size);

/* Counts a refusal made by a caller (SAFE_OPEN_R_MISMATCH) and logs its first of a kind. */
void safe_open__refuse(enum safe_open_reason r, const char *what);

/* Whether err (-errno) is one of the refusals above (or -ESTALE, file_cache's mismatch). */
bool safe_open__is_refusal(int err);

/* A snapshot of the process-wide counters. */
void safe_open__stats(struct safe_open_stats *out);
const char *safe_open__reason_name(enum safe_open_reason r);

#endif
