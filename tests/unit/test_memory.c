// SPDX-License-Identifier: Apache-2.0
/*
 * memory__release() trims once per 16 MiB of newly freed heap, or once a
 * minute, not at every call once the free heap has passed the threshold: a
 * trim's pages stay counted as free by mallinfo2, and trimming them again at
 * each agent interval cost a TLB shootdown on every CPU for nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/memory.h"

#define N_CHUNKS 2048
#define CHUNK	 (24 << 10) /* under the mmap threshold: heap chunks */
#define SEC	 1000000000ull
#define T0	 (1000 * SEC)

/* Allocates then frees 48 MiB of small chunks (kept apart by small live ones, so they stay
 * free chunks the heap's top cannot give back by itself). The small ones are freed by the
 * caller. */
static void churn(void **keep)
{
	void **big = calloc(N_CHUNKS, sizeof(*big));

	assert_non_null(big);
	for (int i = 0; i < N_CHUNKS; i++) {
		big[i] = malloc(CHUNK);
		assert_non_null(big[i]);
		memset(big[i], 0x5a, CHUNK);
		keep[i] = malloc(32);
		assert_non_null(keep[i]);
	}
	for (int i = 0; i < N_CHUNKS; i++)
		free(big[i]);
	free(big);
}

static void test_trim_rule(void **state)
{
	const size_t M = 1 << 20;

	(void)state;
	assert_false(memory__trim_due(15 * M, 0, 0, T0));	      /* under 16 MiB free: never */
	assert_true(memory__trim_due(16 * M, 0, 0, T0));	      /* the first time */
	assert_true(memory__trim_due(40 * M, 20 * M, T0, T0 + SEC));  /* 20 MiB new since */
	assert_false(memory__trim_due(40 * M, 30 * M, T0, T0 + SEC)); /* 10 MiB new: wait */
	assert_false(memory__trim_due(40 * M, 40 * M, T0, T0 + 59 * SEC));
	assert_true(memory__trim_due(40 * M, 40 * M, T0, T0 + 60 * SEC)); /* the minute is over */
	assert_false(memory__trim_due(20 * M, 40 * M, T0, T0 + SEC));	  /* shrank since */
}

static void test_trims_once_per_new_free_heap(void **state)
{
	struct mallinfo2 mi;

	void **keep1 = calloc(N_CHUNKS, sizeof(void *)), **keep2 = calloc(N_CHUNKS, sizeof(void *));
	unsigned long t0;

	(void)state;
	mi = mallinfo2();
	if (!mi.arena) {
		/* A sanitizer's allocator: mallinfo2 sees none of it, so nothing is ever trimmed
		 * (test_trim_rule covers the rule itself). */
		printf(
		    "not glibc's malloc (sanitizer build): memory__release has nothing to trim\n");
		memory__release();
		assert_int_equal(memory__release_trims(), 0);
		free(keep1);
		free(keep2);
		return;
	}
	assert_non_null(keep1);
	assert_non_null(keep2);
	memory__tune();
	memory__release_at(T0); /* whatever start-up left */
	t0 = memory__release_trims();

	churn(keep1);
	memory__release_at(T0 + SEC);
	assert_int_equal(memory__release_trims(), t0 + 1);
	/* Nothing freed since: the same free pages are not trimmed again within the minute. */
	for (int i = 2; i < 50; i++)
		memory__release_at(T0 + i * SEC);
	assert_int_equal(memory__release_trims(), t0 + 1);

	/* The pages reused and freed again: resident again, with no growth mallinfo2 shows;
	 * trimmed once the minute is over, once. */
	churn(keep2);
	memory__release_at(T0 + 55 * SEC);
	assert_int_equal(memory__release_trims(), t0 + 1);
	memory__release_at(T0 + 62 * SEC);
	assert_int_equal(memory__release_trims(), t0 + 2);
	memory__release_at(T0 + 70 * SEC);
	assert_int_equal(memory__release_trims(), t0 + 2);

	for (int i = 0; i < N_CHUNKS; i++) {
		free(keep1[i]);
		free(keep2[i]);
	}
	free(keep1);
	free(keep2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trim_rule),
	    cmocka_unit_test(test_trims_once_per_new_free_heap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
