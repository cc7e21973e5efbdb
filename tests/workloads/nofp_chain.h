/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The body of nofp_gcc.c and nofp_clang.c: main -> a_01 -> ... -> a_20 -> leaf,
 * compiled without frame pointers. The links differ in how they use the stack
 * so that the unwind rules (CFA offset from the stack pointer, CFA from rbp,
 * pushed callee-saved registers) differ from one frame to the next:
 *   LINK_PLAIN   only the return address (and alignment) on the stack
 *   LINK_ARRAY   a local array: a larger fixed CFA offset
 *   LINK_REGS    five values live across the call: pushes callee-saved
 *                registers, rbp among them, so rbp holds no frame pointer
 *   LINK_VLA     a variable-length array: the compiler keeps the CFA in rbp
 * Every link uses its callee's result, so no call becomes a jump.
 */
#include "workload.h"

static time_t deadline;

/* A workload may wait in the leaf before it spins (idle_nofp.c: the whole chain
 * is on its stack when it wakes); it may move the deadline. */
#ifndef NOFP_LEAF_WAIT
#define NOFP_LEAF_WAIT(deadline) ((void)0)
#endif

WL_NOINLINE unsigned long leaf(unsigned long x)
{
	NOFP_LEAF_WAIT(deadline);
	return wl_spin_until(x, deadline);
}

#define LINK_PLAIN(n, next)                                                                        \
	WL_NOINLINE unsigned long a_##n(unsigned long x)                                           \
	{                                                                                          \
		unsigned long r = next(x + 1##n);                                                  \
		WL_OPAQUE(r);                                                                      \
		return r ^ 1##n;                                                                   \
	}

#define LINK_ARRAY(n, next, size)                                                                  \
	WL_NOINLINE unsigned long a_##n(unsigned long x)                                           \
	{                                                                                          \
		volatile unsigned char buf[size];                                                  \
		buf[x % (size)] = (unsigned char)x;                                                \
		unsigned long r = next(x + buf[(x >> 3) % (size)]);                                \
		return r ^ buf[x % (size)];                                                        \
	}

#define LINK_REGS(n, next)                                                                         \
	WL_NOINLINE unsigned long a_##n(unsigned long x)                                           \
	{                                                                                          \
		unsigned long p = x * 3, q = x * 5, s = x * 7, t = x * 11, u = x * 13;             \
		WL_OPAQUE(p);                                                                      \
		WL_OPAQUE(q);                                                                      \
		WL_OPAQUE(s);                                                                      \
		WL_OPAQUE(t);                                                                      \
		WL_OPAQUE(u);                                                                      \
		unsigned long r = next(x + 1##n);                                                  \
		WL_OPAQUE(p);                                                                      \
		WL_OPAQUE(q);                                                                      \
		WL_OPAQUE(s);                                                                      \
		WL_OPAQUE(t);                                                                      \
		WL_OPAQUE(u);                                                                      \
		return r ^ p ^ q ^ s ^ t ^ u;                                                      \
	}

#define LINK_VLA(n, next)                                                                          \
	WL_NOINLINE unsigned long a_##n(unsigned long x)                                           \
	{                                                                                          \
		volatile unsigned char buf[16 + (x & 63)];                                         \
		buf[0] = (unsigned char)x;                                                         \
		unsigned long r = next(x + buf[0]);                                                \
		return r ^ buf[0];                                                                 \
	}

LINK_PLAIN(20, leaf)
LINK_REGS(19, a_20)
LINK_ARRAY(18, a_19, 9000)
LINK_ARRAY(17, a_18, 8)
LINK_PLAIN(16, a_17)
LINK_REGS(15, a_16)
LINK_ARRAY(14, a_15, 1000)
LINK_PLAIN(13, a_14)
LINK_VLA(12, a_13)
LINK_REGS(11, a_12)
LINK_ARRAY(10, a_11, 40)
LINK_PLAIN(09, a_10)
LINK_ARRAY(08, a_09, 5000)
LINK_REGS(07, a_08)
LINK_ARRAY(06, a_07, 200)
LINK_VLA(05, a_06)
LINK_PLAIN(04, a_05)
LINK_REGS(03, a_04)
LINK_ARRAY(02, a_03, 24)
LINK_PLAIN(01, a_02)

int main(int argc, char **argv)
{
	unsigned long r;

	deadline = wl_deadline(argc, argv);
	wl_ready();
	r = a_01((unsigned long)argc);
	printf("%lu\n", r & 1);
	return 0;
}
