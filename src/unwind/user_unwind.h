/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF native unwinder (bpf/include/omniprof/unwind/native.h) run in user space: the
 * same per-frame code, with memory reads and rule lookups supplied by the
 * caller. Used to replay captured stacks in tests (tests/replay/) and to
 * unwind copies of stacks the kernel side could not finish.
 *
 * Two parts:
 *  - user_unwind__walk(): the walk of walk_user_stack() in sampler.bpf.c,
 *    the same loop (omniprof/unwind/walk.h), frame for frame and error
 *    frame for error frame;
 *  - struct user_unwind_tables: an in-memory rule source running the
 *    sampler's lookup (omniprof/unwind/lookup.h) over tables built by the
 *    real ELF code (stack_deltas__build) and laid out as the agent loads
 *    them (delta_pages__build page trees, deduplicated 16-bit rule indexes).
 */
#ifndef OMNIPROF_UNWIND_USER_UNWIND_H
#define OMNIPROF_UNWIND_USER_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/abi.h"

struct elf_file;

struct user_unwind_ops {
	/* Copies size bytes of the target's memory at addr into dst: 0, or
	 * non-zero when unreadable (bpf_probe_read_user's contract). */
	int (*read)(void *ctx, void *dst, size_t size, uint64_t addr);
	/* Fills *rule for the instruction at pc of process pid (the contract of
	 * omniprof/unwind/lookup.h: OP_RULE_INVALID when a table has no rule, the
	 * frame-pointer rule when there is no table). user_unwind_tables__find_rule fits. */
	void (*find_rule)(void *ctx, uint32_t pid, uint64_t pc, struct op_unwind_rule *rule);
	void *read_ctx;
	void *rule_ctx;
};

struct user_unwind_result {
	uint32_t n_frames; /* frames written, the error frame included */
	uint32_t flags;	   /* enum op_trace_flags: OP_TRACE_F_USER_TRUNCATED, OP_TRACE_F_NO_USER */
	uint32_t error;	   /* enum op_unwind_error that stopped the walk, 0 when it ended cleanly */
};

/*
 * Unwinds from (pc, sp, fp = rbp) into frames[0 .. max_frames), exactly as the
 * BPF sampler fills the user frames of struct op_trace when max_frames is
 * OP_MAX_USER_FRAMES: native frames with absolute addresses (data and aux 0),
 * then an OP_FRAME_ERROR frame when the walk stopped early and there is room.
 * pc == 0 gives no frames and OP_TRACE_F_NO_USER. Safe to call from several
 * threads at once (the walk's state is its own: no globals).
 */
struct user_unwind_result user_unwind__run(const struct user_unwind_ops *ops, uint32_t pid,
					   uint64_t pc, uint64_t sp, uint64_t fp,
					   struct op_frame *frames, uint32_t max_frames);

struct op_walk;
struct op_unwinder;

/* A runtime's step in user space: OP_INTERP_STEP of omniprof/unwind/walk.h
 * (its contract), with ctx the runtime's state for this walk. */
struct user_unwind_runtime {
	int (*step)(void *ctx, struct op_walk *w, struct op_frame *frame, int res);
	void *ctx;
};

/* The runtimes a walk hands frames to (omniprof/unwind/walk.h). */
struct user_unwind_interp {
	const struct op_interp_proc *ranges; /* the pid's interp_procs value; NULL: native walk */
	struct user_unwind_runtime
	    runtimes[OP_INTERP__COUNT]; /* step NULL: its code stays native */
};

/* For runtimes' steps (and their OP_READ_USER / OP_FIND_RULE): the walk's
 * reads of the target (user_unwind_ops.read, zeroed on failure) and rules. */
int user_unwind__read(struct op_unwinder *u, void *dst, size_t size, uint64_t addr);
void user_unwind__find_rule(struct op_unwinder *u, uint64_t pc, struct op_unwind_rule *rule);
/* OP_READ_FSBASE: the walk's fs base (user_unwind__walk_tls), 0 when unknown. */
uint64_t user_unwind__fsbase(struct op_unwinder *u);

/*
 * user_unwind__run() handing frames to runtimes as the BPF sampler does: a
 * native frame in one of interp->ranges goes to that runtime's step, which
 * may replace it by the runtime's frames (each runtime's user-space step is
 * in its folder, e.g. src/interp/<runtime>/). interp NULL: user_unwind__run().
 */
struct user_unwind_result user_unwind__walk(const struct user_unwind_ops *ops,
					    const struct user_unwind_interp *interp, uint32_t pid,
					    uint64_t pc, uint64_t sp, uint64_t fp,
					    struct op_frame *frames, uint32_t max_frames);
/*
 * user_unwind__walk() of a thread whose fs base is known (where Go keeps g:
 * OP_RULE_GO_SWITCH takes a Go stack switch back to the goroutine's saved
 * registers; stack copies carry it, and stack_copy.c reads what lies past the
 * copy from the live process once a switch is met). user_unwind__walk() knows
 * none: Go's switches then skip their direct caller, as frame pointers do.
 */
struct user_unwind_result user_unwind__walk_tls(const struct user_unwind_ops *ops,
						const struct user_unwind_interp *interp,
						uint32_t pid, uint64_t pc, uint64_t sp, uint64_t fp,
						uint64_t fsbase, struct op_frame *frames,
						uint32_t max_frames);

/* A thread's registers as far as the walk uses them. */
struct user_unwind_regs {
	uint64_t pc, sp, fp;
	uint64_t fsbase; /* 0: unknown */
	/* rbx (OP_RULE_CFA_RBX: ld.so's lazy-binding trampolines) when has_bx;
	 * stack copies carry it (struct op_stack_copy's bx). */
	uint64_t bx;
	bool has_bx;
};

/* user_unwind__walk_tls() with every register the walk can use. */
struct user_unwind_result user_unwind__walk_regs(const struct user_unwind_ops *ops,
						 const struct user_unwind_interp *interp,
						 uint32_t pid, const struct user_unwind_regs *regs,
						 struct op_frame *frames, uint32_t max_frames);

/* ---- the in-memory rule source ------------------------------------------- */

/* What the lookup decided, as the BPF counters (enum op_stat) count it. */
struct user_unwind_tables_stats {
	uint64_t frames_cfi;	/* OP_STAT_FRAMES_CFI: a rule from a table */
	uint64_t fp_no_mapping; /* OP_STAT_FP_NO_MAPPING: address in no mapping with a table */
	uint64_t frames_anon;	/* OP_STAT_FRAMES_ANON: anonymous code, frame pointers */
	uint64_t invalid;	/* the table has no rule there: OP_RULE_INVALID */
	uint64_t tables_built;
	uint64_t
	    tables_failed; /* no CFI, malformed, too large: the file falls back to frame pointers */
};

struct user_unwind_tables;

/* An empty rule source: every address falls back to frame pointers. 0 or -ENOMEM. */
int user_unwind_tables__new(struct user_unwind_tables **out);
void user_unwind_tables__free(struct user_unwind_tables *t); /* accepts NULL */

/*
 * Adds the executable mapping [start, end) of ef, where ELF vaddr = address -
 * bias. ef's table is built on first use (stack_deltas__build) and shared by
 * every mapping of the same ef, which must outlive t. Returns 0 (the mapping
 * unwinds with the table), -ENOENT / -ENOEXEC / -E2BIG when ef has no usable
 * table (the mapping falls back to frame pointers, as in the agent), or
 * -ENOMEM. Mappings must not overlap; any order.
 */
int user_unwind_tables__add(struct user_unwind_tables *t, uint64_t start, uint64_t end,
			    uint64_t bias, const struct elf_file *ef);

/* Adds anonymous executable memory [start, end) (JIT code; the agent's
 * OP_TABLE_ID_ANON): frame pointers, stopping with OP_UNWIND_ERR_ANON_CODE
 * where they fail. 0 or -ENOMEM. */
int user_unwind_tables__add_anon(struct user_unwind_tables *t, uint64_t start, uint64_t end);

/* Forgets every mapping but keeps the tables built, to unwind another process
 * of the same files without building their tables again. */
void user_unwind_tables__reset_mappings(struct user_unwind_tables *t);

/*
 * The lookup of bpf/sampler.bpf.c (omniprof/unwind/lookup.h) for one process,
 * over the in-memory tables: the mapping holding pc, its table, the last
 * delta at or below pc - bias, its rule; frame pointers when no mapping has
 * a table; the anonymous-code rule (OP_RULE_ANON) in anonymous code. ctx is
 * the struct user_unwind_tables (pid is ignored: one rule source per process).
 */
void user_unwind_tables__find_rule(void *ctx, uint32_t pid, uint64_t pc,
				   struct op_unwind_rule *rule);

const struct user_unwind_tables_stats *
user_unwind_tables__stats(const struct user_unwind_tables *t);

#endif
