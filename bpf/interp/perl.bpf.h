/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Perl's kernel header: the BPF side of the Perl unwinder, its maps and its
 * step, perl_step(), which the walk (omniprof/unwind/walk.h) calls when it
 * meets Perl's runops loop (its row in OP_INTERPS, omniprof/frame_kinds.h).
 * A kernel-only fragment, not a unit: included by bpf/interp_steps.h only,
 * after omniprof/unwind/walk.h.
 *
 * perl_step() is a global function: the verifier checks it once, on its
 * own. Its set-up (the sampled thread's interpreter, PL_curcop and
 * PL_curstackinfo) is lazy: the first time in a sample the walk meets the
 * runops loop. It drives the walker's functions in the order
 * omniprof/interp/perl_walk.h describes.
 *
 * The walk state lives in a per-CPU array (too big for the BPF stack, and a
 * sample runs to its end on one CPU).
 */
#ifndef OMNIPROF_BPF_INTERP_PERL_BPF_H
#define OMNIPROF_BPF_INTERP_PERL_BPF_H

#include "omniprof/interp/perl_abi.h"
#include "kernel_read.h" /* OP_KFIELD: the thread's fs base */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OP_PERL_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} perl_stats SEC(".maps");

static __always_inline void perl_stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&perl_stats, &which);

	if (v)
		*v += 1;
}

#define OP_PERL_READ(pw, dst, size, addr) OP_READ_USER(pw, dst, size, addr)
#define OP_PERL_STAT(pw, which)		  perl_stat_inc(which)
#define OP_PERL_SEEK_FN			  __noinline int
#include "omniprof/interp/perl_walk.h"

/* pid -> where its interpreter is. Written by user space (src/interp/perl/). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct op_perl_proc);
} perl_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct op_perl_walker);
} perl_walk SEC(".maps");

/* OP_INTERP_STEP for OP_INTERP_PERL (omniprof/unwind/walk.h): the set-up the
 * first time the walk meets the runops loop, then op_perl_walk_step(). */
__noinline int perl_step(struct op_walk *w, struct op_frame *frame, int res)
{
	struct op_perl_walker *pw;
	struct op_perl_proc *proc;
	__u32 zero = 0, pid;
	__u64 id;

	if (!w || !frame)
		return res;
	pw = bpf_map_lookup_elem(&perl_walk, &zero);
	if (!pw)
		return res;
	if (op_walk__setup_once(w, OP_INTERP_PERL)) {
		pid = w->u.pid;
		proc = bpf_map_lookup_elem(&perl_procs, &pid);
		id = bpf_get_current_pid_tgid();
		if (proc) {
			struct task_struct *task = bpf_get_current_task_btf();

			if (op_perl_setup(pw, proc, OP_KFIELD(task, task_fsbase, __u64),
					  (__u32)id == (__u32)(id >> 32)))
				op_walk__set_ready(w, OP_INTERP_PERL);
		}
	}
	if (!op_walk__is_ready(w, OP_INTERP_PERL))
		return res;
	return op_perl_walk_step(pw, w, frame, res);
}

#endif
