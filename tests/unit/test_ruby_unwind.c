// SPDX-License-Identifier: Apache-2.0
/*
 * The Ruby walker (bpf/include/omniprof/interp/ruby_walk.h, through its
 * plain-C build in user_unwind__walk(), which drives it as the sampler does)
 * over memory built here by hand with the real 3.1 offsets (ruby_layout.c):
 * a machine stack with frame pointers, the thread's DTV and TLS block
 * holding ruby_current_ec, and control frames at the end of the VM stack.
 * Checks which native rb_vm_exec frames are replaced by which Ruby frames
 * (each up to its FINISH frame, C functions' frames with the entry that
 * called them, IFUNC frames not shown), what each frame carries (iseq, the
 * method entry of its local ep, the instruction position), that a thread
 * without an execution context keeps its native frames, and that a bad
 * control frame ends the walk with one clear error frame after the good ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interp/ruby/ruby.h"
#include "interp/ruby/ruby_layout.h"
#include "interp/ruby/ruby_unwind.h"
#include "unwind/user_unwind.h"

#define MEM_BASE 0x7f0000000000ull
#define MEM_SIZE 0x20000
#define STACK	 (MEM_BASE + 0x1000) /* machine stack: frame records */
#define TCB	 (MEM_BASE + 0x3000) /* the thread pointer: TCB, dtv at +8 */
#define DTV	 (MEM_BASE + 0x3400)
#define TLS	 (MEM_BASE + 0x3800) /* libruby's TLS block */
#define GOT	 (MEM_BASE + 0x3c00) /* ruby_current_ec's tls_index */
#define EC	 (MEM_BASE + 0x4000)
#define VM_STACK (MEM_BASE + 0x8000) /* VALUEs, control frames at its end */
#define VM_WORDS 0x800		     /* vm_stack_size: 16 KiB */
#define HEAP	 (MEM_BASE + 0x10000)
#define BAD_PTR	 0xdead0000ull

#define VM_EXEC_START 0x600000ull /* rb_vm_exec */
#define VM_EXEC_END   0x601000ull
#define VM_EXEC_RA    0x600500ull
#define CORE_PC	      0x5f0000ull /* vm_exec_core: native */
#define CEXT_RA	      0x500200ull
#define MAIN_RA	      0x400100ull

#define MODID	     2
#define TLS_OFFSET   8
#define MAGIC_METHOD 0x11110001ull
#define MAGIC_BLOCK  0x22220001ull
#define MAGIC_TOP    0x44440001ull
#define MAGIC_CFUNC  0x55550001ull
#define MAGIC_IFUNC  0x66660001ull
#define MAGIC_DUMMY  0x79990001ull
#define FINISH	     0x20ull
#define CFRAME	     0x80ull
#define LOCAL	     0x2ull

static uint8_t mem[MEM_SIZE];
static const struct ruby_layout *l;
static struct op_interp_proc ranges;
static struct op_rb_proc proc;

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

static uint64_t build_stack(const uint64_t *ras, int n)
{
	uint64_t fp = STACK + 0x100;

	for (int i = 0; i < n; i++) {
		put64(fp + 0x40 * i, i + 1 < n ? fp + 0x40 * (i + 1) : 0);
		put64(fp + 0x40 * i + 8, ras[i]);
	}
	return fp;
}

/* The thread's TLS and execution context; its current frame is control frame `top`
 * (0: the innermost slot) of n, the VM stack ending right after the last. */
static uint64_t cfp_at(int i, int n)
{
	return VM_STACK + VM_WORDS * 8 - (uint64_t)(n - i) * l->off.cfp_size;
}

static void build_ec(int n)
{
	put64(GOT, MODID);
	put64(GOT + 8, TLS_OFFSET);
	put64(TCB + 8, DTV);
	put64(DTV + MODID * 16, TLS);
	put64(TLS + TLS_OFFSET, EC);
	put64(EC + l->off.ec_vm_stack, VM_STACK);
	put64(EC + l->off.ec_vm_stack_size, VM_WORDS);
	put64(EC + l->off.ec_cfp, cfp_at(0, n));
	memset(&proc, 0, sizeof(proc));
	proc.tls_index = GOT;
	proc.tls_mode = OP_RB_TLS_DTV;
	proc.version = 0x301;
	proc.off = l->off;
	memset(&ranges, 0, sizeof(ranges));
	ranges.ranges[0] = (struct op_interp_range){VM_EXEC_START, VM_EXEC_END, OP_INTERP_RUBY, 0};
}

/* Each control frame's env (ep[-2..0]) lives in the heap, 0x100 apart. */
static uint64_t ep_of(int i)
{
	return HEAP + 0x100 * (uint64_t)i + 0x10;
}

/* An iseq at iseq whose body's instructions start at encoded; pc at VALUE pos. */
static void put_iseq(uint64_t iseq, uint64_t body, uint64_t encoded)
{
	put64(iseq + l->off.iseq_body, body);
	put64(body + l->off.body_encoded, encoded);
}

static void put_cfp(int i, int n, uint64_t iseq, uint64_t pc, uint64_t me_cref, uint64_t specval,
		    uint64_t flags)
{
	uint64_t cfp = cfp_at(i, n), ep = ep_of(i);

	put64(cfp + l->off.cfp_pc, pc);
	put64(cfp + l->off.cfp_iseq, iseq);
	put64(cfp + l->off.cfp_ep, ep);
	put64(ep - 16, me_cref);
	put64(ep - 8, specval);
	put64(ep, flags);
}

/* The next walk() reads the VM as a stack copy's walk does: after the sample. */
static bool late_walk;

static struct user_unwind_result walk(uint64_t fp, struct op_frame *frames, uint32_t max,
				      struct ruby_unwind *ru)
{
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};

	memset(ru, 0, sizeof(*ru));
	ru->late = late_walk;
	ru->proc = &proc;
	ru->thread_ptr = TCB;
	ru->read = mem_read;
	return user_unwind__walk(
	    &ops,
	    &(struct user_unwind_interp){&ranges, {[OP_INTERP_RUBY] = ruby_unwind__runtime(ru)}},
	    42, CORE_PC, STACK, fp, frames, max);
}

static void assert_native(const struct op_frame *f, uint64_t addr)
{
	assert_int_equal(f->kind, OP_FRAME_NATIVE);
	assert_int_equal(f->addr, addr);
}

static void assert_ruby(const struct op_frame *f, uint64_t addr, uint64_t data, uint32_t aux)
{
	assert_int_equal(f->kind, OP_FRAME_RUBY);
	assert_int_equal(f->addr, addr);
	assert_int_equal(f->data, data);
	assert_int_equal(f->aux, aux);
}

static int setup(void **state)
{
	(void)state;
	memset(mem, 0, sizeof(mem));
	late_walk = false;
	l = ruby_layout__find(3, 1);
	assert_non_null(l);
	return 0;
}

/*
 * Native: vm_exec_core (leaf), rb_vm_exec, a C extension, rb_vm_exec, main.
 * Control frames, innermost first: block (FINISH: entered from C), the C
 * function that yielded (CFUNC), an IFUNC (not shown), the method holding
 * the block, <main> (FINISH), the VM's dummy frame (FINISH).
 */
static void entries_nest(bool late)
{
	const uint64_t ras[] = {VM_EXEC_RA, CEXT_RA, VM_EXEC_RA, MAIN_RA};
	uint64_t i_block = HEAP + 0x2000, b_block = HEAP + 0x2100, e_block = HEAP + 0x3000;
	uint64_t i_meth = HEAP + 0x2200, b_meth = HEAP + 0x2300, e_meth = HEAP + 0x3400;
	uint64_t i_main = HEAP + 0x2400, b_main = HEAP + 0x2500, e_main = HEAP + 0x3800;
	uint64_t me_meth = HEAP + 0x4000, me_cfunc = HEAP + 0x4100, def_cfunc = HEAP + 0x4200;
	uint64_t cref = HEAP + 0x4300;
	struct op_frame f[32];
	struct ruby_unwind ru;
	struct user_unwind_result r;
	const int n = 6;

	build_ec(n);
	put_iseq(i_block, b_block, e_block);
	put_iseq(i_meth, b_meth, e_meth);
	put_iseq(i_main, b_main, e_main);
	put64(me_cfunc + l->off.me_def, def_cfunc);
	/* The block's ep leads to its method's (local) ep through ep[-1]. */
	put_cfp(0, n, i_block, e_block + 8 * 5, cref, ep_of(3), MAGIC_BLOCK | FINISH);
	put_cfp(1, n, 0, 0, me_cfunc, 0, MAGIC_CFUNC | CFRAME | LOCAL);
	put_cfp(2, n, BAD_PTR, 0, 0, 0, MAGIC_IFUNC | CFRAME);
	put_cfp(3, n, i_meth, e_meth + 8 * 12, me_meth, 0, MAGIC_METHOD | LOCAL);
	put_cfp(4, n, i_main, e_main + 8 * 3, cref, 0, MAGIC_TOP | LOCAL | FINISH);
	put_cfp(5, n, 0, 0, 0, 0, MAGIC_DUMMY | CFRAME | LOCAL | FINISH);

	late_walk = late;
	r = walk(build_stack(ras, 4), f, 32, &ru);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 7 + late);
	assert_native(&f[0], CORE_PC);
	if (late) /* the marker, once, before the first Ruby frame */
		assert_ruby(&f[1], OP_RB_LATE_ADDR, OP_RB_DATA_LATE, OP_RB_NO_POS);
	assert_ruby(&f[1 + late], i_block, me_meth, 5); /* the block names its method's entry */
	assert_native(&f[2 + late], CEXT_RA);
	assert_ruby(&f[3 + late], me_cfunc, OP_RB_DATA_CFUNC | def_cfunc, OP_RB_NO_POS);
	assert_ruby(&f[4 + late], i_meth, me_meth, 12);
	assert_ruby(&f[5 + late], i_main, cref, 3);
	assert_native(&f[6 + late], MAIN_RA);
	assert_int_equal(ru.stats[OP_RB_STAT_WALKS], 1);
	assert_int_equal(ru.stats[OP_RB_STAT_FRAMES], 3);
	assert_int_equal(ru.stats[OP_RB_STAT_CFUNCS], 1);
	assert_int_equal(ru.stats[OP_RB_STAT_SKIPPED], 1);
	assert_int_equal(ru.stats[OP_RB_STAT_READ_ERR], 0);
}

static void test_entries_nest(void **state)
{
	(void)state;
	entries_nest(false);
}

/*
 * A stack copy's walk reads the control frames after the sample (issue 18:
 * 3.2's YJIT warm-up samples, held until the process was published, came
 * out named as the loop it ran by then): the same frames, after one
 * "[Ruby frames read after the sample]" marker.
 */
static void test_late_marked(void **state)
{
	(void)state;
	entries_nest(true);
}

/*
 * YJIT's code region: the anonymous executable mappings with nothing
 * executable between them make one range, reaching on over the pages not
 * executable yet (RUBY_JIT_SPAN) but never into the next executable
 * mapping; a file's mapping between two anonymous ones splits them.
 */
static void test_jit_ranges(void **state)
{
	const uint64_t base = 0x7f0000000000ull, mib = 1ull << 20;
	struct ruby_exec_map maps[] = {
	    {base - 8 * mib, base - 7 * mib, false},		 /* libruby's code */
	    {base, base + 0x3000, true},			 /* YJIT's first pages */
	    {base + 0x5000, base + 0x8000, true},		 /* more, after a rw page */
	    {base + 100 * mib, base + 101 * mib, false},	 /* a library */
	    {base + 200 * mib, base + 200 * mib + 0x1000, true}, /* another JIT */
	};
	struct interp_range r[4];

	(void)state;
	assert_int_equal(ruby__jit_ranges(maps, 5, r, 4), 2);
	assert_int_equal(r[0].start, base);
	assert_int_equal(r[0].end, base + 100 * mib);
	assert_int_equal(r[0].flags, OP_INTERP_RANGE_F_UNWINDS);
	assert_int_equal(r[1].start, base + 200 * mib);
	assert_int_equal(r[1].end, base + 200 * mib + RUBY_JIT_SPAN);
	/* Nothing after the library: the span. */
	assert_int_equal(ruby__jit_ranges(maps + 1, 2, r, 4), 1);
	assert_int_equal(r[0].end, base + RUBY_JIT_SPAN);
	/* No room: none written. */
	assert_int_equal(ruby__jit_ranges(maps, 5, r, 0), 0);
	assert_int_equal(ruby__jit_ranges(maps, 5, r, 1), 1);
	assert_int_equal(r[0].end, base + 100 * mib);
	/* No anonymous code: none. */
	assert_int_equal(ruby__jit_ranges(maps, 1, r, 4), 0);
}

/* No execution context (module id 0 in the GOT: not relocated yet): native frames stay. */
static void test_no_ec_is_native(void **state)
{
	const uint64_t ras[] = {VM_EXEC_RA, MAIN_RA};
	struct op_frame f[8];
	struct ruby_unwind ru;
	struct user_unwind_result r;

	(void)state;
	build_ec(1);
	put64(GOT, 0);
	r = walk(build_stack(ras, 2), f, 8, &ru);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 3);
	assert_native(&f[0], CORE_PC);
	assert_native(&f[1], VM_EXEC_RA);
	assert_native(&f[2], MAIN_RA);
	assert_int_equal(ru.stats[OP_RB_STAT_NO_EC], 1);
}

/* A current frame outside the VM stack (a corrupt ec): not walked. */
static void test_cfp_outside_stack(void **state)
{
	const uint64_t ras[] = {VM_EXEC_RA, MAIN_RA};
	struct op_frame f[8];
	struct ruby_unwind ru;
	struct user_unwind_result r;

	(void)state;
	build_ec(1);
	put64(EC + l->off.ec_cfp, VM_STACK + VM_WORDS * 8 + 64);
	r = walk(build_stack(ras, 2), f, 8, &ru);
	assert_int_equal(r.error, 0);
	assert_native(&f[1], VM_EXEC_RA);
	assert_int_equal(ru.stats[OP_RB_STAT_NO_EC], 1);
}

/* A control frame whose ep cannot be read ends the walk with one error
 * frame, after the frames before it. */
static void test_bad_frame_stops_with_error(void **state)
{
	const uint64_t ras[] = {VM_EXEC_RA, MAIN_RA};
	uint64_t i_a = HEAP + 0x2000, b_a = HEAP + 0x2100, e_a = HEAP + 0x3000;
	struct op_frame f[8];
	struct ruby_unwind ru;
	struct user_unwind_result r;
	const int n = 3;

	(void)state;
	build_ec(n);
	put_iseq(i_a, b_a, e_a);
	put_cfp(0, n, i_a, e_a + 16, 0, 0, MAGIC_METHOD | LOCAL);
	put_cfp(1, n, i_a, e_a + 16, 0, 0, MAGIC_METHOD | LOCAL);
	put64(cfp_at(1, n) + l->off.cfp_ep, BAD_PTR);
	r = walk(build_stack(ras, 2), f, 8, &ru);
	assert_int_equal(r.error, OP_UNWIND_ERR_RUBY);
	assert_int_equal(r.n_frames, 3);
	assert_native(&f[0], CORE_PC);
	assert_ruby(&f[1], i_a, 0, 2);
	assert_int_equal(f[2].kind, OP_FRAME_ERROR);
	assert_int_equal(f[2].addr, OP_UNWIND_ERR_RUBY);
	assert_int_equal(ru.stats[OP_RB_STAT_READ_ERR], 1);
}

/* A block whose ep chain never reaches a local ep (a corrupt chain): no method entry. */
static void test_block_without_local_ep(void **state)
{
	const uint64_t ras[] = {VM_EXEC_RA, MAIN_RA};
	uint64_t i_a = HEAP + 0x2000, b_a = HEAP + 0x2100, e_a = HEAP + 0x3000;
	struct op_frame f[8];
	struct ruby_unwind ru;
	struct user_unwind_result r;
	const int n = 2;

	(void)state;
	build_ec(n);
	put_iseq(i_a, b_a, e_a);
	/* ep[-1] points at the block's own ep: a loop. */
	put_cfp(0, n, i_a, e_a, HEAP + 0x4000, ep_of(0), MAGIC_BLOCK | FINISH);
	put_cfp(1, n, 0, 0, 0, 0, MAGIC_DUMMY | CFRAME | LOCAL | FINISH);
	r = walk(build_stack(ras, 2), f, 8, &ru);
	assert_int_equal(r.error, 0);
	assert_ruby(&f[1], i_a, 0, 0);
	assert_native(&f[2], MAIN_RA);
}

/*
 * The VM in the executable (OP_RB_TLS_TP): ruby_current_ec at a fixed
 * distance below the thread pointer, no DTV.
 */
static void test_ec_below_thread_pointer(void **state)
{
	const uint64_t ras[] = {VM_EXEC_RA, MAIN_RA};
	uint64_t i_a = HEAP + 0x2000, b_a = HEAP + 0x2100, e_a = HEAP + 0x3000;
	struct op_frame f[8];
	struct ruby_unwind ru;
	struct user_unwind_result r;

	(void)state;
	build_ec(2);
	put64(GOT, 0); /* no DTV path: it would find nothing */
	put64(TCB - 0x40, EC);
	proc.tls_mode = OP_RB_TLS_TP;
	proc.tls_index = (uint64_t)-0x40;
	put_iseq(i_a, b_a, e_a);
	put_cfp(0, 2, i_a, e_a + 8 * 4, 0, 0, MAGIC_TOP | LOCAL | FINISH);
	put_cfp(1, 2, 0, 0, 0, 0, MAGIC_DUMMY | CFRAME | LOCAL | FINISH);
	r = walk(build_stack(ras, 2), f, 8, &ru);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 3);
	assert_ruby(&f[1], i_a, 0, 4);
	assert_native(&f[2], MAIN_RA);
	assert_int_equal(ru.stats[OP_RB_STAT_NO_EC], 0);
}

/*
 * Ruby 2.7 (OP_RB_TLS_GLOBAL): the global ec is the GVL holder's, walked
 * only on its own thread (ec->thread_ptr->thread_id == the thread pointer);
 * another thread keeps its native frames.
 */
static void test_global_ec_of_its_thread_only(void **state)
{
	const uint64_t ras[] = {VM_EXEC_RA, MAIN_RA};
	uint64_t i_a = HEAP + 0x2000, b_a = HEAP + 0x2100, e_a = HEAP + 0x3000;
	uint64_t global = MEM_BASE + 0x3e00, th = HEAP + 0x5000;
	struct op_frame f[8];
	struct ruby_unwind ru;
	struct user_unwind_result r;

	(void)state;
	l = ruby_layout__find(2, 7);
	assert_non_null(l);
	build_ec(2);
	proc.tls_mode = OP_RB_TLS_GLOBAL;
	proc.tls_index = global;
	put64(global, EC);
	put64(EC + l->off.ec_thread_ptr, th);
	put64(th + l->off.th_thread_id, TCB);
	put_iseq(i_a, b_a, e_a);
	put_cfp(0, 2, i_a, e_a + 8 * 2, 0, 0, MAGIC_TOP | LOCAL | FINISH);
	put_cfp(1, 2, 0, 0, 0, 0, MAGIC_DUMMY | CFRAME | LOCAL | FINISH);
	r = walk(build_stack(ras, 2), f, 8, &ru);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 3);
	assert_ruby(&f[1], i_a, 0, 2);

	/* Another thread holds the GVL: this one's frames stay native. */
	put64(th + l->off.th_thread_id, TCB + 0x1000);
	r = walk(build_stack(ras, 2), f, 8, &ru);
	assert_int_equal(r.error, 0);
	assert_native(&f[1], VM_EXEC_RA);
	assert_int_equal(ru.stats[OP_RB_STAT_NO_EC], 1);
}

/*
 * YJIT's code (a range Ruby unwinds itself): the frame is marked, then every
 * control frame left follows, FINISH or not (native frames cannot be
 * unwound past JIT code), and the walk ends saying where it stopped.
 */
static void test_yjit_code(void **state)
{
	const uint64_t jit_pc = 0x7e0000001234ull;
	uint64_t i_a = HEAP + 0x2000, b_a = HEAP + 0x2100, e_a = HEAP + 0x3000;
	uint64_t i_main = HEAP + 0x2400, b_main = HEAP + 0x2500, e_main = HEAP + 0x3800;
	uint64_t me_a = HEAP + 0x4000;
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};
	struct op_frame f[16];
	struct ruby_unwind ru;
	struct user_unwind_result r;
	const int n = 4;

	(void)state;
	build_ec(n);
	ranges.ranges[1] = (struct op_interp_range){0x7e0000000000ull, 0x7e0000100000ull,
						    OP_INTERP_RUBY, OP_INTERP_RANGE_F_UNWINDS};
	put_iseq(i_a, b_a, e_a);
	put_iseq(i_main, b_main, e_main);
	put_cfp(0, n, i_a, e_a + 8 * 7, me_a, 0, MAGIC_METHOD | LOCAL | FINISH);
	put_cfp(1, n, i_main, e_main + 8 * 3, 0, 0, MAGIC_TOP | LOCAL | FINISH);
	/* Not started (pc 0): not shown, as Ruby's backtraces do. */
	put_cfp(2, n, i_main, 0, 0, 0, MAGIC_TOP | LOCAL);
	/* The bottom-most frame is the VM's (Init_VM's "<main>", with a pc): not shown. */
	put_cfp(3, n, i_main, e_main, 0, 0, MAGIC_TOP | LOCAL | FINISH);
	memset(&ru, 0, sizeof(ru));
	ru.proc = &proc;
	ru.thread_ptr = TCB;
	ru.read = mem_read;
	r = user_unwind__walk(
	    &ops,
	    &(struct user_unwind_interp){&ranges, {[OP_INTERP_RUBY] = ruby_unwind__runtime(&ru)}},
	    42, jit_pc, STACK, build_stack((const uint64_t[]){MAIN_RA}, 1), f, 16);
	assert_int_equal(r.error, OP_UNWIND_ERR_ANON_CODE);
	assert_int_equal(f[0].kind, OP_FRAME_RUBY);
	assert_int_equal(f[0].addr, jit_pc);
	assert_int_equal(f[0].data, OP_RB_DATA_JIT);
	/* The sample's pc is in the JIT code i_a runs: its saved pc may be
	 * stale, so no line; its caller's pc was saved at the call. */
	assert_ruby(&f[1], i_a, me_a, OP_RB_NO_POS);
	assert_ruby(&f[2], i_main, 0, 3);
	assert_true(r.n_frames == 3 || (r.n_frames == 4 && f[3].kind == OP_FRAME_ERROR));
	assert_int_equal(ru.stats[OP_RB_STAT_JIT], 1);
	assert_int_equal(ru.stats[OP_RB_STAT_FRAMES], 2);
}

/*
 * YJIT's code met as a return address (it called out natively: a branch
 * stub's branch_stub_hit, a C function): it saved its pc before the call,
 * so the frame running it keeps its line.
 */
static void test_yjit_line_after_call(void **state)
{
	const uint64_t jit_ra = 0x7e0000001234ull;
	uint64_t i_a = HEAP + 0x2000, b_a = HEAP + 0x2100, e_a = HEAP + 0x3000;
	uint64_t i_main = HEAP + 0x2400, b_main = HEAP + 0x2500, e_main = HEAP + 0x3800;
	uint64_t me_a = HEAP + 0x4000;
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};
	struct op_frame f[16];
	struct ruby_unwind ru;
	struct user_unwind_result r;
	const int n = 3;

	(void)state;
	build_ec(n);
	ranges.ranges[1] = (struct op_interp_range){0x7e0000000000ull, 0x7e0000100000ull,
						    OP_INTERP_RUBY, OP_INTERP_RANGE_F_UNWINDS};
	put_iseq(i_a, b_a, e_a);
	put_iseq(i_main, b_main, e_main);
	put_cfp(0, n, i_a, e_a + 8 * 7, me_a, 0, MAGIC_METHOD | LOCAL | FINISH);
	put_cfp(1, n, i_main, e_main + 8 * 3, 0, 0, MAGIC_TOP | LOCAL | FINISH);
	put_cfp(2, n, i_main, e_main, 0, 0, MAGIC_TOP | LOCAL | FINISH);
	memset(&ru, 0, sizeof(ru));
	ru.proc = &proc;
	ru.thread_ptr = TCB;
	ru.read = mem_read;
	r = user_unwind__walk(
	    &ops,
	    &(struct user_unwind_interp){&ranges, {[OP_INTERP_RUBY] = ruby_unwind__runtime(&ru)}},
	    42, CEXT_RA, STACK, build_stack((const uint64_t[]){jit_ra, MAIN_RA}, 2), f, 16);
	assert_int_equal(r.error, OP_UNWIND_ERR_ANON_CODE);
	assert_native(&f[0], CEXT_RA);
	assert_int_equal(f[1].kind, OP_FRAME_RUBY);
	assert_int_equal(f[1].addr, jit_ra);
	assert_int_equal(f[1].data, OP_RB_DATA_JIT);
	assert_ruby(&f[2], i_a, me_a, 7);
	assert_ruby(&f[3], i_main, 0, 3);
}

/*
 * YJIT's code called a C function (Integer#times: YJIT pushed its control
 * frame, then called it natively): the walk comes back into the JIT code
 * from the C function's native frame, and the innermost frame left is the
 * C function's. It comes first, then the marker (the compiled caller's
 * code), then its method: Shop#pick;[YJIT code];Integer#times root first.
 */
static void test_yjit_called_cfunc(void **state)
{
	const uint64_t jit_pc = 0x7e0000001234ull;
	uint64_t i_a = HEAP + 0x2000, b_a = HEAP + 0x2100, e_a = HEAP + 0x3000;
	uint64_t i_main = HEAP + 0x2400, b_main = HEAP + 0x2500, e_main = HEAP + 0x3800;
	uint64_t me_a = HEAP + 0x4000, me_cfunc = HEAP + 0x4100, def_cfunc = HEAP + 0x4200;
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};
	struct op_frame f[16];
	struct ruby_unwind ru;
	struct user_unwind_result r;
	const int n = 4;

	(void)state;
	build_ec(n);
	ranges.ranges[1] = (struct op_interp_range){0x7e0000000000ull, 0x7e0000100000ull,
						    OP_INTERP_RUBY, OP_INTERP_RANGE_F_UNWINDS};
	put_iseq(i_a, b_a, e_a);
	put_iseq(i_main, b_main, e_main);
	put64(me_cfunc + l->off.me_def, def_cfunc);
	put_cfp(0, n, 0, 0, me_cfunc, 0, MAGIC_CFUNC | CFRAME | LOCAL);
	put_cfp(1, n, i_a, e_a + 8 * 7, me_a, 0, MAGIC_METHOD | LOCAL | FINISH);
	put_cfp(2, n, i_main, e_main + 8 * 3, 0, 0, MAGIC_TOP | LOCAL | FINISH);
	put_cfp(3, n, i_main, e_main, 0, 0, MAGIC_TOP | LOCAL | FINISH);
	memset(&ru, 0, sizeof(ru));
	ru.proc = &proc;
	ru.thread_ptr = TCB;
	ru.read = mem_read;
	r = user_unwind__walk(
	    &ops,
	    &(struct user_unwind_interp){&ranges, {[OP_INTERP_RUBY] = ruby_unwind__runtime(&ru)}},
	    42, jit_pc, STACK, build_stack((const uint64_t[]){MAIN_RA}, 1), f, 16);
	assert_int_equal(r.error, OP_UNWIND_ERR_ANON_CODE);
	assert_ruby(&f[0], me_cfunc, OP_RB_DATA_CFUNC | def_cfunc, OP_RB_NO_POS);
	assert_int_equal(f[1].kind, OP_FRAME_RUBY);
	assert_int_equal(f[1].addr, jit_pc);
	assert_int_equal(f[1].data, OP_RB_DATA_JIT);
	assert_ruby(&f[2], i_a, me_a, 7);
	assert_ruby(&f[3], i_main, 0, 3);
	assert_true(r.n_frames == 4 || (r.n_frames == 5 && f[4].kind == OP_FRAME_ERROR));
	assert_int_equal(ru.stats[OP_RB_STAT_JIT], 1);
	assert_int_equal(ru.stats[OP_RB_STAT_CFUNCS], 1);

	/* The C function's frame the only one left: it, then the marker, then the end. */
	build_ec(2);
	ranges.ranges[1] = (struct op_interp_range){0x7e0000000000ull, 0x7e0000100000ull,
						    OP_INTERP_RUBY, OP_INTERP_RANGE_F_UNWINDS};
	put_cfp(0, 2, 0, 0, me_cfunc, 0, MAGIC_CFUNC | CFRAME | LOCAL);
	put_cfp(1, 2, i_main, e_main, 0, 0, MAGIC_TOP | LOCAL | FINISH);
	memset(&ru, 0, sizeof(ru));
	ru.proc = &proc;
	ru.thread_ptr = TCB;
	ru.read = mem_read;
	r = user_unwind__walk(
	    &ops,
	    &(struct user_unwind_interp){&ranges, {[OP_INTERP_RUBY] = ruby_unwind__runtime(&ru)}},
	    42, jit_pc, STACK, build_stack((const uint64_t[]){MAIN_RA}, 1), f, 16);
	assert_int_equal(r.error, OP_UNWIND_ERR_ANON_CODE);
	assert_ruby(&f[0], me_cfunc, OP_RB_DATA_CFUNC | def_cfunc, OP_RB_NO_POS);
	assert_int_equal(f[1].data, OP_RB_DATA_JIT);
	assert_true(r.n_frames == 2 || (r.n_frames == 3 && f[2].kind == OP_FRAME_ERROR));
}

/*
 * Past YJIT's code: the entry's return address at sp + 24 (sp + 40 inside
 * duphash's and toregexp's paired pushes, or under 3.3+'s --yjit-perf
 * frame setup), near rb_vm_exec: the native walk goes on from it, the
 * control frames come at its rb_vm_exec frame, and the stack reaches main.
 * 3.1's C YJIT and 3.2+'s Rust YJIT enter the same way. The saved words
 * before it (heap addresses) are never taken for it; a version before
 * YJIT keeps the old end.
 */
static void test_yjit_native_past(void **state)
{
	const uint64_t jit_pc = 0x7e0000001234ull;
	uint64_t i_a = HEAP + 0x2000, b_a = HEAP + 0x2100, e_a = HEAP + 0x3000;
	uint64_t i_main = HEAP + 0x2400, b_main = HEAP + 0x2500, e_main = HEAP + 0x3800;
	uint64_t me_a = HEAP + 0x4000, me_cfunc = HEAP + 0x4100, def_cfunc = HEAP + 0x4200;
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};
	struct op_frame f[16];
	struct ruby_unwind ru;
	struct user_unwind_result r;

	(void)state;
	for (int k = 0; k < 4; k++) {
		build_ec(4);
		ranges.ranges[1] =
		    (struct op_interp_range){0x7e0000000000ull, 0x7e0000100000ull, OP_INTERP_RUBY,
					     OP_INTERP_RANGE_F_UNWINDS};
		put_iseq(i_a, b_a, e_a);
		put_iseq(i_main, b_main, e_main);
		put64(me_cfunc + l->off.me_def, def_cfunc);
		put_cfp(0, 4, 0, 0, me_cfunc, 0, MAGIC_CFUNC | CFRAME | LOCAL);
		put_cfp(1, 4, i_a, e_a + 8 * 7, me_a, 0, MAGIC_METHOD | LOCAL | FINISH);
		put_cfp(2, 4, i_main, e_main + 8 * 3, 0, 0, MAGIC_TOP | LOCAL | FINISH);
		put_cfp(3, 4, i_main, e_main, 0, 0, MAGIC_TOP | LOCAL | FINISH);
		/* k 0: at sp + 24; k 1: sp + 24 holds the saved ec, the address is at
		 * sp + 40; k 2: 3.2 (Rust YJIT) at sp + 24; k 3: 3.0 (no YJIT): not
		 * looked for. */
		put64(STACK + 24, k == 1 ? EC : VM_EXEC_RA);
		put64(STACK + 40, VM_EXEC_RA);
		if (k == 2)
			proc.version = 0x302;
		if (k == 3)
			proc.version = 0x300;
		memset(&ru, 0, sizeof(ru));
		ru.proc = &proc;
		ru.thread_ptr = TCB;
		ru.read = mem_read;
		r = user_unwind__walk(&ops,
				      &(struct user_unwind_interp){
					  &ranges, {[OP_INTERP_RUBY] = ruby_unwind__runtime(&ru)}},
				      42, jit_pc, STACK,
				      build_stack((const uint64_t[]){MAIN_RA}, 1), f, 16);
		assert_ruby(&f[0], me_cfunc, OP_RB_DATA_CFUNC | def_cfunc, OP_RB_NO_POS);
		assert_int_equal(f[1].data, OP_RB_DATA_JIT);
		assert_int_equal(f[1].addr, jit_pc);
		assert_ruby(&f[2], i_a, me_a, 7);
		if (k == 3) {
			/* Every frame left, then the old end. */
			assert_ruby(&f[3], i_main, 0, 3);
			assert_int_equal(r.error, OP_UNWIND_ERR_ANON_CODE);
			continue;
		}
		/* i_a's entry ends at its FINISH: the native walk goes on to main. */
		assert_int_equal(r.error, 0);
		assert_int_equal(r.n_frames, 4);
		assert_native(&f[3], MAIN_RA);
	}
}

/* Every version's row is there, with the offsets the walker relies on. */
static void test_layout_rows(void **state)
{
	static const unsigned int minors[][2] = {{2, 7}, {3, 0}, {3, 1}, {3, 2}, {3, 3}, {3, 4}};

	(void)state;
	for (size_t i = 0; i < sizeof(minors) / sizeof(minors[0]); i++) {
		const struct ruby_layout *r = ruby_layout__find(minors[i][0], minors[i][1]);

		assert_non_null(r);
		assert_true(r->off.cfp_size == 56 || r->off.cfp_size == 64);
		assert_true(r->off.cfp_pc % 8 == 0 && r->off.cfp_pc < OP_RB_CFP_BLOCK);
		assert_true(r->off.cfp_iseq % 8 == 0 && r->off.cfp_iseq < OP_RB_CFP_BLOCK);
		assert_true(r->off.cfp_ep % 8 == 0 && r->off.cfp_ep < OP_RB_CFP_BLOCK);
		assert_true(r->body_read >= r->body_succ_table + 8);
	}
	assert_null(ruby_layout__find(2, 6));
	assert_null(ruby_layout__find(3, 5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_entries_nest, setup),
	    cmocka_unit_test_setup(test_late_marked, setup),
	    cmocka_unit_test_setup(test_jit_ranges, setup),
	    cmocka_unit_test_setup(test_no_ec_is_native, setup),
	    cmocka_unit_test_setup(test_cfp_outside_stack, setup),
	    cmocka_unit_test_setup(test_bad_frame_stops_with_error, setup),
	    cmocka_unit_test_setup(test_block_without_local_ep, setup),
	    cmocka_unit_test_setup(test_ec_below_thread_pointer, setup),
	    cmocka_unit_test_setup(test_global_ec_of_its_thread_only, setup),
	    cmocka_unit_test_setup(test_yjit_code, setup),
	    cmocka_unit_test_setup(test_yjit_line_after_call, setup),
	    cmocka_unit_test_setup(test_yjit_called_cfunc, setup),
	    cmocka_unit_test_setup(test_yjit_native_past, setup),
	    cmocka_unit_test_setup(test_layout_rows, setup),
	};

	return cmocka_run_group_tests_name("ruby_unwind", tests, NULL, NULL);
}
