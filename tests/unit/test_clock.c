// SPDX-License-Identifier: Apache-2.0
/* The clock helper: monotonic nanoseconds that follow the kernel's clocks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "util/clock.h"

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

/* clock__now_ns lies between two readings of CLOCK_MONOTONIC taken around it. */
static void test_now_is_monotonic_clock(void **state)
{
	struct timespec before, after;
	uint64_t now;

	(void)state;
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &before), 0);
	now = clock__now_ns();
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &after), 0);
	assert_true(now >= ts_ns(&before));
	assert_true(now <= ts_ns(&after));
}

/* The same for a named clock (wall-clock time for timestamps). */
static void test_named_clock(void **state)
{
	struct timespec before, after;
	uint64_t now;

	(void)state;
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &before), 0);
	now = clock__ns(CLOCK_REALTIME);
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &after), 0);
	assert_true(now >= ts_ns(&before));
	assert_true(now <= ts_ns(&after));
	/* An id the kernel does not know reads as 0, not as garbage. */
	assert_int_equal(clock__ns((clockid_t)12345), 0);
}

/* Readings never go back, and a sleep of 2 ms moves the clock by at least that. */
static void test_advances(void **state)
{
	struct timespec nap = {0, 2000000};
	uint64_t a, b, deadline;

	(void)state;
	a = clock__now_ns();
	deadline = clock__deadline_ns(2);
	assert_true(deadline >= a + 2 * CLOCK_NS_PER_MS);
	while (nanosleep(&nap, &nap) && errno == EINTR)
		;
	b = clock__now_ns();
	assert_true(b >= a + 2 * CLOCK_NS_PER_MS);
	for (int i = 0; i < 1000; i++) {
		uint64_t c = clock__now_ns();

		assert_true(c >= b);
		b = c;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_now_is_monotonic_clock),
	    cmocka_unit_test(test_named_clock),
	    cmocka_unit_test(test_advances),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
