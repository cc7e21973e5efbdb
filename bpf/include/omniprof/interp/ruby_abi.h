/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Types the Ruby (CRuby) unwinder shares with user space: where a process's
 * current execution context is found (struct op_rb_proc, one per pid in the
 * `rb_procs` map) and the struct offsets the walker needs to follow the VM's
 * control frames (struct op_rb_offsets). User space fills both from
 * src/interp/ruby/ (detection and the per-version offset table).
 *
 * A Ruby frame travels as a struct op_frame of kind OP_FRAME_RUBY:
 *   iseq frame (a method, block, class body, <main>, <top (required)>):
 *     addr   the rb_iseq_t's address in the process
 *     data   the method it runs in: ep[-2] of the frame's local ep (for a
 *            block, the method that holds it), a method entry
 *            (rb_callable_method_entry_t, whose owner names the class), or a
 *            cref or 0 at the top level and in class bodies; user space
 *            checks what it is
 *     aux    the instruction's position: (cfp->pc - body->iseq_encoded) / 8,
 *            VALUE units, pointing past the current instruction as the VM
 *            keeps it (0xffffffff: not known)
 *   C function called from Ruby (a CFUNC control frame, e.g. Integer#times):
 *     addr   its method entry (rb_callable_method_entry_t)
 *     data   OP_RB_DATA_CFUNC | the entry's definition pointer (me->def)
 *     aux    0xffffffff
 *   YJIT's code (an anonymous executable mapping of the process; no unwind
 *   tables, no frame pointer, so the native walk cannot go past it):
 *     addr   the pc in it
 *     data   OP_RB_DATA_JIT
 *     aux    0xffffffff
 *   followed by every control frame left on the thread's VM stack (their
 *   native frames between are lost), then the walk ends with
 *   OP_UNWIND_ERR_ANON_CODE.
 *   Ruby frames read after the sample (a stack copy's walk, user space):
 *     addr   OP_RB_LATE_ADDR
 *     data   OP_RB_DATA_LATE
 *     aux    0xffffffff
 *   once, before the walk's first Ruby frame.
 */
#ifndef OMNIPROF_INTERP_RUBY_ABI_H
#define OMNIPROF_INTERP_RUBY_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define OP_RB_DATA_CFUNC (1ull << 63) /* op_frame.data of a C function's frame */
#define OP_RB_DATA_JIT	 (1ull << 62) /* op_frame.data of a frame of YJIT's code */
/* op_frame.data of the marker a stack copy's walk puts before its first Ruby
 * frame (src/interp/ruby/ruby_unwind.c, user space only): the control frames
 * were read after the sample. addr OP_RB_LATE_ADDR, aux OP_RB_NO_POS. */
#define OP_RB_DATA_LATE (1ull << 61)
#define OP_RB_LATE_ADDR 2
#define OP_RB_NO_POS	0xffffffffu

/*
 * The walker reads the first OP_RB_CFP_BLOCK bytes of each control frame at
 * once (pc, sp, iseq, self, ep in every version from 2.7: the frame is 56 or
 * 64 bytes); every cfp_* offset must be a multiple of 8 below it.
 */
#define OP_RB_CFP_BLOCK 40
/* Control frames a step looks at to find one to show (IFUNC and DUMMY frames are skipped). */
#define OP_RB_SKIP_MAX 4

/* The VM's frame flags (vm_core.h, the same values 2.7 to 3.4: ep[0]). */
#define OP_RB_FRAME_MAGIC_MASK	0x7fff0001u
#define OP_RB_FRAME_MAGIC_CFUNC 0x55550001u
#define OP_RB_FRAME_FLAG_FINISH 0x0020u
#define OP_RB_FRAME_FLAG_CFRAME 0x0080u
#define OP_RB_ENV_FLAG_LOCAL	0x0002u /* this ep is its method's own (not a block's) */
/* ep[-1] links a block's ep to its parent's: at most this many followed to the method's. */
#define OP_RB_EP_HOPS 4

/* How the current execution context is found from the sampled thread. */
enum op_rb_tls_mode {
	/*
	 * A shared libruby (general dynamic TLS): its GOT holds the resolved
	 * tls_index {module id, offset} of ruby_current_ec; the thread's DTV
	 * (glibc: thread pointer + 8) gives the module's TLS block.
	 */
	OP_RB_TLS_DTV = 1,
	/*
	 * The VM linked into the executable (a static libruby): its TLS block
	 * sits at a fixed distance below the thread pointer (local exec), so
	 * ruby_current_ec is at thread pointer + (__s64)tls_index.
	 */
	OP_RB_TLS_TP = 2,
	/*
	 * Ruby 2.7 (no thread-local ec): the global
	 * ruby_current_execution_context_ptr at tls_index holds the ec of the
	 * thread holding the GVL; used only when that ec's thread
	 * (ec->thread_ptr->thread_id, a pthread_t: the thread pointer) is the
	 * sampled one.
	 */
	OP_RB_TLS_GLOBAL = 3,
	/*
	 * A shared libruby whose ruby_current_ec is a local symbol (3.3's):
	 * the GOT slot at tls_index is a module-local tls_index (an
	 * R_X86_64_DTPMOD64 against no symbol: local dynamic), whose module id
	 * is used with the symbol's own offset, tls_offset.
	 */
	OP_RB_TLS_DTV_LOCAL = 4,
};

/* Byte offsets into CRuby's structures. */
struct op_rb_offsets {
	__u16 ec_vm_stack;	/* rb_execution_context_t -> vm_stack */
	__u16 ec_vm_stack_size; /* -> vm_stack_size (in VALUEs) */
	__u16 ec_cfp;		/* -> cfp */
	__u16 cfp_size;		/* sizeof(rb_control_frame_t) */
	__u16 cfp_pc;		/* rb_control_frame_t -> pc */
	__u16 cfp_iseq;		/* -> iseq */
	__u16 cfp_ep;		/* -> ep (ep[0]: frame flags, ep[-2]: method entry or cref) */
	__u16 iseq_body;	/* rb_iseq_t -> body */
	__u16 body_encoded;	/* rb_iseq_constant_body -> iseq_encoded */
	__u16 me_def;		/* rb_callable_method_entry_t -> def */
	__u16 ec_thread_ptr;	/* OP_RB_TLS_GLOBAL: rb_execution_context_t -> thread_ptr */
	__u16 th_thread_id;	/* OP_RB_TLS_GLOBAL: rb_thread_t -> thread_id (pthread_t) */
};

/* Value of the `rb_procs` map, key: pid (tgid). The loop's ranges (where the
 * walk hands frames to Ruby) are the pid's OP_INTERP_RUBY ranges in
 * `interp_procs` (struct op_interp_proc, omniprof/abi.h). */
struct op_rb_proc {
	__u64 tls_index; /* OP_RB_TLS_DTV: address of ruby_current_ec's tls_index in the GOT;
			    OP_RB_TLS_TP: its offset from the thread pointer (two's complement);
			    OP_RB_TLS_GLOBAL: the address of ruby_current_execution_context_ptr */
	__u8 tls_mode;	 /* enum op_rb_tls_mode */
	__u8 reserved[3];
	__u16 version; /* major << 8 | minor, for reports */
	__u16 reserved2;
	struct op_rb_offsets off;
	__u64 tls_offset; /* OP_RB_TLS_DTV_LOCAL: ruby_current_ec's offset in libruby's TLS block */
};

/* The state of one stack walk of a Ruby process (the `rb_walk` per-CPU map
 * in BPF; omniprof/interp/ruby_walk.h works on it). */
struct op_rb_walker {
	struct op_rb_proc proc; /* copied from the pid's entry */
	__u64 cfp;		/* next control frame to look at, at or above end: none */
	__u64 end;		/* the end of the control frames (vm_stack + vm_stack_size) */
	__s32 deferred;		/* native step result owed once the loop's frames are out */
	__u32 broken;		/* the next control frame is unreadable: the walk ends there */
	__u32 to_end;		/* past YJIT code: every frame left, FINISH or not */
	__u16 jit_mark; /* the YJIT marker owed: 1, frames follow; 2, none; 3, the native walk */
	/* 1: the sample's own pc was in YJIT code, so the next iseq frame shown
	 * runs it and its cfp->pc may be stale (YJIT saves it lazily): no line. */
	__u16 jit_pc_stale;
	/* cfp's fields, read once (block_cfp: the frame they are of, 0: none). */
	__u64 block_cfp;
	__u64 block[8]; /* OP_RB_CFP_BLOCK bytes read; 8 words so an index masks with & 7 */
	__u64 env[3];	/* ep[-2], ep[-1], ep[0] */
};

/* Per-CPU counters of the Ruby unwinder (the `rb_stats` array map). */
enum op_rb_stat {
	OP_RB_STAT_WALKS = 0,	  /* samples whose walk met the VM loop (the set-up ran) */
	OP_RB_STAT_NO_EC,	  /* the sampled thread has no execution context (yet) */
	OP_RB_STAT_FRAMES,	  /* Ruby frames emitted (iseq frames) */
	OP_RB_STAT_CFUNCS,	  /* C functions' frames emitted */
	OP_RB_STAT_READ_ERR,	  /* a control frame could not be read */
	OP_RB_STAT_LOOP_NO_FRAME, /* a VM loop frame with no control frame left */
	OP_RB_STAT_SKIPPED,	  /* control frames not shown (IFUNC, DUMMY) */
	OP_RB_STAT_JIT,		  /* YJIT code frames met (the rest of the Ruby stack follows) */
	OP_RB_STAT__COUNT,
};

_Static_assert(sizeof(struct op_rb_offsets) == 24, "op_rb_offsets layout");
_Static_assert(sizeof(struct op_rb_proc) == 16 + 24 + 8, "op_rb_proc layout");

#endif
