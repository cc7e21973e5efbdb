/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HotSpot's kernel header: its maps and its step, hotspot_step(), which the
 * walk (omniprof/unwind/walk.h) calls for a frame whose pc is in a JVM's code
 * cache (an OP_INTERP_HOTSPOT range with OP_INTERP_RANGE_F_UNWINDS, its row in
 * OP_INTERPS, omniprof/frame_kinds.h). A kernel-only fragment, included by
 * bpf/interp_steps.h only, after omniprof/unwind/walk.h. The frame reader is
 * omniprof/interp/hotspot_walk.h, shared with user space.
 */
#ifndef OMNIPROF_BPF_INTERP_HOTSPOT_BPF_H
#define OMNIPROF_BPF_INTERP_HOTSPOT_BPF_H

#include "omniprof/interp/hotspot_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OP_JVM_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} jvm_stats SEC(".maps");

static __always_inline void jvm_stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&jvm_stats, &which);

	if (v)
		*v += 1;
}

/* pid -> where its JVM's code is. Written by user space (src/interp/hotspot/). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct op_jvm_proc);
} jvm_procs SEC(".maps");

/* The walker and the pid's jvm_procs value, copied into it when a walk begins. */
struct op_jvm_bpf_walker {
	struct op_jvm_walker w;
	struct op_jvm_proc proc;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct op_jvm_bpf_walker);
} jvm_walk SEC(".maps");

/*
 * (pid, return address) -> the nmethod a walk read there, and (pid,
 * OP_JVM_PC_LEAF) -> the pid's last leaf nmethod
 * (omniprof/interp/hotspot_abi.h, struct op_jvm_pc_slot: checked before
 * use, so an entry of a gone JVM or a freed nmethod is never taken).
 * OP_JVM_PC_CACHE_SLOTS of 192 bytes per possible CPU (48 KiB each: 3 MiB on
 * 64 CPUs), preallocated, JVM or not, in 2-way sets: the hot return
 * addresses of a few JVMs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OP_JVM_PC_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct op_jvm_pc_slot);
} jvm_pc_cache SEC(".maps");

/* The first slot of (pid, pc)'s set (its ways follow it). */
static __always_inline __u32 jvm_pc_cache_set(__u32 pid, __u64 pc)
{
	__u64 h = (pc ^ ((__u64)pid << 40)) * 0x9e3779b97f4a7c15ull;

	return (__u32)(h >> 32) & (OP_JVM_PC_CACHE_SLOTS - OP_JVM_PC_CACHE_WAYS);
}

/* The walked process's entries (jw->pid, set when its walk began). */
static __always_inline const struct op_jvm_pc_entry *
jvm_pc_cache_get(const struct op_jvm_walker *jw, __u64 pc)
{
	__u32 pid = jw->pid;
	__u32 set = jvm_pc_cache_set(pid, pc);

	for (__u32 way = 0; way < OP_JVM_PC_CACHE_WAYS; way++) {
		__u32 i = set + way;
		const struct op_jvm_pc_slot *s = bpf_map_lookup_elem(&jvm_pc_cache, &i);

		if (s && s->key.pc == pc && s->key.pid == pid)
			return &s->e;
	}
	return NULL;
}

__noinline int jvm_pc_cache_put(const struct op_jvm_walker *jw, const struct op_jvm_proc *proc,
				__u64 pc, const struct op_jvm_blob *b);

/*
 * A compiled frame's decoded scope chain, by (pid, compile id, first scope)
 * (omniprof/interp/hotspot_abi.h, struct op_jvm_chain: its key checked
 * before use, so a chain of a freed nmethod is never taken for a later one
 * at its address). OP_JVM_CHAIN_SLOTS of 424 bytes per possible CPU (53 KiB
 * each), preallocated, direct-mapped: the hot pcs' chains of a few JVMs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OP_JVM_CHAIN_SLOTS);
	__type(key, __u32);
	__type(value, struct op_jvm_chain);
} jvm_chain_cache SEC(".maps");

static __always_inline struct op_jvm_chain *jvm_chain_slot(__u32 i)
{
	return bpf_map_lookup_elem(&jvm_chain_cache, &i);
}

#define OP_JVM_READ(jw, dst, size, addr)     OP_READ_USER(NULL, dst, size, addr)
#define OP_JVM_STAT(jw, which)		     jvm_stat_inc(which)
#define OP_JVM_SUBPROG			     __noinline
#define OP_JVM_PC_CACHE_GET(jw, pc)	     jvm_pc_cache_get(jw, pc)
#define OP_JVM_PC_CACHE_PUT(jw, proc, pc, b) jvm_pc_cache_put(jw, proc, pc, b)
#define OP_JVM_CHAIN_SLOT(jw, i)	     jvm_chain_slot(i)
#include "omniprof/interp/hotspot_walk.h"

/*
 * Remembers blob b for return address pc (0, or < 0 when it could not), in
 * its set's way that holds pc already or is empty, else in either. Its own
 * function: the step's states do not carry the entry's filling.
 */
__noinline int jvm_pc_cache_put(const struct op_jvm_walker *jw, const struct op_jvm_proc *proc,
				__u64 pc, const struct op_jvm_blob *b)
{
	struct op_jvm_pc_slot *s = NULL;
	__u32 pid, set, i;

	/* A global function's pointers may be NULL for the verifier; pc 0 marks an empty slot. */
	if (!jw || !proc || !b || !pc)
		return -1;
	pid = jw->pid;
	set = jvm_pc_cache_set(pid, pc);
	for (__u32 way = 0; way < OP_JVM_PC_CACHE_WAYS; way++) {
		i = set + way;
		s = bpf_map_lookup_elem(&jvm_pc_cache, &i);
		if (s && (!s->key.pc || (s->key.pc == pc && s->key.pid == pid)))
			break;
		s = NULL;
	}
	if (!s) {
		i = set + (bpf_get_prandom_u32() & (OP_JVM_PC_CACHE_WAYS - 1));
		s = bpf_map_lookup_elem(&jvm_pc_cache, &i);
		if (!s)
			return -1;
	}
	/* Samples on this CPU do not nest: the key goes in last only for clarity. */
	s->key.pc = 0;
	op_jvm_pc_entry__fill(&s->e, jw, proc, b);
	s->key.pid = pid;
	s->key.reserved = 0;
	s->key.pc = pc;
	return 0;
}

/*
 * OP_INTERP_STEP for OP_INTERP_HOTSPOT: every frame in the code cache. The
 * pid's jvm_procs value is looked up and copied into the walker once per
 * sample (a hash lookup per frame cost more than the rest of a cached frame).
 */
__noinline int hotspot_step(struct op_walk *w, struct op_frame *frame, int res)
{
	struct op_jvm_bpf_walker *bw;
	__u32 zero = 0;

	if (!w || !frame)
		return res;
	bw = bpf_map_lookup_elem(&jvm_walk, &zero);
	if (!bw)
		return res;
	if (op_walk__setup_once(w, OP_INTERP_HOTSPOT)) {
		const struct op_jvm_proc *proc;
		__u32 pid = w->u.pid;

		op_jvm_walker__begin(&bw->w);
		bw->w.pid = pid; /* the current task's tgid (walk_user_stack) */
		proc = bpf_map_lookup_elem(&jvm_procs, &pid);
		if (proc) {
			__builtin_memcpy(&bw->proc, proc, sizeof(bw->proc));
			op_jvm_walker__epoch(&bw->w, &bw->proc);
			op_walk__set_ready(w, OP_INTERP_HOTSPOT);
		}
	}
	if (!op_walk__is_ready(w, OP_INTERP_HOTSPOT)) {
		/* The pid's state is gone: its frames are left to the native rules. */
		if (res == OP_STEP_RUNTIME_UNWINDS)
			jvm_stat_inc(OP_JVM_STAT_NO_PROC);
		if (w->active == OP_INTERP_HOTSPOT)
			w->active = 0;
		return res;
	}
	return op_jvm_walk_step(w, &bw->proc, &bw->w, frame, res);
}

#endif
