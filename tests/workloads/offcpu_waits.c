// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -pthread
/*
 * Threads that wait, each in a known chain, for the off-CPU tests
 * (tests/e2e/test_offcpu.c): "sleeper" calls nanosleep (1 ms) in a loop under
 * sleep_outer -> sleep_middle -> sleep_inner; "piper" blocks in read() on a
 * pipe under pipe_outer -> pipe_inner, fed a byte every 20 ms by "feeder";
 * "futexer" waits on a futex (10 ms timeouts) under futex_outer ->
 * futex_inner. No frame pointers: the chains need the CFI walk. The sleeper
 * is SCHED_FIFO when allowed (see sleeper()).
 * Usage: offcpu_waits SECONDS
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static time_t deadline;
static int pipe_fds[2];
static uint32_t futex_word; /* never woken: every wait ends by its timeout */

WL_NOINLINE void sleep_inner(void)
{
	struct timespec ts = {0, 1000000};

	while (time(NULL) < deadline)
		nanosleep(&ts, NULL);
}

WL_NOINLINE void sleep_middle(void)
{
	sleep_inner();
	__asm__ volatile("");
}

WL_NOINLINE void sleep_outer(void)
{
	sleep_middle();
	__asm__ volatile("");
}

WL_NOINLINE void pipe_inner(void)
{
	char c;

	while (read(pipe_fds[0], &c, 1) == 1 && c)
		;
}

WL_NOINLINE void pipe_outer(void)
{
	pipe_inner();
	__asm__ volatile("");
}

WL_NOINLINE void futex_inner(void)
{
	struct timespec ts = {0, 10000000};

	while (time(NULL) < deadline)
		syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

WL_NOINLINE void futex_outer(void)
{
	futex_inner();
	__asm__ volatile("");
}

static void *sleeper(void *arg)
{
	struct sched_param sp = {.sched_priority = 1};

	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	/* Real-time (root only; else as is): woken, it runs at once instead of
	 * queueing behind a loaded machine's work, so its waits are about 1 ms
	 * each, not a heavy tail of run-queue delays that a sampled estimate
	 * (P < 1) needs many more waits to average out. */
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	sleep_outer();
	return NULL;
}

static void *piper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "piper");
	pipe_outer();
	return NULL;
}

static void *futexer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "futexer");
	futex_outer();
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec ts = {0, 20000000};
	pthread_t t[3];

	deadline = wl_deadline(argc, argv);
	if (pipe(pipe_fds))
		return 1;
	pthread_create(&t[0], NULL, sleeper, NULL);
	pthread_create(&t[1], NULL, piper, NULL);
	pthread_create(&t[2], NULL, futexer, NULL);
	pthread_setname_np(pthread_self(), "feeder");
	wl_ready();
	while (time(NULL) < deadline) {
		nanosleep(&ts, NULL);
		if (write(pipe_fds[1], "x", 1) != 1)
			return 1;
	}
	if (write(pipe_fds[1], "", 1) != 1)
		return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
