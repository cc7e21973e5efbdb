// SPDX-License-Identifier: Apache-2.0
/* Growable arrays: growth keeps the elements, doubles, respects the bound, fails cleanly. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/array.h"

struct item {
	uint64_t a;
	uint32_t b;
};

/* 10000 pushes: every element survives each reallocation, capacity doubles. */
static void test_grow_keeps_elements(void **state)
{
	struct item *v = NULL;
	size_t n = 0, cap = 0, prev_cap = 0, reallocs = 0;

	(void)state;
	for (uint32_t i = 0; i < 10000; i++) {
		assert_int_equal(array__grow(v, cap, n), 0);
		assert_true(cap > n);
		if (cap != prev_cap) {
			/* First ARRAY_MIN_CAP, then twice the previous. */
			assert_int_equal(cap, prev_cap ? prev_cap * 2 : ARRAY_MIN_CAP);
			prev_cap = cap;
			reallocs++;
		}
		v[n++] = (struct item){.a = (uint64_t)i * 3, .b = ~i};
	}
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(v[i].a, (uint64_t)i * 3);
		assert_int_equal(v[i].b, ~i);
	}
	/* 16 << 10 = 16384 >= 10000: eleven allocations in all. */
	assert_int_equal(cap, 16384);
	assert_int_equal(reallocs, 11);
	free(v);
}

/* Reserving many at once jumps straight to a doubling that holds them; less is a no-op. */
static void test_reserve(void **state)
{
	char *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(array__reserve(v, cap, 100), 0);
	assert_int_equal(cap, 128);
	memset(v, 'x', 100);
	assert_int_equal(array__reserve(v, cap, 50), 0);
	assert_int_equal(cap, 128);
	assert_int_equal(array__reserve(v, cap, 129), 0);
	assert_int_equal(cap, 256);
	for (int i = 0; i < 100; i++)
		assert_int_equal(v[i], 'x');
	free(v);
}

/* A bound on the count: the capacity stops at it and one more is refused. */
static void test_max(void **state)
{
	int *v = NULL;
	size_t cap = 0, n;

	(void)state;
	for (n = 0; n < 40; n++) {
		assert_int_equal(array__reserve_max(v, cap, n + 1, 40), 0);
		v[n] = (int)n;
	}
	assert_int_equal(cap, 40);
	assert_int_equal(array__reserve_max(v, cap, 41, 40), -ENOMEM);
	assert_int_equal(cap, 40);
	for (n = 0; n < 40; n++)
		assert_int_equal(v[n], (int)n);
	free(v);
}

/* A byte size that overflows is refused, leaving the array as it was. */
static void test_overflow(void **state)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(array__grow(v, cap, 0), 0);
	v[0] = 42;
	assert_int_equal(array__reserve(v, cap, SIZE_MAX / 4), -ENOMEM);
	assert_int_equal(array__reserve(v, cap, SIZE_MAX), -ENOMEM);
	assert_int_equal(cap, ARRAY_MIN_CAP);
	assert_int_equal(v[0], 42);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grow_keeps_elements),
	    cmocka_unit_test(test_reserve),
	    cmocka_unit_test(test_max),
	    cmocka_unit_test(test_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
