/* SPDX-License-Identifier: Apache-2.0 */
/*
 * V8's kernel header: its maps and its step, v8_step(), which the walk
 * (omniprof/unwind/walk.h) calls when a frame's pc is in one of the pid's
 * OP_INTERP_V8 ranges (node's builtins, V8's JIT code: ranges it unwinds
 * itself, OP_INTERP_RANGE_F_UNWINDS). A kernel-only fragment, included by
 * bpf/interp_steps.h only, after omniprof/unwind/walk.h.
 *
 * No per-sample set-up: every frame is found from the frame pointer, so a
 * worker thread is walked like the main one.
 */
#ifndef OMNIPROF_BPF_INTERP_V8_BPF_H
#define OMNIPROF_BPF_INTERP_V8_BPF_H

#include "omniprof/interp/v8_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OP_V8_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} v8_stats SEC(".maps");

static __always_inline void v8_stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&v8_stats, &which);

	if (v)
		*v += 1;
}

/* pid -> its builtins and offsets. Written by user space (src/interp/v8/). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct op_v8_proc);
} v8_procs SEC(".maps");

#define OP_V8_READ(ctx, dst, size, addr) OP_READ_USER(ctx, dst, size, addr)
#define OP_V8_STAT(ctx, which)		 v8_stat_inc(which)
#include "omniprof/interp/v8_walk.h"

/* OP_INTERP_STEP for OP_INTERP_V8: frames in V8's code are its own to unwind. */
__noinline int v8_step(struct op_walk *w, struct op_frame *frame, int res)
{
	struct op_v8_proc *proc;
	__u32 pid;

	if (!w || !frame || res != OP_STEP_RUNTIME_UNWINDS)
		return res;
	pid = w->u.pid;
	proc = bpf_map_lookup_elem(&v8_procs, &pid);
	if (!proc) {
		v8_stat_inc(OP_V8_STAT_NO_PROC);
		return res;
	}
	return op_v8_walk_step(NULL, proc, &w->u, frame);
}

#endif
