/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Perl's step of the user-space walk (src/unwind/user_unwind.h): the walker
 * of omniprof/interp/perl_walk.h compiled as C, driven as perl_step() in
 * bpf/interp/perl.bpf.h drives it in the kernel (op_perl_setup() the first
 * time the walk meets the runops loop, then op_perl_walk_step()). Used by
 * stack copies, the unit tests and the fuzz target.
 */
#ifndef OMNIPROF_INTERP_PERL_PERL_UNWIND_H
#define OMNIPROF_INTERP_PERL_PERL_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/interp/perl_abi.h"
#include "unwind/user_unwind.h"

/* One walk of a thread of a Perl process. Zero it, set the first fields,
 * pass perl_unwind__runtime() in the walk's user_unwind_interp. */
struct perl_unwind {
	const struct op_perl_proc *proc; /* its perl_procs value; NULL: none */
	uint64_t thread_ptr;		 /* the walked thread's fs base */
	bool main_thread;		 /* the walked thread is the process's first */
	/* Reads of the interpreter's memory, same contract as
	 * user_unwind_ops.read; NULL: the walk's. */
	int (*read)(void *ctx, void *dst, size_t size, uint64_t addr);
	void *read_ctx;
	uint64_t stats[OP_PERL_STAT__COUNT]; /* enum op_perl_stat, added to */
	/* The walk's state (private). */
	struct op_perl_walker walker;
	struct op_walk *walk;
};

/* The OP_INTERP_PERL entry of a user_unwind_interp for pu. */
struct user_unwind_runtime perl_unwind__runtime(struct perl_unwind *pu);

/* interp_ops.walk_begin / walk_end (src/interp/interp.h): walk is a zeroed
 * struct perl_unwind, set up from env. */
struct interp_walk_env;
struct interp_walk_stats;
struct user_unwind_runtime perl_unwind__walk_begin(void *walk, const struct interp_walk_env *env);
void perl_unwind__walk_end(const void *walk, struct interp_walk_stats *stats);

#endif
