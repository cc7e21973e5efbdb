/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HotSpot frame reader (omniprof/interp/hotspot_walk.h) built as C: the
 * step user_unwind__walk() calls for stack copies and the replay suite, and
 * what the unit tests and the fuzz target drive directly.
 */
#ifndef OMNIPROF_INTERP_HOTSPOT_UNWIND_H
#define OMNIPROF_INTERP_HOTSPOT_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "omniprof/interp/hotspot_abi.h"
#include "unwind/user_unwind.h"

struct interp_walk_env;
struct interp_walk_stats;
struct op_walk;

/*
 * The cross-sample nmethod cache BPF keeps (the `jvm_pc_cache` map), for the
 * unit tests to drive the same checks in C: get returns the entry for
 * (pid, return address pc) or NULL, put stores a copy of *e.
 */
struct hotspot_pc_cache {
	const struct op_jvm_pc_entry *(*get)(void *ctx, uint32_t pid, uint64_t pc);
	void (*put)(void *ctx, uint32_t pid, uint64_t pc, const struct op_jvm_pc_entry *e);
	void *ctx;
};

/*
 * The scope chain cache BPF keeps (the `jvm_chain_cache` map), for the unit
 * tests: slot returns its slot i (< OP_JVM_CHAIN_SLOTS), or NULL.
 */
struct hotspot_chain_cache {
	struct op_jvm_chain *(*slot)(void *ctx, uint32_t i);
	void *ctx;
};

/* One walk's state (interp_ops.walk_size bytes, zeroed by the caller). */
struct hotspot_unwind {
	struct op_jvm_walker walker; /* first: the walker's reads find the rest from it */
	const struct op_jvm_proc *proc;
	/* Reads of the target; NULL: the walk's own (user_unwind__read). */
	int (*read)(void *ctx, void *dst, size_t size, uint64_t addr);
	void *read_ctx;
	struct op_walk *walk;
	const struct hotspot_pc_cache *pc_cache;       /* NULL: none (stack copies, replay) */
	const struct hotspot_chain_cache *chain_cache; /* NULL: none (stack copies, replay) */
	uint32_t stats[OP_JVM_STAT__COUNT]; /* one walk's: a few hundred frames at most */
};

/* The step for user_unwind__walk() (struct user_unwind_interp.runtimes[OP_INTERP_HOTSPOT]). */
struct user_unwind_runtime hotspot_unwind__runtime(struct hotspot_unwind *hu);
/* interp_ops.walk_begin / walk_end. */
struct user_unwind_runtime hotspot_unwind__walk_begin(void *walk,
						      const struct interp_walk_env *env);
void hotspot_unwind__walk_end(const void *walk, struct interp_walk_stats *stats);

#endif
