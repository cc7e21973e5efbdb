/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lays a file's stack deltas out as the page tree the BPF unwinder searches
 * (struct op_delta_page, described in omniprof/abi.h; the search is
 * bpf/include/omniprof/unwind/delta_search.h).
 */
#ifndef OMNIPROF_UNWIND_DELTA_PAGES_H
#define OMNIPROF_UNWIND_DELTA_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/abi.h"
#include "unwind/stack_deltas.h"
#include "util/hashmap.h"

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

/*
 * A table in its leaf-page form, with rule indexes local to the table (issue
 * 22): what a file worker reads a cached table into, 6 bytes a delta where
 * the deltas took 16 until the sampling thread loaded them (the agent's
 * start-up peak: every table read back held so on the workers and in the
 * finished jobs). The load (unwind_maps) maps local index i to the shared
 * rule id of rules[i]. Local indexes are given in order of a rule's first
 * delta, so mapping them in index order asks the shared rule array for new
 * rules in the order a load of the deltas themselves does: the same ids,
 * the same pages.
 */
struct delta_leaves {
	struct op_delta_page *pages;  /* the leaves (addr: vaddr - base, rule: local); owned */
	struct op_unwind_rule *rules; /* the rule of each local index; owned */
	size_t n;		      /* deltas added */
	size_t cap;		      /* deltas the pages hold (delta_leaves__init) */
	uint64_t base;		      /* the first delta's vaddr */
	uint32_t n_rules;
	bool too_wide;	 /* a delta OP_DELTA_PAD or more above base: no page tree fits */
	bool rules_full; /* more than OP_MAX_RULES distinct rules: cannot be loaded */
	uint32_t rules_cap;
	/* While it is filled: rule -> local index + 1 (freed by finish). */
	struct hashmap index;
};

/* The bytes of the leaves of n deltas. */
size_t delta_leaves__bytes(size_t n);
/* Empty leaves with room for n deltas (at most OP_DELTA_PAD - 1). 0, -E2BIG or -ENOMEM. */
int delta_leaves__init(struct delta_leaves *l, size_t n);
/*
 * Appends k deltas, strictly ascending and above the ones before (the caller
 * checks: a cache file's order is), at most the room left. 0, -ENOSPC (no
 * room) or -ENOMEM.
 */
int delta_leaves__add(struct delta_leaves *l, const struct stack_delta *d, size_t k);
/* Pads the last leaf (delta_pages__pad) and frees the fill's index. */
void delta_leaves__finish(struct delta_leaves *l);
/* Frees l's memory and empties it. Accepts NULL. */
void delta_leaves__free(struct delta_leaves *l);

#endif
