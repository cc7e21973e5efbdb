// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * main -> sort_outer -> sort_inner -> qsort (libc) -> ... -> cmp_compare ->
 * cmp_leaf: the comparator does a little arithmetic per call, so most samples
 * land in cmp_leaf with libc's sorting frames (built without frame pointers,
 * their number depends on the merge-sort recursion) between sort_inner and
 * cmp_compare.
 * Usage: libc_qsort SECONDS
 */
#include "workload.h"

#define N_ITEMS 64

static unsigned long items[N_ITEMS];

WL_NOINLINE unsigned long cmp_leaf(unsigned long a, unsigned long b)
{
	return wl_spin_n(a ^ b, 20000);
}

WL_NOINLINE int cmp_compare(const void *pa, const void *pb)
{
	unsigned long a = *(const unsigned long *)pa, b = *(const unsigned long *)pb;
	unsigned long r = cmp_leaf(a, b);

	WL_OPAQUE(r);
	return (a > b) - (a < b) + (int)(r & 0);
}

/* Fills the array in a fresh pseudo-random order, then sorts it. */
WL_NOINLINE unsigned long sort_inner(unsigned long seed)
{
	for (int i = 0; i < N_ITEMS; i++) {
		seed = seed * 6364136223846793005ul + 1442695040888963407ul;
		items[i] = seed >> 16;
	}
	qsort(items, N_ITEMS, sizeof(items[0]), cmp_compare);
	return items[0] ^ items[N_ITEMS - 1];
}

WL_NOINLINE unsigned long sort_outer(time_t deadline)
{
	unsigned long seed = 1, r = 0;

	while (time(NULL) < deadline) {
		r ^= sort_inner(seed);
		seed += r | 1;
	}
	return r;
}

int main(int argc, char **argv)
{
	time_t deadline = wl_deadline(argc, argv);
	unsigned long r;

	wl_ready();
	r = sort_outer(deadline);
	printf("%lu\n", r & 1);
	return 0;
}
