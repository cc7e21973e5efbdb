/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The V8 walker (omniprof/interp/v8_walk.h) compiled as C: the step
 * user_unwind__walk() calls for frames in V8's code ranges (stack copies,
 * the replay suite, unit tests and the fuzz target).
 */
#ifndef OMNIPROF_INTERP_V8_V8_UNWIND_H
#define OMNIPROF_INTERP_V8_V8_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "omniprof/interp/v8_abi.h"
#include "unwind/user_unwind.h"

/* One walk of a thread of a V8 process. Zero it, set proc (and read). */
struct v8_unwind {
	const struct op_v8_proc *proc; /* its v8_procs value; NULL: none */
	/* Reads of the heap (bytecode arrays, functions), same contract as
	 * user_unwind_ops.read; NULL: the walk's. */
	int (*read)(void *ctx, void *dst, size_t size, uint64_t addr);
	void *read_ctx;
	uint64_t stats[OP_V8_STAT__COUNT]; /* enum op_v8_stat, added to */
	struct op_walk *walk;		   /* private */
};

/* The OP_INTERP_V8 entry of a user_unwind_interp for vu. */
struct user_unwind_runtime v8_unwind__runtime(struct v8_unwind *vu);

struct interp_walk_env;
struct interp_walk_stats;
struct user_unwind_runtime v8_unwind__walk_begin(void *walk, const struct interp_walk_env *env);
void v8_unwind__walk_end(const void *walk, struct interp_walk_stats *stats);

#endif
