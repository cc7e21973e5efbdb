/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRuby's kernel header: the BPF side of the Ruby unwinder, its maps and its
 * step, ruby_step(), which the walk (omniprof/unwind/walk.h) calls when it
 * meets rb_vm_exec (its row in OP_INTERPS, omniprof/frame_kinds.h). A
 * kernel-only fragment, not a unit: included by bpf/interp_steps.h only,
 * after omniprof/unwind/walk.h.
 *
 * The set-up (the sampled thread's execution context, through its thread
 * pointer, the task's fs base) runs the first time in a sample the walk
 * meets the VM loop; then omniprof/interp/ruby_walk.h writes the frames.
 * The walk state lives in a per-CPU array (a sample runs to its end on one
 * CPU).
 */
#ifndef OMNIPROF_BPF_INTERP_RUBY_BPF_H
#define OMNIPROF_BPF_INTERP_RUBY_BPF_H

#include "omniprof/interp/ruby_abi.h"
#include "kernel_read.h" /* OP_KFIELD: the thread's fs base */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OP_RB_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} rb_stats SEC(".maps");

static __always_inline void rb_stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&rb_stats, &which);

	if (v)
		*v += 1;
}

#define OP_RB_READ(rb, dst, size, addr) OP_READ_USER(rb, dst, size, addr)
#define OP_RB_STAT(rb, which)		rb_stat_inc(which)
#define OP_RB_SEEK_FN			__noinline int
#include "omniprof/interp/ruby_walk.h"

/* pid -> where its execution contexts are. Written by user space (src/interp/ruby/). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct op_rb_proc);
} rb_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct op_rb_walker);
} rb_walk SEC(".maps");

/* The set-up: the sampled thread's current control frame. 1 when Ruby frames follow. */
static __always_inline int rb_walk_setup(struct op_rb_walker *rb, __u32 pid)
{
	struct op_rb_proc *proc = bpf_map_lookup_elem(&rb_procs, &pid);
	struct task_struct *task = bpf_get_current_task_btf();

	if (!proc)
		return 0;
	return op_rb_begin(rb, proc, OP_KFIELD(task, task_fsbase, __u64));
}

/* OP_INTERP_STEP for OP_INTERP_RUBY (omniprof/unwind/walk.h): the set-up the
 * first time the walk meets the VM loop, then op_rb_walk_step(). */
__noinline int ruby_step(struct op_walk *w, struct op_frame *frame, int res)
{
	struct op_rb_walker *rb;
	__u32 zero = 0;

	if (!w || !frame)
		return res;
	rb = bpf_map_lookup_elem(&rb_walk, &zero);
	if (!rb)
		return res;
	if (op_walk__setup_once(w, OP_INTERP_RUBY) && rb_walk_setup(rb, w->u.pid))
		op_walk__set_ready(w, OP_INTERP_RUBY);
	if (!op_walk__is_ready(w, OP_INTERP_RUBY))
		return res == OP_STEP_RUNTIME_UNWINDS ? op_rb_jit_alone(w, frame) : res;
	return op_rb_walk_step(rb, w, frame, res);
}

#endif
