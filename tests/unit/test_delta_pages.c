// SPDX-License-Identifier: Apache-2.0
/*
 * The stack-delta page tree: built by src/unwind/delta_pages.c, searched by
 * bpf/include/omniprof/unwind/delta_search.h compiled as ordinary C (the code the kernel runs),
 * checked against a plain binary search for tables of one, two and three
 * levels and at every page boundary.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "omniprof/abi.h"
#include "unwind/delta_pages.h"

/* The "chunk": pages at indexes [page_base, page_base + n_pages). */
struct fake_chunk {
	struct op_delta_page *pages;
	uint32_t first;
	uint32_t n;
};

static const struct op_delta_page *chunk_page(void *chunk, uint32_t index)
{
	struct fake_chunk *c = chunk;

	if (index < c->first || index - c->first >= c->n)
		return NULL;
	return &c->pages[index - c->first];
}

#define OP_DELTA_PAGE(chunk, index) chunk_page((chunk), (index))
#include "omniprof/unwind/delta_search.h"

/* Index of the last addr[i] <= target, or -1. */
static long reference_find(const uint32_t *addr, size_t n, uint32_t target)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr[mid] <= target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

static void check_target(const struct op_table_info *info, struct fake_chunk *c,
			 const uint32_t *addr, const uint16_t *rule, size_t n, uint32_t target)
{
	long want = reference_find(addr, n, target);
	uint32_t got = UINT32_MAX;
	int err = op_delta_table__find(info, c, target, &got);

	if (want < 0) {
		assert_int_equal(err, -1);
		return;
	}
	assert_int_equal(err, 0);
	assert_int_equal(got, rule[want]);
}

/* A table of n deltas with gaps of 1..gap_max bytes, first at first_addr. */
static void check_table(size_t n, uint32_t first_addr, uint32_t gap_max, uint32_t first_page)
{
	uint32_t *addr = malloc(n * sizeof(*addr)), levels, n_pages;
	uint16_t *rule = malloc(n * sizeof(*rule));
	struct op_table_info info = {0};
	struct fake_chunk c;
	uint32_t a = first_addr;

	assert_non_null(addr);
	assert_non_null(rule);
	srand((unsigned)n);
	for (size_t i = 0; i < n; i++) {
		addr[i] = a;
		rule[i] = (uint16_t)(i * 7919 + 1); /* distinct neighbours */
		a += 1 + (uint32_t)rand() % gap_max;
	}
	n_pages = delta_pages__count(n, &levels);
	c.pages = calloc(n_pages, sizeof(*c.pages));
	c.first = first_page;
	c.n = n_pages;
	assert_non_null(c.pages);
	assert_int_equal(delta_pages__build(addr, rule, n, first_page, c.pages, &info), 0);
	assert_int_equal(info.n_levels, levels);
	assert_int_equal(info.level_first[0], first_page);

	/* Every delta, its neighbours, before the first and past the last. */
	for (size_t i = 0; i < n; i++) {
		check_target(&info, &c, addr, rule, n, addr[i]);
		check_target(&info, &c, addr, rule, n, addr[i] + 1);
		if (addr[i])
			check_target(&info, &c, addr, rule, n, addr[i] - 1);
	}
	check_target(&info, &c, addr, rule, n, 0);
	check_target(&info, &c, addr, rule, n, addr[n - 1] + 1000);
	check_target(&info, &c, addr, rule, n, OP_DELTA_PAD - 1);
	/* OP_DELTA_PAD itself is never an address. */
	assert_int_equal(op_delta_table__find(&info, &c, OP_DELTA_PAD, &(uint32_t){0}), -1);

	free(c.pages);
	free(rule);
	free(addr);
}

static void test_one_level(void **state)
{
	(void)state;
	check_table(1, 0, 1, 0);
	check_table(1, 100, 1, 7);
	check_table(2, 5, 3, 0);
	check_table(255, 0, 16, 3);
	check_table(OP_PAGE_DELTAS, 10, 16, 0);
}

static void test_two_levels(void **state)
{
	(void)state;
	check_table(OP_PAGE_DELTAS + 1, 0, 16, 0);
	check_table(20000, 64, 40, 12); /* about libc's size */
	check_table(OP_PAGE_DELTAS * OP_PAGE_DELTAS, 0, 4, 1);
}

static void test_three_levels(void **state)
{
	uint32_t levels;

	(void)state;
	check_table(OP_PAGE_DELTAS * OP_PAGE_DELTAS + 1, 0, 4, 0);
	check_table(300000, 4096, 60, 100); /* a very large binary */
	assert_int_equal(delta_pages__count(300000, &levels), 1 + 5 + 1172);
	assert_int_equal(levels, 3);
}

static void test_layout_limits(void **state)
{
	uint32_t levels, *none = NULL;
	struct op_table_info info;

	(void)state;
	assert_int_equal(delta_pages__count(0, &levels), 0);
	assert_int_equal(levels, 0);
	assert_int_equal(delta_pages__count(1, &levels), 1);
	assert_int_equal(levels, 1);
	/* 256^3 + 1 deltas need a fourth level; counting them costs no memory. */
	assert_int_equal(delta_pages__count((size_t)1 << 24, &levels), 1 + 256 + 65536);
	assert_int_equal(levels, 3);
	delta_pages__count(((size_t)1 << 24) + 1, &levels);
	assert_int_equal(levels, 4);
	assert_int_equal(delta_pages__build(none, NULL, 0, 0, NULL, &info), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_level),
	    cmocka_unit_test(test_two_levels),
	    cmocka_unit_test(test_three_levels),
	    cmocka_unit_test(test_layout_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
