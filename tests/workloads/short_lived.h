/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The body of short_lived.c and short_lived_fp.c: a process that lives only
 * a moment, main -> sl_01 -> ... -> sl_08 -> sl_leaf spinning for MS
 * milliseconds of CPU time, then exits. A whole-system recording started
 * before it must still unwind and name its frames.
 */
#include "workload.h"

static struct timespec cpu_deadline;

static int cpu_time_left(void)
{
	struct timespec now;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	return now.tv_sec < cpu_deadline.tv_sec ||
	       (now.tv_sec == cpu_deadline.tv_sec && now.tv_nsec < cpu_deadline.tv_nsec);
}

WL_NOINLINE unsigned long sl_leaf(unsigned long x)
{
	do
		x = wl_spin_n(x, 200000);
	while (cpu_time_left());
	return x;
}

#define SL_LINK(n, next)                                                                           \
	WL_NOINLINE unsigned long sl_##n(unsigned long x)                                          \
	{                                                                                          \
		unsigned long r = next(x + 1##n);                                                  \
		WL_OPAQUE(r);                                                                      \
		return r ^ 1##n;                                                                   \
	}

SL_LINK(08, sl_leaf)
SL_LINK(07, sl_08)
SL_LINK(06, sl_07)
SL_LINK(05, sl_06)
SL_LINK(04, sl_05)
SL_LINK(03, sl_04)
SL_LINK(02, sl_03)
SL_LINK(01, sl_02)

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 200;
	unsigned long r;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu_deadline);
	cpu_deadline.tv_sec += ms / 1000;
	cpu_deadline.tv_nsec += (ms % 1000) * 1000000;
	if (cpu_deadline.tv_nsec >= 1000000000) {
		cpu_deadline.tv_sec++;
		cpu_deadline.tv_nsec -= 1000000000;
	}
	wl_ready();
	r = sl_01((unsigned long)argc);
	printf("%lu\n", r & 1);
	return 0;
}
