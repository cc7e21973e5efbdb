// SPDX-License-Identifier: Apache-2.0
/*
 * The Perl walker (bpf/include/omniprof/interp/perl_walk.h, through its
 * plain-C build src/interp/perl/perl_unwind.c, driven by
 * user_unwind__walk() as the sampler drives it) over memory built here by
 * hand with the real 5.36 layout (perl_layout.c): a machine stack with frame
 * pointers whose runops frames are replaced by the Perl frames each runops
 * call runs, in order, interleaved with the native frames between (sort's
 * C code, call_sv); lines from PL_curcop and each context's blk_oldcop; the
 * interpreter found through the thread-local PL_current_context, or
 * PL_curinterp for the main thread only; a bad pointer ends the walk with
 * one OP_UNWIND_ERR_PERL error frame; blocks and loops between subs are
 * skipped; a runops frame with no Perl frame left stays native.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interp/perl/perl_layout.h"
#include "interp/perl/perl_unwind.h"
#include "unwind/user_unwind.h"

/* "User memory": one readable image; everything else faults. */
#define MEM_BASE 0x7f0000000000ull
#define MEM_SIZE 0x40000
#define STACK	 (MEM_BASE + 0x1000) /* machine stack: frame records */
#define TP	 (MEM_BASE + 0x3008) /* the walked thread's thread pointer */
#define GLOBALS	 (MEM_BASE + 0x3800) /* PL_curinterp */
#define INTERP	 (MEM_BASE + 0x4000) /* struct interpreter */
#define SI_MAIN	 (MEM_BASE + 0x5000) /* stackinfos */
#define SI_SORT	 (MEM_BASE + 0x5100)
#define CX_MAIN	 (MEM_BASE + 0x6000)  /* context stacks */
#define CX_SORT	 (MEM_BASE + 0x20000) /* room for 1000 contexts before it */
#define COPS	 (MEM_BASE + 0x30000) /* COP i at COPS + 0x40 * i, line 100 + i */
#define CVS	 (MEM_BASE + 0x38000) /* CV i at CVS + 0x20 * i, body CVS + 0x4000 + ... */
#define BAD_PTR	 0xdead0000ull

/* Code: the runops loop, pp functions, sort's C code, perl_run, main. */
#define RUNOPS_START 0x600000ull
#define RUNOPS_END   0x600100ull
#define RUNOPS_RA    0x600010ull
#define PP_PC	     0x610000ull
#define SORTCV_RA    0x620010ull
#define PPSORT_RA    0x620100ull
#define CALLSV_RA    0x630010ull
#define XSUB_RA	     0x630100ull
#define PERLRUN_RA   0x640010ull
#define MAIN_RA	     0x400100ull
#define DOCATCH_RA   0x650010ull
#define JMPENVS	     (MEM_BASE + 0x3900) /* JMPENVs: docatch's, the one before it, perl_run's */

static uint8_t mem[MEM_SIZE];
static const struct perl_layout *L;
static struct op_interp_proc runops_ranges;

static int mem_read(void *ctx, void *dst, size_t size, uint64_t addr)
{
	(void)ctx;
	if (addr < MEM_BASE || addr - MEM_BASE > MEM_SIZE || size > MEM_SIZE - (addr - MEM_BASE))
		return -14;
	memcpy(dst, &mem[addr - MEM_BASE], size);
	return 0;
}

static void fp_rule(void *ctx, uint32_t pid, uint64_t pc, struct op_unwind_rule *rule)
{
	(void)ctx;
	(void)pid;
	(void)pc;
	*rule = (struct op_unwind_rule){
	    .cmd = OP_RULE_CFA, .cfa_base = OP_CFA_RBP, .cfa_offset = 16, .fp_offset = -16};
}

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(&mem[addr - MEM_BASE], &v, sizeof(v));
}

static void put32(uint64_t addr, uint32_t v)
{
	memcpy(&mem[addr - MEM_BASE], &v, sizeof(v));
}

/* Frame records for return addresses ras[0 .. n), innermost first; returns the first's rbp. */
static uint64_t build_stack(const uint64_t *ras, int n)
{
	uint64_t fp = STACK + 0x100;

	for (int i = 0; i < n; i++) {
		put64(fp + 0x40 * i, i + 1 < n ? fp + 0x40 * (i + 1) : 0);
		put64(fp + 0x40 * i + 8, ras[i]);
	}
	return fp;
}

static uint64_t cop(int i)
{
	uint64_t c = COPS + 0x40 * (uint64_t)i;

	put32(c + L->bpf.cop_line, 100 + (uint32_t)i);
	return c;
}

/* CV i: its body pointer (sv_any) is the fingerprint the walker reads. */
static uint64_t cv(int i)
{
	uint64_t c = CVS + 0x20 * (uint64_t)i;

	put64(c + L->sv_any, CVS + 0x4000 + 0x80 * (uint64_t)i);
	return c;
}

enum { T_BLOCK = 2, T_SUB = OP_PERL_CXT_SUB, T_EVAL = OP_PERL_CXT_EVAL };

/* Context ix of the stack at cxstack: type, CV (subs), retop, oldcop. */
static void put_cx(uint64_t cxstack, int ix, int type, uint64_t cvp, uint64_t retop,
		   uint64_t oldcop)
{
	uint64_t cx = cxstack + (uint64_t)ix * L->bpf.cx_size;

	mem[cx - MEM_BASE + L->bpf.cx_type] = (uint8_t)type;
	put64(cx + L->bpf.cx_oldcop, oldcop);
	put64(cx + L->bpf.cx_sub_retop, retop);
	put64(cx + L->bpf.cx_sub_cv, cvp);
}

static void put_si(uint64_t si, uint64_t cxstack, int32_t cxix, uint64_t prev, int32_t type)
{
	put64(si + L->bpf.si_cxstack, cxstack);
	put64(si + L->bpf.si_prev, prev);
	put32(si + L->bpf.si_cxix, (uint32_t)cxix);
	put32(si + L->bpf.si_type, (uint32_t)type);
}

/* The interpreter: PL_curcop, PL_curstackinfo; in the thread's TLS and in PL_curinterp. */
static void put_interp(uint64_t curcop, uint64_t curstackinfo, struct op_perl_proc *proc)
{
	put64(INTERP + L->bpf.interp_curcop, curcop);
	put64(INTERP + L->bpf.interp_curstackinfo, curstackinfo);
	put64(INTERP + L->bpf.interp_op, 0x7777); /* PL_op: an op runs */
	put64(TP - 8, INTERP);
	put64(GLOBALS, INTERP);
	memset(proc, 0, sizeof(*proc));
	proc->tls_context = -8;
	proc->curinterp = GLOBALS;
	proc->off = L->bpf;
	proc->version = 5 << 8 | 36;
	proc->threaded = 1;
}

static struct user_unwind_result walk(const struct op_perl_proc *proc, uint64_t thread_ptr,
				      bool main_thread, uint64_t fp, struct op_frame *frames,
				      uint32_t max, struct perl_unwind *pu)
{
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};

	memset(pu, 0, sizeof(*pu));
	pu->proc = proc;
	pu->thread_ptr = thread_ptr;
	pu->main_thread = main_thread;
	return user_unwind__walk(&ops,
				 &(struct user_unwind_interp){
				     &runops_ranges, {[OP_INTERP_PERL] = perl_unwind__runtime(pu)}},
				 42, PP_PC, STACK, fp, frames, max);
}

static void assert_native(const struct op_frame *f, uint64_t addr)
{
	assert_int_equal(f->kind, OP_FRAME_NATIVE);
	assert_int_equal(f->addr, addr);
}

static void assert_sub(const struct op_frame *f, int cv_index, uint32_t line)
{
	assert_int_equal(f->kind, OP_FRAME_PERL);
	assert_int_equal(f->addr, CVS + 0x20 * (uint64_t)cv_index);
	assert_int_equal(f->data, CVS + 0x4000 + 0x80 * (uint64_t)cv_index);
	assert_int_equal(f->aux, line);
}

static void assert_cop_frame(const struct op_frame *f, uint64_t data, int cop_index)
{
	assert_int_equal(f->kind, OP_FRAME_PERL);
	assert_int_equal(f->data, data);
	assert_int_equal(f->addr, COPS + 0x40 * (uint64_t)cop_index);
	assert_int_equal(f->aux, 100 + cop_index);
}

static int setup(void **state)
{
	(void)state;
	memset(mem, 0, sizeof(mem));
	L = perl_layout__find(36, true);
	assert_non_null(L);
	memset(&runops_ranges, 0, sizeof(runops_ranges));
	runops_ranges.ranges[0] =
	    (struct op_interp_range){RUNOPS_START, RUNOPS_END, OP_INTERP_PERL, 0};
	return 0;
}

/*
 * main program (cop 0) -> build (cv 1, called at cop 1 in main... ) -> a
 * block -> row (cv 2) -> sort { by_cmp } (a SORT stackinfo) -> by_cmp (cv 3,
 * retop NULL: its own runops call) -> cell (cv 4), running cop 9.
 * Native stack: pp_x, runops (sort's), sortcv, pp_sort, runops (main),
 * perl_run, main.
 */
static void build_sort_case(struct op_perl_proc *proc, uint64_t *fp)
{
	const uint64_t ras[] = {RUNOPS_RA, SORTCV_RA, PPSORT_RA, RUNOPS_RA, PERLRUN_RA, MAIN_RA};

	/* Main stackinfo: build at cop 1 of the main program, row called at cop 2 of build,
	 * a block in row at cop 3, sort called at cop 4 of row. */
	put_cx(CX_MAIN, 0, T_SUB, cv(1), 0x1111, cop(1));
	put_cx(CX_MAIN, 1, T_SUB, cv(2), 0x2222, cop(2));
	put_cx(CX_MAIN, 2, T_BLOCK, 0, 0, cop(3));
	put_si(SI_MAIN, CX_MAIN, 2, 0, OP_PERL_SI_MAIN);
	/* Sort's stackinfo: by_cmp (retop NULL) pushed at cop 4, cell called at cop 5 of by_cmp. */
	put_cx(CX_SORT, 0, T_SUB, cv(3), 0, cop(4));
	put_cx(CX_SORT, 1, T_SUB, cv(4), 0x4444, cop(5));
	put_si(SI_SORT, CX_SORT, 1, SI_MAIN, 3);
	put_interp(cop(9), SI_SORT, proc);
	*fp = build_stack(ras, 6);
}

static void test_sort_nests(void **state)
{
	struct op_perl_proc proc;
	struct op_frame f[32];
	struct perl_unwind pu;
	struct user_unwind_result r;
	uint64_t fp;

	(void)state;
	build_sort_case(&proc, &fp);
	r = walk(&proc, TP, false, fp, f, 32, &pu);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 10);
	assert_native(&f[0], PP_PC);
	assert_sub(&f[1], 4, 109); /* cell at PL_curcop */
	assert_sub(&f[2], 3, 105); /* by_cmp where it called cell */
	assert_native(&f[3], SORTCV_RA);
	assert_native(&f[4], PPSORT_RA);
	assert_sub(&f[5], 2, 104); /* row at the sort */
	assert_sub(&f[6], 1, 102); /* build where it called row */
	assert_cop_frame(&f[7], OP_PERL_DATA_MAIN, 1);
	assert_native(&f[8], PERLRUN_RA);
	assert_native(&f[9], MAIN_RA);
	assert_int_equal(pu.stats[OP_PERL_STAT_WALKS], 1);
	assert_int_equal(pu.stats[OP_PERL_STAT_FRAMES], 5);
	assert_int_equal(pu.stats[OP_PERL_STAT_READ_ERR], 0);
}

/*
 * sort with a named comparator (MULTICALL): its sub context stays on sort's
 * stackinfo for the whole sort. Sampled in sort's C code between two calls
 * (PL_op NULL, no runops frame of the comparator on the stack), the
 * comparator is no frame and the outer runops frame keeps its subs; sampled
 * in the comparator (PL_op set), the comparator is its runops frame's.
 */
static void test_sort_multicall_between_calls(void **state)
{
	const uint64_t between[] = {PPSORT_RA, RUNOPS_RA, PERLRUN_RA, MAIN_RA};
	const uint64_t inside[] = {RUNOPS_RA, SORTCV_RA, PPSORT_RA, RUNOPS_RA, PERLRUN_RA, MAIN_RA};
	struct op_perl_proc proc;
	struct op_frame f[32];
	struct perl_unwind pu;
	struct user_unwind_result r;
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};
	uint64_t fp;

	(void)state;
	put_cx(CX_MAIN, 0, T_SUB, cv(1), 0x1111, cop(1));
	put_si(SI_MAIN, CX_MAIN, 0, 0, OP_PERL_SI_MAIN);
	put_cx(CX_SORT, 0, T_SUB | L->bpf.cxp_multicall, cv(3), 0, cop(4));
	put_si(SI_SORT, CX_SORT, 0, SI_MAIN, 3);
	/* Between calls sort has restored PL_curcop: the sort statement. */
	put_interp(cop(4), SI_SORT, &proc);
	put64(INTERP + L->bpf.interp_op, 0);
	fp = build_stack(between, 4);
	memset(&pu, 0, sizeof(pu));
	pu.proc = &proc;
	pu.thread_ptr = TP;
	r = user_unwind__walk(&ops,
			      &(struct user_unwind_interp){
				  &runops_ranges, {[OP_INTERP_PERL] = perl_unwind__runtime(&pu)}},
			      42, SORTCV_RA - 4, STACK, fp, f, 32);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 6);
	assert_native(&f[0], SORTCV_RA - 4);
	assert_native(&f[1], PPSORT_RA);
	assert_sub(&f[2], 1, 104); /* build at the sort */
	assert_cop_frame(&f[3], OP_PERL_DATA_MAIN, 1);
	assert_native(&f[4], PERLRUN_RA);
	/* In the comparator: PL_op set, the comparator is a frame. */
	put64(INTERP + L->bpf.interp_op, 0x7777);
	put64(INTERP + L->bpf.interp_curcop, cop(9));
	fp = build_stack(inside, 6);
	r = walk(&proc, TP, false, fp, f, 32, &pu);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 8);
	assert_sub(&f[1], 3, 109);
	assert_native(&f[2], SORTCV_RA);
	assert_native(&f[3], PPSORT_RA);
	assert_sub(&f[4], 1, 104);
	assert_cop_frame(&f[5], OP_PERL_DATA_MAIN, 1);
	/* In the comparator's runops loop as it ends (PL_op NULL, the loop the
	 * sample's leaf): the comparator is still that runops frame's. */
	put64(INTERP + L->bpf.interp_op, 0);
	fp = build_stack(inside + 1, 5);
	memset(&pu, 0, sizeof(pu));
	pu.proc = &proc;
	pu.thread_ptr = TP;
	r = user_unwind__walk(&ops,
			      &(struct user_unwind_interp){
				  &runops_ranges, {[OP_INTERP_PERL] = perl_unwind__runtime(&pu)}},
			      42, RUNOPS_START + 8, STACK, fp, f, 32);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 7);
	assert_sub(&f[0], 3, 109);
	assert_native(&f[1], SORTCV_RA);
	assert_native(&f[2], PPSORT_RA);
	assert_sub(&f[3], 1, 104);
	assert_cop_frame(&f[4], OP_PERL_DATA_MAIN, 1);
}

/* Without the thread-local context: PL_curinterp serves the main thread only. */
static void test_curinterp_main_thread_only(void **state)
{
	struct op_perl_proc proc;
	struct op_frame f[32];
	struct perl_unwind pu;
	struct user_unwind_result r;
	uint64_t fp;

	(void)state;
	build_sort_case(&proc, &fp);
	proc.tls_context = 0;
	r = walk(&proc, TP, true, fp, f, 32, &pu);
	assert_int_equal(r.n_frames, 10);
	assert_sub(&f[1], 4, 109);
	r = walk(&proc, TP, false, fp, f, 32, &pu);
	assert_int_equal(r.n_frames, 7); /* all native */
	for (uint32_t i = 0; i < r.n_frames; i++)
		assert_int_equal(f[i].kind, OP_FRAME_NATIVE);
	assert_int_equal(pu.stats[OP_PERL_STAT_NO_INTERP], 1);
	/* Another thread whose TLS holds no interpreter: native too. */
	proc.tls_context = -8;
	r = walk(&proc, TP + 0x100, false, fp, f, 32, &pu);
	assert_int_equal(r.n_frames, 7);
	assert_int_equal(pu.stats[OP_PERL_STAT_NO_INTERP], 1);
}

/*
 * call_sv in one stackinfo: main -> outer (cv 1) -> XS code -> call_sv ->
 * cb (cv 2, retop NULL) -> an eval (string, running cop 8) -> inner (cv 3).
 * Native: pp_x, runops (call_sv's), callsv, xsub, runops (main), perl_run, main.
 */
static void test_call_sv_and_eval(void **state)
{
	const uint64_t ras[] = {RUNOPS_RA, CALLSV_RA, XSUB_RA, RUNOPS_RA, PERLRUN_RA, MAIN_RA};
	struct op_perl_proc proc;
	struct op_frame f[32];
	struct perl_unwind pu;
	struct user_unwind_result r;
	uint64_t fp;

	(void)state;
	put_cx(CX_MAIN, 0, T_SUB, cv(1), 0x1111, cop(1));
	put_cx(CX_MAIN, 1, T_SUB, cv(2), 0, cop(2));
	put_cx(CX_MAIN, 2, T_EVAL, 0, 0x3333, cop(3));
	put_cx(CX_MAIN, 3, T_SUB, cv(3), 0x4444, cop(8));
	put_si(SI_MAIN, CX_MAIN, 3, 0, OP_PERL_SI_MAIN);
	put_interp(cop(9), SI_MAIN, &proc);
	fp = build_stack(ras, 6);
	r = walk(&proc, TP, false, fp, f, 32, &pu);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 10);
	assert_native(&f[0], PP_PC);
	assert_sub(&f[1], 3, 109);
	assert_cop_frame(&f[2], OP_PERL_DATA_EVAL, 8); /* the eval, at its code's cop */
	assert_sub(&f[3], 2, 103);
	assert_native(&f[4], CALLSV_RA);
	assert_native(&f[5], XSUB_RA);
	assert_sub(&f[6], 1, 102);
	assert_cop_frame(&f[7], OP_PERL_DATA_MAIN, 1);
	assert_native(&f[8], PERLRUN_RA);
	assert_native(&f[9], MAIN_RA);
}

/* A runops frame with no Perl frame left (the main program's only, say) stays native. */
static void test_runops_without_frames(void **state)
{
	const uint64_t ras[] = {RUNOPS_RA, XSUB_RA, RUNOPS_RA, PERLRUN_RA, MAIN_RA};
	struct op_perl_proc proc;
	struct op_frame f[32];
	struct perl_unwind pu;
	struct user_unwind_result r;
	uint64_t fp;

	(void)state;
	put_si(SI_MAIN, CX_MAIN, -1, 0, OP_PERL_SI_MAIN);
	put_interp(cop(7), SI_MAIN, &proc);
	fp = build_stack(ras, 5);
	r = walk(&proc, TP, false, fp, f, 32, &pu);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 6);
	assert_native(&f[0], PP_PC);
	assert_cop_frame(&f[1], OP_PERL_DATA_MAIN, 7); /* the program, at PL_curcop */
	assert_native(&f[2], XSUB_RA);
	assert_native(&f[3], RUNOPS_RA);
	assert_native(&f[4], PERLRUN_RA);
	assert_int_equal(pu.stats[OP_PERL_STAT_RUNOPS_EMPTY], 1);
}

/* 1000 subs with 3 blocks between each two: every sub, in order, up to the frame budget. */
static void test_deep_with_blocks(void **state)
{
	const uint64_t ras[] = {PERLRUN_RA, MAIN_RA};
	struct op_perl_proc proc;
	static struct op_frame f[OP_MAX_USER_FRAMES];
	struct perl_unwind pu;
	struct user_unwind_result r;
	int ix = 0;

	(void)state;
	for (int i = 0; i < 250; i++) {
		put_cx(CX_MAIN, ix++, T_SUB, cv(i % 64), 0x1000, cop(i % 64));
		for (int b = 0; b < 3; b++)
			put_cx(CX_MAIN, ix++, T_BLOCK, 0, 0, cop(0));
	}
	put_si(SI_MAIN, CX_MAIN, ix - 1, 0, OP_PERL_SI_MAIN);
	put_interp(cop(70), SI_MAIN, &proc);
	build_stack(ras, 2);
	/* The leaf is in the runops loop itself. */
	{
		struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};

		memset(&pu, 0, sizeof(pu));
		pu.proc = &proc;
		pu.thread_ptr = TP;
		r = user_unwind__walk(
		    &ops,
		    &(struct user_unwind_interp){&runops_ranges,
						 {[OP_INTERP_PERL] = perl_unwind__runtime(&pu)}},
		    42, RUNOPS_START + 8, STACK, STACK + 0x100, f, OP_MAX_USER_FRAMES);
	}
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 250 + 1 + 2);
	for (int i = 0; i < 250; i++)
		assert_sub(&f[i], (249 - i) % 64, i ? 100 + (uint32_t)((250 - i) % 64) : 170);
	assert_cop_frame(&f[250], OP_PERL_DATA_MAIN, 0);
	assert_native(&f[251], PERLRUN_RA);
}

/* A context stack pointer that cannot be read: one error frame ends the walk. */
static void test_bad_pointer_stops_with_error(void **state)
{
	struct op_perl_proc proc;
	struct op_frame f[32];
	struct perl_unwind pu;
	struct user_unwind_result r;
	uint64_t fp;

	(void)state;
	build_sort_case(&proc, &fp);
	put_si(SI_MAIN, BAD_PTR, 2, 0, OP_PERL_SI_MAIN);
	r = walk(&proc, TP, false, fp, f, 32, &pu);
	assert_int_equal(r.error, OP_UNWIND_ERR_PERL);
	assert_int_equal(r.n_frames, 6);
	assert_sub(&f[1], 4, 109);
	assert_sub(&f[2], 3, 105);
	assert_native(&f[3], SORTCV_RA);
	assert_native(&f[4], PPSORT_RA);
	assert_int_equal(f[5].kind, OP_FRAME_ERROR);
	assert_int_equal(f[5].addr, OP_UNWIND_ERR_PERL);
	assert_int_equal(pu.stats[OP_PERL_STAT_READ_ERR], 1);
}

/* A stackinfo chain that loops (si_prev pointing back) stops within its bound. */
static void test_stackinfo_loop_bounded(void **state)
{
	const uint64_t ras[] = {RUNOPS_RA, RUNOPS_RA, RUNOPS_RA, PERLRUN_RA, MAIN_RA};
	struct op_perl_proc proc;
	struct op_frame f[128];
	struct perl_unwind pu;
	struct user_unwind_result r;
	uint64_t fp;

	(void)state;
	put_si(SI_MAIN, CX_MAIN, -1, SI_SORT, 3);
	put_si(SI_SORT, CX_SORT, -1, SI_MAIN, 3);
	put_interp(cop(1), SI_SORT, &proc);
	fp = build_stack(ras, 5);
	r = walk(&proc, TP, false, fp, f, 128, &pu);
	assert_true(r.n_frames <= 128);
	assert_int_equal(r.error, OP_UNWIND_ERR_PERL);
	assert_int_equal(f[r.n_frames - 1].kind, OP_FRAME_ERROR);
}

/*
 * An eval block in sort's block comparator: docatch() pushes a JMPENV (J),
 * the eval context (cur_top_env J) and runs the body in a runops call of
 * its own. J's previous JMPENV has je_mustcatch set (sort set it) and is
 * not the first. Native stack: pp_x, runops (docatch's), docatch, runops
 * (the comparator's: no frame of its own), sortcv, pp_sort, runops (main),
 * perl_run, main. The eval's runops frame ends at the eval; the
 * comparator's stays native and does not take build.
 */
static void test_docatch_eval(void **state)
{
	const uint64_t ras[] = {RUNOPS_RA, DOCATCH_RA, RUNOPS_RA,  SORTCV_RA,
				PPSORT_RA, RUNOPS_RA,  PERLRUN_RA, MAIN_RA};
	const uint64_t j = JMPENVS, prev = JMPENVS + 0x100, first = JMPENVS + 0x200;
	struct op_perl_proc proc;
	struct op_frame f[32];
	struct perl_unwind pu;
	struct user_unwind_result r;
	uint64_t fp;

	(void)state;
	put_cx(CX_MAIN, 0, T_SUB, cv(1), 0x1111, cop(1));
	put_si(SI_MAIN, CX_MAIN, 0, 0, OP_PERL_SI_MAIN);
	put_cx(CX_SORT, 0, T_EVAL, 0, 0x3333, cop(4));
	put64(CX_SORT + L->bpf.cx_eval_top_env, j);
	put_cx(CX_SORT, 1, T_SUB, cv(4), 0x4444, cop(5));
	put_si(SI_SORT, CX_SORT, 1, SI_MAIN, 3);
	put64(j, prev);
	put64(prev, first);
	mem[prev - MEM_BASE + L->je_mustcatch] = 1;
	put_interp(cop(9), SI_SORT, &proc);
	proc.je_mustcatch = L->je_mustcatch;
	fp = build_stack(ras, 8);
	r = walk(&proc, TP, false, fp, f, 32, &pu);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 11);
	assert_native(&f[0], PP_PC);
	assert_sub(&f[1], 4, 109);
	assert_cop_frame(&f[2], OP_PERL_DATA_EVAL, 5);
	assert_native(&f[3], DOCATCH_RA);
	assert_native(&f[4], RUNOPS_RA); /* the comparator's runops call: no frame */
	assert_native(&f[5], SORTCV_RA);
	assert_native(&f[6], PPSORT_RA);
	assert_sub(&f[7], 1, 104);
	assert_cop_frame(&f[8], OP_PERL_DATA_MAIN, 1);
	assert_native(&f[9], PERLRUN_RA);
	/* perl_run's JMPENV (no previous one before PL_start_env's) is not docatch's:
	 * the eval does not end its runops frame's frames, build goes with it. */
	put64(prev, 0);
	r = walk(&proc, TP, false, fp, f, 32, &pu);
	assert_native(&f[3], DOCATCH_RA);
	assert_sub(&f[4], 1, 104);
}

static void test_layout_fits(void **state)
{
	(void)state;
	/* Every row of 5.28 to 5.40, threaded or not, fits the walker's blocks. */
	for (unsigned int minor = 28; minor <= 40; minor += 2) {
		assert_non_null(perl_layout__find(minor, true));
		assert_non_null(perl_layout__find(minor, false));
		assert_true(perl_layout__fits(&perl_layout__find(minor, true)->bpf));
		assert_true(perl_layout__fits(&perl_layout__find(minor, false)->bpf));
	}
	assert_null(perl_layout__find(26, true));
	assert_null(perl_layout__find(37, true)); /* development releases: no row */
	assert_null(perl_layout__find(99, true));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_sort_nests, setup),
	    cmocka_unit_test_setup(test_docatch_eval, setup),
	    cmocka_unit_test_setup(test_sort_multicall_between_calls, setup),
	    cmocka_unit_test_setup(test_curinterp_main_thread_only, setup),
	    cmocka_unit_test_setup(test_call_sv_and_eval, setup),
	    cmocka_unit_test_setup(test_runops_without_frames, setup),
	    cmocka_unit_test_setup(test_deep_with_blocks, setup),
	    cmocka_unit_test_setup(test_bad_pointer_stops_with_error, setup),
	    cmocka_unit_test_setup(test_stackinfo_loop_bounded, setup),
	    cmocka_unit_test(test_layout_fits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
