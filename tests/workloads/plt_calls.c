// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -Wl,-z,lazy
/*
 * main -> plt_outer -> plt_loop, which calls libc's strlen through the PLT
 * (lazy binding, GNU ld's 16-byte .plt entries) in a tight loop, so a thread
 * stopped at random is often one instruction away from a PLT stub. The replay
 * suite stops it inside the stub and unwinds from there.
 * Usage: plt_calls SECONDS
 */
#include <string.h>

#include "workload.h"

static char text[64] = "a string whose length goes through the PLT";

WL_NOINLINE unsigned long plt_loop(time_t deadline)
{
	unsigned long x = 0;
	char *p = text;

	while (time(NULL) < deadline)
		for (int i = 0; i < 100000; i++) {
			WL_OPAQUE(p); /* a string the compiler cannot measure itself */
			x += strlen(p);
		}
	return x;
}

WL_NOINLINE unsigned long plt_outer(time_t deadline)
{
	unsigned long r = plt_loop(deadline);

	WL_OPAQUE(r);
	return r + 1;
}

int main(int argc, char **argv)
{
	time_t deadline = wl_deadline(argc, argv);

	wl_ready();
	printf("%lu\n", plt_outer(deadline) & 1);
	return 0;
}
