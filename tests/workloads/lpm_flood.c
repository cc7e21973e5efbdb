// build: gcc -O2
/*
 * Fills its share of the profiler's LPM trie: maps the files DIR/f0 ..
 * DIR/f<NFILES-1> executable, cycling through them, RANGES times, each over
 * [base + 4 KiB, base + 64 GiB - 4 KiB) of its own 64 GiB-aligned slot.
 * Such a range splits into 46 power-of-two blocks (one LPM entry each), the
 * most a range of that size can. Nothing is touched: the file is a few
 * bytes, the mapping only reserves address space. Says "ready" and sleeps.
 * Usage: lpm_flood SECONDS DIR NFILES RANGES
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload.h"

#define SLOT_BITS 36
#define PAGE	  4096ul
#define FIRST	  0x100000000000ul /* 16 TiB: far from the program, heap and libraries */

int main(int argc, char **argv)
{
	time_t deadline = wl_deadline(argc, argv);
	int nfiles = argc > 3 ? atoi(argv[3]) : 0, ranges = argc > 4 ? atoi(argv[4]) : 0;
	char path[4096];

	if (argc < 5 || nfiles < 1 || ranges < 1) {
		fprintf(stderr, "usage: lpm_flood SECONDS DIR NFILES RANGES\n");
		return 2;
	}
	for (int i = 0; i < ranges; i++) {
		uintptr_t base = FIRST + ((uintptr_t)i << SLOT_BITS);
		size_t len = (1ul << SLOT_BITS) - 2 * PAGE;
		int fd;
		void *p;

		snprintf(path, sizeof(path), "%s/f%d", argv[2], i % nfiles);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		p = mmap((void *)(base + PAGE), len, PROT_READ | PROT_EXEC,
			 MAP_PRIVATE | MAP_FIXED_NOREPLACE | MAP_NORESERVE, fd, 0);
		close(fd);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
	}
	wl_ready();
	while (time(NULL) < deadline)
		sleep(1);
	return 0;
}
