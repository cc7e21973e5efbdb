/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Off-CPU time in user space: the BPF side sends a thread's stacks when it
 * leaves the CPU (an op_trace flagged OP_TRACE_F_OFF_CPU) and a small
 * op_offcpu_end when it runs again; this joins them. Each recorded trace
 * waits here (tid -> the resolved trace and its switch-out time) until its
 * end record, which adds the time off CPU, scaled by 1/P, to `traces`
 * (counts in nanoseconds). Bounded: OFFCPU_PENDING_MAX threads and
 * OFFCPU_PENDING_BYTES of traces; past them a switch-out is not kept (counted).
 */
#ifndef OMNIPROF_PROFILE_OFFCPU_H
#define OMNIPROF_PROFILE_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/trace_table.h"
#include "util/hashmap.h"

/* P as the BPF side compares it: a switch-out is recorded when a random u32 is below it. */
#define OFFCPU_THRESHOLD_ONE (1ull << 32)
#define OFFCPU_PENDING_MAX   65536 /* as offcpu_pending in bpf/sampler.bpf.c */
#define OFFCPU_PENDING_BYTES (64u << 20)

struct offcpu_stats {
	uint64_t started;      /* switch-out traces received */
	uint64_t ended;	       /* ... joined with their end: time counted */
	uint64_t unmatched;    /* end records whose trace is not here (lost, or not kept) */
	uint64_t replaced;     /* a thread's trace replaced by a newer one: its end was lost */
	uint64_t pending_full; /* traces not kept: past the bounds */
	uint64_t exited;       /* traces dropped with their process's exit, never ended */
	uint64_t open_at_end;  /* threads still off CPU when the recording ended */
	uint64_t ns;	       /* off-CPU time counted, unscaled */
	uint64_t bytes_peak;
};

struct offcpu {
	uint64_t threshold;	   /* P * 2^32, 1..OFFCPU_THRESHOLD_ONE */
	struct hashmap pending;	   /* of struct offcpu_pending, owned */
	uint64_t bytes;		   /* memory of the pending traces */
	size_t max_pending;	   /* 0: OFFCPU_PENDING_MAX */
	uint64_t max_bytes;	   /* 0: OFFCPU_PENDING_BYTES */
	struct trace_table traces; /* finished waits; counts: nanoseconds, scaled */
	struct offcpu_stats stats;
};

/* threshold: P * 2^32 (offcpu__threshold()). Free with offcpu__clear(). */
void offcpu__init(struct offcpu *o, uint64_t threshold);
void offcpu__clear(struct offcpu *o); /* frees everything; accepts NULL */

/* P (0 < P <= 1) as a threshold, never 0: the BPF side then records something. */
uint64_t offcpu__threshold(double p);
/* ns seen at threshold, scaled to an unbiased estimate of the total: ns * 2^32 / threshold,
 * rounded to nearest, saturated at UINT64_MAX. */
uint64_t offcpu__scale(uint64_t ns, uint64_t threshold);

/* The switch-out of t->tid at start_ns: t is copied. 0 or -ENOMEM (counted as not kept). */
int offcpu__start(struct offcpu *o, const struct trace *t, uint64_t start_ns);
/*
 * tid ran again at end_ns after its switch-out at start_ns: the pending trace
 * (when its start matches) gets the scaled time in o->traces. 0, -ENOENT
 * (nothing to join: counted) or -ENOMEM.
 */
int offcpu__end(struct offcpu *o, uint32_t tid, uint64_t start_ns, uint64_t end_ns);
/* Drops the pending traces of the processes gone() says exited (their end
 * records were lost: a thread runs to exit). Returns how many. */
size_t offcpu__purge(struct offcpu *o, bool (*gone)(void *ctx, uint32_t pid), void *ctx);
/* The recording ended: pending traces are counted as open and dropped. */
void offcpu__finish(struct offcpu *o);

#endif
