/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process's own heap: how it is tuned for a long-running profiler and
 * how much of it is in use (the symbol cache charges each file what loading
 * and looking up its symbols allocated, elfutils' allocations included).
 */
#ifndef OMNIPROF_UTIL_MEMORY_H
#define OMNIPROF_UTIL_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Serves every allocation of 256 KiB or more (stack-delta tables, DWARF
 * sections elfutils decompresses, kallsyms) from its own mapping, so freeing
 * it gives the memory back at once. glibc would otherwise raise that
 * threshold after the first such free and take later big buffers from the
 * heap, where a small allocation above them keeps them resident. Smaller
 * free pages stay in the heap for reuse until memory__release(). All threads
 * share one arena (see memory.c). Call once, before the big allocations and
 * the threads.
 */
void memory__tune(void);
/* Bytes of heap in use (every arena), for charging allocations to their cause. */
size_t memory__heap_in_use(void);
/* Returns free heap pages to the kernel (after a batch of frees), when
 * there are at least 16 MiB of them: at once when that much is new since
 * the last trim, otherwise at most once a minute. */
void memory__release(void);
/* The same at a given monotonic time (tests). */
void memory__release_at(uint64_t now_ns);
/*
 * The rule memory__release() follows: free_now bytes of free heap, its
 * lowest since the last trim, that trim's time (0: none yet), the time now.
 */
bool memory__trim_due(size_t free_now, size_t free_floor, uint64_t last_trim_ns, uint64_t now_ns);
/* How many times memory__release() trimmed (for tests and -v). */
unsigned long memory__release_trims(void);
/* Returns every free heap page to the kernel now, whatever their amount (after a rare large free).
 */
void memory__trim(void);

/*
 * Kernel memory of the BPF maps this process holds a descriptor of: the sum
 * of each map's fdinfo "memlock" (the kernel's own estimate), each map
 * once; *n_maps (may be NULL) gets their number. What the agent's tables
 * cost outside its heap. Reads /proc/self/fdinfo: call it now and then.
 */
size_t memory__bpf_map_bytes(size_t *n_maps);

/*
 * Takes the pages of the binary's and its libraries' read-only mappings out
 * of this process (MADV_DONTNEED: clean file pages, still in the page cache,
 * faulted in again when run or read), skipping any mapping with pages of its
 * own (relocated data). What start-up alone ran (the BPF loader, BTF,
 * OpenSSL's and libcurl's set-up, option parsing) then no longer counts in
 * the RSS. Returns the resident bytes given back. Reads /proc/self/smaps.
 */
size_t memory__drop_code_pages(void);

#endif
