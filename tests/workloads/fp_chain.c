// build: gcc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls
/*
 * A chain of 24 functions, main -> chain_01 -> ... -> chain_24 -> leaf, built
 * with frame pointers; leaf spins on the CPU. The end-to-end tests profile it
 * and look for the whole chain, in order, in the leaf's samples.
 * Usage: fp_chain SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int keep_running = 1;
static time_t deadline;

__attribute__((noinline)) unsigned long leaf(unsigned long x)
{
	unsigned long n = 0;

	while (keep_running) {
		for (int i = 0; i < 1000000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		if (time(NULL) >= deadline)
			keep_running = 0;
		n++;
	}
	return x + n;
}

/* Each link calls the next and uses the result, so no call becomes a jump. */
#define LINK(n, next)                                                                              \
	__attribute__((noinline)) unsigned long chain_##n(unsigned long x)                         \
	{                                                                                          \
		unsigned long r = next(x + 1##n % 97);                                             \
		__asm__ volatile("" : "+r"(r));                                                    \
		return r ^ 1##n;                                                                   \
	}

LINK(24, leaf)
LINK(23, chain_24)
LINK(22, chain_23)
LINK(21, chain_22)
LINK(20, chain_21)
LINK(19, chain_20)
LINK(18, chain_19)
LINK(17, chain_18)
LINK(16, chain_17)
LINK(15, chain_16)
LINK(14, chain_15)
LINK(13, chain_14)
LINK(12, chain_13)
LINK(11, chain_12)
LINK(10, chain_11)
LINK(09, chain_10)
LINK(08, chain_09)
LINK(07, chain_08)
LINK(06, chain_07)
LINK(05, chain_06)
LINK(04, chain_05)
LINK(03, chain_04)
LINK(02, chain_03)
LINK(01, chain_02)

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 10;
	unsigned long r;

	deadline = time(NULL) + seconds;
	printf("ready\n");
	fflush(stdout);
	r = chain_01(1);
	printf("%lu\n", r & 1);
	return 0;
}
