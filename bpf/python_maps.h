/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF side of the Python unwinder: its maps and the two calls the
 * sampler makes (include after omniprof/unwind/native.h, in sampler.bpf.c only).
 *
 *   py_walk_begin(task, pid)  before the user walk: is pid a Python process
 *                             (user space put it in `py_procs`)? Then find
 *                             the sampled thread's thread state and the
 *                             frame it runs. True when the walk must use
 *                             py_walk_step() instead of op_unwind_step().
 *   py_walk_step(u, frame)    one step of the mixed walk (op_py_step()).
 *
 * Both drive the walker's functions in the order omniprof/interp/python_walk.h describes,
 * as user_unwind__run_python() does in user space.
 *
 * The walk state lives in a per-CPU array (too big for the BPF stack, and a
 * sample runs to its end on one CPU).
 */
#ifndef OMNIPROF_BPF_PYTHON_MAPS_H
#define OMNIPROF_BPF_PYTHON_MAPS_H

#include "omniprof/interp/python_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OP_PY_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} py_stats SEC(".maps");

static __always_inline void py_stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&py_stats, &which);

	if (v)
		*v += 1;
}

#define OP_PY_STAT(which) py_stat_inc(which)
#define OP_PY_FILL_FN	  __noinline int
#include "omniprof/interp/python_walk.h"

/* pid -> where its interpreter is. Written by user space (src/interp/python/). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct op_py_proc);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct op_py_walker);
} py_walk SEC(".maps");

/*
 * Thread id -> its thread state, from an earlier search, so most samples read
 * one thread id instead of walking the interpreter's list of threads. Checked
 * at every use (its thread_id must still be the sampled thread's fs base);
 * on a mismatch the list is searched again. A thread state freed while its
 * memory still holds the id would pass the check: CPython reuses such memory
 * for the thread's next state, which is then the right one.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);   /* thread id */
	__type(value, __u64); /* its PyThreadState */
} py_tstate_cache SEC(".maps");

static long py_thread_search_one(__u32 index, void *data)
{
	struct op_py_walker *py;
	__u32 zero = 0;

	(void)index;
	py = bpf_map_lookup_elem(&py_walk, &zero);
	if (!py)
		return 1;
	return op_py_search_step(py, data);
}

static __always_inline bool py_walk_begin(struct task_struct *task, __u32 pid)
{
	struct op_py_proc *proc = bpf_map_lookup_elem(&py_procs, &pid);
	struct op_py_thread_search s = {};
	__u32 zero = 0, tid = (__u32)bpf_get_current_pid_tgid();
	struct op_py_walker *py;
	__u64 *cached;

	if (!proc)
		return false;
	py = bpf_map_lookup_elem(&py_walk, &zero);
	if (!py)
		return false;
	op_py_search_reset(py, proc, &s, BPF_CORE_READ(task, thread.fsbase));
	cached = bpf_map_lookup_elem(&py_tstate_cache, &tid);
	if (!cached || !op_py_search_try(py, &s, *cached)) {
		if (op_py_search_first(py, &s))
			return false;
		bpf_loop(OP_PY_MAX_THREADS, py_thread_search_one, &s, 0);
		if (s.found)
			bpf_map_update_elem(&py_tstate_cache, &tid, &s.found, BPF_ANY);
	}
	return op_py_search_done(py, &s);
}

static __always_inline int py_walk_step(struct op_unwinder *u, struct op_frame *frame)
{
	struct op_py_walker *py;
	__u32 zero = 0;

	py = bpf_map_lookup_elem(&py_walk, &zero);
	if (!py)
		return op_unwind_step(u, frame);
	return op_py_step(py, u, frame);
}

#endif
