/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPython's step of the user-space walk (src/unwind/user_unwind.h): the
 * walker of omniprof/interp/python_walk.h compiled as C, driven as
 * python_step() in bpf/interp/python.bpf.h drives it in the kernel (the thread
 * search the first time the walk meets the eval loop, then
 * op_py_walk_step()). Used by stack copies and the replay suite.
 */
#ifndef OMNIPROF_INTERP_PYTHON_PYTHON_UNWIND_H
#define OMNIPROF_INTERP_PYTHON_PYTHON_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "omniprof/interp/python_abi.h"
#include "unwind/user_unwind.h"

/* One walk of a thread of a Python process. Zero it, set the first four
 * fields, pass python_unwind__runtime() in the walk's user_unwind_interp. */
struct python_unwind {
	const struct op_py_proc *proc; /* its py_procs value (src/interp/python/); NULL: none */
	uint64_t thread_ptr;	       /* the walked thread's fs base */
	/* Reads of the interpreter's memory (thread states, frames, code
	 * objects), same contract as user_unwind_ops.read; NULL: the walk's. */
	int (*read)(void *ctx, void *dst, size_t size, uint64_t addr);
	void *read_ctx;
	uint64_t stats[OP_PY_STAT__COUNT]; /* enum op_py_stat, added to */
	/* The walk's state (private). */
	struct op_py_walker walker;
	struct op_walk *walk;
};

/* The OP_INTERP_PYTHON entry of a user_unwind_interp for pu. */
struct user_unwind_runtime python_unwind__runtime(struct python_unwind *pu);

/* interp_ops.walk_begin / walk_end (src/interp/interp.h): walk is a zeroed
 * struct python_unwind, set up from env. */
struct interp_walk_env;
struct interp_walk_stats;
struct user_unwind_runtime python_unwind__walk_begin(void *walk, const struct interp_walk_env *env);
void python_unwind__walk_end(const void *walk, struct interp_walk_stats *stats);

#endif
