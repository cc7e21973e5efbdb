/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The user-stack walk, written once for two targets like
 * omniprof/unwind/native.h (include that first): the BPF sampler runs it in a
 * bpf_loop, user space (stack copies, replay, unit tests) in a for loop. One
 * round writes one frame: a native step, or a runtime's frame.
 *
 * Runtime dispatch. The walk holds the pid's interpreter ranges (struct
 * op_interp_proc, from the `interp_procs` map). When a native frame's pc is
 * in one of them, the walk hands the frame to that runtime's step, which may
 * replace it by the runtime's own frames (an interpreter loop's frame by the
 * frames of the code it runs) and keep the walk to itself while it has more
 * (w->active). A runtime's per-sample set-up (an interpreter: finding the
 * sampled thread's state) runs the first time the walk meets its code
 * (op_walk__setup_once), so samples that never enter the runtime's code
 * cost nothing more than the one map lookup.
 *
 * The includer defines
 *   OP_INTERP_STEP(w, interp, frame, res)   runtime interp's step: frame holds
 *           the native frame just written (res: its step result), or, when
 *           w->active == interp, is the empty slot for the runtime's next
 *           frame; or, when res is OP_STEP_RUNTIME_UNWINDS, the empty slot
 *           for the frame at w->u's pc in the runtime's self-unwound code
 *           (it writes the frame and moves w->u to the caller, or returns
 *           OP_STEP_RUNTIME_UNWINDS untouched to leave it to the native step). Returns an enum op_step_result; a runtime that writes its
 *           own error frame returns the error too (op_walk__error_at skips
 *           adding one). A runtime the includer does not know returns res.
 */
#ifndef OMNIPROF_UNWIND_WALK_H
#define OMNIPROF_UNWIND_WALK_H

#include "omniprof/abi.h"

#ifndef OMNIPROF_UNWIND_NATIVE_H
#error "include omniprof/unwind/native.h before omniprof/unwind/walk.h"
#endif
#ifndef OP_INTERP_STEP
#error "define OP_INTERP_STEP before including omniprof/unwind/walk.h"
#endif

_Static_assert(OP_INTERP__COUNT <= 32, "op_walk's runtime bit masks");

struct op_walk {
	struct op_unwinder u;
	struct op_interp_proc interp; /* the pid's interpreter ranges, if has_interp */
	__u32 tried;		      /* 1 << interp: its per-sample set-up ran */
	__u32 ready;		      /* 1 << interp: ... and found the runtime's state */
	__u32 n;		      /* frames written */
	__s32 result;		      /* the last round's enum op_step_result */
	__u8 has_interp;	      /* 0: a native walk (no interp_procs entry) */
	__u8 active;		      /* enum op_interp whose frames are pending, 0: none */
	__u8 reserved[6];
	/*
	 * The sampled thread's r14 and r15 (x86-64) at the walk's first pc, 0
	 * when unknown (stack copies): callee-saved registers an interpreter
	 * may pin its state in (the Zend VM: execute_data and opline), valid
	 * only while the first frame is the interpreter's own code.
	 */
	__u64 leaf_r14;
	__u64 leaf_r15;
};

/* Starts a walk at (pc, sp, fp). interp: the pid's interp_procs value, NULL: none. */
static __always_inline void op_walk__init(struct op_walk *w, __u32 pid, __u64 pc, __u64 sp,
					  __u64 fp, const struct op_interp_proc *interp)
{
	op_unwinder__init(&w->u, pid, pc, sp, fp);
	w->tried = 0;
	w->ready = 0;
	w->n = 0;
	w->result = OP_STEP_CONTINUE;
	w->active = 0;
	w->leaf_r14 = 0;
	w->leaf_r15 = 0;
	w->has_interp = interp ? 1 : 0;
	if (interp)
		w->interp = *interp;
}

/* The pid's range holding pc, or NULL when none does. */
static __always_inline const struct op_interp_range *op_walk__range_at(const struct op_walk *w,
								       __u64 pc)
{
	for (int i = 0; i < OP_INTERP_MAX_RANGES; i++) {
		const struct op_interp_range *r = &w->interp.ranges[i];

		if (pc >= r->start && pc < r->end)
			return r;
	}
	return NULL;
}

/* The runtime whose code holds pc, OP_INTERP_NONE when none does. */
static __always_inline __u32 op_walk__interp_at(const struct op_walk *w, __u64 pc)
{
	const struct op_interp_range *r = op_walk__range_at(w, pc);

	return r ? r->interp : OP_INTERP_NONE;
}

/*
 * For a runtime's step: 1 the first time in this sample the walk meets
 * interp's code, when the runtime must run its set-up (and call
 * op_walk__set_ready() if it succeeded); 0 after.
 */
static __always_inline int op_walk__setup_once(struct op_walk *w, __u32 interp)
{
	__u32 bit = 1u << (interp & 31);

	if (w->tried & bit)
		return 0;
	w->tried |= bit;
	return 1;
}

static __always_inline void op_walk__set_ready(struct op_walk *w, __u32 interp)
{
	w->ready |= 1u << (interp & 31);
}

static __always_inline int op_walk__is_ready(const struct op_walk *w, __u32 interp)
{
	return (w->ready >> (interp & 31)) & 1;
}

/*
 * One frame: the pending runtime's next one, or a native step whose frame
 * the runtime owning its code may replace, or, in a range the runtime
 * unwinds itself (OP_INTERP_RANGE_F_UNWINDS: JIT code), the runtime's
 * frame in place of the native step. An enum op_step_result.
 */
static __always_inline int op_walk__step(struct op_walk *w, struct op_frame *frame)
{
	const struct op_interp_range *r = NULL;
	__u32 interp = OP_INTERP_NONE;
	int res;

	if (w->active)
		return OP_INTERP_STEP(w, w->active, frame, OP_STEP_CONTINUE);
	if (w->has_interp) {
		/* A return address is looked up as the call before it, as the rules are. */
		r = op_walk__range_at(w, w->u.pc_exact ? w->u.regs.pc : w->u.regs.pc - 1);
		if (r)
			interp = r->interp;
	}
	if (r && (r->flags & OP_INTERP_RANGE_F_UNWINDS)) {
		res = OP_INTERP_STEP(w, interp, frame, OP_STEP_RUNTIME_UNWINDS);
		if (res != OP_STEP_RUNTIME_UNWINDS)
			return res;
		/* Not taken (its state was not found): the native rules try. */
	}
	res = op_unwind_step(&w->u, frame);
	if (interp == OP_INTERP_NONE)
		return res;
	return OP_INTERP_STEP(w, interp, frame, res);
}

/*
 * One round of the walk loop, writing frame slot index (< max frames). The
 * loop runs max + 1 rounds: the last one only tells a stack that ends at
 * exactly max frames from a longer one. 1 when the walk is over.
 */
static __always_inline int op_walk__round(struct op_walk *w, __u32 index, __u32 max,
					  struct op_frame *frame)
{
	if (index >= max) {
		w->result = OP_STEP_ERROR_BASE + OP_UNWIND_ERR_MAX_DEPTH;
		return 1;
	}
	w->result = op_walk__step(w, frame);
	w->n = index + 1;
	return w->result != OP_STEP_CONTINUE;
}

/* The error that ended the walk (enum op_unwind_error), 0 when it ended cleanly. */
static __always_inline __u32 op_walk__error(const struct op_walk *w)
{
	return w->result > OP_STEP_END ? (__u32)(w->result - OP_STEP_ERROR_BASE) : 0;
}

/*
 * The "finish with an error frame" rule: where a walk that stopped with an
 * error puts its error frame (then w->n is at most that slot + 1), -1 when
 * none goes in: the walk ended cleanly, or the step wrote its own (last:
 * the last frame written, or NULL when none was). A full stack gives its
 * outermost frame to the marker: a cut stack (deep recursion, a loop of
 * frames) must not pass for a whole one. max > 0.
 */
static __always_inline int op_walk__error_at(const struct op_walk *w, __u32 max,
					     const struct op_frame *last)
{
	if (!op_walk__error(w))
		return -1;
	if (w->n && last && last->kind == OP_FRAME_ERROR)
		return -1;
	return w->n < max ? (int)w->n : (int)max - 1;
}

#endif
