// SPDX-License-Identifier: Apache-2.0
/*
 * The CPU and the file pages of a file's first DWARF lookups (issue 22,
 * session 21): opens FILE's symbols ROUNDS times and names the hex addresses
 * given, printing the first lookup's thread CPU, the file's resident KiB in
 * this process before and after it, and the same after all lookups. Not built
 * by the Makefile; against a build B (its libomniprof.a):
 *
 *   cc -O2 -D_GNU_SOURCE -IB/../src -o first_lookup bench/first_lookup.c B/libomniprof.a \
 *      -lbpf -ldw -lelf -ldebuginfod -lz -lprotobuf-c -lcrypto -lcurl -lsqlite3 \
 *      -lmicrohttpd -lnghttp2 -liberty -lpthread
 *   ./first_lookup FILE ROUNDS ADDR...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "elf/elf_file.h"
#include "symbol/native_symbols.h"
static double cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static long rss_of(const char *path)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char l[512];
	int in = 0;
	long t = 0;
	unsigned long a, b, kb;
	while (fgets(l, sizeof l, f)) {
		if (sscanf(l, "%lx-%lx ", &a, &b) == 2)
			in = strstr(l, path) != NULL;
		else if (in && sscanf(l, "Rss: %lu kB", &kb) == 1)
			t += kb;
	}
	fclose(f);
	return t;
}
int main(int argc, char **argv)
{
	for (int r = 0; r < atoi(argv[2]); r++) {
		struct elf_file *ef;
		struct native_symbols *ns;
		struct sym_frame fr[16];
		if (elf_file__open(argv[1], -1, &ef))
			return 1;
		if (native_symbols__open(ef, &ns))
			return 2;
		long r0 = rss_of(argv[1]);
		double c0 = cpu();
		size_t tot = 0;
		for (int i = 3; i < argc; i++) {
			size_t n = native_symbols__frames(ns, strtoull(argv[i], 0, 16), fr, 16);
			if (i == 3)
				printf("first lookup %.2f ms rss %ld -> %ld KiB (%s)", cpu() - c0,
				       r0, rss_of(argv[1]), n ? fr[0].name : "?");
			tot += n;
		}
		printf("; all %d lookups %.2f ms, rss after %ld KiB\n", argc - 3, cpu() - c0,
		       rss_of(argv[1]));
		native_symbols__free(ns);
		elf_file__close(ef);
	}
	return 0;
}
