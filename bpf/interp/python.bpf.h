/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPython's kernel header: the BPF side of the Python unwinder, its maps and
 * its step, python_step(), which the walk (omniprof/unwind/walk.h) calls
 * when it meets CPython's eval loop (its row in OP_INTERPS,
 * omniprof/frame_kinds.h). A kernel-only fragment, not a unit: it uses the
 * sampler's helpers (read_user_u64 through OP_READ_USER) and is included by
 * bpf/interp_steps.h only, after omniprof/unwind/walk.h.
 *
 * python_step() is a global function: the verifier checks it once, on its
 * own. Its set-up (find the sampled thread's thread state and the frame it
 * runs) is lazy: the first time in a sample the walk meets the eval loop,
 * not for every sample of a Python process. It drives the walker's functions
 * in the order omniprof/interp/python_walk.h describes, as
 * src/unwind/user_unwind.c does in user space.
 *
 * The walk state lives in a per-CPU array (too big for the BPF stack, and a
 * sample runs to its end on one CPU).
 */
#ifndef OMNIPROF_BPF_INTERP_PYTHON_BPF_H
#define OMNIPROF_BPF_INTERP_PYTHON_BPF_H

#include "omniprof/interp/python_abi.h"
#include "kernel_read.h" /* OP_KFIELD: the thread's fs base */

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

#define OP_PY_READ(py, dst, size, addr) OP_READ_USER(py, dst, size, addr)
#define OP_PY_STAT(py, which)		py_stat_inc(which)
#define OP_PY_FILL_FN			__noinline int
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

/* The set-up: the sampled thread's state and the frame it runs (py_tstate_cache,
 * else a search of the interpreter's threads). 1 when Python frames follow. */
static __always_inline int py_walk_setup(struct op_py_walker *py, __u32 pid)
{
	struct op_py_proc *proc = bpf_map_lookup_elem(&py_procs, &pid);
	struct op_py_thread_search s = {};
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 *cached;

	if (!proc)
		return 0;
	op_py_search_reset(py, proc, &s, OP_KFIELD(task, task_fsbase, __u64));
	cached = bpf_map_lookup_elem(&py_tstate_cache, &tid);
	if (!cached || !op_py_search_try(py, &s, *cached)) {
		if (op_py_search_first(py, &s))
			return 0;
		bpf_loop(OP_PY_MAX_THREADS, py_thread_search_one, &s, 0);
		if (s.found)
			bpf_map_update_elem(&py_tstate_cache, &tid, &s.found, BPF_ANY);
	}
	return op_py_search_done(py, &s);
}

/* OP_INTERP_STEP for OP_INTERP_PYTHON (omniprof/unwind/walk.h): the set-up the
 * first time the walk meets the eval loop, then op_py_walk_step(). */
__noinline int python_step(struct op_walk *w, struct op_frame *frame, int res)
{
	struct op_py_walker *py;
	__u32 zero = 0;

	if (!w || !frame)
		return res;
	py = bpf_map_lookup_elem(&py_walk, &zero);
	if (!py)
		return res;
	if (op_walk__setup_once(w, OP_INTERP_PYTHON) && py_walk_setup(py, w->u.pid))
		op_walk__set_ready(w, OP_INTERP_PYTHON);
	if (!op_walk__is_ready(w, OP_INTERP_PYTHON))
		return res;
	return op_py_walk_step(py, w, frame, res);
}

#endif
