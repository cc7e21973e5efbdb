/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Executable file mappings as they are made, from perf's side band: one
 * PERF_COUNT_SW_DUMMY event per CPU with attr.mmap2 (no mmap_data: the
 * kernel reports only mappings with VM_EXEC, also mprotect adding it), each
 * with a small ring of its own. It tells user space that a process mapped
 * new code over a range it knew (dlclose, then dlopen at the same address),
 * which no sample reports (the address is in a known mapping). It needs no
 * BTF and no BPF program, and costs the sampling path nothing; each mapping
 * with PROT_EXEC on the host costs the mapping process the kernel's record
 * (its path formatted, a record written into its CPU's ring).
 *
 * The records' times are CLOCK_MONOTONIC (attr.use_clockid), the clock of
 * the BPF side's ktime_ns, so the sampler queues them among the ring's
 * records by time.
 */
#ifndef OMNIPROF_SAMPLER_MMAP_EVENTS_H
#define OMNIPROF_SAMPLER_MMAP_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/abi.h"

/* Each CPU's ring: data pages (a power of two) after the control page. About
 * 150 bytes a record: some 100 records between two reads. */
#define MMAP_EVENTS_RING_PAGES 4

struct mmap_events_stats {
	uint64_t records;   /* executable file mappings reported (any process) */
	uint64_t anonymous; /* ... of no file (JIT code, pseudo files): left to the samples */
	uint64_t lost;	    /* records the kernel dropped, its ring full (PERF_RECORD_LOST) */
	uint64_t malformed; /* records too short or too long to read */
	uint64_t open_errors;
};

struct mmap_events;

/* Nothing open yet, for max_cpus CPUs (possible CPUs); NULL on ENOMEM. Free with
 * mmap_events__free(). */
struct mmap_events *mmap_events__new(int max_cpus);
void mmap_events__free(struct mmap_events *me); /* accepts NULL */
/* Opens cpu's event and maps its ring: its fd (to wait on: readable past each
 * record) or -errno (counted; nothing left open). */
int mmap_events__open_cpu(struct mmap_events *me, int cpu);
void mmap_events__close_cpu(struct mmap_events *me, int cpu);
/* The fd of cpu's event, -1 when none. */
int mmap_events__fd(const struct mmap_events *me, int cpu);

/* Called for each executable file mapping read, oldest first per CPU. */
typedef void (*mmap_event_fn)(void *ctx, const struct op_mmap_event *e);
/* Reads what every CPU's ring holds (one reader at a time). Returns how many
 * records were passed to fn. */
size_t mmap_events__read(struct mmap_events *me, mmap_event_fn fn, void *ctx);
void mmap_events__stats(const struct mmap_events *me, struct mmap_events_stats *out);

#endif
