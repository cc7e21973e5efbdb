/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One clock reading for every deadline, timeout and duration in the
 * profiler: nanoseconds of CLOCK_MONOTONIC (or of a clock the caller names,
 * CLOCK_REALTIME for wall-clock timestamps), as one 64-bit count so that
 * deadlines are plain additions and comparisons.
 */
#ifndef OMNIPROF_UTIL_CLOCK_H
#define OMNIPROF_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

#define CLOCK_NS_PER_MS 1000000ull
#define CLOCK_NS_PER_S	1000000000ull

/* Nanoseconds of clock (0 if the kernel refuses it: an unknown clock id). */
static inline uint64_t clock__ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * CLOCK_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Monotonic nanoseconds: for deadlines and durations. */
static inline uint64_t clock__now_ns(void)
{
	return clock__ns(CLOCK_MONOTONIC);
}

/* Monotonic nanoseconds ms milliseconds from now. */
static inline uint64_t clock__deadline_ns(uint64_t ms)
{
	return clock__now_ns() + ms * CLOCK_NS_PER_MS;
}

#endif
