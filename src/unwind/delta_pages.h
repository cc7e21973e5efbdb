/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lays a file's stack deltas out as the page tree the BPF unwinder searches
 * (struct op_delta_page, described in omniprof/abi.h; the search is
 * bpf/include/omniprof/unwind/delta_search.h).
 */
#ifndef OMNIPROF_UNWIND_DELTA_PAGES_H
#define OMNIPROF_UNWIND_DELTA_PAGES_H

#include <stddef.h>
#include <stdint.h>

#include "omniprof/abi.h"

/* Pages a table of n deltas takes (0 when n is 0 or too large); sets *n_levels. */
uint32_t delta_pages__count(size_t n, uint32_t *n_levels);

/*
 * Fills pages[0 .. delta_pages__count(n)) from n deltas (addr: vaddr - base,
 * strictly ascending, below OP_DELTA_PAD; rule: rule indexes) for a table
 * whose first page will sit at index first_page of its chunk, and sets
 * info->n_levels and info->level_first. 0 or -EINVAL.
 */
int delta_pages__build(const uint32_t *addr, const uint16_t *rule, size_t n, uint32_t first_page,
		       struct op_delta_page *pages, struct op_table_info *info);

/*
 * The same tree in two parts, for a caller that lays out the last level
 * itself (unwind_maps: the leaves written over the deltas they come from).
 * Leaf page p holds deltas p * OP_PAGE_DELTAS on, in the last level's order;
 * delta_pages__pad() fills a last leaf's slots from k on.
 */
void delta_pages__pad(struct op_delta_page *page, size_t k);
/*
 * Fills upper[0 .. delta_pages__count(n) - leaves) (the levels above the
 * leaves: none for one leaf) from the leaves of n deltas, and sets info as
 * delta_pages__build() does; in the chunk the upper pages come first, from
 * first_page, then the leaves. 0 or -EINVAL.
 */
int delta_pages__build_upper(const struct op_delta_page *leaves, size_t n, uint32_t first_page,
			     struct op_delta_page *upper, struct op_table_info *info);

#endif
