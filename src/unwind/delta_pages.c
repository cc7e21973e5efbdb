// SPDX-License-Identifier: Apache-2.0
#include "unwind/delta_pages.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

/* Pages per level, root first. Returns the level count, 0 when n does not fit. */
static uint32_t level_sizes(size_t n, uint32_t sizes[OP_PAGE_LEVELS_MAX])
{
	uint32_t up[OP_PAGE_LEVELS_MAX], levels = 0;
	size_t pages = (n + OP_PAGE_DELTAS - 1) / OP_PAGE_DELTAS;

	if (!n || n >= OP_DELTA_PAD)
		return 0;
	/* From the deltas up: each level holds the first address of each page below. */
	for (;;) {
		if (levels == OP_PAGE_LEVELS_MAX)
			return 0;
		up[levels++] = (uint32_t)pages;
		if (pages == 1)
			break;
		pages = (pages + OP_PAGE_DELTAS - 1) / OP_PAGE_DELTAS;
	}
	for (uint32_t l = 0; l < levels; l++)
		sizes[l] = up[levels - 1 - l];
	return levels;
}

uint32_t delta_pages__count(size_t n, uint32_t *n_levels)
{
	uint32_t sizes[OP_PAGE_LEVELS_MAX], total = 0;

	*n_levels = level_sizes(n, sizes);
	for (uint32_t l = 0; l < *n_levels; l++)
		total += sizes[l];
	return total;
}

void delta_pages__pad(struct op_delta_page *page, size_t k)
{
	for (size_t s = k; s < OP_PAGE_DELTAS; s++) {
		page->addr[s] = OP_DELTA_PAD;
		page->rule[s] = 0;
	}
}

int delta_pages__build_upper(const struct op_delta_page *leaves, size_t n, uint32_t first_page,
			     struct op_delta_page *upper, struct op_table_info *info)
{
	uint32_t sizes[OP_PAGE_LEVELS_MAX], first[OP_PAGE_LEVELS_MAX], levels, at = 0;

	levels = level_sizes(n, sizes);
	if (!levels)
		return -EINVAL;
	for (uint32_t l = 0; l < levels; l++) {
		first[l] = at;
		at += sizes[l];
	}
	/* Each level above: the first address of every page of the level below. */
	for (uint32_t l = levels - 1; l-- > 0;) {
		const struct op_delta_page *below =
		    l + 1 == levels - 1 ? leaves : &upper[first[l + 1]];

		for (uint32_t p = 0; p < sizes[l]; p++) {
			struct op_delta_page *page = &upper[first[l] + p];

			for (uint32_t s = 0; s < OP_PAGE_DELTAS; s++) {
				size_t child = (size_t)p * OP_PAGE_DELTAS + s;

				page->addr[s] =
				    child < sizes[l + 1] ? below[child].addr[0] : OP_DELTA_PAD;
				page->rule[s] = 0;
			}
		}
	}
	memset(info->level_first, 0, sizeof(info->level_first));
	for (uint32_t l = 0; l < levels; l++)
		info->level_first[l] = first_page + first[l];
	info->n_levels = levels;
	return 0;
}

int delta_pages__build(const uint32_t *addr, const uint16_t *rule, size_t n, uint32_t first_page,
		       struct op_delta_page *pages, struct op_table_info *info)
{
	uint32_t sizes[OP_PAGE_LEVELS_MAX], levels, upper = 0;

	levels = level_sizes(n, sizes);
	if (!levels)
		return -EINVAL;
	for (uint32_t l = 0; l + 1 < levels; l++)
		upper += sizes[l];
	/* The deltas themselves, in the last level: whole runs copied (a large table
	 * has millions), only the last page padded. */
	for (uint32_t p = 0; p < sizes[levels - 1]; p++) {
		struct op_delta_page *page = &pages[upper + p];
		size_t i = (size_t)p * OP_PAGE_DELTAS;
		size_t k = n - i < OP_PAGE_DELTAS ? n - i : OP_PAGE_DELTAS;

		memcpy(page->addr, &addr[i], k * sizeof(*addr));
		memcpy(page->rule, &rule[i], k * sizeof(*rule));
		delta_pages__pad(page, k);
	}
	return delta_pages__build_upper(&pages[upper], n, first_page, pages, info);
}

size_t delta_leaves__bytes(size_t n)
{
	return (n + OP_PAGE_DELTAS - 1) / OP_PAGE_DELTAS * sizeof(struct op_delta_page);
}

/* The index stores local index i as the entry i + 1 (never NULL); ctx: the leaves. */
static bool leaves_rule_equal(const void *entry, const void *key, void *ctx)
{
	const struct delta_leaves *l = ctx;

	return !memcmp(&l->rules[(uintptr_t)entry - 1], key, sizeof(struct op_unwind_rule));
}

int delta_leaves__init(struct delta_leaves *l, size_t n)
{
	memset(l, 0, sizeof(*l));
	if (n >= OP_DELTA_PAD)
		return -E2BIG;
	if (n) {
		l->pages = malloc(delta_leaves__bytes(n));
		if (!l->pages)
			return -ENOMEM;
	}
	l->cap = n;
	hashmap__init(&l->index, leaves_rule_equal, l);
	return 0;
}

/* Room for one more rule in rules[]. 0 or -ENOMEM. */
static int leaves_grow(struct delta_leaves *l)
{
	uint32_t cap = l->rules_cap ? 2 * l->rules_cap : 256;
	struct op_unwind_rule *r;

	if (l->n_rules < l->rules_cap)
		return 0;
	r = realloc(l->rules, (size_t)cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	l->rules = r;
	l->rules_cap = cap;
	return 0;
}

_Static_assert(sizeof(struct op_unwind_rule) == sizeof(uint64_t), "a rule is its 8 bytes' key");

int delta_leaves__add(struct delta_leaves *l, const struct stack_delta *d, size_t k)
{
	/* The last rule seen: runs of one rule are common (a function's body). */
	uint64_t last_key = 0;
	uint16_t last = 0;
	bool have_last = false;

	if (k > l->cap - l->n)
		return -ENOSPC;
	l->index.ctx = l; /* where the leaves are now (a struct may be moved between calls) */
	if (k && !l->n)
		l->base = d[0].addr;
	for (size_t i = 0; i < k; i++, l->n++) {
		struct op_delta_page *page = &l->pages[l->n / OP_PAGE_DELTAS];
		size_t s = l->n % OP_PAGE_DELTAS;
		uint64_t key, hash, off = d[i].addr - l->base;
		uint32_t local;
		void *found;

		if (off >= OP_DELTA_PAD)
			l->too_wide = true;
		page->addr[s] = (uint32_t)off;
		memcpy(&key, &d[i].rule, sizeof(key));
		if (have_last && key == last_key) {
			page->rule[s] = last;
			continue;
		}
		hash = hash_u64(key);
		found = hashmap__find(&l->index, hash, &d[i].rule);
		if (found) {
			local = (uint32_t)((uintptr_t)found - 1);
		} else {
			if (l->n_rules >= OP_MAX_RULES) {
				/* Not loadable: the shared array holds no more. Read on (the
				 * file is still checked), local index 0 for the rest. */
				l->rules_full = true;
				page->rule[s] = 0;
				have_last = false;
				continue;
			}
			if (leaves_grow(l))
				return -ENOMEM;
			l->rules[l->n_rules] = d[i].rule;
			if (hashmap__insert(&l->index, hash, (void *)((uintptr_t)l->n_rules + 1)))
				return -ENOMEM;
			local = l->n_rules++;
		}
		last = (uint16_t)local;
		last_key = key;
		have_last = true;
		page->rule[s] = last;
	}
	return 0;
}

void delta_leaves__finish(struct delta_leaves *l)
{
	if (l->n % OP_PAGE_DELTAS)
		delta_pages__pad(&l->pages[l->n / OP_PAGE_DELTAS], l->n % OP_PAGE_DELTAS);
	hashmap__clear(&l->index);
}

void delta_leaves__free(struct delta_leaves *l)
{
	if (!l)
		return;
	free(l->pages);
	free(l->rules);
	hashmap__clear(&l->index);
	memset(l, 0, sizeof(*l));
}
