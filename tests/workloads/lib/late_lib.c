// build: gcc -O2 -g -fPIC -shared -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * The shared library that dlopen_late loads a while after it started:
 * lib_outer -> lib_mid -> lib_leaf, built without frame pointers.
 */
#include "../workload.h"

WL_NOINLINE unsigned long lib_leaf(unsigned long x, time_t deadline)
{
	return wl_spin_until(x, deadline);
}

WL_NOINLINE unsigned long lib_mid(unsigned long x, time_t deadline)
{
	volatile unsigned char pad[96];
	unsigned long r;

	pad[x % sizeof(pad)] = (unsigned char)x;
	r = lib_leaf(x + pad[(x >> 2) % sizeof(pad)], deadline);
	return r ^ pad[x % sizeof(pad)];
}

WL_NOINLINE unsigned long lib_outer(unsigned long x, time_t deadline)
{
	unsigned long r = lib_mid(x + 1, deadline);

	WL_OPAQUE(r);
	return r ^ 1;
}
