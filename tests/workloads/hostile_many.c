// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -pthread
/*
 * Sheer numbers, as a hostile process would use them against a profiler:
 *   threads N   N threads (64 KiB stacks); each wakes every ~2 s and runs
 *               mt_thread -> mt_work -> mt_leaf for about 0.2 ms, so many
 *               distinct threads are sampled
 *   deep N      one thread with a 256 MiB stack recurses N levels
 *               (dp_recurse, no frame pointers) and spins in dp_leaf
 * The main thread waits. The process names itself hm_threads or hm_deep.
 * Prints "ready" when everything is in place.
 * Usage: hostile_many threads|deep N SECONDS
 */
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "workload.h"

static time_t deadline;

WL_NOINLINE unsigned long mt_leaf(unsigned long x)
{
	return wl_spin_n(x, 60000);
}

WL_NOINLINE unsigned long mt_work(unsigned long x)
{
	unsigned long r = mt_leaf(x + 1);

	WL_OPAQUE(r);
	return r ^ 5;
}

static void *mt_thread(void *arg)
{
	unsigned long x = (unsigned long)arg;
	/* Spread the wake-ups: each thread starts at its own phase. */
	struct timespec nap = {1, (long)((x * 7919) % 1000) * 1000000};

	while (time(NULL) < deadline) {
		nanosleep(&nap, NULL);
		x = mt_work(x);
		WL_OPAQUE(x);
		nap.tv_sec = 2;
	}
	return NULL;
}

WL_NOINLINE unsigned long dp_leaf(unsigned long x)
{
	return wl_spin_until(x, deadline);
}

WL_NOINLINE unsigned long dp_recurse(long depth, unsigned long x)
{
	unsigned long r = depth > 1 ? dp_recurse(depth - 1, x + 1) : dp_leaf(x);

	WL_OPAQUE(r);
	return r ^ (unsigned long)depth;
}

static void *dp_thread(void *arg)
{
	return (void *)dp_recurse((long)arg, 1);
}

static int start(pthread_t *t, size_t stack, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, stack);
	err = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return err;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;
	pthread_t t;
	int err;

	if (argc < 4 || n < 1) {
		fprintf(stderr, "usage: hostile_many threads|deep N SECONDS\n");
		return 2;
	}
	deadline = time(NULL) + atoi(argv[3]);
	prctl(PR_SET_NAME, strcmp(argv[1], "threads") ? "hm_deep" : "hm_threads");
	if (!strcmp(argv[1], "threads")) {
		for (long i = 0; i < n; i++) {
			err = start(&t, 64 * 1024, mt_thread, (void *)i);
			if (err) {
				fprintf(stderr, "thread %ld: %s\n", i, strerror(err));
				return 1;
			}
			pthread_detach(t);
		}
	} else if (!strcmp(argv[1], "deep")) {
		err = start(&t, 256ul << 20, dp_thread, (void *)n);
		if (err) {
			fprintf(stderr, "deep thread: %s\n", strerror(err));
			return 1;
		}
	} else {
		return 2;
	}
	wl_ready();
	while (time(NULL) < deadline)
		sleep(1);
	return 0;
}
