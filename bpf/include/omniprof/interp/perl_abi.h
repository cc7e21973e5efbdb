/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Types the Perl unwinder shares with user space: where a process's Perl
 * interpreter is (struct op_perl_proc, one per pid in the `perl_procs` map)
 * and the struct offsets the kernel side needs to walk its context stack
 * (struct op_perl_offsets). User space fills both from src/interp/perl/
 * (detection and the per-version offset table).
 *
 * A Perl frame travels as a struct op_frame of kind OP_FRAME_PERL:
 *   data     what the frame is:
 *              OP_PERL_DATA_EVAL  a string eval or eval block ("(eval)")
 *              OP_PERL_DATA_MAIN  the main program (the code outside any sub)
 *              anything else      a sub: the CV's body pointer (sv_any), so user
 *                                 space notices a CV freed and another one
 *                                 allocated at the same address
 *   addr     a sub: its CV; eval and main: the COP of the current statement
 *            (its file names the frame: "(eval 12)", the script)
 *   aux      the line of the frame's current statement (0: not known)
 */
#ifndef OMNIPROF_INTERP_PERL_ABI_H
#define OMNIPROF_INTERP_PERL_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define OP_PERL_DATA_EVAL 1ull
#define OP_PERL_DATA_MAIN 3ull

/*
 * Each context-stack entry is read as one block of OP_PERL_CX_BLOCK bytes:
 * every cx_* offset plus 8 must fit in it (perl_layout__fits()).
 */
#define OP_PERL_CX_BLOCK 128
/* A stackinfo's head, read as one block: si_* offsets plus their size fit. */
#define OP_PERL_SI_BLOCK 64
/* Context entries looked at for one frame (blocks, loops between subs). */
#define OP_PERL_SCAN 48
/* Stackinfos (sort, magic, DESTROY, signal handlers nest them) followed. */
#define OP_PERL_MAX_SI 64
/* Highest context index believed: a corrupt si_cxix stays bounded. */
#define OP_PERL_MAX_CXIX (1 << 22)

/* Context types (cx_type & OP_PERL_CXTYPEMASK): perl's cop.h, 5.24 and later. */
#define OP_PERL_CXTYPEMASK 0xf
#define OP_PERL_CXT_SUB	   9
#define OP_PERL_CXT_FORMAT 10
#define OP_PERL_CXT_EVAL   11
/* si_type of the interpreter's first stackinfo (PERLSI_MAIN). */
#define OP_PERL_SI_MAIN 1

/* Byte offsets into perl's structures. */
struct op_perl_offsets {
	__u16 interp_curcop;	   /* threaded: struct interpreter -> Icurcop */
	__u16 interp_curstackinfo; /* threaded: struct interpreter -> Icurstackinfo */
	__u16 si_cxstack;	   /* struct stackinfo -> si_cxstack */
	__u16 si_prev;		   /* -> si_prev */
	__u16 si_cxix;		   /* -> si_cxix (I32) */
	__u16 si_type;		   /* -> si_type (I32) */
	__u16 cx_size;		   /* sizeof(PERL_CONTEXT) */
	__u16 cx_type;		   /* PERL_CONTEXT -> cx_type (U8) */
	__u16 cx_oldcop;	   /* -> blk_oldcop */
	__u16 cx_sub_retop;	   /* -> blk_sub.retop (format and eval share it) */
	__u16 cx_sub_cv;	   /* -> blk_sub.cv (blk_format.cv too) */
	__u16 cx_eval_cv;	   /* -> blk_eval.cv */
	__u16 cop_line;		   /* COP -> cop_line (U32) */
	__u16 interp_op;	   /* threaded: struct interpreter -> Iop (PL_op) */
	__u16 cxp_multicall;	   /* CXp_MULTICALL, a flag of cx_type */
	__u16 cx_eval_top_env;	   /* -> blk_eval.cur_top_env (JMPENV *), 0: not read */
};

/* Value of the `perl_procs` map, key: pid (tgid). */
struct op_perl_proc {
	/*
	 * Threaded builds: offset from the thread pointer (fs base) of the
	 * thread-local PL_current_context, the thread's interpreter (the
	 * executable's static TLS block); 0: none.
	 */
	__s64 tls_context;
	__u64 curinterp;    /* threaded: address of PL_curinterp (the first interpreter) */
	__u64 curcop;	    /* unthreaded: address of PL_curcop */
	__u64 curstackinfo; /* unthreaded: address of PL_curstackinfo */
	__u64 op;	    /* unthreaded: address of PL_op */
	struct op_perl_offsets off;
	__u16 version; /* 5 << 8 | minor, for reports */
	__u8 threaded; /* MULTIPLICITY: the variables live in struct interpreter */
	/*
	 * Threaded builds, any thread: PL_thr_key, the pthread key whose value
	 * is the thread's interpreter, read through glibc's thread descriptor
	 * (at the thread pointer): its `specific` array of OP_PERL_TSD_L1
	 * pointers at tsd_specific, each to OP_PERL_TSD_L2 entries of
	 * tsd_entry bytes, the value at tsd_data in an entry. tsd_entry 0:
	 * glibc's layout is not known (no libc with its thread_db symbols).
	 */
	__u8 tsd_entry;
	__u16 tsd_specific;
	__u8 tsd_data;
	__u8 je_mustcatch; /* JMPENV -> je_mustcatch (bool); JMPENV -> je_prev is at 0 */
	__u64 thr_key;	   /* address of PL_thr_key (a pthread_key_t), 0: none */
};

/* glibc's two-level thread-specific data: PTHREAD_KEYS_MAX keys in blocks of 32. */
#define OP_PERL_TSD_L1 32
#define OP_PERL_TSD_L2 32

/* A context entry's first OP_PERL_CX_BLOCK bytes, by field size. */
union op_perl_cx_block {
	__u64 q[OP_PERL_CX_BLOCK / 8];
	__u32 d[OP_PERL_CX_BLOCK / 4];
	__u8 b[OP_PERL_CX_BLOCK];
};

/* A stackinfo's first OP_PERL_SI_BLOCK bytes. */
union op_perl_si_block {
	__u64 q[OP_PERL_SI_BLOCK / 8];
	__u32 d[OP_PERL_SI_BLOCK / 4];
};

/* The state of one stack walk of a Perl process (the `perl_walk` per-CPU
 * map in BPF; omniprof/interp/perl_walk.h works on it). */
struct op_perl_walker {
	struct op_perl_proc proc; /* copied from the pid's entry */
	__u64 si;		  /* the stackinfo being walked, 0: none left */
	__u64 si_prev;		  /* its si_prev */
	__u64 cxstack;		  /* its si_cxstack */
	__u64 cop;		  /* the COP of the next frame's current statement */
	__u64 next_addr;	  /* the next frame, found by op_perl_seek() */
	__u64 next_data;
	__u64 next_oldcop; /* the next frame's blk_oldcop: the cop of the frame below it */
	__s32 cxix;	   /* next context of si to look at (< 0: si's bottom) */
	__s32 deferred;	   /* native step result owed once pending frames are out */
	__u32 n_si;	   /* stackinfos entered */
	__u8 si_main;	   /* si is the main stackinfo (PERLSI_MAIN, no si_prev) */
	__u8 has_next;	   /* 1: next_* hold a frame, 2: the next frame is an error frame */
	__u8 next_ends;	   /* the next frame is the first one its runops call entered */
	__u8 emitted;	   /* frames written for the current runops frame */
	__u8 op_null;	   /* PL_op was NULL at the sample: no op runs (C code between calls) */
	__u8
	    next_docatch; /* the next frame is an eval docatch() runs in a runops call of its own */
	__u8 si_owned;	  /* the next runops frame owns the rest of si, frames or not */
	union op_perl_cx_block cx;
	union op_perl_si_block si_block;
};

/* Per-CPU counters of the Perl unwinder (the `perl_stats` array map). */
enum op_perl_stat {
	OP_PERL_STAT_WALKS = 0,	   /* samples whose walk met the runops loop (the set-up ran) */
	OP_PERL_STAT_NO_INTERP,	   /* no interpreter for the sampled thread */
	OP_PERL_STAT_NO_STACK,	   /* interpreter found, no context stack */
	OP_PERL_STAT_FRAMES,	   /* Perl frames emitted */
	OP_PERL_STAT_READ_ERR,	   /* a context or stackinfo could not be read */
	OP_PERL_STAT_RUNOPS_EMPTY, /* a runops frame with no Perl frame left */
	OP_PERL_STAT_SCAN_LIMIT,   /* OP_PERL_SCAN contexts without a frame */
	OP_PERL_STAT__COUNT,
};

_Static_assert(sizeof(struct op_perl_offsets) == 32, "op_perl_offsets layout");
_Static_assert(sizeof(struct op_perl_proc) == 40 + 32 + 16, "op_perl_proc layout");

#endif
