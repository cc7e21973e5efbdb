// SPDX-License-Identifier: Apache-2.0
#include "unwind/delta_pages.h"

#include <errno.h>
#include <string.h>

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
