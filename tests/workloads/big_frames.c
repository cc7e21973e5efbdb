// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * main -> recurse x DEPTH -> leaf, each recurse frame holding a 480-byte
 * local array: a stack deeper than 128 KiB (700 frames: about 340 KiB), as
 * a compiler's deep template instantiation makes, built without frame
 * pointers; leaf spins on the CPU.
 * Usage: big_frames SECONDS DEPTH
 */
#include "workload.h"

static time_t deadline;

WL_NOINLINE unsigned long leaf(unsigned long x)
{
	return wl_spin_until(x, deadline);
}

/* The array is written at both ends so that every frame's pages are touched. */
WL_NOINLINE unsigned long recurse(long depth, unsigned long x)
{
	volatile unsigned char pad[480];
	unsigned long r;

	pad[0] = (unsigned char)x;
	pad[sizeof(pad) - 1] = (unsigned char)depth;
	r = depth > 1 ? recurse(depth - 1, x + pad[0]) : leaf(x);
	WL_OPAQUE(r);
	return r ^ pad[sizeof(pad) - 1];
}

int main(int argc, char **argv)
{
	long depth = argc > 2 ? atol(argv[2]) : 700;
	unsigned long r;

	if (depth < 1) {
		fprintf(stderr, "big_frames: DEPTH must be at least 1\n");
		return 1;
	}
	deadline = wl_deadline(argc, argv);
	wl_ready();
	r = recurse(depth, 1);
	printf("%lu\n", r & 1);
	return 0;
}
