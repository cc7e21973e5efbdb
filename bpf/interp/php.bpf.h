/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PHP's kernel header: the BPF side of the PHP unwinder, its maps and its
 * step, php_step(), which the walk (omniprof/unwind/walk.h) calls when it
 * meets the Zend VM (execute_ex) or OPcache's JIT code (its row in
 * OP_INTERPS, omniprof/frame_kinds.h). A kernel-only fragment, not a unit:
 * included by bpf/interp_steps.h only, after omniprof/unwind/walk.h.
 *
 * The set-up (one read: executor_globals.current_execute_data) is lazy: the
 * first time in a sample the walk meets the VM. NTS builds only: one
 * executor_globals per process.
 */
#ifndef OMNIPROF_BPF_INTERP_PHP_BPF_H
#define OMNIPROF_BPF_INTERP_PHP_BPF_H

#include "omniprof/interp/php_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OP_PHP_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} php_stats SEC(".maps");

static __always_inline void php_stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&php_stats, &which);

	if (v)
		*v += 1;
}

#define OP_PHP_READ(php, dst, size, addr) OP_READ_USER(php, dst, size, addr)
#define OP_PHP_STAT(php, which)		  php_stat_inc(which)
#include "omniprof/interp/php_walk.h"

/* pid -> where its engine keeps its frames. Written by user space (src/interp/php/). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct op_php_proc);
} php_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct op_php_walker);
} php_walk SEC(".maps");

/* OP_INTERP_STEP for OP_INTERP_PHP (omniprof/unwind/walk.h): the set-up the
 * first time the walk meets the VM, then op_php_walk_step(). */
__noinline int php_step(struct op_walk *w, struct op_frame *frame, int res)
{
	struct op_php_walker *php;
	struct op_php_proc *proc;
	__u32 zero = 0, pid;

	if (!w || !frame)
		return res;
	php = bpf_map_lookup_elem(&php_walk, &zero);
	if (!php)
		return res;
	pid = w->u.pid;
	if (op_walk__setup_once(w, OP_INTERP_PHP)) {
		proc = bpf_map_lookup_elem(&php_procs, &pid);
		if (proc) {
			if (op_php_begin(php, proc))
				op_walk__set_ready(w, OP_INTERP_PHP);
		} else {
			php->proc.vm_body_pc = 0;
		}
	}
	return op_php_walk_step(php, w, frame, res, op_walk__is_ready(w, OP_INTERP_PHP));
}

#endif
