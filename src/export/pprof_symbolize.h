/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `omniprof symbolize`'s work: the locations of a pprof profile's file
 * mappings named again from files found under folders (symbol/file_index.h),
 * the message edited in place (export/pprof_edit.h).
 */
#ifndef OMNIPROF_EXPORT_PPROF_SYMBOLIZE_H
#define OMNIPROF_EXPORT_PPROF_SYMBOLIZE_H

#include <stddef.h>

#include "export/pprof_edit.h"

struct file_index;
struct symbolizer;

struct pprof_symbolize_stats {
	size_t mappings; /* in the profile */
	size_t matched;	 /* ... matched to a file */
	size_t named;	 /* locations named again */
	size_t unnamed;	 /* locations of matched mappings left as they were */
};

/* A build-id-less file's identities, from an "omniprof.file" comment (pprof.c). */
struct pprof_file_id {
	char *path;	   /* the mapping file name it is for */
	char *go_build_id; /* NULL when not given */
	char *file_hash;   /* htlhash, NULL when not given */
};

struct pprof_file_ids {
	struct pprof_file_id *v;
	size_t n;
};

/* Reads p's "omniprof.file" comments into *out (free with pprof_file_ids__free()). 0 or -ENOMEM. */
int pprof_file_ids__read(const pb_profile *p, struct pprof_file_ids *out);
/*
 * The Go build id and file hash recorded for a mapping of file path and GNU
 * build_id (*go and *hash NULL when none: a file with a GNU build id is
 * named by that). They point into ids.
 */
void pprof_file_ids__find(const struct pprof_file_ids *ids, const char *path, const char *build_id,
			  const char **go, const char **hash);
void pprof_file_ids__free(struct pprof_file_ids *ids); /* accepts NULL */

/*
 * Matches each file mapping of p with the best file of fi by GNU build id,
 * else by the Go build id or file hash its file's comment gives (DWARF first,
 * then a symbol table or Go table; one pr_info line per mapping says which)
 * and replaces the lines of its locations with what s finds there; the
 * mappings' has_* flags then say what their locations carry. 0 and *stats,
 * or -ENOMEM (p may be partly edited).
 */
int pprof__symbolize(pb_profile *p, struct symbolizer *s, const struct file_index *fi,
		     struct pprof_symbolize_stats *stats);

#endif
