/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HotSpot frame reader, written once for two targets like
 * omniprof/unwind/native.h (include it and omniprof/unwind/walk.h first): the BPF step
 * (bpf/interp/hotspot.bpf.h) and the C build the unit tests, the fuzz target
 * and user-space walks use (src/interp/hotspot/hotspot_unwind.c). It reads
 * one frame in the JVM's code cache and moves the unwinder to its caller (see
 * omniprof/interp/hotspot_abi.h for the three kinds of frame).
 *
 * The includer defines
 *   OP_JVM_READ(jw, dst, size, addr)  copy user memory; 0 on success
 *   OP_JVM_STAT(which)               count an enum op_jvm_stat
 *
 * Every loop is bounded (OP_JVM_MAX_HEAPS heaps, OP_JVM_SEGMAP_STEPS steps
 * back through a segment map) and every value read is checked before it
 * steers a read: a hostile JVM can make its own frames wrong, never the walk
 * long.
 */
#ifndef OMNIPROF_INTERP_HOTSPOT_WALK_H
#define OMNIPROF_INTERP_HOTSPOT_WALK_H

#include "omniprof/abi.h"
#include "omniprof/interp/hotspot_abi.h"

#ifndef OMNIPROF_UNWIND_WALK_H
#error "include omniprof/unwind/walk.h before omniprof/interp/hotspot_walk.h"
#endif
#if !defined(OP_JVM_READ) || !defined(OP_JVM_STAT)
#error "define OP_JVM_READ and OP_JVM_STAT before including omniprof/interp/hotspot_walk.h"
#endif

/* A frame larger than this (bytes) is garbage: HotSpot frames are small. */
#define OP_JVM_MAX_FRAME (1u << 20)

/* The code blob holding pc (through its heap's segment map), 0 when none does. */
static __always_inline __u64 op_jvm_find_blob(struct op_jvm_walker *jw,
					      const struct op_jvm_proc *proc, __u64 pc)
{
	for (int h = 0; h < OP_JVM_MAX_HEAPS; h++) {
		const struct op_jvm_heap *heap = &proc->heaps[h];
		__u32 shift = heap->log2_segment & 31;
		__u64 seg;

		if (h >= proc->n_heaps)
			break;
		if (pc < heap->low || pc >= heap->high)
			continue;
		seg = (pc - heap->low) >> shift;
		for (int i = 0; i < OP_JVM_SEGMAP_STEPS; i++) {
			__u8 back;

			if (OP_JVM_READ(jw, &back, 1, heap->segmap + seg))
				return 0;
			if (back == 0xff) /* a free segment */
				return 0;
			if (!back)
				return heap->low + (seg << shift);
			if (back > seg)
				return 0;
			seg -= back;
		}
		return 0;
	}
	return 0;
}

/* The blob's s32 / u64 field at off: from its block when the block holds it. 0 or -1. */
static __always_inline int op_jvm_s32(struct op_jvm_walker *jw, __u64 blob, __u32 off, __s32 *v)
{
	if (off <= OP_JVM_BLOCK - 8 && off + 4 <= jw->block_len) {
		__builtin_memcpy(v, &jw->block[off], 4);
		return 0;
	}
	return OP_JVM_READ(jw, v, 4, blob + off);
}

static __always_inline int op_jvm_u64(struct op_jvm_walker *jw, __u64 blob, __u32 off, __u64 *v)
{
	if (off <= OP_JVM_BLOCK - 8 && off + 8 <= jw->block_len) {
		__builtin_memcpy(v, &jw->block[off], 8);
		return 0;
	}
	return OP_JVM_READ(jw, v, 8, blob + off);
}

/* Reads the blob's block: all of it, or its first OP_JVM_BLOCK_SHORT bytes. */
static __always_inline void op_jvm_load_block(struct op_jvm_walker *jw, __u64 blob)
{
	jw->block_len = 0;
	if (!OP_JVM_READ(jw, jw->block, OP_JVM_BLOCK, blob))
		jw->block_len = OP_JVM_BLOCK;
	else if (!OP_JVM_READ(jw, jw->block, OP_JVM_BLOCK_SHORT, blob))
		jw->block_len = OP_JVM_BLOCK_SHORT;
}

static __always_inline void op_jvm_frame(struct op_frame *frame, __u64 addr, __u64 fingerprint,
					 __u32 type, __u32 bci)
{
	frame->addr = addr;
	frame->data = (fingerprint & OP_JVM_FP_MASK) | ((__u64)type << OP_JVM_TYPE_SHIFT);
	frame->aux = (bci & OP_JVM_BCI_MASK) | (type << OP_JVM_AUX_TYPE_SHIFT);
	frame->kind = OP_FRAME_HOTSPOT;
	frame->flags = 0;
	frame->reserved = 0;
}

static __always_inline int op_jvm_error(struct op_jvm_walker *jw, struct op_frame *frame)
{
	OP_JVM_STAT(jw, OP_JVM_STAT_READ_ERR);
	op_frame__set_error(frame, OP_UNWIND_ERR_HOTSPOT);
	return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_HOTSPOT;
}

/*
 * The scope decode offset of the PcDesc for pc offset target (the first whose
 * pc offset is >= target: a return address has its own, a pc elsewhere the
 * next one, as HotSpot's approximate search does; past the last one with a
 * scope, the one before target), 0 when none.
 */
static __always_inline __u32 op_jvm_pcdesc(struct op_jvm_walker *jw, const struct op_jvm_proc *proc,
					   __u64 nm, __s32 target)
{
	__s32 begin = 0, end = 0, pc_offset = 0;
	__u32 lo = 0, hi, scope = 0;

	if (op_jvm_s32(jw, nm, proc->nm_pcs_offset, &begin) ||
	    op_jvm_s32(jw, nm, proc->nm_pcs_end_offset, &end) || begin <= 0 || end <= begin ||
	    end - begin > (1 << 20))
		return 0;
	hi = (__u32)(end - begin) / OP_JVM_PCDESC_SIZE;
	for (int i = 0; i < OP_JVM_PCDESC_STEPS + 1; i++) {
		__u32 mid;

		if (lo >= hi)
			break;
		mid = lo + (hi - lo) / 2;
		if (OP_JVM_READ(jw, &pc_offset, 4, nm + begin + (__u64)mid * OP_JVM_PCDESC_SIZE))
			return 0;
		if (pc_offset < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < (__u32)(end - begin) / OP_JVM_PCDESC_SIZE &&
	    !OP_JVM_READ(jw, &scope, 4, nm + begin + (__u64)lo * OP_JVM_PCDESC_SIZE + 4) && scope)
		return scope;
	/* None after pc (the end sentinel has no scope): the one before, if real. */
	if (!lo ||
	    OP_JVM_READ(jw, &pc_offset, 4, nm + begin + (__u64)(lo - 1) * OP_JVM_PCDESC_SIZE) ||
	    pc_offset < 0 ||
	    OP_JVM_READ(jw, &scope, 4, nm + begin + (__u64)(lo - 1) * OP_JVM_PCDESC_SIZE + 4))
		return 0;
	return scope;
}

/*
 * Decodes the scope at offset off of jw's nmethod (HotSpot's ScopeDesc
 * header: the sender's offset, the method's metadata index, bci + 1, each
 * an UNSIGNED5 number: bytes >= 192 go on, 6 more bits each). 0 or -1.
 */
static __always_inline int op_jvm_scope(const struct op_jvm_proc *proc, struct op_jvm_walker *jw,
					__u32 off, __u64 *method, __u64 *cm, __u32 *bci,
					__u32 *sender)
{
	__u8 b[16];
	__u32 v[3] = {0, 0, 0}, pos = 0;

	if (!off || off > (1u << 24) || OP_JVM_READ(jw, b, sizeof(b), jw->scopes + off))
		return -1;
	for (int k = 0; k < 3; k++) {
		__u32 sum = 0, shift = 0;

		for (int i = 0; i < 5; i++) {
			__u32 c = b[pos & 15];

			pos++;
			sum += c << shift;
			if (c < 192)
				break;
			shift += 6;
		}
		v[k] = sum;
	}
	if (!v[1] || v[1] > 0xffff)
		return -1;
	if (OP_JVM_READ(jw, method, 8, jw->metadata + (__u64)(v[1] - 1) * 8) || !*method ||
	    OP_JVM_READ(jw, cm, 8, *method + proc->method_const))
		return -1;
	*bci = v[2] && v[2] <= 0x10000 ? v[2] - 1 : 0;
	*sender = v[0];
	return 0;
}

/*
 * Writes the next pending inlined scope of a compiled frame (jw->next) into
 * *frame. An enum op_step_result: jw->deferred after the last one.
 */
static __always_inline int op_jvm_pending(const struct op_jvm_proc *proc, struct op_jvm_walker *jw,
					  struct op_frame *frame)
{
	__u64 method = 0, cm = 0;
	__u32 bci = 0, sender = 0, off = jw->next;

	jw->next = 0;
	if (op_jvm_scope(proc, jw, off, &method, &cm, &bci, &sender)) {
		/* The frames already written stand; the rest of this one is lost. */
		OP_JVM_STAT(jw, OP_JVM_STAT_READ_ERR);
		op_frame__set_error(frame, OP_UNWIND_ERR_HOTSPOT);
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_HOTSPOT;
	}
	op_jvm_frame(frame, method, cm, sender ? OP_JVM_T_INLINED : OP_JVM_T_COMPILED, bci);
	OP_JVM_STAT(jw, sender ? OP_JVM_STAT_INLINED : OP_JVM_STAT_COMPILED);
	if (!sender)
		return jw->deferred;
	jw->next = sender;
	return OP_STEP_CONTINUE;
}

/*
 * The frame at u's pc (in the code cache) into *frame, and u moved to its
 * caller. An enum op_step_result; an error comes with its error frame in
 * *frame. A compiled frame that inlined methods writes its innermost scope
 * and leaves the others in jw (jw->next != 0): op_jvm_pending() writes them,
 * one per step, before the walk goes on with the caller.
 */
static __always_inline int op_jvm_step(struct op_unwinder *u, const struct op_jvm_proc *proc,
				       struct op_jvm_walker *jw, struct op_frame *frame)
{
	__u32 nm_scope = 0;
	__u64 pc = u->regs.pc, sp = u->regs.sp, fp = u->regs.fp;
	__u64 lpc = u->pc_exact ? pc : pc - 1;
	__u64 ra = 0, nsp = 0, nfp = 0, method = 0, cm = 0;
	__s32 frame_size = 0, complete = 0;
	__u64 blob, code_begin = 0, code_end = 0, name = 0, name8 = 0;

	if (lpc >= proc->interp_start && lpc < proc->interp_end) {
		__u64 bcp = 0, ssp = 0, base;
		__u32 bci = OP_JVM_BCI_NONE;

		/* An interpreted frame: rbp-based. */
		if (fp < sp || fp - sp > OP_JVM_MAX_FRAME)
			return op_jvm_error(jw, frame);
		if (OP_JVM_READ(jw, &method, 8, fp + (__s64)proc->ifr_method * 8) ||
		    OP_JVM_READ(jw, &bcp, 8, fp + (__s64)proc->ifr_bcp * 8) ||
		    OP_JVM_READ(jw, &ssp, 8, fp + (__s64)proc->ifr_sender_sp * 8) ||
		    OP_JVM_READ(jw, &ra, 8, fp + 8) || OP_JVM_READ(jw, &nfp, 8, fp))
			return op_jvm_error(jw, frame);
		if (!method || OP_JVM_READ(jw, &cm, 8, method + proc->method_const))
			return op_jvm_error(jw, frame);
		base = cm + proc->const_method_size;
		if (bcp >= base && bcp - base < 0x10000)
			bci = (__u32)(bcp - base);
		/* The caller's unextended sp (a compiled caller's frame size counts from it). */
		nsp = ssp >= fp + 16 && ssp - fp < OP_JVM_MAX_FRAME ? ssp : fp + 16;
		op_jvm_frame(frame, method, cm, OP_JVM_T_INTERPRETED, bci);
		OP_JVM_STAT(jw, OP_JVM_STAT_INTERPRETED);
		goto caller;
	}

	blob = op_jvm_find_blob(jw, proc, lpc);
	if (!blob) {
		OP_JVM_STAT(jw, OP_JVM_STAT_NO_BLOB);
		return op_jvm_error(jw, frame);
	}
	blob += proc->heap_block_size;
	op_jvm_load_block(jw, blob);
	if (op_jvm_s32(jw, blob, proc->blob_frame_size, &frame_size) ||
	    op_jvm_s32(jw, blob, proc->blob_frame_complete, &complete) ||
	    op_jvm_u64(jw, blob, proc->blob_code_begin, &code_begin) ||
	    op_jvm_u64(jw, blob, proc->blob_code_end, &code_end) ||
	    op_jvm_u64(jw, blob, proc->blob_name, &name))
		return op_jvm_error(jw, frame);
	if (lpc < code_begin || lpc >= code_end || frame_size < 0 ||
	    (__u64)frame_size * 8 > OP_JVM_MAX_FRAME)
		return op_jvm_error(jw, frame);
	if (name)
		OP_JVM_READ(jw, &name8, 8, name);
	if (name8 == OP_JVM_NATIVE_NAME) {
		__u64 rest = 0;

		/* "native nmethod": a native method's wrapper, an nmethod too. */
		if (!OP_JVM_READ(jw, &rest, 7, name + 8) && rest == OP_JVM_NATIVE_NAME2)
			name8 = OP_JVM_NMETHOD_NAME;
	}
	if (name8 == OP_JVM_NMETHOD_NAME) {
		if (op_jvm_u64(jw, blob, proc->nmethod_method, &method) || !method ||
		    OP_JVM_READ(jw, &cm, 8, method + proc->method_const))
			return op_jvm_error(jw, frame);
		op_jvm_frame(frame, method, cm, OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
		jw->nmethod = blob;
		jw->next = 0;
		if (proc->nm_scopes_data &&
		    !op_jvm_u64(jw, blob, proc->nm_scopes_data, &jw->scopes)) {
			jw->metadata = blob;
			nm_scope = op_jvm_pcdesc(jw, proc, blob,
						 (__s32)(pc - code_begin) + (u->pc_exact ? 1 : 0));
		}
		if (!nm_scope)
			OP_JVM_STAT(jw, OP_JVM_STAT_NO_PCDESC);
	} else {
		op_jvm_frame(frame, name, blob, OP_JVM_T_STUB, OP_JVM_BCI_NONE);
		OP_JVM_STAT(jw, OP_JVM_STAT_STUB);
	}
	if (frame_size > 0) {
		if (u->pc_exact && complete > 0 && lpc - code_begin < (__u64)complete) {
			/* Stopped in the prologue: only the return address is pushed. */
			nsp = sp + 8;
			nfp = fp;
			if (OP_JVM_READ(jw, &ra, 8, sp))
				return op_jvm_error(jw, frame);
		} else {
			nsp = sp + (__u64)frame_size * 8;
			if (OP_JVM_READ(jw, &ra, 8, nsp - 8) || OP_JVM_READ(jw, &nfp, 8, nsp - 16))
				return op_jvm_error(jw, frame);
		}
	} else if (u->pc_exact && ((name8 & 0xffffffffffffull) == OP_JVM_VTABLE_NAME ||
				   (name8 & 0xffffffffffffull) == OP_JVM_ITABLE_NAME)) {
		/* Stopped in a vtable/itable stub: no frame, the return address at sp. */
		nsp = sp + 8;
		nfp = fp;
		if (OP_JVM_READ(jw, &ra, 8, sp))
			return op_jvm_error(jw, frame);
	} else {
		/* No frame size: the stub routines (call stub, ...) keep rbp. */
		if (fp < sp || fp - sp > OP_JVM_MAX_FRAME)
			return op_jvm_error(jw, frame);
		nsp = fp + 16;
		if (OP_JVM_READ(jw, &ra, 8, fp + 8) || OP_JVM_READ(jw, &nfp, 8, fp))
			return op_jvm_error(jw, frame);
	}
caller:
	u->regs.pc = ra;
	u->regs.sp = nsp;
	u->regs.fp = nfp;
	u->pc_exact = 0;
	u->n_frames++;
	if (nm_scope) {
		__s32 nmd = 0;

		/* The compiled frame's scopes replace the frame written above. */
		jw->deferred = ra ? OP_STEP_CONTINUE : OP_STEP_END;
		jw->next = nm_scope;
		if (!op_jvm_s32(jw, jw->nmethod, proc->nm_metadata_offset, &nmd) && nmd > 0) {
			int ret;

			jw->metadata = jw->nmethod + (__u32)nmd;
			ret = op_jvm_pending(proc, jw, frame);
			if (ret <= OP_STEP_END)
				return ret;
		}
		/* No readable scope: the nmethod's own method, without a line. */
		jw->next = 0;
		op_jvm_frame(frame, method, cm, OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
		OP_JVM_STAT(jw, OP_JVM_STAT_COMPILED);
		return jw->deferred;
	}
	if (method && frame->kind == OP_FRAME_HOTSPOT &&
	    (frame->data >> OP_JVM_TYPE_SHIFT) == OP_JVM_T_COMPILED)
		OP_JVM_STAT(jw, OP_JVM_STAT_COMPILED);
	return ra ? OP_STEP_CONTINUE : OP_STEP_END;
}

/*
 * HotSpot's step (OP_INTERP_STEP of omniprof/unwind/walk.h for
 * OP_INTERP_HOTSPOT): a frame in the code cache (res ==
 * OP_STEP_RUNTIME_UNWINDS), or, while w->active is HotSpot, the next inlined
 * scope of the compiled frame just written. proc NULL (the pid's state is
 * gone): the frame is left to the native rules.
 */
static __always_inline int op_jvm_walk_step(struct op_walk *w, const struct op_jvm_proc *proc,
					    struct op_jvm_walker *jw, struct op_frame *frame,
					    int res)
{
	int ret;

	if (w->active == OP_INTERP_HOTSPOT) {
		if (!proc) {
			w->active = 0;
			return res;
		}
		ret = op_jvm_pending(proc, jw, frame);
		if (!jw->next)
			w->active = 0;
		return ret;
	}
	if (res != OP_STEP_RUNTIME_UNWINDS || !proc)
		return res;
	jw->next = 0;
	ret = op_jvm_step(&w->u, proc, jw, frame);
	if (jw->next)
		w->active = OP_INTERP_HOTSPOT;
	return ret;
}

#endif
