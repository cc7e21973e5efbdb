/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Growable arrays: the caller keeps a plain typed pointer, a count and a
 * size_t capacity (so the elements stay ordinary C arrays for indexing,
 * sorting and handing to protobuf-c); this grows the storage by doubling,
 * with the overflow checks written once.
 *
 *	struct item *items = NULL;
 *	size_t n = 0, cap = 0;
 *	if (array__grow(items, cap, n))
 *		return -ENOMEM;
 *	items[n++] = x;
 *	...
 *	free(items);
 */
#ifndef OMNIPROF_UTIL_ARRAY_H
#define OMNIPROF_UTIL_ARRAY_H

#include <stddef.h>
#include <stdint.h>

/* The capacity of an array's first allocation (elements). */
#define ARRAY_MIN_CAP 16

/*
 * Makes *(void **)vp, an array of *cap elements of elem bytes, hold at least
 * need elements (at most max): the capacity doubles (from ARRAY_MIN_CAP)
 * until it does. 0, or -ENOMEM (need above max, a byte size that overflows,
 * or no memory); on failure the array and *cap are unchanged.
 */
int array__reserve_bytes(void *vp, size_t *cap, size_t need, size_t elem, size_t max);

/* Room for need elements in the array v of capacity cap (lvalues). */
#define array__reserve(v, cap, need)                                                               \
	array__reserve_bytes(&(v), &(cap), (need), sizeof(*(v)), SIZE_MAX)
/* The same with at most max elements (e.g. indices that must fit 32 bits). */
#define array__reserve_max(v, cap, need, max)                                                      \
	array__reserve_bytes(&(v), &(cap), (need), sizeof(*(v)), (max))
/* Room for one more element after the n in use. */
#define array__grow(v, cap, n) array__reserve(v, cap, (size_t)(n) + 1)

#endif
