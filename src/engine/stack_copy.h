/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Samples the in-kernel unwinder could not unwind because the process's
 * tables were not loaded yet (a process that just started): the BPF side sent
 * the user registers and a copy of the stack (struct op_stack_copy, see
 * bpf/stack_copy.h). Once user space has read the process's maps and loaded
 * its tables, the copy is unwound here with the same unwinder
 * (bpf/include/omniprof/unwind/native.h through unwind/user_unwind.h) and the same
 * rules (read back from the BPF maps), giving the record the kernel would
 * have sent.
 */
#ifndef OMNIPROF_ENGINE_STACK_COPY_H
#define OMNIPROF_ENGINE_STACK_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "interp/interp.h"
#include "omniprof/abi.h"

struct process;
struct process_table;

/* Reasons counted apart: enum op_unwind_error's 0-15. */
#define STACK_COPY_REASONS 16

struct stack_copy_stats {
	uint64_t received;    /* stack copies from the BPF side */
	uint64_t stack_bytes; /* ... their stack bytes, in all */
	uint64_t complete;    /* unwound to the outermost frame */
	uint64_t truncated;   /* unwound, but the walk stopped early (an error frame) */
	uint64_t beyond_copy; /* ... of which it needed stack past the copied bytes */
	uint64_t no_maps;     /* the process's maps were never read: its first frame only */
	uint64_t reread;      /* a caller in a mapping made since: maps read, unwound again */
	uint64_t bad_records; /* malformed copies */
	uint64_t
	    frames_cfi; /* frames unwound with a table's rule (loaded, or its FDE: frames_fde) */
	uint64_t frames_fp; /* frames unwound with frame pointers (no table) */
	/* Frames whose file's table was not loaded, unwound from the file's CFI at
	 * once (unwind_maps__fde_rule): read from the file / remembered; pcs it
	 * gave no rule for (the walk waits for the table), and its time. */
	uint64_t frames_fde;
	uint64_t frames_fde_memo;
	uint64_t fde_refused;
	uint64_t fde_ns;
	/* The same of Go files, read one function at a time from .gopclntab
	 * (their time in fde_ns). */
	uint64_t frames_go;
	uint64_t frames_go_memo;
	uint64_t go_refused;
	/* Walks with a frame in a mapped file whose table was not in the maps
	 * (none built or loaded: frame pointers there), and of those truncated:
	 * a held copy is released once its process's tables are all in, so
	 * these are files without CFI, failed builds, or copies handled
	 * without their tables (held past the end wait: `unready`). */
	uint64_t without_table;
	uint64_t truncated_without_table;
	/* Mappings met by copies' walks that took no table (a process that exited
	 * before it was published, or one still waiting: stack_copy__walk_ready)
	 * walked with their file's loaded table. */
	uint64_t unpublished_tables;
	/* Truncated walks by the reason of their error frame (enum
	 * op_unwind_error; 0: none given or a reason past the array). */
	uint64_t stopped[STACK_COPY_REASONS];
	/* Copies of processes running a runtime, walked with its step too, per enum op_interp. */
	struct interp_walk_stats interp[OP_INTERP__COUNT];
	uint64_t interp_reads; /* the runtimes' reads of the live process (process_vm_readv) */
	uint64_t switch_reads; /* reads of the live process past a Go stack switch */
	uint64_t go_captured;  /* walks that took a Go switch the copy captured at the sample */
};

/*
 * Fills out (OP_TRACE_MAX_SIZE bytes) with the record the BPF sampler would
 * have sent for copy (size bytes): its header and kernel frames, and the user
 * stack unwound over the copied bytes with the rules of p's mappings in pt
 * (the tables pt keeps loaded; frame pointers where none is, as in the
 * kernel). p NULL, or p's maps never read: the first frame and an
 * OP_UNWIND_ERR_NO_MAPS error frame. Returns the record's size, or -EINVAL
 * for a malformed copy (counted in stats).
 *
 * ranges: the process's `interp_procs` value (where the walk hands frames
 * to a runtime), NULL when it has none. states: NULL, or per enum
 * op_interp the runtime's walk state for the process
 * (interp__walk_state(): NULL when it does not run it). Then the walk is
 * the sampler's mixed walk: frames in a runtime's code become the
 * runtime's frames (its interp_ops.walk_begin step), found from the thread
 * pointer in the copy. The
 * stack comes from the copy; the runtime's own structures (an
 * interpreter's thread states, frames, code objects) are read from the
 * live process (process_vm_readv: bounded by the walk's limits, the
 * process is never stopped nor written). They are newer than the sample by
 * the time the record took to arrive (milliseconds): a thread that returned
 * from or entered interpreted functions since shows its interpreted frames
 * of now, under the native frames of then; the interpreter-loop frames of
 * the copy bound how many invocations are replaced.
 *
 * unknown_pc (may be NULL): set to the first pc the walk could trust (the
 * first frame's, or one found by a table's rule) that is in none of p's
 * mappings, 0 when none was: a mapping made since p's maps were read.
 * max_frames: user frames walked (as the sampler's --max-frames), 1 to
 * OP_MAX_USER_FRAMES; deeper stacks are marked truncated.
 */
long stack_copy__to_trace(const struct op_stack_copy *copy, size_t size, struct process_table *pt,
			  const struct process *p, const struct op_interp_proc *ranges,
			  const void *const *states, struct op_trace *out,
			  struct stack_copy_stats *stats, uint64_t *unknown_pc,
			  uint32_t max_frames);

/*
 * The goroutine a Go switch left, read through mem, with the checks and Go's
 * fixed offsets a stack copy's capture in BPF uses (bpf/stack_copy.h,
 * copy_go_switch: op_go_switch__curg of omniprof/unwind/native.h): curg, with
 * g and m in *g and *m, or 0 when the thread is not on a switch's g0. For
 * whoever builds a copy as BPF does (the replay suite).
 */
struct remote_memory;
uint64_t stack_copy__go_curg(const struct remote_memory *mem, uint64_t tls_base, uint64_t *g,
			     uint64_t *m);

/*
 * Whether mapping m's file is ready for a copy's walk and for naming its
 * frames: opened (or failed for good), and its table loaded (or failed, or
 * none to build), as process_table publishes a process whose files all are.
 */
struct process_mapping;
bool stack_copy__mapping_ready(const struct process_table *pt, const struct process_mapping *m);

/*
 * stack_copy__to_trace() for a copy of a process still waiting for some of
 * its files (issue 17): walked with the tables loaded so far. *blocked_slot:
 * the file slot of the first mapping the walk met (or a frame of out lies
 * in) whose file is not ready (stack_copy__mapping_ready()), 0 when none
 * was. Not 0: out is not the sample's walk (frame pointers where a table is
 * still being built) and must not be published; the caller keeps the copy
 * and restores stats.
 */
long stack_copy__walk_ready(const struct op_stack_copy *copy, size_t size, struct process_table *pt,
			    const struct process *p, const struct op_interp_proc *ranges,
			    const void *const *states, struct op_trace *out,
			    struct stack_copy_stats *stats, uint64_t *unknown_pc,
			    uint32_t max_frames, uint32_t *blocked_slot);

#endif
