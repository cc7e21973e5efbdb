// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -I tests/workloads
/*
 * The native benchmark workload: main calls a_01 -> ... -> a_12 -> leaf over
 * and over until SECONDS have passed (or SIGTERM), then prints
 * "iterations_per_s N", so a profiler's slowdown is measured by the workload
 * itself. Built without frame pointers, and a_03, a_07 and a_11 keep values
 * in callee-saved registers rbp among them, so frame pointers cannot walk it.
 * Prints "ready" once running.
 * Usage: bench_chain SECONDS
 */
#include <signal.h>

#include "workload.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

WL_NOINLINE unsigned long leaf(unsigned long x)
{
	return wl_spin_n(x, 20000);
}

#define LINK(n, next)                                                                              \
	WL_NOINLINE unsigned long a_##n(unsigned long x)                                           \
	{                                                                                          \
		unsigned long r = next(x + 1##n);                                                  \
		WL_OPAQUE(r);                                                                      \
		return r ^ 1##n;                                                                   \
	}

#define LINK_REGS(n, next)                                                                         \
	WL_NOINLINE unsigned long a_##n(unsigned long x)                                           \
	{                                                                                          \
		unsigned long p = x * 3, q = x * 5, s = x * 7, t = x * 11, u = x * 13;             \
		WL_OPAQUE(p);                                                                      \
		WL_OPAQUE(q);                                                                      \
		WL_OPAQUE(s);                                                                      \
		WL_OPAQUE(t);                                                                      \
		WL_OPAQUE(u);                                                                      \
		unsigned long r = next(x + 1##n);                                                  \
		WL_OPAQUE(p);                                                                      \
		WL_OPAQUE(q);                                                                      \
		WL_OPAQUE(s);                                                                      \
		WL_OPAQUE(t);                                                                      \
		WL_OPAQUE(u);                                                                      \
		return r ^ p ^ q ^ s ^ t ^ u;                                                      \
	}

LINK(12, leaf)
LINK_REGS(11, a_12)
LINK(10, a_11)
LINK(09, a_10)
LINK(08, a_09)
LINK_REGS(07, a_08)
LINK(06, a_07)
LINK(05, a_06)
LINK(04, a_05)
LINK_REGS(03, a_04)
LINK(02, a_03)
LINK(01, a_02)

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long long t0, t, last = 0;
	unsigned long x = 1, n = 0;
	double seconds = argc > 1 ? atof(argv[1]) : 10;

	signal(SIGTERM, on_term);
	t0 = now_ns();
	wl_ready();
	do {
		for (int i = 0; i < 16; i++)
			x = a_01(x);
		n += 16;
		t = now_ns();
		if (t - last >= 250000000ll) {
			/* CLOCK_MONOTONIC ns and iterations so far: the harness takes rates over
			 * exactly the window a profiler ran. */
			printf("progress %lld %lu\n", t, n);
			fflush(stdout);
			last = t;
		}
	} while (!stop && t - t0 < (long long)(seconds * 1e9));
	printf("progress %lld %lu\n", t, n);
	printf("iterations_per_s %.1f\n", (double)n * 1e9 / (double)(t - t0));
	return (int)(x & 0);
}
