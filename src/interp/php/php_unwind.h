/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PHP walker (omniprof/interp/php_walk.h) compiled as C: the runtime
 * step user_unwind__walk() calls for stack copies, the replay suite, the
 * unit tests and the fuzz target. Same code as the BPF step, another loop.
 */
#ifndef OMNIPROF_INTERP_PHP_PHP_UNWIND_H
#define OMNIPROF_INTERP_PHP_PHP_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "omniprof/interp/php_abi.h"
#include "unwind/user_unwind.h"

struct php_unwind {
	const struct op_php_proc *proc; /* its php_procs value (src/interp/php/); NULL: none */
	/* Reads of the engine's memory, same contract as user_unwind_ops.read; NULL: the walk's. */
	int (*read)(void *ctx, void *dst, size_t size, uint64_t addr);
	void *read_ctx;
	uint64_t stats[OP_PHP_STAT__COUNT]; /* enum op_php_stat, added to */
	/* The walk's state (private). */
	struct op_php_walker walker;
	struct op_walk *walk;
};

struct user_unwind_runtime php_unwind__runtime(struct php_unwind *pu);

struct interp_walk_env;
struct interp_walk_stats;
struct user_unwind_runtime php_unwind__walk_begin(void *walk, const struct interp_walk_env *env);
void php_unwind__walk_end(const void *walk, struct interp_walk_stats *stats);

#endif
