/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ELF files under folders gathered for naming frames off-host (binaries,
 * unstripped copies, debug files, /usr/lib/debug-style trees), indexed by
 * every identity a profile's mapping may carry: GNU build id, Go build id
 * and htlhash.
 */
#ifndef OMNIPROF_SYMBOL_FILE_INDEX_H
#define OMNIPROF_SYMBOL_FILE_INDEX_H

#include <stddef.h>

struct indexed_file {
	char *path;
	char *build_id;	    /* hex, NULL when none */
	char *go_build_id;  /* NULL when none */
	char file_hash[33]; /* hex htlhash, "" when unknown */
};

struct file_index {
	struct indexed_file *files;
	size_t n_files, cap_files;
	size_t skipped; /* entries that are not readable ELF files */
};

/* Files under each of dirs (recursively, symlinks followed). 0 or -ENOMEM. */
int file_index__build(struct file_index *fi, const char *const *dirs, size_t n);
void file_index__clear(struct file_index *fi); /* accepts NULL */

/*
 * The files matching any of the identities given (each may be NULL or ""),
 * in index order, written to out (max entries). Returns how many matched.
 */
size_t file_index__match(const struct file_index *fi, const char *build_id, const char *go_build_id,
			 const char *file_hash, const struct indexed_file **out, size_t max);

#endif
