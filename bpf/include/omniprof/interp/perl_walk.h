/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Perl frame walker, written once for two targets like
 * omniprof/interp/python_walk.h (include omniprof/unwind/native.h and
 * omniprof/unwind/walk.h first): the BPF sampler and ordinary C. It reads
 * the interpreter's memory only through OP_PERL_READ(pw, dst, size, addr)
 * (OP_READ_USER's contract), and the includer may define
 * OP_PERL_STAT(pw, which) to count enum op_perl_stat events.
 *
 * Where Perl's frames are. A Perl sub call does not recurse in C: the
 * runops loop (Perl_runops_standard) runs op after op, and pp_entersub
 * pushes a context (PERL_CONTEXT) on the current stackinfo's context stack
 * (si_cxstack[0 .. si_cxix]). Subs (CXt_SUB), formats (CXt_FORMAT) and
 * evals (CXt_EVAL: string eval, eval block, require) are frames; blocks and
 * loops are not. C code that calls back into Perl (call_sv: XS callbacks,
 * DESTROY, tie and overload magic; MULTICALL; sort with a Perl comparator)
 * starts another runops loop, either on a new stackinfo (PUSHSTACKi: sort,
 * magic, DESTROY, signal handlers; chained by si_prev) or with a sub
 * context whose return op (retop) is NULL, since the loop ends when the sub
 * returns. So, innermost first, the walker gives each runops native frame
 * the contexts down to the first one its runops call entered:
 *   - a sub context with retop NULL ends the runops frame's frames;
 *   - so does the bottom of a stackinfo, once the runops frame has frames
 *     (a stackinfo with no frame, sort's with a block comparator, does not
 *     own a runops frame: C sort code may be running between comparisons);
 *   - so does an eval that docatch() runs (op_perl_docatch()): the runops
 *     frame under docatch's then owns the rest of its stackinfo;
 *   - the bottom of the main stackinfo is the main program: one more frame.
 * The runops native frame is replaced by its Perl frames (kept when it has
 * none), and the native walk resumes at its caller: Perl -> XS -> Perl
 * comes out interleaved in order.
 *
 * Lines: the top frame's statement is PL_curcop; each frame below's is
 * the blk_oldcop its callee's context saved (the caller's COP at the call).
 *
 * One frame is written per step. A context, a stackinfo or the interpreter
 * that cannot be read ends the walk with an OP_UNWIND_ERR_PERL error frame
 * written by the step itself: the rest of the chain cannot be trusted.
 *
 * The whole walk, as both targets drive it: the generic walk meets a native
 * frame in the runops loop (the pid's OP_INTERP_PERL ranges) and calls
 * Perl's step, which the first time in the sample runs op_perl_setup()
 * (the thread's interpreter, PL_curcop, PL_curstackinfo), then, when it
 * found a context stack, op_perl_walk_step() for this frame and every
 * pending one.
 */
#ifndef OMNIPROF_INTERP_PERL_WALK_H
#define OMNIPROF_INTERP_PERL_WALK_H

#include "omniprof/interp/perl_abi.h"
#include "omniprof/abi.h"

#ifndef OMNIPROF_UNWIND_WALK_H
#error "include omniprof/unwind/walk.h before omniprof/interp/perl_walk.h"
#endif
#ifndef OP_PERL_READ
#error "define OP_PERL_READ before including omniprof/interp/perl_walk.h"
#endif
#ifndef OP_PERL_STAT
#define OP_PERL_STAT(pw, which) ((void)0)
#endif

/* How op_perl_seek() is defined: BPF makes it a global function, which the
 * verifier checks once (its loop over contexts included) instead of at each
 * place the step calls it. */
#ifndef OP_PERL_SEEK_FN
#define OP_PERL_SEEK_FN static __always_inline int
#endif

_Static_assert((OP_PERL_CX_BLOCK & (OP_PERL_CX_BLOCK - 1)) == 0, "cx block masks");
_Static_assert((OP_PERL_SI_BLOCK & (OP_PERL_SI_BLOCK - 1)) == 0, "si block masks");

static __always_inline int op_perl_read_ptr(const struct op_perl_walker *pw, __u64 *dst, __u64 addr)
{
	*dst = 0;
	return OP_PERL_READ(pw, dst, sizeof(*dst), addr);
}

/* The fields of the blocks at offsets user space checked (perl_layout__fits()):
 * the masks keep the verifier, and a corrupt map entry, inside the block. */
static __always_inline __u64 op_perl_cx_u64(const struct op_perl_walker *pw, __u16 off)
{
	return pw->cx.q[(off / 8) & (OP_PERL_CX_BLOCK / 8 - 1)];
}

static __always_inline __u8 op_perl_cx_u8(const struct op_perl_walker *pw, __u16 off)
{
	return pw->cx.b[off & (OP_PERL_CX_BLOCK - 1)];
}

static __always_inline __u64 op_perl_si_u64(const struct op_perl_walker *pw, __u16 off)
{
	return pw->si_block.q[(off / 8) & (OP_PERL_SI_BLOCK / 8 - 1)];
}

static __always_inline __u32 op_perl_si_u32(const struct op_perl_walker *pw, __u16 off)
{
	return pw->si_block.d[(off / 4) & (OP_PERL_SI_BLOCK / 4 - 1)];
}

/* Makes stackinfo si the one walked: its context stack, top index and
 * previous stackinfo. 0, or -1 when it cannot be read or is not believable. */
static __always_inline int op_perl_enter_si(struct op_perl_walker *pw, __u64 si)
{
	const struct op_perl_offsets *o = &pw->proc.off;
	__s32 cxix;

	pw->si = 0;
	if (++pw->n_si > OP_PERL_MAX_SI)
		return -1;
	if (OP_PERL_READ(pw, &pw->si_block, sizeof(pw->si_block), si))
		return -1;
	cxix = (__s32)op_perl_si_u32(pw, o->si_cxix);
	if (cxix >= OP_PERL_MAX_CXIX)
		return -1;
	pw->si = si;
	pw->cxstack = op_perl_si_u64(pw, o->si_cxstack);
	pw->si_prev = op_perl_si_u64(pw, o->si_prev);
	pw->cxix = cxix;
	pw->si_main = op_perl_si_u32(pw, o->si_type) == OP_PERL_SI_MAIN && !pw->si_prev;
	if (!pw->cxstack && cxix >= 0)
		return -1;
	return 0;
}

/*
 * pthread_getspecific(PL_thr_key) of the thread whose thread pointer
 * (glibc's struct pthread) is tp: the thread's interpreter, 0 when none.
 */
static __always_inline __u64 op_perl_thr_key_interp(const struct op_perl_walker *pw, __u64 tp)
{
	__u64 block = 0, interp = 0;
	__u32 key = 0;

	if (!pw->proc.thr_key || !pw->proc.tsd_entry ||
	    OP_PERL_READ(pw, &key, sizeof(key), pw->proc.thr_key) ||
	    key >= OP_PERL_TSD_L1 * OP_PERL_TSD_L2)
		return 0;
	if (op_perl_read_ptr(pw, &block, tp + pw->proc.tsd_specific + (key / OP_PERL_TSD_L2) * 8) ||
	    !block)
		return 0;
	op_perl_read_ptr(pw, &interp,
			 block + (__u64)(key % OP_PERL_TSD_L2) * pw->proc.tsd_entry +
			     pw->proc.tsd_data);
	return interp;
}

/*
 * The set-up for one sample: the sampled thread's interpreter (threaded:
 * its PL_current_context, else its PL_thr_key value, else, for the main
 * thread only, PL_curinterp),
 * its PL_curcop and PL_curstackinfo. 1 when a context stack follows, 0 when
 * plain native steps will do (counted).
 */
static __always_inline int op_perl_setup(struct op_perl_walker *pw, const struct op_perl_proc *proc,
					 __u64 thread_ptr, int main_thread)
{
	const struct op_perl_offsets *o;
	__u64 interp = 0, si = 0, cop = 0, op = 0;

	OP_PERL_STAT(pw, OP_PERL_STAT_WALKS);
	pw->proc = *proc;
	o = &pw->proc.off;
	pw->si = 0;
	pw->n_si = 0;
	pw->si_owned = 0;
	pw->next_docatch = 0;
	pw->has_next = 0;
	pw->emitted = 0;
	pw->deferred = OP_STEP_END;
	if (pw->proc.threaded) {
		if (pw->proc.tls_context && thread_ptr)
			op_perl_read_ptr(pw, &interp, thread_ptr + (__u64)pw->proc.tls_context);
		if (!interp && thread_ptr)
			interp = op_perl_thr_key_interp(pw, thread_ptr);
		if (!interp && main_thread && pw->proc.curinterp)
			op_perl_read_ptr(pw, &interp, pw->proc.curinterp);
		if (!interp) {
			OP_PERL_STAT(pw, OP_PERL_STAT_NO_INTERP);
			return 0;
		}
		op_perl_read_ptr(pw, &cop, interp + o->interp_curcop);
		op_perl_read_ptr(pw, &si, interp + o->interp_curstackinfo);
		if (op_perl_read_ptr(pw, &op, interp + o->interp_op))
			op = 1;
	} else {
		op_perl_read_ptr(pw, &cop, pw->proc.curcop);
		op_perl_read_ptr(pw, &si, pw->proc.curstackinfo);
		if (!pw->proc.op || op_perl_read_ptr(pw, &op, pw->proc.op))
			op = 1;
	}
	pw->op_null = !op;
	if (!si) {
		OP_PERL_STAT(pw, OP_PERL_STAT_NO_STACK);
		return 0;
	}
	pw->cop = cop;
	if (op_perl_enter_si(pw, si)) {
		OP_PERL_STAT(pw, OP_PERL_STAT_READ_ERR);
		return 0;
	}
	return 1;
}

/*
 * Did docatch() run the eval context in pw->cx? An eval op (eval block,
 * string eval, require) that runs where an exception must be caught in C
 * (je_mustcatch of the current JMPENV: under call_sv without G_EVAL, sort,
 * MULTICALL) pushes a JMPENV of its own, then its context, and runs its
 * body in a runops call of its own (docatch()): that runops frame's Perl
 * frames end at the eval. Told by the eval's cur_top_env: docatch's
 * JMPENV, whose previous one has je_mustcatch set. perl_run's JMPENV also
 * follows one with je_mustcatch set (PL_start_env), the first of all (no
 * previous one): not docatch's.
 */
static __always_inline int op_perl_docatch(struct op_perl_walker *pw)
{
	const struct op_perl_offsets *o = &pw->proc.off;
	__u64 env, prev = 0, prev_prev = 0;
	__u8 mustcatch = 0;

	if (!o->cx_eval_top_env || !pw->proc.je_mustcatch)
		return 0;
	env = op_perl_cx_u64(pw, o->cx_eval_top_env);
	if (!env || op_perl_read_ptr(pw, &prev, env) || !prev ||
	    op_perl_read_ptr(pw, &prev_prev, prev) || !prev_prev ||
	    OP_PERL_READ(pw, &mustcatch, sizeof(mustcatch), prev + pw->proc.je_mustcatch))
		return 0;
	return mustcatch != 0;
}

/* op_perl_seek_cx(): the context taken gives no frame, the scan goes on. */
#define OP_PERL_SEEK_ON 2

/*
 * One context of op_perl_seek()'s scan: its result, or OP_PERL_SEEK_ON when
 * the scan goes on to the next context. Apart, so that BPF makes it a global
 * function of its own: the verifier then checks the context's handling once,
 * not once per round of the scan (issue 22: Perl's share of the verifier's
 * work at every start fell from 26,274 instructions processed to 4,921).
 */
OP_PERL_SEEK_FN op_perl_seek_cx(struct op_perl_walker *pw)
{
	const struct op_perl_offsets *o;
	__u64 cx, retop;
	__u8 type;

	if (!pw) /* a global function's pointer may be NULL for the verifier */
		return -1;
	o = &pw->proc.off;
	if (!pw->si)
		return 0;
	if (pw->cxix < 0) {
		if (pw->si_main) {
			/* Below every sub: the main program, at the statement that called
			 * the outermost one. */
			pw->si = 0;
			pw->next_addr = pw->cop;
			pw->next_data = OP_PERL_DATA_MAIN;
			pw->next_oldcop = 0;
			pw->next_ends = 1;
			pw->has_next = 1;
			return 1;
		}
		if (!pw->si_prev) {
			pw->si = 0;
			return 0;
		}
		if (op_perl_enter_si(pw, pw->si_prev))
			return -1;
		if (pw->emitted || pw->si_owned) {
			pw->si_owned = 0;
			return 0;
		}
		return OP_PERL_SEEK_ON;
	}
	cx = pw->cxstack + (__u64)(__u32)pw->cxix * o->cx_size;
	pw->cxix--;
	if (OP_PERL_READ(pw, &pw->cx, sizeof(pw->cx), cx))
		return -1;
	type = op_perl_cx_u8(pw, o->cx_type) & OP_PERL_CXTYPEMASK;
	if (type == OP_PERL_CXT_SUB && pw->op_null &&
	    (op_perl_cx_u8(pw, o->cx_type) & o->cxp_multicall)) {
		/* PL_op NULL: the runops call of this MULTICALL sub (sort's
		 * comparator, List::Util's block) returned, and C code runs
		 * before the next call: not a frame, and its runops frame is
		 * not on the stack. Only the topmost such context. The
		 * statement below it is the one that called it (sort
		 * restores PL_curcop only after the call). */
		pw->op_null = 0;
		pw->cop = op_perl_cx_u64(pw, o->cx_oldcop);
		return OP_PERL_SEEK_ON;
	}
	if (type != OP_PERL_CXT_SUB && type != OP_PERL_CXT_EVAL && type != OP_PERL_CXT_FORMAT)
		return OP_PERL_SEEK_ON;
	/* A frame context other than a stale MULTICALL one: PL_op says no more. */
	pw->op_null = 0;
	if (type == OP_PERL_CXT_SUB || type == OP_PERL_CXT_FORMAT) {
		pw->next_addr = op_perl_cx_u64(pw, o->cx_sub_cv);
		/* The CV's body: a fingerprint of the sub at that address. */
		op_perl_read_ptr(pw, &pw->next_data, pw->next_addr);
		if (pw->next_data == OP_PERL_DATA_EVAL || pw->next_data == OP_PERL_DATA_MAIN)
			pw->next_data = 0;
	} else if (type == OP_PERL_CXT_EVAL) {
		pw->next_addr = pw->cop;
		pw->next_data = OP_PERL_DATA_EVAL;
	} else {
		return OP_PERL_SEEK_ON;
	}
	retop = op_perl_cx_u64(pw, o->cx_sub_retop);
	pw->next_oldcop = op_perl_cx_u64(pw, o->cx_oldcop);
	pw->next_docatch = type == OP_PERL_CXT_EVAL && retop && op_perl_docatch(pw);
	pw->next_ends = !retop || pw->next_docatch;
	pw->si_owned = 0;
	pw->has_next = 1;
	return 1;
}

/*
 * Finds the next frame of the current runops frame: 1 (next_* set), 0 when
 * it has no more (its frames end here; the walk stays where the next runops
 * frame's start), -1 when a context or stackinfo is unreadable.
 */
OP_PERL_SEEK_FN op_perl_seek(struct op_perl_walker *pw)
{
	if (!pw) /* a global function's pointer may be NULL for the verifier */
		return -1;
	pw->has_next = 0;
	for (int i = 0; i < OP_PERL_SCAN; i++) {
		int r = op_perl_seek_cx(pw);

		if (r != OP_PERL_SEEK_ON)
			return r;
	}
	OP_PERL_STAT(pw, OP_PERL_STAT_SCAN_LIMIT);
	return 0;
}

/*
 * Writes the frame op_perl_seek() found into *frame and looks for the one
 * after it. Returns 1 when the same runops frame has more, 0 when it has
 * no more, -1 when *frame is an OP_UNWIND_ERR_PERL error frame.
 */
static __always_inline int op_perl_emit(struct op_perl_walker *pw, struct op_frame *frame)
{
	__u32 line = 0;
	int r;

	frame->kind = OP_FRAME_PERL;
	frame->flags = 0;
	frame->reserved = 0;
	if (pw->has_next != 1) {
		OP_PERL_STAT(pw, OP_PERL_STAT_READ_ERR);
		pw->si = 0;
		pw->has_next = 0;
		op_frame__set_error(frame, OP_UNWIND_ERR_PERL);
		return -1;
	}
	if (pw->cop && OP_PERL_READ(pw, &line, sizeof(line), pw->cop + pw->proc.off.cop_line))
		line = 0;
	frame->addr = pw->next_addr;
	frame->data = pw->next_data;
	frame->aux = line;
	pw->cop = pw->next_oldcop;
	if (pw->emitted < 255)
		pw->emitted++;
	OP_PERL_STAT(pw, OP_PERL_STAT_FRAMES);
	if (pw->next_ends) {
		/* Below a docatch() eval: the runops frame under docatch's owns the rest
		 * of the stackinfo, even with no frame in it (sort's block). */
		pw->si_owned = pw->next_docatch;
		pw->has_next = 0;
		return 0;
	}
	r = op_perl_seek(pw);
	if (r < 0) {
		/* Owed as the next frame: this one was good. */
		pw->has_next = 2;
		return 1;
	}
	return r;
}

/*
 * Perl's step (OP_INTERP_STEP of omniprof/unwind/walk.h for
 * OP_INTERP_PERL, after op_perl_setup() found the thread's context stack):
 * a pending Perl frame, or the runops native frame in *frame (res: its
 * native step result) replaced by the first Perl frame its runops call
 * runs. An OP_UNWIND_ERR_PERL error comes with its error frame already in
 * *frame: the walk adds no other.
 */
static __always_inline int op_perl_walk_step(struct op_perl_walker *pw, struct op_walk *w,
					     struct op_frame *frame, int res)
{
	int r;

	if (w->active == OP_INTERP_PERL) {
		r = op_perl_emit(pw, frame);
		if (r < 0) {
			w->active = 0;
			return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_PERL;
		}
		if (r)
			return OP_STEP_CONTINUE;
		w->active = 0;
		return pw->deferred;
	}
	pw->emitted = 0;
	if (!w->n)
		/* The sample is in the runops loop itself (its leaf): PL_op NULL
		 * there is the loop ending, still its own sub's. */
		pw->op_null = 0;
	r = op_perl_seek(pw);
	if (r == 0) {
		/* Keep the native frame: better than nothing. */
		OP_PERL_STAT(pw, OP_PERL_STAT_RUNOPS_EMPTY);
		return res;
	}
	if (r < 0)
		pw->has_next = 2;
	r = op_perl_emit(pw, frame);
	if (r < 0)
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_PERL;
	if (!r)
		return res;
	pw->deferred = res;
	w->active = OP_INTERP_PERL;
	return OP_STEP_CONTINUE;
}

#endif
