// SPDX-License-Identifier: Apache-2.0
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "symbol/symbol_cache.h"

static int freed;

static void free_value(void *v)
{
	freed++;
	free(v);
}

static void *value(void)
{
	void *v = malloc(16);

	assert_non_null(v);
	return v;
}

/* Never more than the bound; within a pass the file just finished goes first. */
static void test_bound_and_order(void **state)
{
	struct symbol_cache c;

	(void)state;
	freed = 0;
	symbol_cache__init(&c, 1000, free_value);
	for (uint64_t k = 1; k <= 4; k++)
		assert_non_null(symbol_cache__put(&c, k, value(), 250));
	assert_int_equal(c.cost, 1000);
	assert_int_equal(freed, 0);
	/* Use 1, then add 5: 1 is the most recently used other than 5. */
	assert_non_null(symbol_cache__get(&c, 1));
	assert_non_null(symbol_cache__put(&c, 5, value(), 250));
	assert_int_equal(freed, 1);
	assert_null(symbol_cache__get(&c, 1));
	assert_non_null(symbol_cache__get(&c, 2));
	assert_non_null(symbol_cache__get(&c, 3));
	assert_true(c.cost <= c.limit);
	/* A big entry pushes out as many as needed, never itself. */
	assert_non_null(symbol_cache__put(&c, 6, value(), 900));
	assert_true(c.cost <= c.limit);
	assert_non_null(symbol_cache__get(&c, 6));
	assert_int_equal(c.n_entries, 1);
	assert_int_equal(c.stats.evictions, 5);
	/* Larger than the bound: kept alone. */
	assert_non_null(symbol_cache__put(&c, 7, value(), 5000));
	assert_int_equal(c.n_entries, 1);
	assert_null(symbol_cache__get(&c, 6));
	symbol_cache__clear(&c);
	assert_int_equal(freed, 7);
	symbol_cache__clear(NULL);
}

/* Looks key up, loading it on a miss (cost 100); true on a hit. */
static bool use(struct symbol_cache *c, uint64_t key)
{
	if (symbol_cache__get(c, key))
		return true;
	assert_non_null(symbol_cache__put(c, key, value(), 100));
	return false;
}

/*
 * Intervals that need a few more files than fit (5 files, room for 3): all
 * but the first pass find at least two of them still loaded (plain LRU found
 * none, every pass, and loaded all five again).
 */
static void test_passes_larger_than_bound(void **state)
{
	struct symbol_cache c;

	(void)state;
	freed = 0;
	symbol_cache__init(&c, 300, free_value);
	for (int pass = 0; pass < 20; pass++) {
		int hits = 0;

		symbol_cache__new_pass(&c);
		for (uint64_t k = 1; k <= 5; k++)
			hits += use(&c, k);
		assert_true(c.cost <= c.limit);
		if (pass)
			assert_true(hits >= 2);
	}
	symbol_cache__clear(&c);
	assert_int_equal(freed, (int)c.stats.misses);
}

/* Files no pass used since the one before go first, whatever their recency. */
static void test_unused_files_go_first(void **state)
{
	struct symbol_cache c;

	(void)state;
	freed = 0;
	symbol_cache__init(&c, 300, free_value);
	symbol_cache__new_pass(&c);
	use(&c, 1);
	use(&c, 2);
	use(&c, 9); /* its process exits after this pass */
	for (int pass = 0; pass < 2; pass++) {
		symbol_cache__new_pass(&c);
		assert_true(use(&c, 1));
		assert_true(use(&c, 2));
	}
	assert_false(use(&c, 3));
	assert_int_equal(c.stats.evictions, 1);
	assert_true(use(&c, 1));
	assert_true(use(&c, 2));
	assert_true(use(&c, 3));
	assert_null(symbol_cache__get(&c, 9));
	symbol_cache__clear(&c);
}

/*
 * A file that grows while it is looked up pushes out only unused files: the
 * ones the pass still needs stay, and the grown file is the one to go when
 * the next file comes.
 */
static void test_growth_waits_for_next_file(void **state)
{
	struct symbol_cache c;
	struct symbol_cache_entry *big;

	(void)state;
	freed = 0;
	symbol_cache__init(&c, 300, free_value);
	symbol_cache__new_pass(&c);
	use(&c, 1);
	use(&c, 2);
	big = symbol_cache__put(&c, 3, value(), 50);
	assert_non_null(big);
	symbol_cache__charge(&c, big, 150); /* libdw parsed more of file 3 */
	assert_int_equal(c.n_entries, 3);
	assert_true(c.cost > c.limit);
	assert_false(use(&c, 4));
	assert_true(c.cost <= c.limit);
	assert_null(symbol_cache__get(&c, 3));
	assert_non_null(symbol_cache__get(&c, 1));
	assert_non_null(symbol_cache__get(&c, 2));
	/* A new pass brings an overgrown total back within the bound too. */
	big = symbol_cache__get(&c, 4);
	symbol_cache__charge(&c, big, 200);
	assert_true(c.cost > c.limit);
	symbol_cache__new_pass(&c);
	assert_true(c.cost <= c.limit);
	symbol_cache__clear(&c);
	assert_int_equal(freed, 4);
}

/* An hour of churn in miniature: 100k distinct files through a bound of 64 entries. */
static void test_churn_stays_bounded(void **state)
{
	struct symbol_cache c;
	size_t peak = 0;

	(void)state;
	freed = 0;
	symbol_cache__init(&c, 64 * 100, free_value);
	for (uint64_t k = 1; k <= 100000; k++) {
		if (!symbol_cache__get(&c, k % 5000 + 1))
			assert_non_null(symbol_cache__put(&c, k % 5000 + 1, value(), 100));
		if (c.cost > peak)
			peak = c.cost;
	}
	assert_true(peak <= 64 * 100);
	assert_int_equal(c.n_entries, 64);
	assert_int_equal(c.stats.peak_cost, 64 * 100);
	symbol_cache__clear(&c);
	assert_int_equal(freed, (int)(c.stats.misses));
}

/* NULL values (a file without symbols) are cached too. */
static void test_negative_entries(void **state)
{
	struct symbol_cache c;
	struct symbol_cache_entry *e;

	(void)state;
	symbol_cache__init(&c, 0, free_value);
	assert_non_null(symbol_cache__put(&c, 9, NULL, 64));
	e = symbol_cache__get(&c, 9);
	assert_non_null(e);
	assert_null(e->value);
	symbol_cache__clear(&c);
}

/* Gives back the first int of the value; at most an entry's cost is taken off. */
static size_t give_back(void *v, void *ctx)
{
	(*(int *)ctx)++;
	return (size_t) * (int *)v;
}

/* Shrinking takes off each value's return, never below zero; entries and order stay. */
static void test_shrink_each(void **state)
{
	struct symbol_cache c;
	int calls = 0;
	int *a = value(), *b = value();

	(void)state;
	freed = 0;
	symbol_cache__init(&c, 1000, free_value);
	*a = 100;
	*b = 900;
	assert_non_null(symbol_cache__put(&c, 1, a, 300));
	assert_non_null(symbol_cache__put(&c, 2, b, 400));
	assert_non_null(symbol_cache__put(&c, 3, NULL, 64));
	symbol_cache__shrink_each(&c, give_back, &calls);
	assert_int_equal(calls, 2);
	assert_int_equal(c.cost, 200 + 0 + 64);
	assert_int_equal(c.n_entries, 3);
	assert_int_equal(freed, 0);
	assert_int_equal(symbol_cache__get(&c, 1)->cost, 200);
	assert_int_equal(symbol_cache__get(&c, 2)->cost, 0);
	symbol_cache__clear(&c);
	assert_int_equal(freed, 2);
}

/*
 * A big file no lookup reached for SYMBOL_CACHE_IDLE_PASSES passes is dropped
 * at the next pass though the bound has room; a small one, or one used within
 * them, stays.
 */
static void test_idle_files_dropped(void **state)
{
	const size_t big = SYMBOL_CACHE_IDLE_MIN_COST;
	struct symbol_cache c;

	(void)state;
	freed = 0;
	symbol_cache__init(&c, 64 * big, free_value);
	assert_non_null(symbol_cache__put(&c, 1, value(), big));     /* idle from now */
	assert_non_null(symbol_cache__put(&c, 2, value(), 100));     /* small, idle */
	assert_non_null(symbol_cache__put(&c, 3, value(), 2 * big)); /* used every pass */
	for (unsigned int pass = 1; pass <= SYMBOL_CACHE_IDLE_PASSES; pass++) {
		symbol_cache__new_pass(&c);
		assert_non_null(symbol_cache__get(&c, 3));
		assert_int_equal(c.n_entries, 3);
		assert_int_equal(c.stats.idle_drops, 0);
	}
	symbol_cache__new_pass(&c);
	assert_int_equal(c.stats.idle_drops, 1);
	assert_int_equal(freed, 1);
	assert_int_equal(c.n_entries, 2);
	assert_int_equal(c.cost, 2 * big + 100);
	assert_null(symbol_cache__get(&c, 1));
	assert_non_null(symbol_cache__get(&c, 2));
	assert_non_null(symbol_cache__get(&c, 3));
	/* 0 turns it off. */
	c.idle_passes = 0;
	for (int pass = 0; pass < 10; pass++)
		symbol_cache__new_pass(&c);
	assert_int_equal(c.n_entries, 2);
	symbol_cache__clear(&c);
	assert_int_equal(freed, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bound_and_order),
	    cmocka_unit_test(test_passes_larger_than_bound),
	    cmocka_unit_test(test_unused_files_go_first),
	    cmocka_unit_test(test_growth_waits_for_next_file),
	    cmocka_unit_test(test_churn_stays_bounded),
	    cmocka_unit_test(test_negative_entries),
	    cmocka_unit_test(test_shrink_each),
	    cmocka_unit_test(test_idle_files_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
