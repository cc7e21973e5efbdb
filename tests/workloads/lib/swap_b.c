// build: gcc -O2 -g -fPIC -shared -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * The second of the two libraries dlopen_swap maps at one address in turn
 * (see swap_a.c): sb_outer -> sb_mid -> sb_leaf, without frame pointers,
 * frames of other sizes than swap_a's, and past swap_a's code (see sb_filler).
 */
#include "../workload.h"

/*
 * Never called: first in the file, so sb_* lie past the end of swap_a's code
 * (its table has no rule there), as a larger library's would. Walked with
 * swap_a's table, swap_b's samples stop at once ("no unwind rule") and meet
 * no unknown address, which would have the maps read again anyway.
 */
#define SB_STORE(i) p[(i)] = p[(i) + 1] * (i);
#define SB_STORE8(i)                                                                               \
	SB_STORE(i)                                                                                \
	SB_STORE(i + 1) SB_STORE(i + 2) SB_STORE(i + 3) SB_STORE(i + 4) SB_STORE(i + 5)            \
	    SB_STORE(i + 6) SB_STORE(i + 7)
__attribute__((used)) WL_NOINLINE void sb_filler(volatile unsigned long *p){
    SB_STORE8(0) SB_STORE8(8) SB_STORE8(16) SB_STORE8(24) SB_STORE8(32) SB_STORE8(40) SB_STORE8(48)
	SB_STORE8(56) SB_STORE8(64) SB_STORE8(72)}

WL_NOINLINE unsigned long sb_leaf(unsigned long x, const volatile int *stop, time_t deadline)
{
	volatile unsigned char pad[40];

	pad[x % sizeof(pad)] = (unsigned char)x;
	do
		x = wl_spin_n(x + pad[(x >> 3) % sizeof(pad)], 1000000);
	while (!*stop && time(NULL) < deadline);
	return x;
}

WL_NOINLINE unsigned long sb_mid(unsigned long x, const volatile int *stop, time_t deadline)
{
	volatile unsigned char pad[232];
	unsigned long r;

	pad[x % sizeof(pad)] = (unsigned char)x;
	r = sb_leaf(x + pad[(x >> 2) % sizeof(pad)], stop, deadline);
	return r ^ pad[x % sizeof(pad)];
}

WL_NOINLINE unsigned long sb_outer(unsigned long x, const volatile int *stop, time_t deadline)
{
	volatile unsigned char pad[152];
	unsigned long r;

	pad[x % sizeof(pad)] = (unsigned char)x;
	r = sb_mid(x + 3, stop, deadline);
	WL_OPAQUE(r);
	return r ^ pad[x % sizeof(pad)];
}
