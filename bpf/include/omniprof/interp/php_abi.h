/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Types the PHP unwinder shares with user space: where a process's Zend
 * engine keeps its current call frame (struct op_php_proc, one per pid in
 * the `php_procs` map) and the struct offsets the walker needs. User space
 * fills both from src/interp/php/ (detection and the per-version table).
 *
 * The Zend engine (PHP 7.4 to 8.4, NTS builds) keeps the running PHP call
 * frames as a chain of zend_execute_data, innermost first:
 * executor_globals.current_execute_data, then prev_execute_data. Each one
 * names its function (func: a zend_function, user code or internal) and,
 * for user code, the opline it runs (opline->lineno: the line).
 *
 * A PHP frame travels as a struct op_frame of kind OP_FRAME_PHP:
 *   addr     the zend_function's address in the process
 *   data     its function_name pointer (zend_string *, 0 for a script's
 *            top-level code), so user space notices a function freed and
 *            another one allocated at the same address
 *   aux      the line of the frame's current opline (user code), 0 for an
 *            internal function or when the opline could not be read;
 *            OP_PHP_AUX_JIT set on the user frame whose code ran in
 *            OPcache's JIT buffer when sampled
 */
#ifndef OMNIPROF_INTERP_PHP_ABI_H
#define OMNIPROF_INTERP_PHP_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * The walker reads the first OP_PHP_EX_BLOCK bytes of each zend_execute_data
 * at once: opline, func, This's call info and prev_execute_data all lie in
 * them in every version (php_layout__fits() refuses a layout that does not),
 * at a multiple of the field's size.
 */
#define OP_PHP_EX_BLOCK 64
/* func NULL frames (zend_call_function's "dummy" frames) skipped in one step. */
#define OP_PHP_MAX_SKIP 4

/* aux: the line's bits and the JIT mark (a line never reaches bit 31). */
#define OP_PHP_AUX_LINE 0x7fffffffu
#define OP_PHP_AUX_JIT	0x80000000u

/* zend_function's type (zend_compile.h, the same 7.4 to 8.4). */
#define OP_PHP_INTERNAL_FUNCTION 1
#define OP_PHP_USER_FUNCTION	 2
#define OP_PHP_EVAL_CODE	 4

/* Byte offsets into the Zend engine's structures (x86-64). */
struct op_php_offsets {
	__u16 ex_opline;    /* zend_execute_data -> opline */
	__u16 ex_func;	    /* -> func */
	__u16 ex_call_info; /* -> This.u1.type_info: the call info flags */
	__u16 ex_prev;	    /* -> prev_execute_data */
	__u16 func_type;    /* zend_function -> type */
	__u16 func_name;    /* -> common.function_name */
	__u16 op_lineno;    /* zend_op -> lineno */
	__u16 reserved;
	__u32 call_top; /* ZEND_CALL_TOP in the call info: the first frame of an execute_ex call */
	__u32 reserved2;
};

/* Value of the `php_procs` map, key: pid (tgid). Where the walk hands frames
 * to PHP (execute_ex, OPcache's JIT buffer) are the pid's OP_INTERP_PHP
 * ranges in `interp_procs` (struct op_interp_proc, omniprof/abi.h). */
struct op_php_proc {
	__u64 current_ex; /* address of executor_globals.current_execute_data */
	/*
	 * A pc inside execute_ex's body (past its prologue), 0: none known.
	 * OPcache's JIT code (HYBRID VM) runs on execute_ex's stack frame, so a
	 * pc in the JIT buffer unwinds with the rule of this pc.
	 */
	__u64 vm_body_pc;
	struct op_php_offsets off;
	__u16 version; /* major << 8 | minor, for reports */
	__u16 flags;   /* OP_PHP_PROC_F_* */
	__u16 reserved[2];
};

/*
 * The HYBRID VM built with GCC's global registers (x86-64): while
 * execute_ex runs, r14 holds the running zend_execute_data and r15 its
 * current opline (the one the frame's opline field lags behind).
 */
#define OP_PHP_PROC_F_VM_REGS 1
/* sizeof(zend_op), 7.4 to 8.4 (x86-64): two oplines of a function are a multiple apart. */
#define OP_PHP_OP_SIZE 32

_Static_assert((OP_PHP_EX_BLOCK & (OP_PHP_EX_BLOCK - 1)) == 0,
	       "the block's masks need a power of 2");

union op_php_block {
	__u64 q[OP_PHP_EX_BLOCK / 8];
	__u32 d[OP_PHP_EX_BLOCK / 4];
};

/* The state of one stack walk of a PHP process (the `php_walk` per-CPU map in
 * BPF; omniprof/interp/php_walk.h works on it). */
struct op_php_walker {
	struct op_php_proc proc;  /* copied from the pid's entry */
	__u64 ex;		  /* next zend_execute_data to emit, 0: none */
	__s32 deferred;		  /* native step result owed once pending frames are out */
	__u32 jit;		  /* 1: the next user frame emitted ran in JIT code */
	__u64 leaf_opline;	  /* the VM's opline register for the next frame, 0: none */
	union op_php_block block; /* the last zend_execute_data read */
};

/* Per-CPU counters of the PHP unwinder (the `php_stats` array map). */
enum op_php_stat {
	OP_PHP_STAT_WALKS = 0,	 /* samples whose walk met the VM (the set-up ran) */
	OP_PHP_STAT_NO_FRAME,	 /* no PHP frame running (current_execute_data NULL) */
	OP_PHP_STAT_FRAMES,	 /* PHP frames emitted */
	OP_PHP_STAT_READ_ERR,	 /* a zend_execute_data could not be read */
	OP_PHP_STAT_VM_NO_FRAME, /* an execute_ex frame with no PHP frame left */
	OP_PHP_STAT_JIT,	 /* frames in OPcache's JIT code unwound */
	OP_PHP_STAT_NO_LINE,	 /* user frames whose opline could not be read */
	OP_PHP_STAT_LEAF_REG,	 /* leaf lines taken from the VM's opline register */
	OP_PHP_STAT__COUNT,
};

_Static_assert(sizeof(struct op_php_offsets) == 24, "op_php_offsets layout");
_Static_assert(sizeof(struct op_php_proc) == 16 + 24 + 8, "op_php_proc layout");

#endif
