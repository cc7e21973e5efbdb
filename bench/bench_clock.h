// SPDX-License-Identifier: Apache-2.0
/*
 * The bench tools' clocks and medians: CPU time of the calling thread (on
 * this loaded machine wall time counts the other processes too) and a
 * qsort comparator for a run's figures.
 */
#ifndef OMNIPROF_BENCH_CLOCK_H
#define OMNIPROF_BENCH_CLOCK_H

#include <time.h>

/* CPU time of this thread, in milliseconds. */
static inline double bench__thread_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* qsort comparator of doubles, ascending. */
static inline int bench__cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#endif
