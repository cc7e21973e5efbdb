/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-frame native unwinder, written once for two targets: the BPF
 * sampler includes it, and so does ordinary C (unit tests, user-space replay),
 * which is why it uses only fixed-width types and reaches the outside world
 * through two macros the includer defines first:
 *
 *   OP_READ_USER(u, dst, size, addr)  copy user memory; 0 on success
 *                                   (bpf_probe_read_user in BPF; a snapshot
 *                                   read in user space). u, the struct
 *                                   op_unwinder, is the includer's context:
 *                                   user space embeds it and finds its
 *                                   sources from it (no globals)
 *   OP_FIND_RULE(u, pc, rule)       fill *rule (struct op_unwind_rule) for the
 *                                   instruction at pc: a stack-delta lookup in
 *                                   BPF maps, or an in-memory table; the
 *                                   includer picks the frame-pointer rule
 *                                   (op_unwind_fp_rule) when it has no table
 *
 * and may define
 *
 *   OP_READ_STACK_U64(u, dst, addr) an 8-byte read of the walked stack (the
 *                                   return address and the registers a rule
 *                                   says were saved), 0 on success; default:
 *                                   OP_READ_USER. The BPF sampler serves
 *                                   these from a window of the stack without
 *                                   a call: two or more a frame, on CPUs where
 *                                   every return is mitigated
 *   OP_READ_STACK_U64_FAST(u, dst, addr) the same read for op_unwind_step_fast():
 *                                   nonzero also where the read would cost a
 *                                   call (the BPF window's miss), which makes
 *                                   that step decline; default:
 *                                   OP_READ_STACK_U64
 *
 * Each step emits the frame for the current PC, finds the rule for that PC and
 * applies it to get the caller's registers (x86-64: return address at CFA - 8).
 */
#ifndef OMNIPROF_UNWIND_NATIVE_H
#define OMNIPROF_UNWIND_NATIVE_H

#include "omniprof/abi.h"
#include "omniprof/unwind/rules.h"

#if !defined(OP_READ_USER) || !defined(OP_FIND_RULE)
#error "define OP_READ_USER and OP_FIND_RULE before including omniprof/unwind/native.h"
#endif

#ifndef OP_READ_STACK_U64
#define OP_READ_STACK_U64(u, dst, addr) OP_READ_USER(u, dst, 8, addr)
#endif
#ifndef OP_READ_STACK_U64_FAST
#define OP_READ_STACK_U64_FAST(u, dst, addr) OP_READ_STACK_U64(u, dst, addr)
#endif

/* The thread's fs base (x86-64 TLS: where Go keeps g), 0 when unknown. */
#ifndef OP_READ_FSBASE
#define OP_READ_FSBASE(u) 0ULL
#endif

/* Where the kernel's rt_sigframe keeps the interrupted registers, relative to
 * rsp in the signal trampoline: struct ucontext (uc_mcontext at 40) gregs[]
 * REG_R14 = 6, REG_RBP = 10, REG_RBX = 11, REG_RSP = 15, REG_RIP = 16. The x86-64 ABI
 * fixes them. */
#define OP_SIGFRAME_RBP (40 + 10 * 8)
#define OP_SIGFRAME_RBX (40 + 11 * 8)
#define OP_SIGFRAME_RSP (40 + 15 * 8)
#define OP_SIGFRAME_RIP (40 + 16 * 8)
#define OP_SIGFRAME_R14 (40 + 6 * 8) /* REG_R14: Go's g in Go code (a stack copy's capture) */

struct op_regs {
	__u64 pc;
	__u64 sp;
	__u64 fp; /* rbp */
	__u64 bx; /* rbx: meaningful only where struct op_unwinder's bx_sp says */
};

enum op_step_result {
	OP_STEP_CONTINUE = 0, /* regs now describe the caller */
	OP_STEP_END = 1,      /* the frame emitted was the outermost */
	/* In to a runtime's step only (omniprof/unwind/walk.h): the pc is in a range
	 * the runtime unwinds itself; frame is an empty slot. A step that does not
	 * take it returns it unchanged and the native step runs. */
	OP_STEP_RUNTIME_UNWINDS = 2,
	/* From op_unwind_step_fast() only: it left the frame to op_unwind_step(),
	 * changing nothing. */
	OP_STEP_DECLINED = 3,
	/* > OP_STEP_END: an enum op_unwind_error + OP_STEP_ERROR_BASE */
	OP_STEP_ERROR_BASE = 16,
};

struct op_unwinder {
	struct op_regs regs;
	__u32 n_frames; /* frames emitted so far */
	__u32 pid;
	/* regs.pc is where the thread stopped (first frame, or the frame a signal
	 * interrupted), not a return address: look it up as is, not as pc - 1. */
	__u8 pc_exact;
	__u8 reserved[7];
	/* regs.bx is the rbx of the frame whose sp is bx_sp, 0: rbx unknown
	 * (OP_RULE_CFA_RBX). Kept by sp rather than by a flag so that every step
	 * that moves to another frame (the runtimes' own steps too) forgets it. */
	__u64 bx_sp;
};

static __always_inline void op_unwinder__init(struct op_unwinder *u, __u32 pid, __u64 pc, __u64 sp,
					      __u64 fp)
{
	u->regs.pc = pc;
	u->regs.sp = sp;
	u->regs.fp = fp;
	u->regs.bx = 0;
	u->bx_sp = 0;
	u->n_frames = 0;
	u->pid = pid;
	u->pc_exact = 1;
}

/* The sampled thread's rbx at the walk's first frame (OP_RULE_CFA_RBX). */
static __always_inline void op_unwinder__set_bx(struct op_unwinder *u, __u64 bx)
{
	u->regs.bx = bx;
	u->bx_sp = u->regs.sp;
}

static __always_inline int op_unwind_signal_frame(struct op_unwinder *u)
{
	struct op_regs *r = &u->regs;
	__u64 pc = 0, sp = 0, fp = 0, bx = 0;

	if (OP_READ_USER(u, &pc, sizeof(pc), r->sp + OP_SIGFRAME_RIP) ||
	    OP_READ_USER(u, &sp, sizeof(sp), r->sp + OP_SIGFRAME_RSP) ||
	    OP_READ_USER(u, &fp, sizeof(fp), r->sp + OP_SIGFRAME_RBP))
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_READ;
	if (!pc)
		return OP_STEP_END;
	/* The interrupted frame's rbx too (OP_RULE_CFA_RBX), when readable. */
	u->bx_sp = OP_READ_USER(u, &bx, sizeof(bx), r->sp + OP_SIGFRAME_RBX) ? 0 : sp;
	r->pc = pc;
	r->sp = sp;
	r->fp = fp;
	r->bx = bx;
	return OP_STEP_CONTINUE;
}

/*
 * The goroutine a Go switch left, as OP_RULE_GO_SWITCH finds it: g from the
 * thread pointer at tls_offset (the rule's cfa_offset), m = g.m, curg =
 * m.curg (at curg_offset, the rule's fp_offset), and only when g is m.g0
 * (the thread is on the switch's g0) and curg another goroutine of the same
 * m (a wrong TLS slot or offset does not get that far). 0 otherwise; g and m
 * in *g_out and *m_out when curg is returned. The one check of the switch:
 * the step below, a stack copy taken in BPF (bpf/stack_copy.h, which
 * captures the switch with Go's fixed offsets) and a copy's walk in user
 * space (src/engine/stack_copy.c: whether the live process still holds the
 * sample's goroutine) all ask it, each reading through its own OP_READ_USER.
 */
static __always_inline __u64 op_go_switch__curg(struct op_unwinder *u, __u64 fsbase,
						__s64 tls_offset, __u16 curg_offset, __u64 *g_out,
						__u64 *m_out)
{
	__u64 g = 0, m = 0, g0 = 0, curg = 0, curg_m = 0;

	/* An includer's OP_READ_USER may use none of them. */
	(void)u;
	(void)tls_offset;
	(void)curg_offset;
	if (!fsbase || OP_READ_USER(u, &g, sizeof(g), fsbase + tls_offset) || !g ||
	    OP_READ_USER(u, &m, sizeof(m), g + OP_GO_G_M) || !m ||
	    OP_READ_USER(u, &g0, sizeof(g0), m + OP_GO_M_G0) || g0 != g ||
	    OP_READ_USER(u, &curg, sizeof(curg), m + curg_offset) || !curg || curg == g ||
	    OP_READ_USER(u, &curg_m, sizeof(curg_m), curg + OP_GO_G_M) || curg_m != m)
		return 0;
	*g_out = g;
	*m_out = m;
	return curg;
}

/*
 * OP_RULE_GO_SWITCH: the goroutine's registers from g.m.curg.sched, as the
 * switch saved them. OP_STEP_CONTINUE when they were read; anything else
 * leaves u->regs alone (the caller falls back to the frame-pointer rule).
 */
static __always_inline int op_unwind_go_switch(struct op_unwinder *u,
					       const struct op_unwind_rule *rule)
{
	struct op_regs *r = &u->regs;
	__u64 g = 0, m = 0, sp = 0, bp = 0, pc = 0, saved = 0;
	__u64 curg = op_go_switch__curg(u, OP_READ_FSBASE(u), rule->cfa_offset,
					(__u16)rule->fp_offset, &g, &m);

	if (!curg)
		return OP_STEP_END;
	if ((rule->cfa_base & OP_GO_SWITCH_F_CGO) &&
	    (OP_READ_USER(u, &saved, sizeof(saved), r->sp + OP_GO_CGO_SAVED_G) || saved != curg))
		return OP_STEP_END;
	if (OP_READ_USER(u, &sp, sizeof(sp), curg + OP_GO_G_SCHED + OP_GO_GOBUF_SP) || !sp ||
	    OP_READ_USER(u, &bp, sizeof(bp), curg + OP_GO_G_SCHED + OP_GO_GOBUF_BP) ||
	    OP_READ_USER(u, &pc, sizeof(pc), sp) || !pc)
		return OP_STEP_END;
	r->pc = pc;
	r->sp = sp + 8;
	r->fp = bp;
	u->pc_exact = 0;
	return OP_STEP_CONTINUE;
}

/* A stack read of op_unwind_apply_rule__mode(): the fast one in its fast form. */
#define OP_APPLY_READ(fast, u, dst, addr)                                                          \
	((fast) ? OP_READ_STACK_U64_FAST(u, dst, addr) : OP_READ_STACK_U64(u, dst, addr))

/*
 * Moves u->regs to the caller's frame according to rule. fast (a constant:
 * each form is compiled apart) is op_unwind_step_fast()'s form: only the
 * plain CFA rule without an rbx to carry, its reads by
 * OP_READ_STACK_U64_FAST, and anything else, an error included, declined
 * before u is changed (OP_STEP_DECLINED), so that the full form, run next on
 * the same frame, decides it. Where the fast form does not decline, it does
 * what the full one does.
 */
static __always_inline int
op_unwind_apply_rule__mode(struct op_unwinder *u, const struct op_unwind_rule *rule, const int fast)
{
	struct op_regs *r = &u->regs;
	struct op_unwind_rule fallback;
	__u64 base, cfa, ra = 0, fp = r->fp, bx = r->bx;
	__u32 slot;
	/* In anonymous code the frame pointer is a guess: every way it fails says so. */
	int anon = rule->cmd == OP_RULE_ANON, err;
	__u32 bad_fp = anon ? OP_UNWIND_ERR_ANON_CODE : OP_UNWIND_ERR_BAD_FP;
	__u32 bad_cfa = anon ? OP_UNWIND_ERR_ANON_CODE : OP_UNWIND_ERR_BAD_CFA;
	__u32 bad_read = anon ? OP_UNWIND_ERR_ANON_CODE : OP_UNWIND_ERR_READ;

	if (fast && (rule->cmd != OP_RULE_CFA ||
		     ((rule->cfa_base & OP_CFA_F_BX) && u->bx_sp && u->bx_sp == r->sp)))
		return OP_STEP_DECLINED;
	switch (rule->cmd) {
	case OP_RULE_STOP:
		return OP_STEP_END;
	case OP_RULE_SIGNAL:
		err = op_unwind_signal_frame(u);
		u->pc_exact = 1; /* the interrupted instruction, not a return address */
		return err;
	case OP_RULE_GO_SWITCH:
		/* Only from the frame the switch called (a return address into the
		 * switch): at the switch's own instructions g.sched is not this call's. */
		if (!u->pc_exact && op_unwind_go_switch(u, rule) == OP_STEP_CONTINUE)
			return OP_STEP_CONTINUE;
		fallback = (struct op_unwind_rule){.cmd = OP_RULE_FP_SWITCH,
						   .cfa_base = OP_CFA_RBP,
						   .fp_offset = -16,
						   .cfa_offset = 16};
		rule = &fallback;
		break;
	case OP_RULE_CFA_RBX:
		/* rbx is known only in the frame the walk's registers are from. */
		if (!u->bx_sp || u->bx_sp != r->sp)
			return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_RBX_CFA;
		break;
	case OP_RULE_CFA:
	case OP_RULE_PLT:
	case OP_RULE_CFA_DEREF:
	case OP_RULE_ANON:
	case OP_RULE_FP_SWITCH:
		break;
	default:
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_NO_RULE;
	}

	base = rule->cmd == OP_RULE_CFA_RBX			   ? r->bx
	       : (rule->cfa_base & OP_CFA_BASE_MASK) == OP_CFA_RBP ? r->fp
								   : r->sp;
	if ((rule->cfa_base & OP_CFA_BASE_MASK) == OP_CFA_RBP) {
		/* A zero frame pointer marks the outermost frame (_start clears rbp);
		 * JIT code is never outermost. */
		if (base == 0)
			return anon ? OP_STEP_ERROR_BASE + bad_fp : OP_STEP_END;
		/* Callers live at higher addresses: a base below sp is not a frame
		 * (but after a stack switch the caller is on another stack). */
		if (base < r->sp && rule->cmd != OP_RULE_FP_SWITCH)
			return fast ? OP_STEP_DECLINED : OP_STEP_ERROR_BASE + bad_fp;
	}
	cfa = base + (__s64)rule->cfa_offset;
	if (rule->cmd == OP_RULE_PLT && (r->pc & 15) >= 11)
		cfa += 8; /* past the stub's push: the second half of each 16-byte PLT entry */
	if (rule->cmd == OP_RULE_CFA_DEREF && OP_READ_STACK_U64(u, &cfa, cfa))
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_READ;
	if (cfa < r->sp + 8 && rule->cmd != OP_RULE_FP_SWITCH)
		return fast ? OP_STEP_DECLINED : OP_STEP_ERROR_BASE + bad_cfa;
	if (OP_APPLY_READ(fast, u, &ra, cfa - 8))
		return fast ? OP_STEP_DECLINED : OP_STEP_ERROR_BASE + bad_read;
	if (rule->cmd == OP_RULE_CFA_DEREF) {
		/* Realigned frame: the caller's rbp sits at a fixed place from the base
		 * register, not from the CFA (see OP_RULE_CFA_DEREF). */
		if (OP_READ_STACK_U64(u, &fp, base + (__s64)rule->fp_offset))
			return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_READ;
	} else if (rule->fp_offset && OP_APPLY_READ(fast, u, &fp, cfa + (__s64)rule->fp_offset)) {
		if (fast)
			return OP_STEP_DECLINED;
		/* A save slot below sp was popped already (an epilogue, whose CFI
		 * still names the slot): rbp holds the caller's value. A stack copy
		 * starts at sp, so only its walk fails to read the slot. */
		if (cfa + (__s64)rule->fp_offset >= r->sp)
			return OP_STEP_ERROR_BASE + bad_read;
		fp = r->fp;
	}
	if (ra == 0)
		return anon ? OP_STEP_ERROR_BASE + bad_fp : OP_STEP_END;
	/* The caller's rbx where this frame's rule says (OP_CFA_F_BX), when this
	 * frame's is known: otherwise bx_sp, now below the caller's sp, forgets it. */
	if ((rule->cfa_base & OP_CFA_F_BX) && u->bx_sp && u->bx_sp == r->sp) {
		slot = OP_CFA_BX_SLOT(rule->cfa_base);
		if (!slot || !OP_READ_STACK_U64(u, &bx, cfa - 8 * (__u64)slot)) {
			u->bx_sp = cfa;
		} else if (cfa - 8 * (__u64)slot < r->sp) {
			bx = r->bx; /* popped already, as rbp above */
			u->bx_sp = cfa;
		}
	}
	r->pc = ra;
	r->sp = cfa;
	r->fp = fp;
	r->bx = bx;
	u->pc_exact = 0;
	return OP_STEP_CONTINUE;
}

static __always_inline int op_unwind_apply_rule(struct op_unwinder *u,
						const struct op_unwind_rule *rule)
{
	return op_unwind_apply_rule__mode(u, rule, 0);
}

/* A return address points after the call; the call itself (pc - 1) is in the
 * caller's function and under its unwind rule, which matters for calls to
 * noreturn functions at the very end of a function. */
static __always_inline __u64 op_unwinder__lookup_pc(const struct op_unwinder *u)
{
	return u->pc_exact ? u->regs.pc : u->regs.pc - 1;
}

/* The native frame at pc (exact: where the thread stopped, not a return address). */
static __always_inline void op_frame__set_native(struct op_frame *frame, __u64 pc, __u8 exact)
{
	frame->addr = pc;
	frame->data = 0;
	frame->aux = 0;
	frame->kind = OP_FRAME_NATIVE;
	frame->flags = exact ? 0 : OP_FRAME_F_RETURN_ADDRESS;
	frame->reserved = 0;
}

/*
 * Emits the current frame into *frame and unwinds one level. Returns an
 * enum op_step_result; on OP_STEP_CONTINUE the caller emits again.
 */
static __always_inline int op_unwind_step(struct op_unwinder *u, struct op_frame *frame)
{
	struct op_unwind_rule rule;
	__u64 lookup_pc = op_unwinder__lookup_pc(u);

	op_frame__set_native(frame, u->regs.pc, u->pc_exact);
	u->n_frames++;

	OP_FIND_RULE(u, lookup_pc, &rule);
	return op_unwind_apply_rule(u, &rule);
}

/*
 * op_unwind_step() for a frame whose rule (for op_unwinder__lookup_pc) the
 * includer already holds, done the cheap way (op_unwind_apply_rule__mode's
 * fast form): OP_STEP_CONTINUE or OP_STEP_END with the frame emitted and u
 * moved as op_unwind_step() would, or OP_STEP_DECLINED with neither: the
 * includer runs op_unwind_step() on the frame. The BPF walk runs frames this
 * way after each round's first, in the same call (a call a frame fewer).
 */
static __always_inline int op_unwind_step_fast(struct op_unwinder *u,
					       const struct op_unwind_rule *rule,
					       struct op_frame *frame)
{
	__u64 pc = u->regs.pc;
	__u8 exact = u->pc_exact;
	int res = op_unwind_apply_rule__mode(u, rule, 1);

	if (res == OP_STEP_DECLINED)
		return res;
	op_frame__set_native(frame, pc, exact);
	u->n_frames++;
	return res;
}

static __always_inline void op_frame__set_error(struct op_frame *frame, __u32 error)
{
	frame->addr = error;
	frame->data = 0;
	frame->aux = 0;
	frame->kind = OP_FRAME_ERROR;
	frame->flags = 0;
	frame->reserved = 0;
}

#endif
