// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -pthread -I tests/workloads
/*
 * The off-CPU benchmark workload: two threads pass a byte back and forth
 * over two pipes, so each waits in read() for the other: every round trip is
 * two switch-outs of a user thread (about 50,000 a second at the default
 * 25,000 round trips a second, paced; 0: as fast as they go). At the end it
 * (or on SIGTERM) prints "round_trips_per_s N", so a profiler's slowdown shows
 * in the rate.
 * Prints "ready" once running.
 * Usage: pingpong SECONDS [ROUND_TRIPS_PER_S]
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static int ping[2], pong[2];
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

WL_NOINLINE void pong_wait(void)
{
	char c = 1;

	while (c && read(ping[0], &c, 1) == 1)
		if (write(pong[1], &c, 1) != 1)
			break;
}

static void *ponger(void *arg)
{
	(void)arg;
	pong_wait();
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	long rate = argc > 2 ? atol(argv[2]) : 25000;
	uint64_t start, end, rounds = 0;
	pthread_t t;
	char c = 1;

	signal(SIGTERM, on_term);
	if (pipe(ping) || pipe(pong) || pthread_create(&t, NULL, ponger, NULL))
		return 1;
	wl_ready();
	start = now_ns();
	end = start + (uint64_t)(seconds * 1e9);
	for (;;) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
		rounds++;
		if (rounds % 64)
			continue;
		uint64_t now = now_ns();

		if (now >= end || stop)
			break;
		/* Paced: ahead of the rate, wait until it catches up. */
		if (rate > 0) {
			uint64_t due = start + rounds * 1000000000ull / (uint64_t)rate;

			if (due > now) {
				struct timespec ts = {0, (long)(due - now)};

				nanosleep(&ts, NULL);
			}
		}
	}
	c = 0;
	if (write(ping[1], &c, 1) != 1)
		return 1;
	pthread_join(t, NULL);
	printf("round_trips_per_s %.0f\n", (double)rounds / ((double)(now_ns() - start) / 1e9));
	return 0;
}
