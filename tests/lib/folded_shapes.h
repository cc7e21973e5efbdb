/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every incomplete stack of a recording, by shape (issue 17): a record run
 * with COLLECTOR_MARK_ORIGIN_ENV set ends each CPU sample's stack in
 * stacks.folded with a "[sampled: HOW]" frame at its leaf (a BPF walk, a
 * stack copy, held or not). These print each sample of a process name that
 * has user frames and does not start at a true root with no stop marker,
 * grouped by its stop marker, the outermost frame the walk reached and that
 * origin, then take the origin frames out so the text reads as without it.
 */
#ifndef OMNIPROF_TESTS_FOLDED_SHAPES_H
#define OMNIPROF_TESTS_FOLDED_SHAPES_H

#include <stdbool.h>
#include <stddef.h>

/* Whether a frame's name (len bytes, not NUL-terminated) is a true root. */
typedef bool (*folded_root_fn)(const char *f, size_t len);

/*
 * Prints (indented by indent) every shape of comm's unrooted samples in the
 * stacks.folded text, the most frequent first, and how many samples of
 * comm came by each origin; samples marked "[unwind stopped: too many
 * frames]" are right (their leaf side kept) and left out; samples with
 * kernel frames only (no user stack to judge) are shown apart. Returns the
 * number of unrooted samples with user frames.
 */
long folded_shapes__print(const char *text, const char *comm, folded_root_fn is_root,
			  const char *indent);

/* Takes every ";[sampled: ...]" frame out of text, in place. */
void folded_shapes__strip(char *text);

#endif
