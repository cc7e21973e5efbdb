/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the C and C++ workloads: the start-up handshake ("ready" on
 * stdout) and a spin loop that burns CPU until a deadline. The spin loop is
 * always inlined into each workload's leaf so the leaf is the function that
 * the samples land in.
 */
#ifndef OMNIPROF_WORKLOAD_H
#define OMNIPROF_WORKLOAD_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * Chain functions must stay real frames: never inlined, and (with GCC) never
 * cloned into a renamed copy such as `a_05.constprop.0`, which would not
 * carry the name the tests look for.
 */
#if defined(__clang__)
#define WL_NOINLINE __attribute__((noinline))
#else
#define WL_NOINLINE __attribute__((noinline, noclone))
#endif

/* Keeps a value alive in a register without letting the compiler reason about it. */
#define WL_OPAQUE(v) __asm__ volatile("" : "+r"(v))

/* argv[1] seconds from now (default 10). */
static inline time_t wl_deadline(int argc, char **argv)
{
	return time(NULL) + (argc > 1 ? atoi(argv[1]) : 10);
}

/* Tells the test harness the workload is running: it waits for this line. */
static inline void wl_ready(void)
{
	printf("ready\n");
	fflush(stdout);
}

/*
 * About a millisecond of arithmetic per round; the clock is read once a round
 * so almost every sample lands in the caller itself, not in time().
 */
static inline __attribute__((always_inline)) unsigned long wl_spin_until(unsigned long x,
									  time_t deadline)
{
	do {
		for (int i = 0; i < 1000000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		WL_OPAQUE(x);
	} while (time(NULL) < deadline);
	return x;
}

/* A fixed amount of arithmetic (no clock): for code that runs many times. */
static inline __attribute__((always_inline)) unsigned long wl_spin_n(unsigned long x, long rounds)
{
	for (long i = 0; i < rounds; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	WL_OPAQUE(x);
	return x;
}

#endif
