/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Types the V8 (Node.js) unwinder shares with user space: where a process's
 * builtins are and the handful of frame and object offsets the walk needs
 * (struct op_v8_proc, one per pid in the `v8_procs` map). User space fills
 * it from node's own post-mortem metadata (the v8dbg_* symbols of the
 * binary, src/interp/v8/v8_binary.c): nothing here is per Node version.
 *
 * V8 keeps rbp frame pointers in every frame it builds on x86-64: the
 * caller's rbp at fp, the return address at fp + 8, and below fp either a
 * frame-type marker (a Smi: stub, entry, exit, internal frames) or the
 * context, then the JSFunction (JavaScript frames). Interpreted frames also
 * hold their BytecodeArray and the current bytecode offset (a Smi).
 *
 * A V8 frame travels as a struct op_frame of kind OP_FRAME_V8; aux's top
 * four bits say which (enum op_v8_frame):
 *   INTERPRETED  addr  the BytecodeArray (tagged pointer)
 *                data  the SharedFunctionInfo the frame's JSFunction had
 *                aux   the bytecode offset register as the frame holds it
 *                      (tagged: from the tagged BytecodeArray pointer)
 *   JIT          addr  the pc in JIT code (Sparkplug, Maglev, TurboFan)
 *                data  the SharedFunctionInfo the frame's JSFunction had
 *                      (user space finds the code object holding the pc)
 *   STUB         addr  the pc in JIT code of a frame with a type marker
 *                aux   the frame type (v8dbg_frametype_*)
 * Frames of builtins (node's own code, in the binary or its copy in the
 * code range) are native frames: node's symbols name them.
 */
#ifndef OMNIPROF_INTERP_V8_ABI_H
#define OMNIPROF_INTERP_V8_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define OP_V8_MAX_BUILTINS 2 /* the embedded builtins in node's text, and their copy */

/* The top bits of a V8 frame's aux. */
enum op_v8_frame {
	OP_V8_FRAME_INTERPRETED = 1,
	OP_V8_FRAME_JIT = 2,
	OP_V8_FRAME_STUB = 3,
};
#define OP_V8_AUX_SHIFT 28
#define OP_V8_AUX_MASK	((1u << OP_V8_AUX_SHIFT) - 1)
#define OP_V8_AUX(kind, value)                                                                     \
	(((__u32)(kind) << OP_V8_AUX_SHIFT) | ((__u32)(value)&OP_V8_AUX_MASK))
#define OP_V8_AUX_KIND(aux)  ((__u32)(aux) >> OP_V8_AUX_SHIFT)
#define OP_V8_AUX_VALUE(aux) ((__u32)(aux)&OP_V8_AUX_MASK)

/*
 * The frame block the walk reads once per frame: from fp - OP_V8_BLOCK_BELOW
 * to fp + 16 (the saved rbp and the return address included). Every fp_*
 * offset is in [-OP_V8_BLOCK_BELOW, -8] and a multiple of 8 (user space
 * refuses a binary whose metadata says otherwise).
 */
#define OP_V8_BLOCK	  64
#define OP_V8_BLOCK_BELOW 48

/* Value of the `v8_procs` map, key: pid (tgid). */
struct op_v8_proc {
	__u64 builtins_start[OP_V8_MAX_BUILTINS]; /* absolute; start == end: unused */
	__u64 builtins_end[OP_V8_MAX_BUILTINS];
	__s16 fp_marker;	   /* context, or the frame type marker */
	__s16 fp_function;	   /* the JSFunction */
	__s16 fp_bytecode_array;   /* interpreted frames */
	__s16 fp_bytecode_offset;  /* interpreted frames, a Smi */
	__u16 jsfunction_shared;   /* JSFunction -> SharedFunctionInfo */
	__u16 map_instance_type;   /* Map -> instance type (u16) */
	__u16 type_bytecode_array; /* BYTECODE_ARRAY_TYPE */
	__u16 smi_shift;	   /* a Smi's value is its word >> smi_shift */
	__u16 reserved[4];
};

/* Per-CPU counters of the V8 unwinder (the `v8_stats` array map). */
enum op_v8_stat {
	OP_V8_STAT_FRAMES = 0,	/* V8 frames walked (native builtin frames included) */
	OP_V8_STAT_INTERPRETED, /* interpreted JavaScript frames emitted */
	OP_V8_STAT_JIT,		/* JavaScript frames in JIT code emitted */
	OP_V8_STAT_STUB,	/* marked frames (stub, entry, exit, ...) */
	OP_V8_STAT_READ_ERR,	/* a frame could not be read: the walk stopped */
	OP_V8_STAT_NO_PROC,	/* V8 code met in a pid with no v8_procs entry */
	OP_V8_STAT__COUNT,
};

_Static_assert(sizeof(struct op_v8_proc) == 4 * 8 + 24, "op_v8_proc layout");

#endif
