/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Types shared by the BPF programs and user space: the ring-buffer records,
 * the frame encoding and the counters. Fixed-width types only, sizes pinned
 * with _Static_assert so both sides agree byte for byte.
 *
 * A frame is (kind, flags, addr, data, aux): neutral payload fields whose
 * meaning each frame kind documents (struct op_frame).
 */
#ifndef OMNIPROF_ABI_H
#define OMNIPROF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "omniprof/frame_kinds.h"

#define OP_TASK_COMM_LEN     16
#define OP_MAX_KERNEL_FRAMES 127 /* the kernel's default perf_event_max_stack */
/* perf's depth (its default kernel.perf_event_max_stack applies to user stacks
 * too); a power of two: the sampler masks frame slots with it. */
#define OP_MAX_USER_FRAMES 1024

/* The period of the events that take each CPU's first sample as sampling starts
 * (src/sampler/sampler.c, open_first_sample): on_sample knows them by it. No
 * -F gives it (100 kHz would be 10,000 ns). */
#define OP_FIRST_SAMPLE_PERIOD_NS 10007

enum op_event_type {
	OP_EVENT_TRACE = 1,
	OP_EVENT_EXEC = 2,
	OP_EVENT_EXIT = 3,
	OP_EVENT_UNKNOWN = 4,	 /* the unwinder met an unknown pid or address: read its maps */
	OP_EVENT_STACK_COPY = 5, /* a sample of a process not known yet: registers and stack */
	OP_EVENT_OFFCPU_END = 6, /* a thread whose switch-out was recorded runs again */
	OP_EVENT_MMAP = 7,	 /* user space only: a process mapped file code (perf's MMAP2) */
};

/* OP_FRAME_NATIVE, OP_FRAME_KERNEL, OP_FRAME_ERROR and one per runtime: omniprof/frame_kinds.h */
enum op_frame_kind { OP_FRAME_KINDS(OP_FRAME_KIND_ENUM) };

enum op_frame_flags {
	/* addr is a return address: symbolize addr - 1, the call instruction. */
	OP_FRAME_F_RETURN_ADDRESS = 1 << 0,
};

/* Why a user stack ended early. Reported as an OP_FRAME_ERROR frame. */
enum op_unwind_error {
	OP_UNWIND_ERR_NONE = 0,
	OP_UNWIND_ERR_READ = 1,	     /* stack memory could not be read */
	OP_UNWIND_ERR_MAX_DEPTH = 2, /* OP_MAX_USER_FRAMES reached */
	OP_UNWIND_ERR_BAD_FP = 3,    /* frame pointer not above the stack pointer */
	OP_UNWIND_ERR_NO_RULE = 4,   /* no unwind rule for this address */
	OP_UNWIND_ERR_BAD_CFA = 5,   /* the rule gave a CFA below the stack pointer */
	OP_UNWIND_ERR_ANON_CODE = 6, /* JIT/anonymous code without a frame pointer */
	OP_UNWIND_ERR_NO_MAPS = 7,   /* stack copy of a process whose maps were never read */
	OP_UNWIND_ERR_INTERP = 8,    /* a runtime's frame could not be read */
	/* 9 and up: a runtime's own reasons, named by its interp_ops.unwind_error. */
	OP_UNWIND_ERR_HOTSPOT = 9, /* a HotSpot frame could not be read or unwound */
	OP_UNWIND_ERR_V8 = 10,	   /* a V8 frame could not be read/unwound */
	OP_UNWIND_ERR_RUBY = 11,   /* a Ruby control frame could not be read */
	OP_UNWIND_ERR_PERL = 12,   /* a Perl frame could not be read */
	OP_UNWIND_ERR_PHP = 13,	   /* a PHP frame (zend_execute_data) could not be read */
	/* An OP_RULE_CFA_RBX frame (ld.so's lazy-binding trampoline) above the
	 * frame whose registers are known: its rbx is not. */
	OP_UNWIND_ERR_RBX_CFA = 14,
	/* A stack copy's Go switch (OP_RULE_GO_SWITCH) whose thread has moved
	 * on since the sample: the goroutine's stack, past the copy, is not
	 * the sampled moment's (user space only). */
	OP_UNWIND_ERR_GO_STALE = 15,
};

/*
 * How to find the caller's frame at some PC: the "stack delta" rule. One per
 * address range of a file, built from .eh_frame / .debug_frame (or frame
 * pointers). x86-64: the return address is always at CFA - 8.
 */
enum op_cfa_base {
	OP_CFA_RSP = 0,
	OP_CFA_RBP = 1,
};

/*
 * The rest of cfa_base (rules CFA, PLT, CFA_DEREF and CFA_RBX): where the
 * caller's rbx is, for the walk to reach an OP_RULE_CFA_RBX frame above the
 * one it started from (a sample in _dl_fixup, which the trampoline called).
 * Only a dynamic loader's rules carry it (ld.so, whose trampolines are the
 * OP_RULE_CFA_RBX rows: elf_is_loader() in src/unwind/eh_frame.c), so the
 * shared rule array does not grow for other files.
 * OP_CFA_F_BX set: the CFI describes rbx here, caller's rbx at CFA - 8 *
 * OP_CFA_BX_SLOT(cfa_base) (slot 0: rbx unchanged, the callee-saved default).
 * Unset (every other file, frame pointers, runtimes): rbx becomes unknown.
 */
#define OP_CFA_BASE_MASK	 1
#define OP_CFA_F_BX		 0x80
#define OP_CFA_BX_SLOT_SHIFT	 2
#define OP_CFA_BX_SLOT_MAX	 31
#define OP_CFA_BX_SLOT(cfa_base) (((cfa_base) >> OP_CFA_BX_SLOT_SHIFT) & OP_CFA_BX_SLOT_MAX)

/*
 * STOP, INVALID and SIGNAL carry no operands (the other fields are 0).
 *
 * PLT: the lazy-binding .plt that GNU ld writes (16-byte entries: jmp *GOT,
 * push index at byte 6, jmp .plt0 at byte 11) describes its CFA as
 * rsp + 8 + ((rip & 15) >= 11 ? 8 : 0). Only threshold 11 is encoded: IBT
 * PLTs (ld -z ibtplt) use 9 and become INVALID.
 *
 * CFA_DEREF: GCC's dynamic realignment (DRAP: -mstackrealign, over-aligned
 * locals with variable-length arrays) keeps the incoming CFA in a stack
 * slot, giving CFA = *(base + cfa_offset) (base + cfa_offset = rbp - 8, ...).
 * Here fp_offset is relative to the base register's value, not to the CFA
 * (the two are no fixed distance apart after realignment), and is always
 * applied, 0 included: caller's rbp = *(base + fp_offset). GCC's DRAP frames
 * push the caller's rbp and set rbp = rsp, so it is *(rbp + 0).
 */
enum op_rule_cmd {
	OP_RULE_CFA = 0,       /* CFA = base + cfa_offset */
	OP_RULE_STOP = 1,      /* outermost frame (return address undefined): end of stack */
	OP_RULE_INVALID = 2,   /* no usable rule (gap, unsupported CFI): stop with an error */
	OP_RULE_PLT = 3,       /* PLT stub: CFA = rsp + cfa_offset + ((pc & 15) >= 11 ? 8 : 0) */
	OP_RULE_CFA_DEREF = 4, /* realigned stack: CFA = *(base + cfa_offset), see above */
	OP_RULE_SIGNAL = 5,    /* rt_sigreturn trampoline: registers from the ucontext at rsp */
	/* Anonymous executable memory (JIT code): the frame-pointer rule, where any
	 * failure (rbp 0 or below rsp, unreadable) is OP_UNWIND_ERR_ANON_CODE. Made
	 * by the lookup for OP_TABLE_ID_ANON mappings, never stored in a table. */
	OP_RULE_ANON = 6,
	/* A Go stack switch (runtime.systemstack, asmcgocall on g0): the
	 * frame-pointer rule (CFA = rbp + cfa_offset, caller's rbp at CFA +
	 * fp_offset) without the check that the caller's frame is above this one,
	 * since it is on the goroutine's stack, anywhere in memory. The walk's depth
	 * bounds a loop. */
	OP_RULE_FP_SWITCH = 7,
	/*
	 * A Go stack switch on amd64 (runtime.systemstack, runtime.asmcgocall,
	 * on g0): the goroutine's own registers, which the switch saved in
	 * g.sched, so its direct caller is kept. g is read from TLS (fs base +
	 * cfa_offset), then m = g.m, curg = m.curg (fp_offset: m.curg's offset),
	 * and when g is m.g0 and curg another goroutine of the same m (curg.m ==
	 * m): pc = *(sched.sp),
	 * sp = sched.sp + 8, rbp = sched.bp. cfa_base holds OP_GO_SWITCH_F_*.
	 * Whenever any of that is unknown or unreadable (no fs base: a stack
	 * copy), the frame-pointer rule of OP_RULE_FP_SWITCH (CFA = rbp + 16,
	 * caller's rbp at CFA - 16), which skips the switch's direct caller.
	 */
	OP_RULE_GO_SWITCH = 8,
	/*
	 * CFA = rbx + cfa_offset (caller's rbp as OP_RULE_CFA's fp_offset says):
	 * ld.so's _dl_runtime_resolve_{fxsave,xsave,xsavec} (and the tlsdesc and
	 * profile trampolines) do `push %rbx; mov %rsp,%rbx; and $-64,%rsp`
	 * and then subtract a size known only at run time (the CPU's xsave
	 * area), so no rsp-based rule exists there. The walk tracks no
	 * callee-saved register but rbp and, in a dynamic loader's frames, rbx: the
	 * sampled thread's rbx (or a signal frame's) is carried up through the
	 * frames whose rules say where rbx was saved (OP_CFA_F_BX, a sample in
	 * _dl_fixup under the trampoline). A frame of another file (libc's
	 * IFUNC resolver called by _dl_fixup) makes rbx unknown
	 * again, and an OP_RULE_CFA_RBX frame above it stops the walk with
	 * OP_UNWIND_ERR_RBX_CFA. Stack copies carry the sampled rbx too.
	 */
	OP_RULE_CFA_RBX = 9,
};

/* OP_RULE_GO_SWITCH's flags (in cfa_base). */
enum op_go_switch_flags {
	/* runtime.asmcgocall: it saved the goroutine at 48(sp) of its g0 frame
	 * (0 when it did not switch): the switch is taken only when that is curg. */
	OP_GO_SWITCH_F_CGO = 1,
};

/*
 * Go's runtime structures, amd64, the same from Go 1.5 to 1.23
 * (runtime/runtime2.go: g begins with stack (2 words), stackguard0,
 * stackguard1, _panic, _defer, m, then sched; gobuf is sp, pc, g, ctxt,
 * ret, lr, bp; m begins with g0). m.curg's offset travels in the rule.
 */
#define OP_GO_G_M	  48
#define OP_GO_M_G0	  0
#define OP_GO_G_SCHED	  56
#define OP_GO_GOBUF_SP	  0
#define OP_GO_GOBUF_BP	  48
#define OP_GO_CGO_SAVED_G 48
/* g.stack.hi: the top of the goroutine's stack (g.stack is lo, hi). */
#define OP_GO_G_STACK_HI 8
/*
 * Where g is from the thread pointer (x86-64: tp - 8, Go's TLS slot in an
 * executable, linked by Go or by the system linker) and m.curg's offset (Go
 * 1.16 to 1.23): what src/unwind/go_deltas.c puts in OP_RULE_GO_SWITCH's
 * rules, and where a stack copy looks for a switched-away goroutine.
 */
#define OP_GO_G_TLS_OFFSET (-8)
#define OP_GO_M_CURG	   192

struct op_unwind_rule {
	__u8 cmd;      /* enum op_rule_cmd */
	__u8 cfa_base; /* enum op_cfa_base, and OP_CFA_F_BX with its slot */
	/*
	 * CFA, PLT: caller's rbp saved at CFA + fp_offset; 0: rbp unchanged.
	 * CFA_DEREF: caller's rbp saved at base + fp_offset (always).
	 */
	__s16 fp_offset;
	__s32 cfa_offset;
};

/*
 * One user frame. The payload's meaning is the kind's:
 *   OP_FRAME_NATIVE  addr: the absolute pc (OP_FRAME_F_RETURN_ADDRESS: a
 *                    return address), resolved by user space through the
 *                    process's mappings; data, aux: 0
 *   OP_FRAME_ERROR   addr: the enum op_unwind_error; data, aux: 0
 *   a runtime's kind what the runtime's ABI header says
 *                    (omniprof/interp/<runtime>_abi.h; the kinds:
 *                    omniprof/frame_kinds.h)
 */
struct op_frame {
	__u64 addr;
	__u64 data;
	__u32 aux;
	__u8 kind;  /* enum op_frame_kind */
	__u8 flags; /* enum op_frame_flags */
	__u16 reserved;
};

/*
 * (pid, address) -> file: an LPM trie. Every executable mapping is split into
 * power-of-two aligned blocks, each an entry whose prefix covers the pid and
 * the block's high address bits. A pid-only entry (prefixlen 32, table_id 0)
 * marks a known process, so a miss tells "unknown process" apart from
 * "address outside every mapping" (JIT code, or a dlopen not seen yet).
 */
struct op_mapping_key {
	__u32 prefixlen; /* 32 (pid) + significant address bits */
	__u32 pid;
	__u64 addr_be; /* big endian, so prefixes compare high bits first */
};

/* op_mapping_value.table_id of anonymous executable memory (JIT code); table ids avoid it. */
#define OP_TABLE_ID_ANON (~0ull)

/*
 * The pid marker's flags (in its op_mapping_value.bias). PARTIAL: the
 * process's ranges do not hold all of its mappings (evicted from the trie,
 * or past the per-process cap), so an address in none of them is no sign of
 * a mapping made since the maps were read: no stack copy for it.
 */
#define OP_MARKER_F_PARTIAL 1ull

struct op_mapping_value {
	/* The file's stack-delta table id (stack_deltas__table_id(): a hash of the
	 * CFI's inputs, the key of table_info; not the file's content id): a file
	 * whose table is not loaded uses frame pointers; OP_TABLE_ID_ANON:
	 * anonymous code; 0: the pid marker */
	__u64 table_id;
	__u64 bias; /* ELF vaddr = address - bias; the pid marker: OP_MARKER_F_* */
	/* The whole mapping [start, end) this block belongs to: every address in it
	 * has this value, so the unwinder looks the trie up once per mapping per sample. */
	__u64 start;
	__u64 end;
};

/*
 * A file's stack deltas are a search tree of pages (struct op_delta_page) in
 * one delta chunk (see unwind_tables in sampler.bpf.c): level 0 is a single
 * root page, the last level holds the deltas in address order, and slot i of
 * page p in level l holds the first address of child page
 * p' = level_first[l + 1] + (p - level_first[l]) * OP_PAGE_DELTAS + i.
 * Finding a rule costs one map lookup per level (2 for up to 65536 deltas)
 * plus a fixed 8-step search inside each page, done by plain loads.
 */
#define OP_PAGE_DELTAS	   256
#define OP_PAGE_LEVELS_MAX 4	       /* 256^4 deltas: any 32-bit count */
#define OP_DELTA_PAD	   0xffffffffu /* unused slots: above every address */

struct op_delta_page {
	__u32 addr[OP_PAGE_DELTAS]; /* vaddr - base, ascending; OP_DELTA_PAD past the end */
	__u16 rule[OP_PAGE_DELTAS]; /* last level: index into the shared rule array */
};

/* Per file: where its delta pages are. Addresses are stored as vaddr - base. */
struct op_table_info {
	__u64 base;
	__u32 chunk;			       /* index in the array of delta chunks */
	__u32 n_levels;			       /* 1..OP_PAGE_LEVELS_MAX */
	__u32 level_first[OP_PAGE_LEVELS_MAX]; /* first page of each level in the chunk */
};

#define OP_MAX_DELTA_CHUNKS 256
#define OP_MAX_RULES	    (1 << 16) /* rule indexes are 16 bits */

enum op_trace_flags {
	OP_TRACE_F_KERNEL_ERROR = 1 << 0,   /* bpf_get_stack failed */
	OP_TRACE_F_USER_TRUNCATED = 1 << 1, /* user stack ended with an error frame */
	OP_TRACE_F_NO_USER = 1 << 2,	    /* kernel thread: no user stack */
	/* Off-CPU (--off-cpu): the stack of a thread leaving the CPU, at ktime_ns;
	 * its struct op_offcpu_end says when it ran again. */
	OP_TRACE_F_OFF_CPU = 1 << 3,
	/* The user frames are packed, a __u64 each (OP_PACKED_FRAME), not struct
	 * op_frame: see OP_TRACE_PACKED_SIZE. */
	OP_TRACE_F_PACKED = 1 << 4,
	/* The user frames are packed two __u64 each (omniprof/frame_pack.h),
	 * not struct op_frame: see OP_TRACE_WIDE_SIZE. */
	OP_TRACE_F_PACKED_WIDE = 1 << 5,
};

struct op_event_header {
	__u32 type; /* enum op_event_type */
	__u32 pid;  /* process (tgid) */
};

/*
 * One sample: this header, then __u64 kernel[n_kernel] (innermost first),
 * then struct op_frame user[n_user]; the record is exactly
 * OP_TRACE_SIZE(n_kernel, n_user) bytes. Variable length, so a sample taken
 * in user mode (no kernel stack) with a short walk copies only what it holds.
 */
struct op_trace {
	struct op_event_header hdr;
	__u32 tid;
	__u32 cpu;
	__u64 ktime_ns;		      /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	char comm[OP_TASK_COMM_LEN];  /* the thread's name */
	char pcomm[OP_TASK_COMM_LEN]; /* the process's (group leader's) name */
	__u16 n_kernel;		      /* <= OP_MAX_KERNEL_FRAMES + 1 */
	__u16 n_user;		      /* <= OP_MAX_USER_FRAMES */
	__u32 flags;		      /* enum op_trace_flags */
};

#define OP_TRACE_SIZE(n_kernel, n_user)                                                            \
	(sizeof(struct op_trace) + 8 * (n_kernel) + sizeof(struct op_frame) * (n_user))
#define OP_TRACE_MAX_SIZE OP_TRACE_SIZE(OP_MAX_KERNEL_FRAMES + 1, OP_MAX_USER_FRAMES)

/*
 * A walk whose frames are all native or error frames (no runtime's frames: no
 * data, no aux; an addr below 2^56) is sent with OP_TRACE_F_PACKED, each user
 * frame one __u64: addr in bits 0-55, kind in 56-59, flags in 60-63. A native
 * stack's record is then a third of its size: the copy into the ring buffer,
 * whose lines are cold by the time it wraps, is most of a sample's cost after
 * the walk. Such a record is exactly OP_TRACE_PACKED_SIZE(n_kernel, n_user)
 * bytes.
 */
#define OP_PACKED_ADDR_MASK ((1ull << 56) - 1)
#define OP_PACKED_FRAME(addr, kind, flags)                                                         \
	((__u64)(addr) | (__u64)(kind) << 56 | (__u64)(flags) << 60)
#define OP_PACKED_FRAME_ADDR(p)	 ((p)&OP_PACKED_ADDR_MASK)
#define OP_PACKED_FRAME_KIND(p)	 ((__u8)(((p) >> 56) & 15))
#define OP_PACKED_FRAME_FLAGS(p) ((__u8)((p) >> 60))
#define OP_TRACE_PACKED_SIZE(n_kernel, n_user)                                                     \
	(sizeof(struct op_trace) + 8 * (n_kernel) + 8 * (n_user))

/*
 * A walk in a process with runtimes whose frames are all native, error or
 * HotSpot frames (a JVM's stacks) is sent with OP_TRACE_F_PACKED_WIDE, each user frame two __u64
 * (omniprof/frame_pack.h: op_frame__pack_wide): two thirds of struct
 * op_frame. Such a record is exactly OP_TRACE_WIDE_SIZE(n_kernel, n_user) bytes.
 */
#define OP_TRACE_WIDE_SIZE(n_kernel, n_user)                                                       \
	(sizeof(struct op_trace) + 8 * (n_kernel) + 16 * (n_user))

/* Process lifecycle, so user space reads mappings while the process lives. */
struct op_proc_event {
	struct op_event_header hdr;
	__u32 tid;
	__u32 reserved;
	__u64 ktime_ns;
	char comm[OP_TASK_COMM_LEN];
};

/* An exec's program path, as exec resolved it (linux_binprm->interp: the
 * interpreter for a script), NUL-terminated, cut at OP_EXEC_PATH_LEN - 1 bytes. */
#define OP_EXEC_PATH_LEN 256

/* OP_EVENT_EXEC: the lifecycle event and the program's path, which names a
 * process that is gone before /proc/PID/exe could be read. */
struct op_exec_event {
	struct op_proc_event proc;
	char path[OP_EXEC_PATH_LEN];
};

/* The unwinder met a pid or an address user space has no mapping for. */
struct op_unknown_event {
	struct op_event_header hdr;
	__u64 addr; /* 0: the whole process is unknown */
};

/*
 * OP_EVENT_MMAP: never written by BPF. The sampler makes it from perf's
 * PERF_RECORD_MMAP2 (an executable file mapping, of any process) and queues
 * it among the ring's records by time, so that user space sees a library
 * mapped over another's range (dlclose, then dlopen at the same address)
 * between the samples taken before and after it.
 */
struct op_mmap_event {
	struct op_event_header hdr;
	__u32 tid;
	__u32 prot;
	__u64 ktime_ns; /* CLOCK_MONOTONIC, as the samples' */
	__u64 addr;
	__u64 len;
	__u64 pgoff; /* file offset of addr */
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
};

/*
 * Off-CPU (--off-cpu, raw_tp/sched_switch): a sampled switch-out of a user
 * thread goes at once as a struct op_trace with OP_TRACE_F_OFF_CPU (ktime_ns:
 * the switch-out), and the thread's (tid -> that time) is kept in the
 * bounded `offcpu_pending` map; when the thread is switched in again this
 * small record says so, and user space gives the trace the time between.
 * start_ns equals the trace's ktime_ns, so a record whose trace was lost
 * joins nothing.
 */
struct op_offcpu_end {
	struct op_event_header hdr;
	__u32 tid;
	__u32 reserved;
	__u64 start_ns; /* switch-out (CLOCK_MONOTONIC) */
	__u64 end_ns;	/* switch-in */
};

/*
 * A sample of a process whose unwind tables are not in the maps yet (no pid
 * marker): instead of guessing with frame pointers, the BPF side sends the
 * user registers and the stack from rsp up (whole pages, up to
 * OP_STACK_COPY_MAX bytes, fewer where the stack ends), and user space
 * unwinds it with the same unwinder once it has read the process's maps.
 * The first 64 bytes are laid out as in struct op_trace. This header is
 * followed by __u64 kernel[n_kernel], then the stack_len bytes of stack:
 * exactly OP_STACK_COPY_SIZE(n_kernel, stack_len) bytes. A copy ends at the
 * top of the stack's mapping (what the thread's stack holds), at most
 * OP_STACK_COPY_MAX: a clang compile's stacks are about 40 KiB, and deeper than
 * 128 KiB while it instantiates templates deeply (128 KiB stopped 1-2 of every
 * 100 copies of a compiler loop; 32 KiB a third). OP_STACK_COPY_COMMON, the
 * size of all but such deep copies, is what the ring buffer is sized on.
 */
#define OP_STACK_COPY_MAX    (512 * 1024)
#define OP_STACK_COPY_COMMON (128 * 1024)
/*
 * A copy taken on a Go g0 stack with a goroutine switched away from (the
 * checks of op_go_switch__curg with OP_GO_G_TLS_OFFSET and OP_GO_M_CURG:
 * g from TLS is m.g0, m.curg another goroutine of that m) also carries, as
 * they were at the sample, g, m, curg, curg.sched's sp and bp
 * (OP_STACK_COPY_F_GO in go_flags), and go_stack_len bytes of the
 * goroutine's stack from sched.sp (up to its g.stack.hi, at most
 * OP_STACK_COPY_GO_MAX), after the copied stack. The walk in user space
 * takes the switch from them rather than from the live process, where the
 * goroutine has run on since.
 */
#define OP_STACK_COPY_GO_MAX (16 * 1024)

enum op_stack_copy_go_flags {
	OP_STACK_COPY_F_GO = 1, /* go_g .. go_sched_bp and the goroutine's stack are set */
	/* A copy of a signal's alternate stack (bpf/stack_copy.h: Go's gsignal):
	 * go_sched_sp is the rsp the signal interrupted (its frame's ucontext), and
	 * the go_stack_len bytes after the copied stack are the interrupted stack's
	 * from there; go_g, go_m, go_curg and go_sched_bp are 0. Never with F_GO. */
	OP_STACK_COPY_F_SIGNAL = 2,
};

struct op_stack_copy {
	struct op_event_header hdr;
	__u32 tid;
	__u32 cpu;
	__u64 ktime_ns;
	char comm[OP_TASK_COMM_LEN];
	char pcomm[OP_TASK_COMM_LEN];
	__u16 n_kernel;
	__u16 reserved;
	__u32 flags; /* enum op_trace_flags (kernel stack only) */
	__u64 pc;
	__u64 sp;
	__u64 fp;
	__u64 tls_base;	    /* the thread pointer (fs base): finds a runtime's thread state */
	__u32 stack_len;    /* bytes of stack, from sp */
	__u32 go_stack_len; /* bytes of the goroutine's stack, from go_sched_sp (0: none) */
	__u64 bx;	    /* rbx (OP_RULE_CFA_RBX: ld.so's lazy-binding trampolines) */
	__u32 go_flags;	    /* enum op_stack_copy_go_flags */
	__u32 reserved2;
	__u64 go_g; /* the Go switch at the sample: g (m.g0), m, m.curg */
	__u64 go_m;
	__u64 go_curg;
	__u64 go_sched_sp; /* curg.sched.sp, bp */
	__u64 go_sched_bp;
};

/* A record is header, __u64 kernel[n_kernel], the stack (stack_len bytes),
 * then the goroutine's (go_stack_len): OP_STACK_COPY_SIZE + go_stack_len. */
#define OP_STACK_COPY_SIZE(n_kernel, stack_len)                                                    \
	(sizeof(struct op_stack_copy) + 8 * (n_kernel) + (stack_len))
#define OP_STACK_COPY_MAX_SIZE                                                                     \
	(OP_STACK_COPY_SIZE(OP_MAX_KERNEL_FRAMES + 1, OP_STACK_COPY_MAX) + OP_STACK_COPY_GO_MAX)

/*
 * Runtimes (interpreters, JITs) whose code the walk hands over to: when a
 * native frame's pc falls in one of the pid's interpreter ranges (the
 * `interp_procs` map: pid -> struct op_interp_proc), that runtime's step
 * replaces the frame with the runtime's own frames (see
 * omniprof/unwind/walk.h). 0 is no runtime; the runtimes are listed in
 * omniprof/frame_kinds.h (OP_INTERPS), each documented in its ABI header.
 */
enum op_interp {
	OP_INTERP_NONE = 0,
	OP_INTERPS(OP_INTERP_ENUM) /* the runtimes: omniprof/frame_kinds.h */
	OP_INTERP__COUNT,
};

#define OP_INTERP_MAX_RANGES 8

/*
 * Range flag: the runtime unwinds its frames in this range itself (JIT code
 * with no unwind tables and no frame pointer). The walk hands it the frame
 * before any native step (omniprof/unwind/walk.h, OP_STEP_RUNTIME_UNWINDS).
 */
#define OP_INTERP_RANGE_F_UNWINDS 1u

struct op_interp_range {
	__u64 start;
	__u64 end;    /* exclusive; start == end: unused */
	__u32 interp; /* enum op_interp */
	__u32 flags;  /* OP_INTERP_RANGE_F_* */
};

/*
 * Value of the `interp_procs` map, key: pid (tgid). Per process, not per
 * file: the ranges are absolute, so the walk tests a frame's pc without
 * finding its mapping first, and one lookup per sample (not one per frame)
 * tells whether the process runs any runtime at all. User space fills it
 * (src/unwind/interp_ranges.h) from the files each runtime inspected, when
 * the process's maps are read; ranges of several runtimes may mix.
 */
struct op_interp_proc {
	struct op_interp_range ranges[OP_INTERP_MAX_RANGES];
};

/* Per-CPU counters (an array map indexed by these). */
enum op_stat {
	OP_STAT_SAMPLES = 0,	    /* program runs */
	OP_STAT_IDLE,		    /* pid 0: CPU idle, not recorded */
	OP_STAT_FILTERED,	    /* not a target (-p, --comm, --cgroup, --container) */
	OP_STAT_RINGBUF_FULL,	    /* dropped: ring buffer full */
	OP_STAT_KERNEL_STACK_ERR,   /* kernel stack missing (bpf_get_stack error) */
	OP_STAT_USER_REGS_ERR,	    /* user registers could not be read */
	OP_STAT_USER_READ_ERR,	    /* user stack ended on unreadable memory */
	OP_STAT_USER_MAX_DEPTH,	    /* user stack longer than OP_MAX_USER_FRAMES */
	OP_STAT_USER_BAD_FP,	    /* frame-pointer chain went backwards */
	OP_STAT_PROC_EVENT_LOST,    /* exec/exit event dropped: ring buffer full */
	OP_STAT_FP_UNKNOWN_PID,	    /* frame-pointer fallback: process not known yet */
	OP_STAT_FP_NO_MAPPING,	    /* frame-pointer fallback: address in no file mapping */
	OP_STAT_FP_NO_TABLE,	    /* frame-pointer fallback: file's table not loaded */
	OP_STAT_USER_NO_RULE,	    /* truncated: no unwind rule (gap, unsupported CFI) */
	OP_STAT_USER_BAD_CFA,	    /* truncated: a rule produced an impossible CFA */
	OP_STAT_FRAMES_CFI,	    /* user frames unwound with stack deltas */
	OP_STAT_FRAMES_FP,	    /* user frames unwound with frame pointers */
	OP_STAT_UNKNOWN_LOST,	    /* unknown pid/address report dropped: ring buffer full */
	OP_STAT_FRAMES_ANON,	    /* user frames in anonymous (JIT) code, via frame pointers */
	OP_STAT_USER_ANON_STOP,	    /* truncated: anonymous (JIT) code without a frame pointer */
	OP_STAT_STACK_COPIES,	    /* samples sent as stack copies (unknown process or address) */
	OP_STAT_STACK_COPY_LOST,    /* ... dropped: ring buffer full */
	OP_STAT_STACK_COPY_SKIPPED, /* not copied, over the copies' budget (or ring half full):
				       walked, frame pointers where not ready */
	OP_STAT_PID_FILTER_FULL,    /* a followed child not added: pid_filter full */
	/* Off-CPU (--off-cpu): */
	OP_STAT_OFFCPU_SWITCHES,     /* switch-outs of user threads seen */
	OP_STAT_OFFCPU_SAMPLED,	     /* ... recorded (a trace sent, the thread pending) */
	OP_STAT_OFFCPU_PENDING_FULL, /* not recorded: offcpu_pending full */
	OP_STAT_OFFCPU_LOST,	     /* trace or end record dropped: ring buffer full */
	OP_STAT_OFFCPU_EXITED,	     /* threads that exited while pending (no end record) */
	OP_STAT_OFFCPU_NOT_READY,    /* recorded while the process's tables were not loaded */
	OP_STAT_OFFCPU_TRUNCATED,    /* recorded with a user stack that ended in an error frame */
	/* Of the budget's refusals (OP_STAT_STACK_COPY_SKIPPED's), the asks refused
	 * because the ring buffer was half full (user space behind), not the token
	 * buckets; a sample may ask twice. */
	OP_STAT_STACK_COPY_RING_HALF,
	OP_STAT__COUNT,
};

_Static_assert(sizeof(struct op_frame) == 24, "op_frame layout");
_Static_assert(sizeof(struct op_unwind_rule) == 8, "op_unwind_rule layout");
_Static_assert(sizeof(struct op_mapping_key) == 16, "op_mapping_key layout");
_Static_assert(sizeof(struct op_mapping_value) == 32, "op_mapping_value layout");
_Static_assert(sizeof(struct op_interp_proc) == 24 * OP_INTERP_MAX_RANGES, "op_interp_proc layout");
_Static_assert(sizeof(struct op_table_info) == 32, "op_table_info layout");
_Static_assert(sizeof(struct op_delta_page) == 6 * OP_PAGE_DELTAS, "op_delta_page layout");
_Static_assert(sizeof(struct op_unknown_event) == 16, "op_unknown_event layout");
_Static_assert(sizeof(struct op_mmap_event) == 64, "op_mmap_event layout");
_Static_assert(sizeof(struct op_event_header) == 8, "op_event_header layout");
_Static_assert(sizeof(struct op_proc_event) == 40, "op_proc_event layout");
_Static_assert(sizeof(struct op_exec_event) == 40 + OP_EXEC_PATH_LEN, "op_exec_event layout");
_Static_assert(sizeof(struct op_trace) == 64, "op_trace header layout");
_Static_assert(sizeof(struct op_offcpu_end) == 32, "op_offcpu_end layout");
_Static_assert(sizeof(struct op_stack_copy) == 160, "op_stack_copy layout");
_Static_assert(__builtin_offsetof(struct op_stack_copy, flags) ==
		   __builtin_offsetof(struct op_trace, flags),
	       "op_stack_copy header as op_trace's");
/* The arrays after the headers stay 8-byte aligned. */
_Static_assert(sizeof(struct op_trace) % 8 == 0 && sizeof(struct op_frame) % 8 == 0,
	       "op_trace alignment");
_Static_assert(OP_TRACE_MAX_SIZE == 64 + 8 * (OP_MAX_KERNEL_FRAMES + 1) + 24 * OP_MAX_USER_FRAMES,
	       "op_trace size");
_Static_assert(OP_STACK_COPY_MAX_SIZE ==
		   160 + 8 * (OP_MAX_KERNEL_FRAMES + 1) + OP_STACK_COPY_MAX + OP_STACK_COPY_GO_MAX,
	       "op_stack_copy size");
_Static_assert(__builtin_offsetof(struct op_stack_copy, go_g) == 120 &&
		   __builtin_offsetof(struct op_stack_copy, go_sched_bp) == 152,
	       "op_stack_copy Go switch fields");

#endif
