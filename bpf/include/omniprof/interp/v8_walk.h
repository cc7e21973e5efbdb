/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The V8 frame walker, written once for two targets like
 * omniprof/unwind/walk.h: the BPF step of bpf/interp/v8.bpf.h and its C
 * build, src/interp/v8/v8_unwind.c (stack copies, unit tests, fuzzing).
 *
 * V8's code ranges (builtins, JIT code) are OP_INTERP_RANGE_F_UNWINDS
 * ranges: builtins have no unwind tables, and every frame V8 builds on
 * x86-64 keeps rbp, so the walker both names the frame and moves the
 * unwinder to the caller by the frame pointer. One read per frame of
 * OP_V8_BLOCK bytes around fp gives the marker or context, the function,
 * the bytecode array and offset, the caller's rbp and the return address;
 * an interpreted frame costs three more reads (the bytecode array's map
 * and instance type, which prove the slot holds one, and the function's
 * SharedFunctionInfo), a JIT frame one (the SharedFunctionInfo).
 *
 * The includer defines, before including omniprof/unwind/native.h and
 * omniprof/unwind/walk.h:
 *   OP_V8_READ(ctx, dst, size, addr)  copy user memory, 0 on success
 *   OP_V8_STAT(ctx, which)            count an enum op_v8_stat
 */
#ifndef OMNIPROF_INTERP_V8_WALK_H
#define OMNIPROF_INTERP_V8_WALK_H

#include "omniprof/abi.h"
#include "omniprof/interp/v8_abi.h"

#if !defined(OP_V8_READ) || !defined(OP_V8_STAT)
#error "define OP_V8_READ and OP_V8_STAT before including omniprof/interp/v8_walk.h"
#endif

/* The slot at fp + off out of the frame block (0 for an offset outside it). */
static __always_inline __u64 op_v8_slot(const __u64 *block, __s16 off)
{
	__s32 b = (__s32)off + OP_V8_BLOCK_BELOW;
	__u32 i;

	if (b < 0 || b >= OP_V8_BLOCK)
		return 0;
	i = (__u32)b >> 3;
	return block[i & (OP_V8_BLOCK / 8 - 1)];
}

static __always_inline int op_v8_in_builtins(const struct op_v8_proc *p, __u64 pc)
{
	for (int i = 0; i < OP_V8_MAX_BUILTINS; i++)
		if (pc >= p->builtins_start[i] && pc < p->builtins_end[i])
			return 1;
	return 0;
}

/* Is the tagged pointer obj a heap object whose map says instance type `type`? */
static __always_inline int op_v8_has_type(void *ctx, const struct op_v8_proc *p, __u64 obj,
					  __u16 type)
{
	__u64 map = 0;
	__u16 t = 0;

	if (!(obj & 1) || OP_V8_READ(ctx, &map, sizeof(map), obj - 1) || !(map & 1))
		return 0;
	if (OP_V8_READ(ctx, &t, sizeof(t), map - 1 + p->map_instance_type))
		return 0;
	return t == type;
}

/*
 * One V8 frame at the unwinder's (pc, fp): writes it (a V8 frame, or a
 * native one for builtins) and moves the unwinder to the caller. An enum
 * op_step_result; a frame that cannot be read writes an error frame
 * (OP_UNWIND_ERR_V8) and ends the walk: nothing past it can be trusted.
 */
static __always_inline int op_v8_walk_step(void *ctx, const struct op_v8_proc *p,
					   struct op_unwinder *u, struct op_frame *frame)
{
	__u64 block[OP_V8_BLOCK / 8] = {};
	__u64 pc = u->regs.pc, fp = u->regs.fp;
	__u64 marker, fn, saved, ra, ba, bo, sfi = 0;

	/* Callers live at higher addresses; a frame V8 built is never far above sp. */
	if (fp < u->regs.sp || fp - u->regs.sp > (1u << 24) ||
	    OP_V8_READ(ctx, block, sizeof(block), fp - OP_V8_BLOCK_BELOW)) {
		OP_V8_STAT(ctx, OP_V8_STAT_READ_ERR);
		op_frame__set_error(frame, OP_UNWIND_ERR_V8);
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_V8;
	}
	marker = op_v8_slot(block, p->fp_marker);
	fn = op_v8_slot(block, p->fp_function);
	saved = block[OP_V8_BLOCK_BELOW / 8];
	ra = block[OP_V8_BLOCK_BELOW / 8 + 1];

	frame->addr = pc;
	frame->data = 0;
	frame->aux = 0;
	frame->kind = OP_FRAME_NATIVE;
	frame->flags = u->pc_exact ? 0 : OP_FRAME_F_RETURN_ADDRESS;
	frame->reserved = 0;
	OP_V8_STAT(ctx, OP_V8_STAT_FRAMES);
	if (!(marker & 1)) {
		/* A typed frame (stub, entry, exit, internal...): builtins keep their
		 * symbol; one in JIT code is marked with its type. */
		if (!op_v8_in_builtins(p, pc)) {
			frame->kind = OP_FRAME_V8;
			frame->aux = OP_V8_AUX(OP_V8_FRAME_STUB, (__s64)marker >> 1);
			OP_V8_STAT(ctx, OP_V8_STAT_STUB);
		}
	} else if (op_v8_in_builtins(p, pc)) {
		/* The interpreter runs a function in builtins (the entry trampoline,
		 * the bytecode handlers): its frame holds a BytecodeArray and the
		 * offset. Other JavaScript builtins stay native frames. */
		ba = op_v8_slot(block, p->fp_bytecode_array);
		bo = op_v8_slot(block, p->fp_bytecode_offset);
		if ((fn & 1) && !(bo & 1) && op_v8_has_type(ctx, p, ba, p->type_bytecode_array) &&
		    !OP_V8_READ(ctx, &sfi, sizeof(sfi), fn - 1 + p->jsfunction_shared) &&
		    (sfi & 1)) {
			frame->kind = OP_FRAME_V8;
			frame->addr = ba;
			frame->data = sfi;
			frame->aux = OP_V8_AUX(OP_V8_FRAME_INTERPRETED, bo >> (p->smi_shift & 63));
			OP_V8_STAT(ctx, OP_V8_STAT_INTERPRETED);
		}
	} else if ((fn & 1) && !OP_V8_READ(ctx, &sfi, sizeof(sfi), fn - 1 + p->jsfunction_shared) &&
		   (sfi & 1)) {
		frame->kind = OP_FRAME_V8;
		frame->data = sfi;
		frame->aux = OP_V8_AUX(OP_V8_FRAME_JIT, 0);
		OP_V8_STAT(ctx, OP_V8_STAT_JIT);
	}
	u->n_frames++;
	/* V8's frames are never the outermost: a zero or lower rbp is a broken chain. */
	if (saved <= fp || ra == 0)
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_V8;
	u->regs.pc = ra;
	u->regs.sp = fp + 16;
	u->regs.fp = saved;
	u->pc_exact = 0;
	return OP_STEP_CONTINUE;
}

#endif
