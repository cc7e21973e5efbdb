// build: gcc -O2 -g -fPIC -shared -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * The first of the two libraries dlopen_swap maps at one address in turn:
 * sa_outer -> sa_mid -> sa_leaf, built without frame pointers, spinning until
 * *stop is set. swap_b.c has the same shape and size but other functions and
 * other frames, so that neither's unwind table nor names fit the other's code.
 */
#include "../workload.h"

WL_NOINLINE unsigned long sa_leaf(unsigned long x, const volatile int *stop, time_t deadline)
{
	do
		x = wl_spin_n(x, 1000000);
	while (!*stop && time(NULL) < deadline);
	return x;
}

WL_NOINLINE unsigned long sa_mid(unsigned long x, const volatile int *stop, time_t deadline)
{
	volatile unsigned char pad[96];
	unsigned long r;

	pad[x % sizeof(pad)] = (unsigned char)x;
	r = sa_leaf(x + pad[(x >> 2) % sizeof(pad)], stop, deadline);
	return r ^ pad[x % sizeof(pad)];
}

WL_NOINLINE unsigned long sa_outer(unsigned long x, const volatile int *stop, time_t deadline)
{
	unsigned long r = sa_mid(x + 1, stop, deadline);

	WL_OPAQUE(r);
	return r ^ 1;
}
