/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's runtimes (every struct interp_ops of src/interp/registry.c,
 * through the real struct interp) over one process of the replay suite: a
 * snapshot, or the stopped child while capturing. What the agent learns from
 * a maps read (interp__sync_process: attach, code ranges), what its stack
 * copies are walked with (each runtime's walk_state and walk_begin: the
 * walkers of omniprof/interp/<runtime>_walk.h compiled as C), and what names
 * a runtime's frame (resolve, describe). The files are the space's, by path
 * (a file cache filled by hand: no /proc of a process that is gone); reads
 * of the process go to the memory given (interp_env.memory).
 */
#ifndef OMNIPROF_TESTS_REPLAY_RUNTIMES_H
#define OMNIPROF_TESTS_REPLAY_RUNTIMES_H

#include <stddef.h>
#include <stdint.h>

#include "interp/interp.h"
#include "proc/file_cache.h"
#include "proc/process_table.h"
#include "proc/remote_memory.h"
#include "unwind/user_unwind.h"

struct space;

struct runtimes {
	struct file_cache files; /* slots by hand: the space's ELF files, pseudo files */
	struct process proc;	 /* the executable mappings, as process_table reads them */
	struct interp *in;
	struct remote_memory mem; /* what interp_env.memory gives every runtime */
	bool live;		  /* mem unset: the live process */
};

/*
 * Runs every runtime over the process whose maps text is maps: its files
 * are sp's (sp outlives rt); mem (NULL: pid's live memory) is what the
 * runtimes read (copied; its ctx must outlive rt). 0 or -errno.
 */
int runtimes__open(struct runtimes *rt, const struct space *sp, const char *maps, size_t len,
		   uint32_t pid, const struct remote_memory *mem);
void runtimes__close(struct runtimes *rt); /* accepts a zeroed rt */

/* The runtimes running in the process, "python, perl", into buf. */
const char *runtimes__names(const struct runtimes *rt, char *buf, size_t len);
/* Whether runtime `name` (interp_ops.name) attached to the process. */
bool runtimes__running(const struct runtimes *rt, const char *name);
/* Whether pc is in one of runtime `name`'s code ranges of the process. */
bool runtimes__in_ranges(const struct runtimes *rt, const char *name, uint64_t pc);

/*
 * One thread's walk as the sampler does it: native frames, each frame in a
 * runtime's ranges handed to its walker. ops reads the stacks and finds the
 * rules; read/read_ctx is what the runtimes' walkers read (as
 * interp_walk_env.read); regs the thread's registers (regs->fsbase: the
 * thread pointer, as the runtimes' walkers read it). stats (NULL, or
 * OP_INTERP__COUNT entries): what each runtime's walk found (walk_end).
 */
struct user_unwind_result
runtimes__walk(const struct runtimes *rt, const struct user_unwind_ops *ops,
	       int (*read)(void *ctx, void *dst, size_t size, uint64_t addr), void *read_ctx,
	       const struct user_unwind_regs *regs, struct op_frame *frames, uint32_t max_frames,
	       struct interp_walk_stats *stats);

/*
 * The functions of runtime frame f (innermost first, at most max) as the
 * agent names them (interp__resolve, interp__describe_lines), its
 * runtime's name in *runtime and, when suffix is not NULL, the suffix the
 * folded output gives it (interp__folded_suffix: "" or HotSpot's "_[j]") in
 * *suffix. 0 when f is no runtime's frame. The strings belong to rt.
 */
size_t runtimes__name(struct runtimes *rt, const struct op_frame *f, const char **runtime,
		      const char **suffix, struct interp_line *out, size_t max);

#endif
