/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Types the Python unwinder shares with user space: where a process's
 * interpreter is (struct op_py_proc, one per pid in the `py_procs` map) and
 * the handful of struct offsets the kernel side needs to walk CPython's
 * thread states and frames (struct op_py_offsets). User space fills both from
 * src/interp/python/ (detection and the per-version offset table).
 *
 * A Python frame travels as a struct op_frame of kind OP_FRAME_PYTHON:
 *   addr     the code object's address in the process
 *   aux      the instruction offset: f_lasti as the interpreter stores it
 *            (bytes up to 3.9, code units in 3.10; 0xffffffff before the
 *            first instruction), code units from the start of the bytecode
 *            from 3.11 on
 *   data     8 bytes read from the code object (its first line number and
 *            the field next to it), so user space notices a code object freed
 *            and another one allocated at the same address
 */
#ifndef OMNIPROF_INTERP_PYTHON_ABI_H
#define OMNIPROF_INTERP_PYTHON_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define OP_PY_MAX_RANGES  4   /* eval-loop address ranges (hot and .cold parts): in interp_procs */
#define OP_PY_MAX_THREADS 512 /* thread states searched for the sampled thread */
#define OP_PY_NONE	  0xffff

/*
 * The walker reads the first OP_PY_BLOCK bytes of each interpreter frame at
 * once: every frame_* offset plus its field's size must fit in them, and be
 * a multiple of that size (python_layout__frame_fits(); a layout that does
 * not is refused). 3.6's f_lasti (120 + 4 bytes) is the farthest field.
 */
#define OP_PY_BLOCK 128

/* How interpreter frames are chained and where an eval-loop invocation ends. */
enum op_py_layout {
	/* 3.6-3.10: PyFrameObject, one per _PyEval_EvalFrameDefault call. */
	OP_PY_LAYOUT_FRAME_OBJECT = 1,
	/* 3.11: _PyInterpreterFrame; the first frame of an invocation has is_entry set. */
	OP_PY_LAYOUT_ENTRY_FLAG = 2,
	/* 3.12+: _PyInterpreterFrame; each invocation starts after a frame the C
	 * stack owns (owner == FRAME_OWNED_BY_CSTACK), which is not shown. */
	OP_PY_LAYOUT_CSTACK_OWNER = 3,
};

/* Byte offsets into CPython's structures (OP_PY_NONE: absent in this version). */
struct op_py_offsets {
	__u16 interp_threads;	/* PyInterpreterState -> first PyThreadState */
	__u16 tstate_next;	/* PyThreadState -> next */
	__u16 tstate_thread_id; /* pthread_self() of the thread: its thread pointer (fs base) */
	__u16 tstate_frame;   /* ->frame (<=3.10), ->cframe (3.11, 3.12), ->current_frame (3.13+) */
	__u16 cframe_current; /* _PyCFrame -> current_frame (3.11, 3.12) */
	__u16 frame_back;     /* f_back / previous */
	__u16 frame_code;     /* f_code / f_executable */
	__u16 frame_instr;    /* f_lasti (int), prev_instr / instr_ptr (pointer) */
	__u16 frame_entry;    /* is_entry (3.11) / owner (3.12+) */
	__u16 code_instr;     /* co_code_adaptive: first instruction (3.11+) */
	__u16 code_fingerprint; /* co_firstlineno and the 4 bytes after it */
	__u8 layout;		/* enum op_py_layout */
	__u8 cstack_owner;	/* value of FRAME_OWNED_BY_CSTACK (3.12+) */
};

struct op_py_range {
	__u64 start;
	__u64 end; /* exclusive; start == end: unused */
};

/* Value of the `py_procs` map, key: pid (tgid). The eval loop's ranges (where
 * the walk hands frames to CPython) are the pid's OP_INTERP_PYTHON ranges in
 * `interp_procs` (struct op_interp_proc, omniprof/abi.h). */
struct op_py_proc {
	__u64 interp_head; /* address of the pointer to the first interpreter */
	struct op_py_offsets off;
	__u16 version; /* major << 8 | minor, for reports */
	__u16 reserved[3];
};

_Static_assert((OP_PY_BLOCK & (OP_PY_BLOCK - 1)) == 0, "the block's masks need a power of 2");

/* The first OP_PY_BLOCK bytes of an interpreter frame, by field size. */
union op_py_block {
	__u64 q[OP_PY_BLOCK / 8];
	__u32 d[OP_PY_BLOCK / 4];
	__u8 b[OP_PY_BLOCK];
};

/* The state of one stack walk of a Python process (the `py_walk` per-CPU
 * map in BPF; omniprof/interp/python_walk.h works on it). */
struct op_py_walker {
	struct op_py_proc proc; /* copied from the pid's entry */
	__u64 frame;		/* next interpreter frame to emit, 0: none */
	__u64 block_frame;	/* the interpreter frame `block` holds, 0: none */
	__s32 deferred;		/* native step result owed once pending frames are out */
	__u8 block_ok;		/* block_frame's code and previous frame are known */
	__u8 reserved[3];
	union op_py_block block;
};

/* Per-CPU counters of the Python unwinder (the `py_stats` array map). */
enum op_py_stat {
	OP_PY_STAT_WALKS = 0,	  /* samples whose walk met the eval loop (the set-up ran) */
	OP_PY_STAT_NO_THREAD,	  /* the sampled thread has no thread state (yet) */
	OP_PY_STAT_NO_FRAME,	  /* thread state found, no Python frame running */
	OP_PY_STAT_FRAMES,	  /* Python frames emitted */
	OP_PY_STAT_READ_ERR,	  /* an interpreter frame could not be read */
	OP_PY_STAT_EVAL_NO_FRAME, /* an eval-loop frame with no Python frame left */
	OP_PY_STAT_FIELD_READS,	  /* frames whose block was unreadable: read field by field */
	OP_PY_STAT__COUNT,
};

_Static_assert(sizeof(struct op_py_offsets) == 24, "op_py_offsets layout");
_Static_assert(sizeof(struct op_py_proc) == 8 + 24 + 8, "op_py_proc layout");

#endif
