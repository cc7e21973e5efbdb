/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Editing a pprof message in place (`omniprof symbolize`): read a profile
 * file, add strings and functions without duplicating those it holds, give
 * a location new lines, and write it back through the output writer.
 * Everything not edited is kept as it was: the message is edited, not
 * rebuilt from a struct profile (that is pprof.c's job).
 */
#ifndef OMNIPROF_EXPORT_PPROF_EDIT_H
#define OMNIPROF_EXPORT_PPROF_EDIT_H

#include <stdint.h>

#include "profile.pb-c.h"
#include "util/hashmap.h"

struct sym_frame;

typedef Perftools__Profiles__Profile pb_profile;

/* Profiles read are at most this big once decompressed. */
#define PPROF_EDIT_MAX_BYTES (1ull << 31)

/*
 * Reads the pprof file at path, gzip'ed or plain. 0 and *out (free with
 * perftools__profiles__profile__free_unpacked(*out, NULL)), -EBADMSG when it
 * is not a pprof profile, -EFBIG past PPROF_EDIT_MAX_BYTES, or -errno.
 */
int pprof__read_file(const char *path, pb_profile **out);

/*
 * Writes p gzip'ed to path through the shared output writer (output_set.h:
 * the folder under the output folder rules, a temporary name, then a
 * rename). 0, or -errno after one clear line.
 */
int pprof__write_file(const char *path, const pb_profile *p);

/* p->string_table[i], or "" when i is out of range. */
const char *pprof__str_at(const pb_profile *p, int64_t i);

/* Interning of the strings and functions added to one message. */
struct pprof_editor {
	pb_profile *p;
	struct hashmap strings;	  /* entry: (void *)(index + 1) */
	struct hashmap functions; /* entry: (void *)(index in p->function + 1) */
	size_t cap_strings, cap_functions;
	uint64_t next_function_id;
	int err; /* the first error of pprof_editor__str/__function, kept */
};

/* Indexes p's strings and functions. 0 or -ENOMEM; clear e in both cases. */
int pprof_editor__init(struct pprof_editor *e, pb_profile *p);
void pprof_editor__clear(struct pprof_editor *e);

/* The string-table index of s (added when new; NULL and "" are 0). Errors are kept
 * in e->err (0 returned then). */
int64_t pprof_editor__str(struct pprof_editor *e, const char *s);

/* The id of the function of a frame (added when new); 0 on ENOMEM (kept in e->err). */
uint64_t pprof_editor__function(struct pprof_editor *e, const struct sym_frame *fr);

/* Replaces loc's lines with frames (n >= 1), innermost first. 0 or -ENOMEM (loc
 * unchanged). */
int pprof_editor__replace_lines(struct pprof_editor *e, Perftools__Profiles__Location *loc,
				const struct sym_frame *frames, size_t n);

/* Sets pm's has_functions / has_filenames / has_line_numbers / has_inline_frames
 * to what its locations now carry. */
void pprof__update_mapping_flags(pb_profile *p, Perftools__Profiles__Mapping *pm);

#endif
