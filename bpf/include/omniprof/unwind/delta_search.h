/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finding the stack delta for an address in a file's page tree (struct
 * op_delta_page, layout in omniprof/abi.h), written once for two targets like
 * omniprof/unwind/native.h: the BPF sampler and ordinary C (the unit test checks it
 * against a linear search). The includer defines how a page is reached:
 *
 *   OP_DELTA_PAGE(chunk, index)   const struct op_delta_page * or NULL
 *                                 (a map lookup in BPF; an array in C)
 */
#ifndef OMNIPROF_UNWIND_DELTA_SEARCH_H
#define OMNIPROF_UNWIND_DELTA_SEARCH_H

#include "omniprof/abi.h"
#include "omniprof/unwind/unroll.h"

#ifndef OP_DELTA_PAGE
#error "define OP_DELTA_PAGE before including delta_search.h"
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/*
 * The last slot of p whose address is <= target, given that slot 0's is.
 * Always 8 steps and no branches (the BPF verifier would otherwise walk all
 * 256 paths): padding slots hold OP_DELTA_PAD, above every target, and the
 * comparison is the sign of a 64-bit difference of two 32-bit values.
 */
static __always_inline __u32 op_delta_page__search(const struct op_delta_page *p, __u32 target)
{
	__u32 i = 0;

	OP_UNROLL
	for (__u32 step = OP_PAGE_DELTAS / 2; step; step /= 2) {
		__u64 diff = (__u64)target - p->addr[(i + step) & (OP_PAGE_DELTAS - 1)];

		__u64 below;

		/* Opaque values, so the sign is taken with a shift: on anything it can
		 * see through, the compiler turns the sign back into a compare and a
		 * branch (8 per page, 2^8 paths for the verifier). And a multiply, not
		 * a mask of 0 or -1: the verifier forks its state on such masks. */
		__asm__ volatile("" : "+r"(diff));
		below = diff >> 63;
		__asm__ volatile("" : "+r"(below));
		i += (__u32)(below ^ 1) * step;
	}
	return i & (OP_PAGE_DELTAS - 1);
}

/*
 * The rule index of the last delta at or below target (an address minus the
 * table's base). 0 on success, -1 when target is below the first delta or a
 * page is missing.
 */
static __always_inline int op_delta_table__find(const struct op_table_info *info, void *chunk,
						__u32 target, __u32 *rule)
{
	__u32 page = info->level_first[0], i;

	if (target == OP_DELTA_PAD)
		return -1;
	for (__u32 l = 0; l < OP_PAGE_LEVELS_MAX; l++) {
		const struct op_delta_page *p = OP_DELTA_PAGE(chunk, page);

		if (!p || (l == 0 && p->addr[0] > target))
			return -1;
		i = op_delta_page__search(p, target);
		if (l + 1 >= info->n_levels || l + 1 >= OP_PAGE_LEVELS_MAX) {
			*rule = p->rule[i];
			return 0;
		}
		page =
		    info->level_first[l + 1] + (page - info->level_first[l]) * OP_PAGE_DELTAS + i;
	}
	return -1;
}

#endif
