/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf's reference figures beside ours: the stacks of a `perf record
 * --call-graph dwarf` file as `perf script` prints them, judged by their
 * outermost frame.
 */
#ifndef OMNIPROF_TESTS_PERF_SCRIPT_H
#define OMNIPROF_TESTS_PERF_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

/* Whether a frame's symbol (len bytes, not NUL-terminated) is a true root. */
typedef bool (*perf_root_fn)(const char *sym, size_t len);

/*
 * Of the samples in the perf.data file `data` (only those of threads named
 * `comm` unless it is NULL; no single quote in it), the share in percent
 * whose outermost frame is_root() accepts; *samples gets their number and
 * *depth their mean frame count. -1 when perf printed nothing.
 */
double perf_script__rooted(const char *data, const char *comm, perf_root_fn is_root, long *samples,
			   double *depth);

#endif
