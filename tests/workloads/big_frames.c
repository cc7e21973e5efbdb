// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * main -> recurse x DEPTH -> leaf, each recurse frame holding a 480-byte
 * local array: a stack deeper than 128 KiB (700 frames: about 340 KiB), as
 * a compiler's deep template instantiation makes, built without frame
 * pointers; leaf spins on the CPU. With "mprotect", leaf instead flips the
 * protection of 64 MiB it wrote, page tables and all, under the process's
 * mmap lock held for writing: a sample there is taken while the lock a
 * lookup of the stack's mapping needs is taken (issue 17: cc1plus's copies
 * in mmap were cut at 128 KiB).
 * Usage: big_frames SECONDS DEPTH [mprotect]
 */
#include <string.h>
#include <sys/mman.h>

#include "workload.h"

#define FLIP_BYTES (64ul << 20)

static time_t deadline;
static unsigned char *flip; /* mprotect mode: the region flipped, else NULL */

WL_NOINLINE unsigned long leaf(unsigned long x)
{
	if (!flip)
		return wl_spin_until(x, deadline);
	while (time(NULL) < deadline) {
		if (mprotect(flip, FLIP_BYTES, PROT_READ) ||
		    mprotect(flip, FLIP_BYTES, PROT_READ | PROT_WRITE))
			exit(1);
		x++;
	}
	return x;
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
	if (argc > 3 && !strcmp(argv[3], "mprotect")) {
		flip = mmap(NULL, FLIP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		if (flip == MAP_FAILED)
			return 1;
		memset(flip, 1, FLIP_BYTES);
	}
	deadline = wl_deadline(argc, argv);
	wl_ready();
	r = recurse(depth, 1);
	printf("%lu\n", r & 1);
	return 0;
}
