/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one writer of omniprof's output files. omniprof runs as root and writes
 * into folders that users name, so:
 *
 * - output_dir__open() opens the folder once (O_DIRECTORY | O_NOFOLLOW) and
 *   refuses a symlink, a folder not owned by root or the invoking user, and a
 *   folder that group or others may write to (sticky or not); every later
 *   operation is relative to that descriptor.
 * - output_set__write() writes several files as one set: a new generation
 *   folder ".omniprof-set.<random>" holds the files, and one rename of the
 *   symlink ".omniprof-current" switches every final name (each a symlink
 *   "<name> -> .omniprof-current/<name>") from the previous set to the new one
 *   at once. A crash at any moment leaves the whole previous set or the whole
 *   new one (docs/architecture.md, "Output files").
 * - output_file__write() writes one file: a temporary name created with
 *   O_CREAT | O_EXCL | O_NOFOLLOW, checked writes, fsync, then renameat().
 *
 * Errors are reported here, one line naming the file, so callers only return.
 */
#ifndef OMNIPROF_EXPORT_OUTPUT_SET_H
#define OMNIPROF_EXPORT_OUTPUT_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Names omniprof owns inside an output folder (and may remove when stale). */
#define OUTPUT_SET_CURRENT    ".omniprof-current"
#define OUTPUT_SET_GEN_PREFIX ".omniprof-set."
#define OUTPUT_TMP_PREFIX     ".omniprof-tmp."
/* Test hook: pause this many ms before each step of a set write, after
 * printing "omniprof-test: output step <name>" on stderr. */
#define OUTPUT_PAUSE_ENV "OMNIPROF_TEST_OUTPUT_PAUSE_MS"

struct output_dir {
	int fd;	    /* the folder, O_DIRECTORY | O_NOFOLLOW; -1 when closed */
	char *path; /* as the user named it, for messages */
};

/* Create the folder (and its parents) when missing. */
#define OUTPUT_DIR_CREATE 0x1

/*
 * Opens path under the folder rules above. With OUTPUT_DIR_CREATE a missing
 * folder is created with mode 0755 and given to the invoking user (SUDO_UID
 * and SUDO_GID when root runs through sudo, else this process's ids).
 * 0, or -errno after one clear line. Close with output_dir__close().
 */
int output_dir__open(struct output_dir *d, const char *path, unsigned flags);
void output_dir__close(struct output_dir *d);
/*
 * Proves a file can be created in the folder: a new random name with
 * O_CREAT | O_EXCL | O_NOFOLLOW, then unlinked. Truncates nothing and follows
 * no link. 0, or -errno after one clear line.
 */
int output_dir__probe(struct output_dir *d);

/* Writes a file's bytes to fd (the callee does not close it). 0 or -errno. */
typedef int (*output_write_fn)(int fd, void *ctx);

struct output_item {
	const char *name; /* final name in the folder: no '/', not starting with '.' */
	output_write_fn write;
	void *ctx;
};

/*
 * Writes items[0..n) as one set (see above): generation folder, checked
 * writes, fsync, one atomic switch, then the previous generation and stale
 * leftovers of killed runs are removed. 0, or -errno after one clear line
 * naming the file; on failure before the switch the new files are removed and
 * the previous set is untouched.
 */
int output_set__write(struct output_dir *d, const struct output_item *items, size_t n);

/* Writes one file through a temporary name and renameat(). 0, or -errno after
 * one clear line; the temporary file is removed on failure. */
int output_file__write(struct output_dir *d, const char *name, output_write_fn write, void *ctx);

/*
 * For writers that use stdio: runs fn on a FILE over a duplicate of fd, then
 * flushes and closes it, every step checked. 0 or -errno (ENOSPC and EIO as
 * the kernel reported them).
 */
int output_fd__stdio(int fd, int (*fn)(FILE *f, void *ctx), void *ctx);

#endif
