// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * main -> recurse x DEPTH -> leaf: DEPTH frames of the same function, built
 * without frame pointers; leaf spins on the CPU. The depth is a command-line
 * argument so the test that checks the frame count also sets it.
 * Usage: deep_recursion SECONDS DEPTH
 */
#include "workload.h"

static time_t deadline;

WL_NOINLINE unsigned long leaf(unsigned long x)
{
	return wl_spin_until(x, deadline);
}

/* Called with depth d, it is the d-th frame counted from the leaf. */
WL_NOINLINE unsigned long recurse(long depth, unsigned long x)
{
	unsigned long r = depth > 1 ? recurse(depth - 1, x + 1) : leaf(x);

	WL_OPAQUE(r);
	return r ^ (unsigned long)depth;
}

int main(int argc, char **argv)
{
	long depth = argc > 2 ? atol(argv[2]) : 300;
	unsigned long r;

	if (depth < 1) {
		fprintf(stderr, "deep_recursion: DEPTH must be at least 1\n");
		return 1;
	}
	deadline = wl_deadline(argc, argv);
	wl_ready();
	r = recurse(depth, 1);
	printf("%lu\n", r & 1);
	return 0;
}
