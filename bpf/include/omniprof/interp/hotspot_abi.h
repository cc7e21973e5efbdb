/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HotSpot (the OpenJDK JVM) on x86-64: what the BPF walker shares with user
 * space (src/interp/hotspot/). Fixed-width types only.
 *
 * The JVM's code cache (interpreter, stubs, compiled methods) is JIT code with
 * no unwind tables and, with default flags, no frame pointer in compiled
 * frames. User space hands it to the walk as one OP_INTERP_HOTSPOT range with
 * OP_INTERP_RANGE_F_UNWINDS, so hotspot_step() (omniprof/interp/hotspot_walk.h)
 * writes each frame in it and moves the unwinder to the caller:
 *   - the template interpreter (op_jvm_proc.interp_start/end) keeps rbp: the
 *     Method* and the bytecode pointer are at fixed slots below it;
 *   - a CodeBlob (found with its code heap's segment map) with a frame size
 *     (nmethods, runtime stubs): the return address is at
 *     sp + frame_size * 8 - 8, the caller's rbp just below it;
 *   - a blob without one (call stub, other stub routines): rbp-based.
 *
 * A HotSpot frame (OP_FRAME_HOTSPOT) is
 *   addr  Method* (OP_JVM_T_INTERPRETED, OP_JVM_T_COMPILED), or the blob's
 *         name pointer (OP_JVM_T_STUB: a C string in libjvm.so)
 *   data  low 56 bits: the fingerprint user space checks (the Method's
 *         ConstMethod*, or the blob's address); bits 56..63: enum op_jvm_type
 *   aux   bits 0..27: the bytecode index (OP_JVM_BCI_NONE: not known; a
 *         method's bytecodes are at most 64 KiB); bits 28..31: enum
 *         op_jvm_type again, so the frame's type stays in the profile's
 *         location (its address) and the folded output can show it
 */
#ifndef OMNIPROF_INTERP_HOTSPOT_ABI_H
#define OMNIPROF_INTERP_HOTSPOT_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum op_jvm_type {
	OP_JVM_T_INTERPRETED = 0,
	OP_JVM_T_COMPILED = 1, /* a C1/C2 nmethod (or a native method's wrapper) */
	OP_JVM_T_INLINED = 2,  /* a method a compiled one inlined */
	OP_JVM_T_STUB = 3,     /* any other code blob: named by the JVM's own name */
};

#define OP_JVM_TYPE_SHIFT     56
#define OP_JVM_FP_MASK	      ((1ull << OP_JVM_TYPE_SHIFT) - 1)
#define OP_JVM_BCI_NONE	      0x0fffffffu
#define OP_JVM_BCI_MASK	      0x0fffffffu
#define OP_JVM_AUX_TYPE_SHIFT 28

#define OP_JVM_MAX_HEAPS 4
/* Steps back through a segment map: each moves at most 254 segments (JDK 8's
 * linear map), JDK 9+ maps need a few. 64 covers a 1 MiB blob of 64-byte segments. */
#define OP_JVM_SEGMAP_STEPS 64
/* Binary search steps through an nmethod's PcDescs (16 bytes each): 2^16 of them. */
#define OP_JVM_PCDESC_STEPS 16
#define OP_JVM_PCDESC_SIZE  16
/* Bytes of a blob read as one block (JDK 17's nmethod fields end at 276). */
#define OP_JVM_BLOCK	   320
#define OP_JVM_BLOCK_SHORT 128 /* ... when the block runs past readable memory */
/* "nmethod" as a little-endian u64 with its NUL: the name every nmethod's CodeBlob has. */
#define OP_JVM_NMETHOD_NAME 0x646f6874656d6eull
/* "native nmethod" (a native method's wrapper): its first 8 bytes, then "method" with its NUL. */
#define OP_JVM_NATIVE_NAME  0x6e2065766974616eull
#define OP_JVM_NATIVE_NAME2 0x646f6874656dull
/* "vtable" / "itable" (the low 6 bytes of a name): frameless dispatch stubs. */
#define OP_JVM_VTABLE_NAME 0x656c62617476ull
#define OP_JVM_ITABLE_NAME 0x656c62617469ull

struct op_jvm_heap {
	__u64 low; /* the heap's committed code: [low, high) */
	__u64 high;
	__u64 segmap; /* its segment map: one byte per segment */
	__u32 log2_segment;
	__u32 reserved;
};

/* Per pid (the `jvm_procs` map): where the code is and the offsets to read it. */
struct op_jvm_proc {
	struct op_jvm_heap heaps[OP_JVM_MAX_HEAPS];
	__u64 interp_start; /* the template interpreter's code [start, end) */
	__u64 interp_end;
	/* CodeBlob fields (bytes from the blob) */
	__u16 blob_name;
	__u16 blob_frame_complete; /* int */
	__u16 blob_frame_size;	   /* int, in words */
	__u16 blob_code_begin;
	__u16 blob_code_end;
	__u16 nmethod_method;	 /* CompiledMethod::_method */
	__u16 method_const;	 /* Method::_constMethod */
	__u16 const_method_size; /* sizeof(ConstMethod): the bytecodes follow it */
	__u16 heap_block_size;	 /* sizeof(HeapBlock): the blob follows it */
	/* Template interpreter frame slots, in words from rbp (frame_x86.hpp). */
	__s8 ifr_sender_sp;
	__s8 ifr_method;
	__s8 ifr_bcp;
	__u8 n_heaps;
	__u8 reserved[2];
	/* nmethod debug info (bytes from the nmethod; 0: inlined frames not read) */
	__u16 nm_scopes_data;	 /* CompiledMethod::_scopes_data_begin (a pointer) */
	__u16 nm_pcs_offset;	 /* nmethod::_scopes_pcs_offset (an int offset) */
	__u16 nm_pcs_end_offset; /* nmethod::_dependencies_offset: where the PcDescs end */
	__u16 nm_metadata_offset;
};

/*
 * One walk's pending inlined frames: a compiled frame's scopes (innermost
 * first) are written one per step; the unwinder has already moved to the
 * caller. Per-CPU in BPF, on the stack in user space.
 */
struct op_jvm_walker {
	__u64 nmethod;
	__u64 scopes;	/* the nmethod's scopes data */
	__u64 metadata; /* its metadata array (a scope's method is index - 1 there) */
	__u32 next;	/* the next scope's decode offset, 0: none pending */
	__s32 deferred; /* the step result to return after the last one */
	/*
	 * The blob's first bytes, read as one block (block_len of them; 0: none):
	 * every CodeBlob and nmethod field the step needs, one read instead of
	 * ten. A field past block_len is read on its own.
	 */
	__u32 block_len;
	__u32 reserved;
	__u8 block[OP_JVM_BLOCK];
};

/* BPF counters (per-CPU array `jvm_stats`). */
enum op_jvm_stat {
	OP_JVM_STAT_INTERPRETED = 0, /* interpreted frames written */
	OP_JVM_STAT_COMPILED,	     /* compiled frames written */
	OP_JVM_STAT_STUB,	     /* stub frames written */
	OP_JVM_STAT_NO_BLOB,	     /* a pc in the code cache in no blob */
	OP_JVM_STAT_READ_ERR,	     /* a frame or blob that could not be read */
	OP_JVM_STAT_NO_PROC,	     /* code cache range without its jvm_procs entry */
	OP_JVM_STAT_INLINED,	     /* inlined frames written */
	OP_JVM_STAT_NO_PCDESC,	     /* compiled frames without debug info at their pc */
	OP_JVM_STAT__COUNT,
};

_Static_assert(sizeof(struct op_jvm_heap) == 32, "op_jvm_heap layout");
_Static_assert(sizeof(struct op_jvm_proc) == 32 * OP_JVM_MAX_HEAPS + 48, "op_jvm_proc layout");
_Static_assert(sizeof(struct op_jvm_walker) == 40 + OP_JVM_BLOCK, "op_jvm_walker layout");

#endif
