// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -pthread
/*
 * main -> vdso_outer -> vdso_loop reads the clock in a tight loop: libc's
 * clock_gettime calls into the vDSO, code the kernel maps and no file holds.
 * A second thread, "sleeper", sleeps in nanosleep (blocked in a system call)
 * under sleeper_loop, so one snapshot holds a thread in the vDSO and one in
 * the kernel.
 * Usage: vdso_clock SECONDS
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>

#include "workload.h"

WL_NOINLINE void *sleeper_loop(void *arg)
{
	struct timespec ts = {0, 50 * 1000 * 1000};

	for (;;) {
		nanosleep(&ts, NULL);
		WL_OPAQUE(arg);
	}
	return arg;
}

WL_NOINLINE unsigned long vdso_loop(time_t deadline)
{
	struct timespec ts = {0, 0};
	unsigned long x = 0;

	do {
		for (int i = 0; i < 10000; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			x += (unsigned long)ts.tv_nsec;
		}
	} while (time(NULL) < deadline);
	return x;
}

WL_NOINLINE unsigned long vdso_outer(time_t deadline)
{
	unsigned long r = vdso_loop(deadline);

	WL_OPAQUE(r);
	return r + 1;
}

int main(int argc, char **argv)
{
	time_t deadline = wl_deadline(argc, argv);
	pthread_t t;

	if (pthread_create(&t, NULL, sleeper_loop, NULL))
		return 1;
	pthread_setname_np(t, "sleeper");
	wl_ready();
	printf("%lu\n", vdso_outer(deadline) & 1);
	return 0;
}
