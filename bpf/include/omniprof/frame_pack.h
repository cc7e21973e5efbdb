/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The wide packed form of a user frame (OP_TRACE_F_PACKED_WIDE): two __u64
 * instead of struct op_frame's 24 bytes, for the frames of a walk that are
 * not all native (a JVM's: HotSpot frames among native ones). In the ring
 * buffer only: the sampler packs (bpf/sampler.bpf.c), the collector
 * (src/engine/collector.c) unpacks before anything else sees the frame. For
 * BPF and C alike.
 *
 *   w0 bits 60..63: the frame's kind, always
 *   native, error, kernel (data, aux, reserved 0; addr < 2^56):
 *     w0 = kind << 60 | flags << 56 | addr                 w1 = 0
 *   HotSpot (flags 0; omniprof/interp/hotspot_abi.h): the type once (data's
 *   and aux's copies are equal), the fingerprint (a ConstMethod* or a blob:
 *   8-byte aligned, below 2^47, the x86-64 user half) by its 8-byte units,
 *   the epoch (op_frame.reserved):
 *     w1 = type << 60 | epoch << 44 | fingerprint >> 3
 *     Method frames (interpreted, compiled, inlined; a Method* is 8-byte
 *     aligned, below 2^47; bci <= 0xfffe, or OP_JVM_BCI_NONE as 0xffff: a
 *     method's bytecodes are at most 65535 bytes):
 *       w0 = kind << 60 | bci << 44 | method >> 3
 *     stub frames (a name pointer, any alignment, below 2^47; no bci):
 *       w0 = kind << 60 | name
 * A frame that does not fit (another runtime's, a value out of range) makes
 * op_frame__pack_wide() fail, and the record goes out unpacked.
 */
#ifndef OMNIPROF_FRAME_PACK_H
#define OMNIPROF_FRAME_PACK_H

#include "omniprof/abi.h"
#include "omniprof/interp/hotspot_abi.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define OP_WIDE_KIND_SHIFT	60
#define OP_WIDE_USER_LIMIT	(1ull << 47) /* x86-64 user addresses are below it */
#define OP_WIDE_UNITS_MASK	((1ull << 44) - 1)
#define OP_WIDE_JVM_BCI_SHIFT	44
#define OP_WIDE_JVM_BCI_NONE	0xffffu
#define OP_WIDE_JVM_EPOCH_SHIFT 44
#define OP_WIDE_JVM_TYPE_SHIFT	60

/* Frame f as two words into w[0], w[1]: 0, or -1 when it does not fit (w then undefined). */
static __always_inline int op_frame__pack_wide(const struct op_frame *f, __u64 *w)
{
	__u64 fp, head = (__u64)f->kind << OP_WIDE_KIND_SHIFT;
	__u32 type, bci;

	if (f->kind > 15)
		return -1;
	if (f->kind != OP_FRAME_HOTSPOT) {
		if (f->data || f->aux || f->reserved || f->flags > 15 ||
		    (f->addr & ~OP_PACKED_ADDR_MASK))
			return -1;
		w[0] = head | (__u64)f->flags << 56 | f->addr;
		w[1] = 0;
		return 0;
	}
	type = (__u32)(f->data >> OP_JVM_TYPE_SHIFT);
	fp = f->data & OP_JVM_FP_MASK;
	bci = f->aux & OP_JVM_BCI_MASK;
	if (f->flags || type > OP_JVM_T_STUB || (f->aux >> OP_JVM_AUX_TYPE_SHIFT) != type ||
	    (fp & 7) || fp >= OP_WIDE_USER_LIMIT || f->addr >= OP_WIDE_USER_LIMIT)
		return -1;
	w[1] = (__u64)type << OP_WIDE_JVM_TYPE_SHIFT |
	       (__u64)f->reserved << OP_WIDE_JVM_EPOCH_SHIFT | fp >> 3;
	if (type == OP_JVM_T_STUB) {
		if (bci != OP_JVM_BCI_NONE)
			return -1;
		w[0] = head | f->addr;
		return 0;
	}
	if (f->addr & 7)
		return -1;
	if (bci == OP_JVM_BCI_NONE)
		bci = OP_WIDE_JVM_BCI_NONE;
	else if (bci >= OP_WIDE_JVM_BCI_NONE)
		return -1;
	w[0] = head | (__u64)bci << OP_WIDE_JVM_BCI_SHIFT | f->addr >> 3;
	return 0;
}

/* The frame two words of op_frame__pack_wide() hold, into *f. */
static __always_inline void op_frame__unpack_wide(const __u64 *w, struct op_frame *f)
{
	__u8 kind = (__u8)(w[0] >> OP_WIDE_KIND_SHIFT);
	__u32 type, bci;

	f->kind = kind;
	if (kind != OP_FRAME_HOTSPOT) {
		f->addr = w[0] & OP_PACKED_ADDR_MASK;
		f->flags = (__u8)((w[0] >> 56) & 15);
		f->data = 0;
		f->aux = 0;
		f->reserved = 0;
		return;
	}
	type = (__u32)(w[1] >> OP_WIDE_JVM_TYPE_SHIFT) & 3;
	f->flags = 0;
	f->reserved = (__u16)(w[1] >> OP_WIDE_JVM_EPOCH_SHIFT);
	f->data = (w[1] & OP_WIDE_UNITS_MASK) << 3 | (__u64)type << OP_JVM_TYPE_SHIFT;
	if (type == OP_JVM_T_STUB) {
		f->addr = w[0] & ((1ull << OP_WIDE_KIND_SHIFT) - 1);
		bci = OP_JVM_BCI_NONE;
	} else {
		f->addr = (w[0] & OP_WIDE_UNITS_MASK) << 3;
		bci = (__u32)(w[0] >> OP_WIDE_JVM_BCI_SHIFT) & 0xffff;
		if (bci == OP_WIDE_JVM_BCI_NONE)
			bci = OP_JVM_BCI_NONE;
	}
	f->aux = bci | type << OP_JVM_AUX_TYPE_SHIFT;
}

#endif
