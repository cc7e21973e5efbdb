/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-frame native unwinder, written once for two targets: the BPF
 * sampler includes it, and so can ordinary C (tests, a later user-space
 * replay), which is why it uses only fixed-width types and reaches memory
 * through OP_READ_USER(dst, size, addr), a macro the includer defines
 * (bpf_probe_read_user in BPF; a snapshot read in user space) returning 0 on
 * success.
 *
 * Each step: emit the frame for the current PC, find the unwind rule for that
 * PC, apply it to get the caller's registers. Today the only rule is "frame
 * pointer" (CFA = rbp + 16, return address at CFA - 8, caller's rbp at
 * CFA - 16); stack-delta tables from .eh_frame replace op_unwind_find_rule
 * without changing the loop.
 */
#ifndef OMNIPROF_BPF_UNWIND_NATIVE_UNWIND_H
#define OMNIPROF_BPF_UNWIND_NATIVE_UNWIND_H

#include "types.h"

#ifndef OP_READ_USER
#error "define OP_READ_USER(dst, size, addr) before including native_unwind.h"
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

struct op_regs {
	__u64 pc;
	__u64 sp;
	__u64 fp; /* rbp */
};

enum op_step_result {
	OP_STEP_CONTINUE = 0, /* regs now describe the caller */
	OP_STEP_END = 1,      /* the frame emitted was the outermost */
	/* > OP_STEP_END: an enum op_unwind_error + OP_STEP_ERROR_BASE */
	OP_STEP_ERROR_BASE = 16,
};

struct op_unwinder {
	struct op_regs regs;
	__u32 n_frames; /* frames emitted so far */
};

static __always_inline void op_unwinder__init(struct op_unwinder *u, __u64 pc, __u64 sp, __u64 fp)
{
	u->regs.pc = pc;
	u->regs.sp = sp;
	u->regs.fp = fp;
	u->n_frames = 0;
}

/* The unwind rule for pc. Frame pointers until stack deltas arrive. */
static __always_inline void op_unwind_find_rule(__u64 pc, struct op_unwind_rule *rule)
{
	(void)pc;
	rule->cmd = OP_RULE_CFA;
	rule->cfa_base = OP_CFA_RBP;
	rule->cfa_offset = 16;
	rule->fp_offset = -16;
}

/* Moves regs to the caller's frame according to rule. */
static __always_inline int op_unwind_apply_rule(struct op_regs *r,
						const struct op_unwind_rule *rule)
{
	__u64 base, cfa, ra = 0, fp = r->fp;

	if (rule->cmd == OP_RULE_STOP)
		return OP_STEP_END;
	base = rule->cfa_base == OP_CFA_RBP ? r->fp : r->sp;
	/* A zero frame pointer marks the outermost frame (_start clears rbp). */
	if (rule->cfa_base == OP_CFA_RBP && base == 0)
		return OP_STEP_END;
	/* Callers live at higher addresses: a base below sp is not a frame. */
	if (base < r->sp)
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_BAD_FP;
	cfa = base + (__s64)rule->cfa_offset;
	if (OP_READ_USER(&ra, sizeof(ra), cfa - 8))
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_READ;
	if (rule->fp_offset && OP_READ_USER(&fp, sizeof(fp), cfa + (__s64)rule->fp_offset))
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_READ;
	if (ra == 0)
		return OP_STEP_END;
	r->pc = ra;
	r->sp = cfa;
	r->fp = fp;
	return OP_STEP_CONTINUE;
}

/*
 * Emits the current frame into *frame and unwinds one level. Returns an
 * enum op_step_result; on OP_STEP_CONTINUE the caller emits again.
 */
static __always_inline int op_unwind_step(struct op_unwinder *u, struct op_frame *frame)
{
	struct op_unwind_rule rule;

	frame->addr = u->regs.pc;
	frame->file_id = 0;
	frame->aux = 0;
	frame->kind = OP_FRAME_NATIVE;
	/* Every frame but the first was reached through a return address. */
	frame->flags = u->n_frames ? OP_FRAME_F_RETURN_ADDRESS : 0;
	frame->reserved = 0;
	u->n_frames++;

	op_unwind_find_rule(u->regs.pc, &rule);
	return op_unwind_apply_rule(&u->regs, &rule);
}

static __always_inline void op_frame__set_error(struct op_frame *frame, __u32 error)
{
	frame->addr = error;
	frame->file_id = 0;
	frame->aux = 0;
	frame->kind = OP_FRAME_ERROR;
	frame->flags = 0;
	frame->reserved = 0;
}

#endif
