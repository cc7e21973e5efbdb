// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * main -> vd_01 -> ... -> vd_06 -> vd_leaf, built without frame pointers,
 * where vd_leaf reads the clock in a tight loop: clock_gettime (libc's
 * wrapper, then the vDSO's __vdso_clock_gettime) and gettimeofday (an IFUNC
 * that binds straight to __vdso_gettimeofday). Most samples land in the vDSO,
 * whose unwind tables come from the process's own [vdso] mapping.
 * Usage: vdso_clock SECONDS
 */
#include <sys/time.h>

#include "workload.h"

static time_t deadline;

WL_NOINLINE unsigned long vd_leaf(unsigned long x)
{
	struct timespec ts;
	struct timeval tv;

	do {
		for (int i = 0; i < 20000; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			x += (unsigned long)ts.tv_nsec;
			gettimeofday(&tv, NULL);
			x ^= (unsigned long)tv.tv_usec;
		}
	} while (time(NULL) < deadline);
	return x;
}

#define VD_LINK(n, next)                                                                           \
	WL_NOINLINE unsigned long vd_##n(unsigned long x)                                          \
	{                                                                                          \
		unsigned long r = next(x + 1##n);                                                  \
		WL_OPAQUE(r);                                                                      \
		return r ^ 1##n;                                                                   \
	}

VD_LINK(06, vd_leaf)
VD_LINK(05, vd_06)
VD_LINK(04, vd_05)
VD_LINK(03, vd_04)
VD_LINK(02, vd_03)
VD_LINK(01, vd_02)

int main(int argc, char **argv)
{
	unsigned long r;

	deadline = wl_deadline(argc, argv);
	wl_ready();
	r = vd_01((unsigned long)argc);
	printf("%lu\n", r & 1);
	return 0;
}
