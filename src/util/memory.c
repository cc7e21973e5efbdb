// SPDX-License-Identifier: Apache-2.0
#include "util/memory.h"

#include <malloc.h>

#define MMAP_THRESHOLD (256 << 10)
#define TRIM_THRESHOLD (16 << 20)
#define TOP_PAD	       (4 << 20)

void memory__tune(void)
{
	/* Setting it also turns glibc's dynamic threshold off. */
	mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	/*
	 * Building tables frees and allocates hundreds of KiB per file: with
	 * glibc's 128 KiB trim threshold the heap top went back to the kernel
	 * after nearly every file and faulted in again for the next (a TLB
	 * shootdown each time), a third of the start-up CPU. Free pages stay
	 * until memory__release(), called after each such batch.
	 */
	mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
	mallopt(M_TOP_PAD, TOP_PAD);
}

size_t memory__heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	/* Small chunks in use plus the big ones served by their own mappings. */
	return mi.uordblks + mi.hblkhd;
}

/* Free heap below which a release is not worth its cost (see below). */
#define RELEASE_MIN TRIM_THRESHOLD

void memory__release(void)
{
	struct mallinfo2 mi = mallinfo2();

	/*
	 * Trimming returns pages with madvise over the whole heap, and each call
	 * ends in a TLB shootdown on every CPU; the next interval then faults the
	 * same pages in again. Done every agent interval, the two cost more than
	 * building the interval's profile. So up to the trim threshold of free
	 * heap stays for reuse, as it would at the top of the heap.
	 */
	if (mi.fordblks < RELEASE_MIN)
		return;
	malloc_trim(0);
}
