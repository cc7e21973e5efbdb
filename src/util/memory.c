// SPDX-License-Identifier: Apache-2.0
#include "util/memory.h"

#include <malloc.h>

#define MMAP_THRESHOLD (256 << 10)

void memory__tune(void)
{
	/* Setting it also turns glibc's dynamic threshold off. */
	mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
}

size_t memory__heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	/* Small chunks in use plus the big ones served by their own mappings. */
	return mi.uordblks + mi.hblkhd;
}

void memory__release(void)
{
	malloc_trim(0);
}
