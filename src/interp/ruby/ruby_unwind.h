/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRuby's step of the user-space walk (src/unwind/user_unwind.h): the walker
 * of omniprof/interp/ruby_walk.h compiled as C, driven as ruby_step() in
 * bpf/interp/ruby.bpf.h drives it in the kernel (the thread's execution
 * context the first time the walk meets rb_vm_exec, then op_rb_walk_step()).
 * Used by stack copies, the replay suite and the fuzz target.
 */
#ifndef OMNIPROF_INTERP_RUBY_RUBY_UNWIND_H
#define OMNIPROF_INTERP_RUBY_RUBY_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/interp/ruby_abi.h"
#include "unwind/user_unwind.h"

/* One walk of a thread of a Ruby process. Zero it, set the first four
 * fields, pass ruby_unwind__runtime() in the walk's user_unwind_interp. */
struct ruby_unwind {
	const struct op_rb_proc *proc; /* its rb_procs value (src/interp/ruby/); NULL: none */
	uint64_t thread_ptr;	       /* the walked thread's fs base */
	/* Reads of the VM's memory (TLS, control frames, iseqs), same contract
	 * as user_unwind_ops.read; NULL: the walk's. */
	int (*read)(void *ctx, void *dst, size_t size, uint64_t addr);
	void *read_ctx;
	uint64_t stats[OP_RB_STAT__COUNT]; /* enum op_rb_stat, added to */
	/* The VM's memory is read after the sample (a stack copy of a live
	 * process): its control frames may be of a later moment, so the first
	 * Ruby frame comes after an OP_RB_DATA_LATE marker. */
	bool late;
	/* The walk's state (private). */
	struct op_rb_walker walker;
	struct op_walk *walk;
	int marked;	      /* 0: no marker yet; 1: the held frame is owed; 2: done */
	struct op_frame held; /* the first Ruby frame, written after the marker */
	int held_res;	      /* and the step's result for it */
	uint32_t held_active; /* and the walk's active runtime after it */
};

/* The OP_INTERP_RUBY entry of a user_unwind_interp for ru. */
struct user_unwind_runtime ruby_unwind__runtime(struct ruby_unwind *ru);

/* interp_ops.walk_begin / walk_end (src/interp/interp.h): walk is a zeroed
 * struct ruby_unwind, set up from env. */
struct interp_walk_env;
struct interp_walk_stats;
struct user_unwind_runtime ruby_unwind__walk_begin(void *walk, const struct interp_walk_env *env);
void ruby_unwind__walk_end(const void *walk, struct interp_walk_stats *stats);

#endif
