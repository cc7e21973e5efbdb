/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PHP frame walker, written once for two targets like
 * omniprof/interp/python_walk.h (include omniprof/unwind/native.h and
 * omniprof/unwind/walk.h first): the BPF sampler and ordinary C
 * (src/interp/php/php_unwind.c: stack copies, the replay suite, the unit
 * tests and the fuzz target). It reads the process only through
 * OP_PHP_READ(php, dst, size, addr) (OP_READ_USER's contract; php, the
 * struct op_php_walker, is the includer's context), and counts enum
 * op_php_stat events through OP_PHP_STAT(php, which) when defined.
 *
 * How PHP frames join the native stack. The Zend VM (execute_ex: with the
 * HYBRID VM every opcode handler is inside it) runs user code without
 * recursing in C: a PHP call pushes a zend_execute_data and goes on in the
 * same execute_ex call. execute_ex is entered again only when C code calls
 * back into PHP (zend_call_function: usort's comparator, array_map's
 * callback, a destructor), and the first frame that call runs is flagged
 * ZEND_CALL_TOP. So each native execute_ex frame, innermost first, is
 * replaced by the next frames of the chain up to and including the first
 * user-code frame flagged ZEND_CALL_TOP; internal functions' frames (usort,
 * array_map) come out among them, above the native frames of their C code:
 *   {main} -> f -> usort -> [zif_usort ... zend_call_function] -> cmp
 * An internal function called back from C (array_map('strlen')) is flagged
 * ZEND_CALL_TOP too but runs no execute_ex: it does not end the run.
 *
 * OPcache's JIT code (pid ranges flagged OP_INTERP_RANGE_F_UNWINDS) runs
 * on execute_ex's stack frame (the HYBRID VM jumps to it and it jumps back),
 * so a pc there is unwound with execute_ex's own rule: the step moves the pc
 * to proc.vm_body_pc and leaves the frame to the native rules, which give
 * execute_ex's frame, which the step then replaces as above. The PHP frames
 * of JIT'ed functions are still the chain's: named as in the VM, and the
 * user frame that pc stood for (the first user frame of that execute_ex
 * frame's run) is marked OP_PHP_AUX_JIT.
 *
 * A frame's line is that of its saved opline (zend_execute_data.opline),
 * which the HYBRID VM writes back only when it calls or leaves: for the
 * innermost frame, when the sample's own pc is in execute_ex and the VM
 * keeps its state in GCC's global registers (OP_PHP_PROC_F_VM_REGS), the
 * running opline is r15 (op_walk.leaf_r15) when r14 is that frame.
 *
 * One frame per step (one bpf_loop round in BPF). A zend_execute_data that
 * cannot be read ends the walk with an OP_UNWIND_ERR_PHP error frame,
 * written by the step itself: nothing past it can be trusted.
 */
#ifndef OMNIPROF_INTERP_PHP_WALK_H
#define OMNIPROF_INTERP_PHP_WALK_H

#include "omniprof/abi.h"
#include "omniprof/interp/php_abi.h"

#ifndef OMNIPROF_UNWIND_WALK_H
#error "include omniprof/unwind/walk.h before omniprof/interp/php_walk.h"
#endif
#ifndef OP_PHP_READ
#error "define OP_PHP_READ before including omniprof/interp/php_walk.h"
#endif
#ifndef OP_PHP_STAT
#define OP_PHP_STAT(php, which) ((void)0)
#endif

/* The field at zend_execute_data offset off in the block (offsets are
 * published only inside it, at a multiple of the field's size: the masks
 * only keep the verifier, and a corrupt map entry, in the block). */
static __always_inline __u64 op_php_block_u64(const struct op_php_walker *php, __u16 off)
{
	return php->block.q[(off / 8) & (OP_PHP_EX_BLOCK / 8 - 1)];
}

static __always_inline __u32 op_php_block_u32(const struct op_php_walker *php, __u16 off)
{
	return php->block.d[(off / 4) & (OP_PHP_EX_BLOCK / 4 - 1)];
}

/*
 * Starts a walk of a process running proc: the frame the engine runs now
 * goes in php->ex. 1 when there is one, 0 when not (counted) or unreadable.
 */
static __always_inline int op_php_begin(struct op_php_walker *php, const struct op_php_proc *proc)
{
	__u64 ex = 0;

	OP_PHP_STAT(php, OP_PHP_STAT_WALKS);
	php->proc = *proc;
	php->ex = 0;
	php->deferred = OP_STEP_END;
	php->jit = 0;
	php->leaf_opline = 0;
	if (OP_PHP_READ(php, &ex, sizeof(ex), proc->current_ex) || !ex) {
		OP_PHP_STAT(php, OP_PHP_STAT_NO_FRAME);
		return 0;
	}
	php->ex = ex;
	return 1;
}

/*
 * Writes frame php->ex into *frame and moves php->ex to the next one.
 * Returns 1 when the same execute_ex call has more frames, 0 when it has no
 * more, 2 when the chain ended before any PHP frame (*frame untouched), -1
 * when a frame could not be read (*frame is then an OP_UNWIND_ERR_PHP error
 * frame).
 */
static __always_inline int op_php_emit(struct op_php_walker *php, struct op_frame *frame)
{
	const struct op_php_offsets *o = &php->proc.off;
	__u64 ex = php->ex, func = 0, prev = 0, opline, head[2] = {0, 0};
	__u32 info = 0, line = 0;
	__u8 type;

	php->ex = 0;
	/* Frames without a function (zend_call_function's dummy frames) are no PHP code. */
	for (int i = 0; i < OP_PHP_MAX_SKIP && ex; i++) {
		if (OP_PHP_READ(php, &php->block, sizeof(php->block), ex))
			goto unreadable;
		func = op_php_block_u64(php, o->ex_func);
		prev = op_php_block_u64(php, o->ex_prev);
		if (func)
			break;
		ex = prev;
	}
	if (!func)
		return 2; /* the chain ended on dummy frames: nothing written */
	/* type, then function_name: one read of the function's head. */
	if (o->func_name != 8 || o->func_type != 0 || OP_PHP_READ(php, head, sizeof(head), func))
		goto unreadable;
	type = (__u8)head[0];
	info = op_php_block_u32(php, o->ex_call_info);
	if (type == OP_PHP_USER_FUNCTION || type == OP_PHP_EVAL_CODE) {
		opline = op_php_block_u64(php, o->ex_opline);
		/* The register's opline, when it is one of this function's: an
		 * opline apart from the saved one by whole zend_ops. */
		if (php->leaf_opline && opline &&
		    (php->leaf_opline - opline) % OP_PHP_OP_SIZE == 0 &&
		    php->leaf_opline - opline + (1ull << 24) < (1ull << 25)) {
			opline = php->leaf_opline;
			OP_PHP_STAT(php, OP_PHP_STAT_LEAF_REG);
		}
		if (!opline || OP_PHP_READ(php, &line, sizeof(line), opline + o->op_lineno)) {
			OP_PHP_STAT(php, OP_PHP_STAT_NO_LINE);
			line = 0;
		}
		line &= OP_PHP_AUX_LINE;
		/* The user frame a JIT pc stood for: internal functions it called
		 * (emitted first) run C code, not JIT code. */
		if (php->jit)
			line |= OP_PHP_AUX_JIT;
		php->jit = 0;
	} else if (type != OP_PHP_INTERNAL_FUNCTION) {
		goto unreadable;
	}
	php->leaf_opline = 0;
	frame->addr = func;
	frame->data = head[1];
	frame->aux = line;
	frame->kind = OP_FRAME_PHP;
	frame->flags = 0;
	frame->reserved = 0;
	php->ex = prev;
	OP_PHP_STAT(php, OP_PHP_STAT_FRAMES);
	/* The first frame of this execute_ex call: the rest belong to its caller's. */
	if (type != OP_PHP_INTERNAL_FUNCTION && (info & o->call_top))
		return 0;
	return prev ? 1 : 0;
unreadable:
	OP_PHP_STAT(php, OP_PHP_STAT_READ_ERR);
	op_frame__set_error(frame, OP_UNWIND_ERR_PHP);
	return -1;
}

/*
 * PHP's step (OP_INTERP_STEP of omniprof/unwind/walk.h for OP_INTERP_PHP,
 * after the includer's lazy set-up, op_php_begin(), when ready is set):
 *   res == OP_STEP_RUNTIME_UNWINDS: a pc in OPcache's JIT code: moved to
 *     execute_ex's body and left to the native rules (whose frame comes
 *     back here as an execute_ex frame);
 *   a pending PHP frame of the current execute_ex call;
 *   the native execute_ex frame in *frame (res: its step result), replaced
 *   by the first PHP frame of that call.
 * An OP_UNWIND_ERR_PHP error comes with its error frame already in *frame.
 */
static __always_inline int op_php_walk_step(struct op_php_walker *php, struct op_walk *w,
					    struct op_frame *frame, int res, int ready)
{
	int more;

	if (res == OP_STEP_RUNTIME_UNWINDS) {
		if (!php->proc.vm_body_pc)
			return res;
		OP_PHP_STAT(php, OP_PHP_STAT_JIT);
		php->jit = 1;
		w->u.regs.pc = php->proc.vm_body_pc;
		w->u.pc_exact = 1;
		return res;
	}
	if (!ready)
		return res;
	if (w->active == OP_INTERP_PHP) {
		more = op_php_emit(php, frame);
		if (more == 2) {
			/* An empty slot to fill: an unnamed PHP frame. */
			frame->addr = 0;
			frame->data = 0;
			frame->aux = 0;
			frame->kind = OP_FRAME_PHP;
			frame->flags = 0;
			frame->reserved = 0;
			more = 0;
		}
		if (more < 0) {
			w->active = 0;
			return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_PHP;
		}
		if (more)
			return OP_STEP_CONTINUE;
		w->active = 0;
		return php->deferred;
	}
	/*
	 * The sample's own pc in execute_ex (not JIT code, whose registers may
	 * lag): r15 is the running frame's opline when r14 is that frame.
	 */
	if (w->n == 0 && !php->jit && (php->proc.flags & OP_PHP_PROC_F_VM_REGS) &&
	    w->leaf_r14 == php->ex && php->ex)
		php->leaf_opline = w->leaf_r15;
	if (!php->ex) {
		/* Keep the native frame: better than nothing. */
		OP_PHP_STAT(php, OP_PHP_STAT_VM_NO_FRAME);
		return res;
	}
	more = op_php_emit(php, frame);
	if (more < 0)
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_PHP;
	if (more == 2) {
		OP_PHP_STAT(php, OP_PHP_STAT_VM_NO_FRAME);
		return res;
	}
	if (!more)
		return res;
	php->deferred = res;
	w->active = OP_INTERP_PHP;
	return OP_STEP_CONTINUE;
}

#endif
