/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * What bench/fp_floor.bpf.c and its loader bench/fp_floor.c share: the record
 * walk_send puts in the ring and the counters' indices. The first three are
 * the sampler's (enum op_stat in omniprof/abi.h: samples, idle, filtered), so
 * bench/benchlib.py counts both programs' walked samples alike.
 */
#ifndef FP_FLOOR_H
#define FP_FLOOR_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The frames one walk asks for (the kernel stops at kernel.perf_event_max_stack, 127 by default).
 */
#define FP_FLOOR_FRAMES	  128
#define FP_FLOOR_MAX_PIDS 1024

enum fp_floor_stat {
	FP_FLOOR_STAT_SAMPLES = 0, /* program runs */
	FP_FLOOR_STAT_IDLE,	   /* pid 0 */
	FP_FLOOR_STAT_FILTERED,	   /* not a target */
	FP_FLOOR_STAT_BYTES,	   /* bpf_get_stack's returns summed: 8 per frame */
	FP_FLOOR_STAT_ERRORS,	   /* bpf_get_stack failed */
	FP_FLOOR_STAT_RING_FULL,   /* walk_send: the record dropped */
	FP_FLOOR_STAT_COUNT,
};

struct fp_floor_record {
	__u32 pid;
	__u32 tid;
	__u64 ktime_ns;
	__u64 n_ips;
	__u64 ips[FP_FLOOR_FRAMES];
};

_Static_assert(sizeof(struct fp_floor_record) == 24 + 8 * FP_FLOOR_FRAMES, "no padding");

#endif
