/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRuby frame walker, written once for two targets like
 * omniprof/interp/python_walk.h (include omniprof/unwind/walk.h first): the
 * BPF sampler and ordinary C. It reads the process only through
 * OP_RB_READ(rb, dst, size, addr) (OP_READ_USER's contract; rb, the struct
 * op_rb_walker, is the includer's context), and counts enum op_rb_stat
 * events through OP_RB_STAT(rb, which) when the includer defines it.
 *
 * How Ruby frames join the native stack. The VM keeps each thread's Ruby
 * frames as control frames (rb_control_frame_t) at the end of its VM stack:
 * the running one is ec->cfp, its caller the next one up (cfp + 1), the last
 * one just below vm_stack + vm_stack_size. Each entry from C into the VM
 * (rb_vm_exec: the program's start, a block yielded to from C, a method
 * called with rb_funcall, a `require`d file) runs frames until the one it
 * pushed first, which carries VM_FRAME_FLAG_FINISH. So the walker replaces
 * each native rb_vm_exec frame (the pid's OP_INTERP_RUBY ranges) by the
 * control frames from the current one up to and including the next FINISH
 * frame, innermost first: Ruby -> C (Integer#times, a C extension) -> Ruby
 * comes out interleaved in order. A C function called from Ruby has a
 * control frame of its own (VM_FRAME_MAGIC_CFUNC), shown with the frames of
 * the entry that called it; IFUNC and DUMMY frames are not shown.
 *
 * One frame is written per step. A control frame costs two reads (its first
 * OP_RB_CFP_BLOCK bytes, its ep[-2..0]) and two more to show it (an iseq's
 * body and instruction base, or a method entry's definition). The walker
 * always looks one shown frame ahead, so a step knows whether the entry has
 * more frames without writing an empty one.
 *
 * The set-up, once per sample the first time the walk meets rb_vm_exec:
 *   op_rb_begin()   the thread's ruby_current_ec through its DTV, then its
 *                   current control frame and the end of its frames
 * then op_rb_walk_step() for that frame and every pending frame of the entry.
 * A control frame that cannot be read ends the walk with an OP_UNWIND_ERR_RUBY
 * error frame: nothing past it can be trusted.
 */
#ifndef OMNIPROF_INTERP_RUBY_WALK_H
#define OMNIPROF_INTERP_RUBY_WALK_H

#include "omniprof/interp/ruby_abi.h"
#include "omniprof/abi.h"

#ifndef OMNIPROF_UNWIND_WALK_H
#error "include omniprof/unwind/walk.h before omniprof/interp/ruby_walk.h"
#endif

#ifndef OP_RB_READ
#error "define OP_RB_READ before including omniprof/interp/ruby_walk.h"
#endif
#ifndef OP_RB_STAT
#define OP_RB_STAT(rb, which) ((void)0)
#endif

/* Most control frames a thread's VM stack may hold: 1 MiB / 56 bytes is far beyond
 * Ruby's default 1 MiB VM stack; bounds what a corrupt ec can claim. */
#define OP_RB_MAX_STACK_BYTES (64ull << 20)

static __always_inline int op_rb_read_u64(const struct op_rb_walker *rb, __u64 *dst, __u64 addr)
{
	*dst = 0;
	return OP_RB_READ(rb, dst, sizeof(*dst), addr);
}

static __always_inline __u64 op_rb_block_u64(const struct op_rb_walker *rb, __u16 off)
{
	return rb->block[(off / 8) & 7];
}

/*
 * The execution context of the thread whose thread pointer is thread_ptr,
 * as the pid's tls_mode says where it lives. 0, or -1 when it has none.
 */
static __always_inline int op_rb_find_ec(const struct op_rb_walker *rb, __u64 thread_ptr, __u64 *ec)
{
	__u64 tls[2] = {}, dtv, block, th, id;

	*ec = 0;
	if (!thread_ptr)
		return -1;
	switch (rb->proc.tls_mode) {
	case OP_RB_TLS_DTV:
	case OP_RB_TLS_DTV_LOCAL:
		if (OP_RB_READ(rb, tls, sizeof(tls), rb->proc.tls_index))
			return -1;
		if (rb->proc.tls_mode == OP_RB_TLS_DTV_LOCAL)
			tls[1] = rb->proc.tls_offset;
		/* tls_index {module id, offset}: the module's block is dtv[id] (16-byte entries).
		 */
		if (!tls[0] || tls[0] > 0xffff || tls[1] > 0xffff)
			return -1;
		if (op_rb_read_u64(rb, &dtv, thread_ptr + 8) || !dtv)
			return -1;
		if (op_rb_read_u64(rb, &block, dtv + tls[0] * 16) || !block || block == ~0ull)
			return -1;
		if (op_rb_read_u64(rb, ec, block + tls[1]))
			return -1;
		break;
	case OP_RB_TLS_TP:
		if (op_rb_read_u64(rb, ec, thread_ptr + rb->proc.tls_index))
			return -1;
		break;
	case OP_RB_TLS_GLOBAL:
		/* The GVL holder's ec: shown only on its own thread. */
		if (op_rb_read_u64(rb, ec, rb->proc.tls_index) || !*ec ||
		    op_rb_read_u64(rb, &th, *ec + rb->proc.off.ec_thread_ptr) || !th ||
		    op_rb_read_u64(rb, &id, th + rb->proc.off.th_thread_id) || id != thread_ptr)
			return -1;
		break;
	default:
		return -1;
	}
	return *ec ? 0 : -1;
}

/*
 * Starts a walk of a process running proc on the thread whose thread pointer
 * is thread_ptr: its current control frame and the end of its frames. 1 when
 * Ruby frames follow, 0 when the thread runs none (counted).
 */
static __always_inline int op_rb_begin(struct op_rb_walker *rb, const struct op_rb_proc *proc,
				       __u64 thread_ptr)
{
	const struct op_rb_offsets *o;
	__u64 ec, stack, size, cfp;

	OP_RB_STAT(rb, OP_RB_STAT_WALKS);
	rb->proc = *proc;
	rb->cfp = 0;
	rb->end = 0;
	rb->block_cfp = 0;
	rb->broken = 0;
	rb->to_end = 0;
	rb->jit_mark = 0;
	rb->jit_pc_stale = 0;
	rb->deferred = OP_STEP_END;
	o = &rb->proc.off;
	if (op_rb_find_ec(rb, thread_ptr, &ec))
		goto no_ec;
	if (op_rb_read_u64(rb, &stack, ec + o->ec_vm_stack) ||
	    op_rb_read_u64(rb, &size, ec + o->ec_vm_stack_size) ||
	    op_rb_read_u64(rb, &cfp, ec + o->ec_cfp))
		goto no_ec;
	if (!stack || !o->cfp_size || size > OP_RB_MAX_STACK_BYTES / 8)
		goto no_ec;
	rb->end = stack + size * 8;
	/* The control frames sit at the stack's end, each cfp_size bytes. */
	if (cfp < stack || cfp >= rb->end || (rb->end - cfp) % o->cfp_size)
		goto no_ec;
	rb->cfp = cfp;
	return 1;
no_ec:
	OP_RB_STAT(rb, OP_RB_STAT_NO_EC);
	return 0;
}

/*
 * Reads control frame rb->cfp (its block and ep[-2..0]). 0, or -1 when it
 * cannot be read.
 */
static __always_inline int op_rb_load(struct op_rb_walker *rb)
{
	const struct op_rb_offsets *o = &rb->proc.off;
	__u64 ep;

	if (rb->block_cfp == rb->cfp)
		return 0;
	rb->block_cfp = 0;
	if (OP_RB_READ(rb, rb->block, OP_RB_CFP_BLOCK, rb->cfp))
		return -1;
	ep = op_rb_block_u64(rb, o->cfp_ep);
	if (ep < 16 || OP_RB_READ(rb, rb->env, sizeof(rb->env), ep - 16))
		return -1;
	rb->block_cfp = rb->cfp;
	return 0;
}

/* Is the loaded control frame shown? 1: an iseq frame, 2: a C function's, 0: neither. */
static __always_inline int op_rb_shown(const struct op_rb_walker *rb)
{
	__u64 flags = rb->env[2];

	if ((flags & OP_RB_FRAME_MAGIC_MASK) == OP_RB_FRAME_MAGIC_CFUNC)
		return 2;
	/* An iseq frame whose pc is still 0 has not started (Ruby's backtraces skip it too). */
	if (!(flags & OP_RB_FRAME_FLAG_CFRAME) && op_rb_block_u64(rb, rb->proc.off.cfp_iseq) &&
	    op_rb_block_u64(rb, rb->proc.off.cfp_pc))
		return 1;
	return 0;
}

/* How op_rb_seek() is defined: BPF makes it a global function, which the
 * verifier checks once (its loop included) instead of at each of the four
 * places the step calls it (issue 22: start-up's verifying). */
#ifndef OP_RB_SEEK_FN
#define OP_RB_SEEK_FN static __always_inline int
#endif

/*
 * Moves rb->cfp to the next control frame of the current entry to show,
 * loaded. 1: there is one, 0: the entry (or the stack) has no more (rb->cfp
 * then points past the entry's FINISH frame), -1: unreadable.
 */
OP_RB_SEEK_FN op_rb_seek(struct op_rb_walker *rb)
{
	if (!rb) /* a global function's pointer may be NULL for the verifier */
		return -1;
	for (int i = 0; i < OP_RB_SKIP_MAX; i++) {
		/* The bottom-most control frame is the VM's own (th_init's dummy,
		 * the main thread's made "<main>" by Init_VM): never shown, as in
		 * Ruby's backtraces. */
		if (rb->cfp + rb->proc.off.cfp_size >= rb->end)
			return 0;
		if (op_rb_load(rb))
			return -1;
		if (op_rb_shown(rb))
			return 1;
		OP_RB_STAT(rb, OP_RB_STAT_SKIPPED);
		rb->cfp += rb->proc.off.cfp_size;
		if ((rb->env[2] & OP_RB_FRAME_FLAG_FINISH) && !rb->to_end)
			return 0;
	}
	/* More frames not shown in a row than a real stack has: treat as its end. */
	return 0;
}

/*
 * Writes the loaded control frame rb->cfp (one op_rb_shown() accepts) into
 * *frame and moves on to the next one to show. 1 when the same entry has
 * more, 0 when it has no more, -1 when a frame could not be read (*frame is
 * then an OP_UNWIND_ERR_RUBY error frame).
 */
static __always_inline int op_rb_emit(struct op_rb_walker *rb, struct op_frame *frame)
{
	const struct op_rb_offsets *o = &rb->proc.off;
	__u64 iseq, body = 0, encoded = 0, pc, def = 0, me;
	__u32 aux = OP_RB_NO_POS;
	int shown, finish, more;

	if (rb->broken)
		return -1;
	shown = op_rb_shown(rb);

	frame->kind = OP_FRAME_RUBY;
	frame->flags = 0;
	frame->reserved = 0;
	if (shown == 2) {
		/* ep[-2]: the method entry of the C function. */
		frame->addr = rb->env[0];
		if (rb->env[0])
			op_rb_read_u64(rb, &def, rb->env[0] + o->me_def);
		frame->data = OP_RB_DATA_CFUNC | def;
		frame->aux = aux;
		OP_RB_STAT(rb, OP_RB_STAT_CFUNCS);
	} else {
		/* The method this frame runs in: ep[-2] of its local ep (a block's
		 * ep chain leads there through ep[-1]); a method entry for a method
		 * or a block in one, a cref (or nothing) at the top level. */
		__u64 env[3] = {rb->env[0], rb->env[1], rb->env[2]};

		for (int i = 0; i < OP_RB_EP_HOPS && !(env[2] & OP_RB_ENV_FLAG_LOCAL); i++) {
			__u64 prev = env[1] & ~3ull;

			if (prev < 16 || OP_RB_READ(rb, env, sizeof(env), prev - 16))
				break;
		}
		me = env[2] & OP_RB_ENV_FLAG_LOCAL ? env[0] : 0;
		iseq = op_rb_block_u64(rb, o->cfp_iseq);
		pc = op_rb_block_u64(rb, o->cfp_pc);
		if (!op_rb_read_u64(rb, &body, iseq + o->iseq_body) && body)
			op_rb_read_u64(rb, &encoded, body + o->body_encoded);
		/* Its pc is a line only when saved for this moment (see jit_pc_stale). */
		if (encoded && pc >= encoded && pc - encoded < 0x7ffffffffull && !rb->jit_pc_stale)
			aux = (__u32)((pc - encoded) / 8);
		frame->addr = iseq;
		frame->data = me & ~OP_RB_DATA_CFUNC;
		frame->aux = aux;
		OP_RB_STAT(rb, OP_RB_STAT_FRAMES);
	}
	rb->jit_pc_stale = 0;
	finish = (rb->env[2] & OP_RB_FRAME_FLAG_FINISH) != 0 && !rb->to_end;
	rb->cfp += o->cfp_size;
	if (finish)
		return 0;
	more = op_rb_seek(rb);
	if (more < 0) {
		/* This frame is good: the error frame comes at the next step. */
		rb->broken = 1;
		return 1;
	}
	return more;
}

static __always_inline void op_rb_error(struct op_rb_walker *rb, struct op_frame *frame)
{
	OP_RB_STAT(rb, OP_RB_STAT_READ_ERR);
	rb->cfp = rb->end;
	op_frame__set_error(frame, OP_UNWIND_ERR_RUBY);
}

/* The frame of YJIT's code at the walk's pc (a range Ruby unwinds itself). */
static __always_inline void op_rb_jit_frame(const struct op_walk *w, struct op_frame *frame)
{
	frame->kind = OP_FRAME_RUBY;
	frame->flags = 0;
	frame->reserved = 0;
	frame->addr = w->u.regs.pc;
	frame->data = OP_RB_DATA_JIT;
	frame->aux = OP_RB_NO_POS;
}

/*
 * Ruby 3.1's YJIT (C) enters its code with three pushes (cfp, ec, sp
 * registers, yjit_entry_prologue), keeps no frame pointer and moves the
 * stack pointer only by paired pushes around two C calls (duphash,
 * toregexp: 16 bytes more); Ruby-to-Ruby calls jump, never call. So at any
 * pc of its code the entry's return address is at sp + 24 (or sp + 40).
 * 3.2+'s YJIT (Rust, gen_entry_prologue) does the same on x86-64: its
 * frame_setup emits nothing there, then the same three pushes, and the same
 * paired pushes around duphash and toregexp; 3.3+ with --yjit-perf pushes
 * rbp twice more first, which puts the address at sp + 40 too.
 * Taken only when that address lies within OP_RB_JIT_CALLER_NEAR of
 * rb_vm_exec (the pid's Ruby range the native rules unwind): the VM loop
 * (rb_vm_exec, or vm_exec_core, static, next to it) that called the entry;
 * the words the entry saved (ec, VM stack pointer, cfp) are heap addresses,
 * far from it. 1, and, when move, w->u moves to that caller (rbp is still
 * the caller's: YJIT does not touch it); 0 leaves the walk as it was.
 */
#define OP_RB_JIT_CALLER_NEAR (4ull << 20)
static __always_inline int op_rb_jit_caller(struct op_rb_walker *rb, struct op_walk *w, int move)
{
	if (rb->proc.version < 0x301) /* YJIT came in 3.1 */
		return 0;
	for (int k = 0; k < 2; k++) {
		__u64 ra = 0, at = w->u.regs.sp + 24 + 16 * k;

		if (op_rb_read_u64(rb, &ra, at) || !ra)
			continue;
		for (int i = 0; i < OP_INTERP_MAX_RANGES; i++) {
			const struct op_interp_range *r = &w->interp.ranges[i];

			if (r->interp != OP_INTERP_RUBY || r->flags || !r->start ||
			    ra + OP_RB_JIT_CALLER_NEAR < r->start ||
			    ra >= r->end + OP_RB_JIT_CALLER_NEAR)
				continue;
			if (!move)
				return 1;
			w->u.regs.pc = ra;
			w->u.regs.sp = at + 8;
			w->u.pc_exact = 0;
			return 1;
		}
	}
	return 0;
}

/*
 * YJIT's code met on a thread whose Ruby frames cannot be walked (no
 * execution context): still marked, and the walk ends there.
 */
static __always_inline int op_rb_jit_alone(struct op_walk *w, struct op_frame *frame)
{
	op_rb_jit_frame(w, frame);
	return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_ANON_CODE;
}

/*
 * Ruby's step (OP_INTERP_STEP of omniprof/unwind/walk.h for OP_INTERP_RUBY,
 * after op_rb_begin() found the thread's frames): a pending Ruby frame, or
 * the native rb_vm_exec frame in *frame (res: its native step result)
 * replaced by the first frame of its entry. An OP_UNWIND_ERR_RUBY error
 * comes with its error frame already in *frame.
 */
static __always_inline int op_rb_walk_step(struct op_rb_walker *rb, struct op_walk *w,
					   struct op_frame *frame, int res)
{
	int more;

	if (res == OP_STEP_RUNTIME_UNWINDS) {
		/*
		 * YJIT's code: no unwind tables, no frame pointer. Marked;
		 * then, when the entry's caller is found (op_rb_jit_caller),
		 * the native walk goes on from it and the control frames come
		 * at the next rb_vm_exec frame as usual (jit_mark 3: the
		 * marker owed, then that move); else every control frame left
		 * (the entries' FINISH ends ignored), then the walk ends
		 * saying so.
		 */
		OP_RB_STAT(rb, OP_RB_STAT_JIT);
		/*
		 * The sample's own pc in YJIT's code: the frame running it (the
		 * next iseq frame shown) has the pc YJIT last saved, before a
		 * call that may raise or allocate, not the one it runs now (a
		 * wrong line: issue 18), so it comes without a line. Met as a
		 * return address, the code called out and saved its pc first.
		 */
		if (w->u.pc_exact)
			rb->jit_pc_stale = 1;
		if (op_rb_jit_caller(rb, w, 0)) {
			more = op_rb_seek(rb);
			if (more > 0 && op_rb_shown(rb) == 2) {
				op_rb_emit(rb, frame);
				rb->jit_mark = 3;
				w->active = OP_INTERP_RUBY;
				return OP_STEP_CONTINUE;
			}
			op_rb_jit_frame(w, frame);
			op_rb_jit_caller(rb, w, 1);
			return OP_STEP_CONTINUE;
		}
		rb->to_end = 1;
		rb->deferred = OP_STEP_ERROR_BASE + OP_UNWIND_ERR_ANON_CODE;
		more = op_rb_seek(rb);
		if (more > 0 && op_rb_shown(rb) == 2) {
			/*
			 * The innermost frame left is a C function's: the JIT
			 * code called it (YJIT pushes its frame), so it comes
			 * first, then the marker for the code that called it
			 * (Shop#pick;[YJIT code];Integer#times). The pc stays
			 * the walk's until the marker is written.
			 */
			more = op_rb_emit(rb, frame);
			rb->jit_mark = more ? 1 : 2;
			w->active = OP_INTERP_RUBY;
			return OP_STEP_CONTINUE;
		}
		op_rb_jit_frame(w, frame);
		if (more < 0)
			rb->broken = 1; /* the error frame comes at the next step */
		else if (!more)
			return rb->deferred;
		w->active = OP_INTERP_RUBY;
		return OP_STEP_CONTINUE;
	}
	if (w->active == OP_INTERP_RUBY && rb->jit_mark == 3) {
		/* The marker after the C function's frame, then the native walk goes on. */
		rb->jit_mark = 0;
		op_rb_jit_frame(w, frame);
		op_rb_jit_caller(rb, w, 1);
		w->active = 0;
		return OP_STEP_CONTINUE;
	}
	if (w->active == OP_INTERP_RUBY && rb->jit_mark) {
		more = rb->jit_mark == 1;
		rb->jit_mark = 0;
		op_rb_jit_frame(w, frame);
		if (more)
			return OP_STEP_CONTINUE;
		w->active = 0;
		return rb->deferred;
	}
	if (w->active == OP_INTERP_RUBY) {
		more = op_rb_emit(rb, frame);
		if (more < 0) {
			w->active = 0;
			op_rb_error(rb, frame);
			return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_RUBY;
		}
		if (more)
			return OP_STEP_CONTINUE;
		w->active = 0;
		return rb->deferred;
	}
	more = op_rb_seek(rb);
	if (more < 0) {
		op_rb_error(rb, frame);
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_RUBY;
	}
	if (!more) {
		/* Keep the native frame: better than nothing. */
		OP_RB_STAT(rb, OP_RB_STAT_LOOP_NO_FRAME);
		return res;
	}
	more = op_rb_emit(rb, frame);
	if (more < 0) {
		op_rb_error(rb, frame);
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_RUBY;
	}
	if (!more)
		return res;
	rb->deferred = res;
	w->active = OP_INTERP_RUBY;
	return OP_STEP_CONTINUE;
}

#endif
