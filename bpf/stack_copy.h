/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * Samples of processes whose unwind tables are not loaded yet (no pid marker
 * in exe_mappings: a process that just started, or one not read yet) are not
 * guessed at with frame pointers: the user registers and a copy of the stack
 * go to user space (struct op_stack_copy), which unwinds them with the same
 * unwinder once it has read the process's maps (src/engine/stack_copy.c).
 *
 * A kernel-only fragment of bpf/sampler.bpf.c, not a unit nor a shared
 * header: it uses the sampler's statics (the events ring, user_regs(),
 * task_comms(), stat_inc(), process_known(), kernel_stacks) and is included
 * once, after them. It is apart only to keep the copy path in one place.
 */
#ifndef OMNIPROF_BPF_STACK_COPY_H
#define OMNIPROF_BPF_STACK_COPY_H

/* stack_copy_enabled and copy_all_stacks: with the sampler's settings. */

/*
 * The copies' budget, per CPU: a token bucket of bytes and one of copies,
 * refilled at these rates up to one second's worth. Set by user space before
 * load (sampler.c). A sample past it, or past half of the ring buffer, is
 * walked in the kernel with what is known (frame pointers where no table is),
 * counted OP_STAT_STACK_COPY_SKIPPED.
 */
const volatile __u64 copy_budget_bytes = 16 << 20; /* per second */
const volatile __u64 copy_budget_count = 128;	   /* per second */

struct copy_budget {
	__u64 bytes; /* tokens left */
	__u64 count;
	__u64 last_ns; /* last refill; 0: never (full) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct copy_budget);
} copy_budget SEC(".maps");

static __always_inline struct copy_budget *copy_budget__refill(void)
{
	struct copy_budget *cb = bpf_map_lookup_elem(&copy_budget, &(__u32){0});
	__u64 now = bpf_ktime_get_ns(), dt;

	if (!cb)
		return NULL;
	dt = cb->last_ns ? now - cb->last_ns : 1000000000ull;
	if (dt > 1000000000ull)
		dt = 1000000000ull;
	/* Refilled in whole tokens only: a remainder would be lost at each call. */
	if (dt * copy_budget_count >= 1000000000ull || !cb->last_ns) {
		cb->bytes += copy_budget_bytes * dt / 1000000000ull;
		cb->count += copy_budget_count * dt / 1000000000ull;
		if (cb->bytes > copy_budget_bytes)
			cb->bytes = copy_budget_bytes;
		if (cb->count > copy_budget_count)
			cb->count = copy_budget_count;
		cb->last_ns = now;
	}
	return cb;
}

/*
 * Whether a copy of the common size fits in the budget now and one of the
 * largest in the ring buffer under half full (copies are large: they never
 * crowd out ordinary samples). Takes nothing: send_stack_copy() pays for
 * what it sends, and cuts a deeper copy at the bytes left (the user-space
 * walk counts it truncated).
 */
static __always_inline bool copy_budget__allows(void)
{
	struct copy_budget *cb;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) + OP_STACK_COPY_MAX_SIZE >
	    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 2) {
		/* Told apart from the buckets: an agent starved of CPU, not a budget. */
		stat_inc(OP_STAT_STACK_COPY_RING_HALF);
		return false;
	}
	cb = copy_budget__refill();
	return cb && cb->count >= 1 &&
	       cb->bytes >= OP_STACK_COPY_SIZE(OP_MAX_KERNEL_FRAMES + 1, OP_STACK_COPY_COMMON);
}

__noinline int copy_budget_ok(void)
{
	return copy_budget__allows() ? 1 : 0;
}

static __always_inline void copy_budget__pay(long size)
{
	struct copy_budget *cb = bpf_map_lookup_elem(&copy_budget, &(__u32){0});

	if (!cb)
		return;
	cb->count = cb->count >= 1 ? cb->count - 1 : 0;
	cb->bytes = cb->bytes >= (__u64)size ? cb->bytes - size : 0;
}

#define STACK_COPY_PAGE 4096

/* The copy is built here in its final layout (header, kernel frames, stack);
 * the slack lets a page-sized read at any offset below OP_STACK_COPY_MAX stay
 * inside the value, as the verifier requires. */
struct stack_copy_buf {
	struct op_stack_copy c;
	__u8 body[OP_STACK_COPY_MAX_SIZE - sizeof(struct op_stack_copy)];
	__u8 slack[STACK_COPY_PAGE];
};

/* One slot per CPU, indexed by CPU number: per-CPU maps cap values at 32 KiB,
 * and a sample never migrates or nests on its CPU. Sized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_copy_buf);
} stack_copy_scratch SEC(".maps");

/*
 * Whether to copy this sample's stack rather than walk it: the process is not
 * ready (no range holds its pc and it has no pid marker: process_known() in
 * sampler.bpf.c, which also caches the first frame's mapping for the walk).
 * Sets ws->copy_ok, which lets the walk stop for a copy when it meets a frame
 * of a process or mapping not ready; a copy wanted but refused by the budget
 * sets ws->over_budget. regs_ok: the sample has user registers.
 */
static __always_inline bool stack_copy_wanted(struct walk_scratch *ws, __u32 tgid, bool regs_ok,
					      __u64 pc)
{
	if (copy_all_stacks)
		return true;
	if (!stack_copy_enabled || !regs_ok) {
		ws->copy_ok = 0;
		return false;
	}
	/* The budget is asked only when a copy is wanted (lookup_rule asks for 2). */
	ws->copy_ok = 2;
	if (process_known(ws, tgid, pc))
		return false;
	ws->copy_ok = copy_budget_ok();
	ws->over_budget = !ws->copy_ok;
	return ws->copy_ok;
}

struct copy_ctx {
	struct stack_copy_buf *b;
	__u64 sp;
	__u32 pos;   /* bytes walked from sp */
	__u32 len;   /* ... up to the end of the last page read */
	__u32 limit; /* bytes to copy: up to the stack mapping's top */
};

/*
 * The bytes to copy when bpf_find_vma cannot look the stack's mapping up (it
 * only try-locks the mmap lock, which a thread in mmap, mprotect or brk holds
 * for writing: cc1plus's copies sampled in mmap were cut at 128 KiB in deep
 * recursions, issue 17). The main thread's stack began at mm->start_stack,
 * read without the lock: from sp up to the page past it (its outermost frame,
 * _start's, lies below; above it argv and the environment). A thread's
 * stack elsewhere keeps OP_STACK_COPY_COMMON.
 */
static __always_inline __u32 copy_limit_unlocked(struct task_struct *task, __u64 sp)
{
	struct mm_struct *mm = OP_KFIELD(task, task_mm, struct mm_struct *);
	__u64 start = mm ? OP_KFIELD(mm, mm_start_stack, __u64) : 0;

	if (start > sp && start - sp <= OP_STACK_COPY_MAX - STACK_COPY_PAGE)
		return (__u32)(start - sp + STACK_COPY_PAGE);
	return OP_STACK_COPY_COMMON;
}

/*
 * bpf_find_vma's callback: the bytes from sp to the end of its mapping, or
 * to the top of the alternate signal stack that holds sp (Go's gsignal stack
 * lies in Go's heap, whose mapping runs megabytes on: see copy_sig_stack).
 * Decided here, not by the caller, which is inlined twice: the verifier
 * sees the one limit as before.
 */
static long stack_vma_end(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct copy_ctx *x = data;
	__u64 end = OP_KFIELD(vma, vma_vm_end, __u64), alt = OP_KFIELD(task, task_sas_ss_sp, __u64),
	      alt_size = OP_KFIELD(task, task_sas_ss_size, __u64);

	if (alt && x->sp >= alt && x->sp - alt < alt_size && alt_size < end - alt)
		end = alt + alt_size;
	if (end > x->sp)
		x->limit = end - x->sp < OP_STACK_COPY_MAX ? end - x->sp : OP_STACK_COPY_MAX;
	return 0;
}

/*
 * A Go goroutine's stack lies in Go's heap, whose mapping runs megabytes past
 * the stack's top: copied to the mapping's end, a goroutine's 8-32 KiB stack
 * became a 226-512 KiB copy, mostly heap, and a few of them filled the half
 * of the ring copies may use while the reader was slow (the rest were walked
 * by frame pointers: Go's stack switches lost). So where the thread's g names
 * a stack holding sp, the copy ends at its top, g.stack.hi: the goroutine's
 * whole stack, runtime.goexit's frame included. g is r14 in Go code (the
 * register ABI, Go 1.17+), else the thread's TLS slot at fs - 8 (Go's own
 * slot in a binary it linked). Trusted only as Go makes it: g starts with
 * stack.lo and stack.hi (lo <= sp < hi, a power-of-two size: Go allocates
 * goroutine stacks so) and stackguard0 (lo plus the guard, or one of the
 * marks near the top of the address space). Anything else keeps the limit: a
 * wrong guess could only shorten the copy (the walk counts it past the copy).
 */
struct go_g_stack {
	__u64 lo;
	__u64 hi;
	__u64 guard0;
};

static __always_inline bool go_stack_top(__u64 g, __u64 sp, __u64 *top)
{
	struct go_g_stack s;
	__u64 size;

	if (!g || bpf_probe_read_user(&s, sizeof(s), (const void *)g))
		return false;
	size = s.hi - s.lo;
	if (s.lo > sp || sp >= s.hi || size < 2048 || size > (1ull << 30) || (size & (size - 1)))
		return false;
	if (s.guard0 - s.lo >= 4096 && s.guard0 < 0xfffffffffffff000ull)
		return false;
	*top = s.hi;
	return true;
}

/* Shortens x->limit to the goroutine's stack when the thread runs one (above). */
static __always_inline void copy_limit_go_stack(struct bpf_perf_event_data *ctx,
						struct task_struct *task, struct copy_ctx *x,
						__u64 tls_base)
{
	__u64 r14 = 0, g = 0, top = 0;
	const struct op_pt_regs *regs;

	if (in_user_mode(ctx)) {
		r14 = OP_CTX_REGS(ctx)->r14;
	} else {
		regs = (const struct op_pt_regs *)bpf_task_pt_regs(task);
		if (regs)
			r14 = OP_TASK_REG(regs, r14);
	}
	if (!go_stack_top(r14, x->sp, &top)) {
		if (tls_base < 8 ||
		    bpf_probe_read_user(&g, sizeof(g), (const void *)(tls_base - 8)) ||
		    !go_stack_top(g, x->sp, &top))
			return;
	}
	if (top - x->sp < x->limit)
		x->limit = top - x->sp;
}

/*
 * One page (the first: up to its end) per round, up to x->limit. A page that
 * cannot be read is zeroed and the walk goes on: inside a stack it is one
 * never touched (a large local array; the read cannot fault it in), past the
 * stack's top nothing follows, and len ends at the last page read.
 */
static long copy_stack_page(__u32 index, void *data)
{
	struct copy_ctx *x = data;
	__u64 addr = x->sp + x->pos;
	/* 64-bit so the register checked is the register passed (no 32-bit copy). */
	__u64 off = x->pos, n = STACK_COPY_PAGE - (addr & (STACK_COPY_PAGE - 1));
	__u64 nk = x->b->c.n_kernel;

	(void)index;
	if (off >= x->limit || off >= OP_STACK_COPY_MAX)
		return 1;
	if (n > x->limit - off)
		n = x->limit - off;
	/* Bounds the verifier can follow (off < MAX, 0 < n <= one page), on opaque
	 * copies so the compiler cannot drop checks it proves redundant. */
	__asm__ volatile("" : "+r"(off));
	__asm__ volatile("" : "+r"(n));
	__asm__ volatile("" : "+r"(nk));
	off &= OP_STACK_COPY_MAX - 1;
	if (n == 0 || n > STACK_COPY_PAGE || nk > OP_MAX_KERNEL_FRAMES + 1)
		return 1;
	x->pos += n;
	/* The stack goes after the kernel frames. bpf_probe_read_user zeroes the
	 * destination when it fails. */
	if (!bpf_probe_read_user(&x->b->body[nk * 8 + off], n, (const void *)addr))
		x->len = x->pos;
	return 0;
}

/*
 * A copy taken on a Go g0 stack (runtime.systemstack, mcall, asmcgocall: a
 * cgo call or the runtime's own work) holds g0's stack only: the goroutine it
 * switched away from is found at walk time, in user space, from g.m.curg.sched,
 * and by then the goroutine has run on. So its switch is captured now
 * (struct op_stack_copy's go_*): the checks of OP_RULE_GO_SWITCH
 * (op_go_switch__curg: g from TLS is m.g0, m.curg another goroutine of that
 * m), whatever the pc's rule (not known before the walk), then curg.sched's
 * sp and bp where curg's stack holds sched.sp (go_stack_top). Seven reads
 * that fail at the first or second in a thread that is not Go's. True with
 * the fields set and *top the goroutine stack's top.
 */
static __always_inline bool copy_go_switch(struct op_stack_copy *c, __u64 *top)
{
	__u64 g = 0, m = 0, sp = 0, bp = 0,
	      curg =
		  op_go_switch__curg(NULL, c->tls_base, OP_GO_G_TLS_OFFSET, OP_GO_M_CURG, &g, &m);

	if (!curg ||
	    bpf_probe_read_user(&sp, sizeof(sp),
				(const void *)(curg + OP_GO_G_SCHED + OP_GO_GOBUF_SP)) ||
	    bpf_probe_read_user(&bp, sizeof(bp),
				(const void *)(curg + OP_GO_G_SCHED + OP_GO_GOBUF_BP)) ||
	    !go_stack_top(curg, sp, top))
		return false;
	c->go_g = g;
	c->go_m = m;
	c->go_curg = curg;
	c->go_sched_sp = sp;
	c->go_sched_bp = bp;
	return true;
}

/*
 * The goroutine's stack from sched.sp, after the copied stack (at most
 * OP_STACK_COPY_GO_MAX, and what the budget has left): one read, the stack
 * being all in use from sched.sp up. Returns the bytes added (0: none, and
 * the switch is not sent: the walk falls back to the live process).
 */
static __always_inline __u32 copy_go_stack(struct stack_copy_buf *b, __u64 top, __u64 room)
{
	__u64 nk = b->c.n_kernel, len = b->c.stack_len, off, n = top - b->c.go_sched_sp;

	if (n > OP_STACK_COPY_GO_MAX)
		n = OP_STACK_COPY_GO_MAX;
	if (n > room)
		n = room;
	/* Bounds the verifier can follow, on opaque copies (see copy_stack_page). */
	__asm__ volatile("" : "+r"(nk));
	__asm__ volatile("" : "+r"(len));
	__asm__ volatile("" : "+r"(n));
	if (nk > OP_MAX_KERNEL_FRAMES + 1 || len > OP_STACK_COPY_MAX || n == 0 ||
	    n > OP_STACK_COPY_GO_MAX)
		return 0;
	off = nk * 8 + len;
	if (bpf_probe_read_user(&b->body[off], n, (const void *)b->c.go_sched_sp))
		return 0;
	return (__u32)n;
}

/*
 * A sample on a signal's alternate stack (sigaltstack: Go runs its handler,
 * runtime.sigtramp, on each m's gsignal stack; C programs may too) is a copy
 * of that stack, which holds the kernel's signal frame but not the stack the
 * signal interrupted: its walk went through the frame's ucontext and stopped
 * at the interrupted frame (`unreadable stack`). So the interrupted stack is
 * copied too, as a Go switch's goroutine is (OP_STACK_COPY_F_SIGNAL). The
 * kernel puts the frame (return address, ucontext, siginfo) just under the
 * top of the alternate stack, below the FPU state, whose size depends on the
 * CPU and kernel: the ucontext is found by its uc_stack, where the kernel
 * saved the thread's alternate stack (ss_sp, ss_size: task_struct's
 * sas_ss_sp and sas_ss_size), with uc_link 0 and small uc_flags, scanned
 * 16 bytes at a time (the frame's alignment) from the top down, at most
 * SIGFRAME_SCAN bytes (AVX-512's state is under 3 KiB). Only samples on an
 * alternate stack pay for the scan.
 */
#define SIGFRAME_SCAN (8 * 1024)

struct sig_scan {
	__u64 top; /* the alternate stack's top, 16-aligned */
	__u64 ss_sp;
	__u64 ss_size;
	__u64 uc; /* the ucontext found (0: none) */
};

/* struct ucontext's first words (x86-64): uc_flags, uc_link, uc_stack. */
struct sig_uc_head {
	__u64 flags;
	__u64 link;
	__u64 ss_sp;
	__u32 ss_flags;
	__u32 pad;
	__u64 ss_size;
};

static long sigframe_find_uc(__u32 index, void *data)
{
	struct sig_scan *s = data;
	__u64 uc = s->top - 16 * ((__u64)index + 1);
	struct sig_uc_head h;

	if (bpf_probe_read_user(&h, sizeof(h), (const void *)uc))
		return 0;
	if (h.ss_sp != s->ss_sp || h.ss_size != s->ss_size || h.link || h.flags >= 256)
		return 0;
	s->uc = uc;
	return 1;
}

/*
 * Whether sp is on the thread's alternate signal stack; *top its top (the
 * copy of that stack ends there).
 */
static __always_inline bool on_sigaltstack(struct task_struct *task, __u64 sp, __u64 *top,
					   struct sig_scan *s)
{
	s->ss_sp = OP_KFIELD(task, task_sas_ss_sp, __u64);
	s->ss_size = OP_KFIELD(task, task_sas_ss_size, __u64);
	if (!s->ss_sp || !s->ss_size || s->ss_size > (1ull << 30) || sp < s->ss_sp ||
	    sp - s->ss_sp >= s->ss_size)
		return false;
	*top = s->ss_sp + s->ss_size;
	s->top = *top & ~15ull;
	return true;
}

/*
 * The stack a signal interrupted, for a copy taken on the alternate stack
 * (above) and built in this CPU's scratch copy (its sp set): go_sched_sp is
 * the interrupted rsp, read from the signal frame's ucontext, the stack
 * copied from it up to its goroutine's top (g.stack.hi of the interrupted
 * r14, Go's g), else its mapping's end, at most OP_STACK_COPY_GO_MAX and
 * room. Returns the bytes copied (go_stack_len; 0: none). A global function,
 * verified once rather than at each of send_stack_copy's two inlined sites.
 */
__noinline int copy_sig_stack(__u64 room)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct stack_copy_buf *b = bpf_map_lookup_elem(&stack_copy_scratch, &cpu);
	struct task_struct *task = bpf_get_current_task_btf();
	struct copy_ctx vma = {};
	struct sig_scan s = {};
	__u64 isp = 0, r14 = 0, top = 0;

	if (!b || !on_sigaltstack(task, b->c.sp, &top, &s))
		return 0;
	bpf_loop(SIGFRAME_SCAN / 16, sigframe_find_uc, &s, 0);
	if (!s.uc ||
	    bpf_probe_read_user(&isp, sizeof(isp), (const void *)(s.uc + OP_SIGFRAME_RSP)) ||
	    bpf_probe_read_user(&r14, sizeof(r14), (const void *)(s.uc + OP_SIGFRAME_R14)))
		return 0;
	/* Interrupted on the alternate stack itself: already in the copy. */
	if (!isp || (isp >= s.ss_sp && isp - s.ss_sp < s.ss_size))
		return 0;
	if (!go_stack_top(r14, isp, &top)) {
		vma.sp = isp;
		bpf_find_vma(task, isp, stack_vma_end, &vma, 0);
		if (!vma.limit)
			return 0;
		top = isp + vma.limit;
	}
	b->c.go_sched_sp = isp;
	b->c.go_stack_len = copy_go_stack(b, top, room);
	if (!b->c.go_stack_len) {
		b->c.go_sched_sp = 0;
		return 0;
	}
	b->c.go_flags = OP_STACK_COPY_F_SIGNAL;
	return (int)b->c.go_stack_len;
}

/*
 * Sends the sample as a stack copy (the caller checked the budget). Returns 0
 * when it was handled (sent, or dropped and counted), non-zero when the
 * caller records it as usual: the thread has no user context (kernel
 * thread), or the ring buffer is already half full. A global function: the
 * verifier checks it once, not at each of sample()'s two call sites.
 */
__noinline int send_stack_copy(struct bpf_perf_event_data *ctx, __u32 tgid, __u32 tid)
{
	struct copy_ctx x = {};
	struct copy_budget *cb;
	struct task_struct *task;
	struct op_regs r;
	__u32 cpu = bpf_get_smp_processor_id();
	long n, size;
	__u64 nk, go_top = 0, room;

	task = bpf_get_current_task_btf();
	if (user_regs(ctx, task, &r) || !r.pc)
		return 1;
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) + OP_STACK_COPY_MAX_SIZE >
	    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 2)
		return 1;
	x.b = bpf_map_lookup_elem(&stack_copy_scratch, &cpu);
	if (!x.b)
		return 1;
	x.b->c.hdr.type = OP_EVENT_STACK_COPY;
	x.b->c.hdr.pid = tgid;
	x.b->c.tid = tid;
	x.b->c.cpu = cpu;
	x.b->c.ktime_ns = bpf_ktime_get_ns();
	x.b->c.flags = 0;
	x.b->c.n_kernel = 0;
	x.b->c.reserved = 0;
	x.b->c.reserved2 = 0;
	x.b->c.go_stack_len = 0;
	x.b->c.go_flags = 0;
	x.b->c.go_g = x.b->c.go_m = x.b->c.go_curg = 0;
	x.b->c.go_sched_sp = x.b->c.go_sched_bp = 0;
	task_comms(task, x.b->c.comm, x.b->c.pcomm);
	if (kernel_stacks) {
		n = bpf_get_stack(ctx, x.b->body, 8 * (OP_MAX_KERNEL_FRAMES + 1), 0);
		if (n < 0) {
			stat_inc(OP_STAT_KERNEL_STACK_ERR);
			x.b->c.flags |= OP_TRACE_F_KERNEL_ERROR;
		} else {
			x.b->c.n_kernel = n / sizeof(__u64);
		}
	}
	x.b->c.pc = r.pc;
	x.b->c.sp = r.sp;
	x.b->c.fp = r.fp;
	x.b->c.bx = r.bx; /* OP_RULE_CFA_RBX: ld.so's trampoline, walked in user space */
	x.b->c.tls_base = OP_KFIELD(task, task_fsbase, __u64);
	x.sp = r.sp;
	/* Up to the top of the stack's mapping: the whole stack, not pages past it
	 * (each a failed read). Where the mapping cannot be looked up (its lock
	 * taken: the sampled thread itself in mmap, mprotect or brk holds it for
	 * writing), the main thread's stack up to where it started
	 * (copy_limit_unlocked), else the common size. */
	x.limit = copy_limit_unlocked(task, r.sp);
	bpf_find_vma(task, r.sp, stack_vma_end, &x, 0);
	copy_limit_go_stack(ctx, task, &x, x.b->c.tls_base);
	/* On the alternate signal stack: that stack ends at its top (Go's gsignal
	 * lies in Go's heap, whose mapping runs on). */
	/* The test hook's copies are not budgeted (never asked, never refilled). */
	cb = copy_all_stacks ? NULL : bpf_map_lookup_elem(&copy_budget, &(__u32){0});
	nk = x.b->c.n_kernel & 255;
	if (cb) {
		__u64 head = OP_STACK_COPY_SIZE(nk, 0);
		__u64 room = cb->bytes > head ? cb->bytes - head : 0;

		if (x.limit > room)
			x.limit = room & ~(__u64)(STACK_COPY_PAGE - 1);
	}
	bpf_loop(OP_STACK_COPY_MAX / STACK_COPY_PAGE + 1, copy_stack_page, &x, 0);
	x.b->c.stack_len = x.len;

	nk = x.b->c.n_kernel & 255;
	size = OP_STACK_COPY_SIZE(nk, x.len & (2 * OP_STACK_COPY_MAX - 1));
	room = !cb ? OP_STACK_COPY_GO_MAX : cb->bytes > (__u64)size ? cb->bytes - size : 0;
	/* The stack a signal interrupted, or else a Go switch's goroutine, from what
	 * the budget has left past the copy: one of them (the walk reads a Go switch
	 * past a signal's interrupted stack from the live process). */
	if (copy_sig_stack(room) > 0) {
		size += x.b->c.go_stack_len & (2 * OP_STACK_COPY_GO_MAX - 1);
	} else if (copy_go_switch(&x.b->c, &go_top)) {
		x.b->c.go_stack_len = copy_go_stack(x.b, go_top, room);
		if (x.b->c.go_stack_len) {
			x.b->c.go_flags = OP_STACK_COPY_F_GO;
			size += x.b->c.go_stack_len & (2 * OP_STACK_COPY_GO_MAX - 1);
		}
	}
	if (size > (long)OP_STACK_COPY_MAX_SIZE)
		size = OP_STACK_COPY_MAX_SIZE;
	stat_inc(OP_STAT_STACK_COPIES);
	copy_budget__pay(size);
	if (bpf_ringbuf_output(&events, &x.b->c, size, 0))
		stat_inc(OP_STAT_STACK_COPY_LOST);
	return 0;
}

#endif
