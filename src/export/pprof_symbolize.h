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

/*
 * Matches each file mapping of p with the best file of fi (DWARF first,
 * then a symbol table or Go table; one pr_info line per mapping says which)
 * and replaces the lines of its locations with what s finds there; the
 * mappings' has_* flags then say what their locations carry. 0 and *stats,
 * or -ENOMEM (p may be partly edited).
 */
int pprof__symbolize(pb_profile *p, struct symbolizer *s, const struct file_index *fi,
		     struct pprof_symbolize_stats *stats);

#endif
