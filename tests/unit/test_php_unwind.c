// SPDX-License-Identifier: Apache-2.0
/*
 * The PHP walker (bpf/include/omniprof/interp/php_walk.h, through its plain-C
 * build in user_unwind__walk(), driven as the sampler drives it) over memory
 * built here by hand with the real 8.2 offsets (php_layout.c): a machine
 * stack with frame pointers, executor_globals.current_execute_data and a
 * chain of zend_execute_data. Checks which native execute_ex frames are
 * replaced by which PHP frames (split at user frames flagged ZEND_CALL_TOP,
 * internal functions among them), that zend_call_function's dummy frames
 * are skipped, that a pc in OPcache's JIT buffer unwinds with execute_ex's
 * rule, and that a bad pointer ends the walk with one OP_UNWIND_ERR_PHP
 * frame. Also the binary-side decoders: the executor_globals offset from
 * zend_is_executing()'s bytes (Debian's php8.2 and other shapes) and the
 * Zend extension build id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interp/php/php_binary.h"
#include "interp/php/php_layout.h"
#include "interp/php/php_unwind.h"
#include "interp/interp.h"
#include "profile/profile.h"
#include "unwind/user_unwind.h"

/* struct op_walk, whose leaf registers a test sets as the sampler does (the
 * walk itself runs in src/unwind/user_unwind.c: these macros are unused). */
#define OP_READ_USER(u, dst, size, addr)      (-1)
#define OP_FIND_RULE(u, pc, rule)	      ((void)(pc), (void)(rule))
#define OP_INTERP_STEP(w, interp, frame, res) (res)
#include "omniprof/unwind/native.h"
#include "omniprof/unwind/walk.h"

#define MEM_BASE 0x7f0000000000ull
#define MEM_SIZE 0x10000
#define STACK	 (MEM_BASE + 0x1000)
#define GLOBALS	 (MEM_BASE + 0x4000) /* executor_globals */
#define HEAP	 (MEM_BASE + 0x6000)
#define BAD_PTR	 0xdead0000ull

#define VM_START  0x600000ull /* execute_ex */
#define VM_END	  0x609000ull
#define VM_PC	  0x600500ull
#define VM_BODY	  0x600800ull
#define JIT_START 0x7e0000000000ull
#define JIT_END	  0x7e0000100000ull
#define JIT_PC	  0x7e0000000a5eull
#define CALL_RA	  0x500100ull /* zend_call_function */
#define ZIF_RA	  0x500200ull /* zif_usort */
#define MAIN_RA	  0x400100ull

#define CALL_TOP  (1u << 17)
#define CALL_CODE (1u << 16)

static uint8_t mem[MEM_SIZE];

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

static uint64_t build_stack(const uint64_t *ras, int n)
{
	uint64_t fp = STACK + 0x100;

	for (int i = 0; i < n; i++) {
		put64(fp + 0x40 * i, i + 1 < n ? fp + 0x40 * (i + 1) : 0);
		put64(fp + 0x40 * i + 8, ras[i]);
	}
	return fp;
}

static const struct php_layout *layout(void)
{
	const struct php_layout *l = php_layout__find(8, 2);

	assert_non_null(l);
	return l;
}

/* A zend_function at f: type, function_name (a pointer, 0 for {main}). */
static void put_func(uint64_t f, uint8_t type, uint64_t name)
{
	put64(f, type);
	put64(f + layout()->bpf.func_name, name);
}

/* A zend_execute_data at ex running func at a zend_op whose lineno is line. */
static void put_ex(uint64_t ex, uint64_t func, uint64_t prev, uint32_t info, uint32_t line)
{
	const struct op_php_offsets *o = &layout()->bpf;
	uint64_t opline = ex + 0x80; /* an opline of its own next to it */

	put64(ex + o->ex_func, func);
	put64(ex + o->ex_prev, prev);
	put32(ex + o->ex_call_info, info);
	put64(ex + o->ex_opline, line ? opline : 0);
	if (line)
		put32(opline + o->op_lineno, line);
}

static struct op_interp_proc ranges;

static void build_proc(uint64_t current, struct op_php_proc *proc)
{
	put64(GLOBALS + 0x1e8, current);
	memset(proc, 0, sizeof(*proc));
	proc->current_ex = GLOBALS + 0x1e8;
	proc->vm_body_pc = VM_BODY;
	proc->off = layout()->bpf;
	proc->version = 0x0802;
	memset(&ranges, 0, sizeof(ranges));
	ranges.ranges[0] = (struct op_interp_range){VM_START, VM_END, OP_INTERP_PHP, 0};
	ranges.ranges[1] =
	    (struct op_interp_range){JIT_START, JIT_END, OP_INTERP_PHP, OP_INTERP_RANGE_F_UNWINDS};
}

static struct user_unwind_result walk(const struct op_php_proc *proc, uint64_t pc, uint64_t fp,
				      struct op_frame *frames, uint32_t max, struct php_unwind *pu)
{
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};

	memset(pu, 0, sizeof(*pu));
	pu->proc = proc;
	return user_unwind__walk(
	    &ops,
	    &(struct user_unwind_interp){&ranges, {[OP_INTERP_PHP] = php_unwind__runtime(pu)}}, 42,
	    pc, STACK, fp, frames, max);
}

static void assert_native(const struct op_frame *f, uint64_t addr)
{
	assert_int_equal(f->kind, OP_FRAME_NATIVE);
	assert_int_equal(f->addr, addr);
}

static void assert_php(const struct op_frame *f, uint64_t func, uint64_t name, uint32_t line)
{
	assert_int_equal(f->kind, OP_FRAME_PHP);
	assert_int_equal(f->addr, func);
	assert_int_equal(f->data, name);
	assert_int_equal(f->aux, line);
}

static int setup(void **state)
{
	(void)state;
	memset(mem, 0, sizeof(mem));
	return 0;
}

/* The functions of the usort chain and their names (only the pointers matter). */
#define F_CMP	 (HEAP + 0x100)
#define F_USORT	 (HEAP + 0x200)
#define F_CALLER (HEAP + 0x300)
#define F_MAIN	 (HEAP + 0x400)
#define N_CMP	 (HEAP + 0x1100)
#define N_USORT	 (HEAP + 0x1200)
#define N_CALLER (HEAP + 0x1300)
#define EX_CMP	 (HEAP + 0x2000)
#define EX_DUMMY (HEAP + 0x2200)
#define EX_USORT (HEAP + 0x2400)
#define EX_CALL	 (HEAP + 0x2600)
#define EX_MAIN	 (HEAP + 0x2800)

/*
 * {main} -> caller -> usort -> [zif_usort, zend_call_function] -> cmp: the
 * inner execute_ex (leaf) runs cmp (flagged ZEND_CALL_TOP), the outer one
 * usort's frame, caller and {main}. dummy: a func NULL frame between cmp and
 * usort (zend_call_function's fake frame), which must not show.
 */
static void build_usort(bool dummy)
{
	put_func(F_CMP, OP_PHP_USER_FUNCTION, N_CMP);
	put_func(F_USORT, OP_PHP_INTERNAL_FUNCTION, N_USORT);
	put_func(F_CALLER, OP_PHP_USER_FUNCTION, N_CALLER);
	put_func(F_MAIN, OP_PHP_USER_FUNCTION, 0);
	put_ex(EX_CMP, F_CMP, dummy ? EX_DUMMY : EX_USORT, CALL_TOP, 3);
	if (dummy)
		put_ex(EX_DUMMY, 0, EX_USORT, 0, 0);
	/* An internal frame's opline is not its own: never read. */
	put_ex(EX_USORT, F_USORT, EX_CALL, 0, 0);
	put64(EX_USORT + layout()->bpf.ex_opline, BAD_PTR);
	put_ex(EX_CALL, F_CALLER, EX_MAIN, 0, 10);
	put_ex(EX_MAIN, F_MAIN, 0, CALL_TOP | CALL_CODE, 20);
}

/* jit: the comparator ran in JIT code (its frame marked). */
static void check_usort(const struct op_frame *f, const struct user_unwind_result *r, bool jit)
{
	assert_int_equal(r->error, 0);
	assert_int_equal(r->n_frames, 7);
	assert_php(&f[0], F_CMP, N_CMP, 3 | (jit ? OP_PHP_AUX_JIT : 0));
	assert_native(&f[1], CALL_RA);
	assert_native(&f[2], ZIF_RA);
	assert_php(&f[3], F_USORT, N_USORT, 0);
	assert_php(&f[4], F_CALLER, N_CALLER, 10);
	assert_php(&f[5], F_MAIN, 0, 20);
	assert_native(&f[6], MAIN_RA);
}

static void test_usort_split_at_call_top(void **state)
{
	const uint64_t ras[] = {CALL_RA, ZIF_RA, VM_PC + 0x10, MAIN_RA};
	struct op_php_proc proc;
	struct op_frame f[32];
	struct php_unwind pu;
	struct user_unwind_result r;

	(void)state;
	build_usort(false);
	build_proc(EX_CMP, &proc);
	r = walk(&proc, VM_PC, build_stack(ras, 4), f, 32, &pu);
	check_usort(f, &r, false);
	assert_int_equal(pu.stats[OP_PHP_STAT_WALKS], 1);
	assert_int_equal(pu.stats[OP_PHP_STAT_FRAMES], 4);
	assert_int_equal(pu.stats[OP_PHP_STAT_READ_ERR], 0);
	assert_int_equal(pu.stats[OP_PHP_STAT_NO_LINE], 0);
}

static void test_dummy_frames_skipped(void **state)
{
	const uint64_t ras[] = {CALL_RA, ZIF_RA, VM_PC + 0x10, MAIN_RA};
	struct op_php_proc proc;
	struct op_frame f[32];
	struct php_unwind pu;
	struct user_unwind_result r;

	(void)state;
	build_usort(true);
	build_proc(EX_CMP, &proc);
	r = walk(&proc, VM_PC, build_stack(ras, 4), f, 32, &pu);
	check_usort(f, &r, false);
}

/* The leaf runs in OPcache's JIT code: unwound with execute_ex's body rule. */
static void test_jit_leaf(void **state)
{
	const uint64_t ras[] = {CALL_RA, ZIF_RA, VM_PC + 0x10, MAIN_RA};
	struct op_php_proc proc;
	struct op_frame f[32];
	struct php_unwind pu;
	struct user_unwind_result r;

	(void)state;
	build_usort(false);
	build_proc(EX_CMP, &proc);
	r = walk(&proc, JIT_PC, build_stack(ras, 4), f, 32, &pu);
	check_usort(f, &r, true);
	assert_int_equal(pu.stats[OP_PHP_STAT_JIT], 1);
	/* Without execute_ex's body pc the JIT frame is left to the native rules
	 * (here: frame pointers), whose frame then stands for execute_ex's. */
	proc.vm_body_pc = 0;
	r = walk(&proc, JIT_PC, build_stack(ras, 4), f, 32, &pu);
	assert_int_equal(pu.stats[OP_PHP_STAT_JIT], 0);
	assert_int_equal(r.n_frames, 7);
	assert_php(&f[0], F_CMP, N_CMP, 3);
}

/* The sampled thread's r14 and r15, put in the walk as bpf/sampler.bpf.c does. */
static struct {
	uint64_t r14, r15;
	struct user_unwind_runtime php;
} regs_walk;

static int regs_step(void *ctx, struct op_walk *w, struct op_frame *frame, int res)
{
	(void)ctx;
	if (w->n == 0) {
		w->leaf_r14 = regs_walk.r14;
		w->leaf_r15 = regs_walk.r15;
	}
	return regs_walk.php.step(regs_walk.php.ctx, w, frame, res);
}

/* The leaf's line of the usort chain sampled at pc with r14 and r15. */
static uint32_t leaf_line(struct op_php_proc *proc, uint64_t pc, uint64_t r14, uint64_t r15,
			  struct php_unwind *pu)
{
	const uint64_t ras[] = {CALL_RA, ZIF_RA, VM_PC + 0x10, MAIN_RA};
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};
	struct user_unwind_result r;
	struct op_frame f[32];

	memset(pu, 0, sizeof(*pu));
	pu->proc = proc;
	regs_walk.r14 = r14;
	regs_walk.r15 = r15;
	regs_walk.php = php_unwind__runtime(pu);
	r = user_unwind__walk(
	    &ops, &(struct user_unwind_interp){&ranges, {[OP_INTERP_PHP] = {regs_step, NULL}}}, 42,
	    pc, STACK, build_stack(ras, 4), f, 32);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 7);
	assert_int_equal(f[0].addr, F_CMP);
	/* Only the leaf: the callers' lines are their saved oplines'. */
	assert_php(&f[4], F_CALLER, N_CALLER, 10);
	return f[0].aux;
}

/*
 * The leaf sampled in execute_ex of a VM with global registers: its line is
 * that of the opline in r15 when r14 is its frame and r15 is an opline of
 * the same function, else the saved one's.
 */
static void test_leaf_opline_register(void **state)
{
	const uint64_t saved = EX_CMP + 0x80, running = saved + 2 * OP_PHP_OP_SIZE;
	struct op_php_proc proc;
	struct php_unwind pu;

	(void)state;
	build_usort(false);
	build_proc(EX_CMP, &proc);
	put32(running + layout()->bpf.op_lineno, 5);
	proc.flags = OP_PHP_PROC_F_VM_REGS;
	assert_int_equal(leaf_line(&proc, VM_PC, EX_CMP, running, &pu), 5);
	assert_int_equal(pu.stats[OP_PHP_STAT_LEAF_REG], 1);
	/* r14 another frame (the VM between two frames): the saved line. */
	assert_int_equal(leaf_line(&proc, VM_PC, EX_CALL, running, &pu), 3);
	assert_int_equal(pu.stats[OP_PHP_STAT_LEAF_REG], 0);
	/* r15 no opline of the function (not whole zend_ops apart, or far). */
	assert_int_equal(leaf_line(&proc, VM_PC, EX_CMP, running + 8, &pu), 3);
	assert_int_equal(leaf_line(&proc, VM_PC, EX_CMP, saved + (64ull << 20), &pu), 3);
	assert_int_equal(pu.stats[OP_PHP_STAT_LEAF_REG], 0);
	/* JIT code (its registers may lag): the saved line, marked. */
	assert_int_equal(leaf_line(&proc, JIT_PC, EX_CMP, running, &pu), 3 | OP_PHP_AUX_JIT);
	/* A VM without global registers. */
	proc.flags = 0;
	assert_int_equal(leaf_line(&proc, VM_PC, EX_CMP, running, &pu), 3);
}

/* A chain through an unreadable pointer: one error frame, the walk ends. */
static void test_bad_pointer(void **state)
{
	const uint64_t ras[] = {CALL_RA, ZIF_RA, VM_PC + 0x10, MAIN_RA};
	struct op_php_proc proc;
	struct op_frame f[32];
	struct php_unwind pu;
	struct user_unwind_result r;

	(void)state;
	build_usort(false);
	put64(EX_USORT + layout()->bpf.ex_prev, BAD_PTR);
	build_proc(EX_CMP, &proc);
	r = walk(&proc, VM_PC, build_stack(ras, 4), f, 32, &pu);
	assert_int_equal(r.error, OP_UNWIND_ERR_PHP);
	assert_php(&f[0], F_CMP, N_CMP, 3);
	assert_native(&f[1], CALL_RA);
	assert_native(&f[2], ZIF_RA);
	assert_php(&f[3], F_USORT, N_USORT, 0);
	assert_int_equal(f[4].kind, OP_FRAME_ERROR);
	assert_int_equal(f[4].addr, OP_UNWIND_ERR_PHP);
	assert_int_equal(r.n_frames, 5);
	assert_int_equal(pu.stats[OP_PHP_STAT_READ_ERR], 1);
	/* A function of an unknown type is no function either. */
	build_usort(false);
	put64(F_CALLER, 9);
	r = walk(&proc, VM_PC, build_stack(ras, 4), f, 32, &pu);
	assert_int_equal(r.error, OP_UNWIND_ERR_PHP);
}

/* No PHP frame running (current_execute_data NULL): execute_ex stays native. */
static void test_no_frame(void **state)
{
	const uint64_t ras[] = {MAIN_RA};
	struct op_php_proc proc;
	struct op_frame f[32];
	struct php_unwind pu;
	struct user_unwind_result r;

	(void)state;
	build_proc(0, &proc);
	r = walk(&proc, VM_PC, build_stack(ras, 1), f, 32, &pu);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 2);
	assert_native(&f[0], VM_PC);
	assert_native(&f[1], MAIN_RA);
	assert_int_equal(pu.stats[OP_PHP_STAT_NO_FRAME], 1);
}

/* Debian's php8.2 zend_is_executing(): lea executor_globals(%rip),%rax; cmpq $0,0x1e8(%rax). */
/* execute_ex's set-up in Debian's php8.2: execute_data in r14, dispatch through r15. */
static void test_vm_uses_regs(void **state)
{
	static const uint8_t debian[] = {
	    0x41, 0x55, 0x41, 0x54, 0x55, 0x53, 0x48, 0x83, 0xec, 0x78, 0x64, 0x48,
	    0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00, 0x48, 0x89, 0x44, 0x24, 0x68,
	    0x31, 0xc0, 0x4c, 0x89, 0x74, 0x24, 0x48, 0x49, 0x89, 0xfe, 0x4c, 0x89,
	    0x7c, 0x24, 0x40, 0x48, 0x85, 0xff, 0x74, 0x1c, 0x4c, 0x8b, 0x3f, 0x48,
	    0x8d, 0x05, 0x4a, 0xe2, 0x21, 0x00, 0x0f, 0xb6, 0x80, 0x22, 0x02, 0x00,
	    0x00, 0x84, 0xc0, 0x0f, 0x85, 0xc1, 0x1c, 0x00, 0x00, 0x41, 0xff, 0x27};

	(void)state;
	assert_true(php_binary__vm_uses_regs(debian, sizeof(debian)));
	/* Cut before the dispatch, or before the load of r14: not known to use them. */
	assert_false(php_binary__vm_uses_regs(debian, sizeof(debian) - 1));
	assert_false(php_binary__vm_uses_regs(debian + 34, sizeof(debian) - 34));
}

static void test_decode_eg_offset(void **state)
{
	static const uint8_t debian[] = {0x48, 0x8d, 0x05, 0xe9, 0x82, 0x29, 0x00, 0x48, 0x83,
					 0xb8, 0xe8, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x95, 0xc0};
	static const uint8_t riprel[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0x3d, 0x10,
					 0x00, 0x00, 0x00, 0x00, 0x0f, 0x95, 0xc0, 0xc3};
	static const uint8_t other[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x8b, 0x05, 0x00, 0x00};
	uint16_t off = 0;

	(void)state;
	assert_int_equal(
	    php_binary__decode_eg_offset(debian, sizeof(debian), 0x2f2b70, 0x58ae60, &off), 0);
	assert_int_equal(off, 0x1e8);
	/* cmpq $0, 0x10(%rip) after endbr64: the field is 0x1000 + 12 + 0x10 - 0x1000 - 4. */
	assert_int_equal(
	    php_binary__decode_eg_offset(riprel, sizeof(riprel), 0x1000, 0x1000 + 0x10, &off), 0);
	assert_int_equal(off, 0xc);
	/* lea of something else, and code of another shape: not decoded. */
	assert_int_not_equal(
	    php_binary__decode_eg_offset(debian, sizeof(debian), 0x2f2b70, 0x58ae68, &off), 0);
	assert_int_not_equal(php_binary__decode_eg_offset(other, sizeof(other), 0, 0, &off), 0);
	assert_int_not_equal(php_binary__decode_eg_offset(debian, 9, 0x2f2b70, 0x58ae60, &off), 0);
}

static void test_find_api(void **state)
{
	static const char nts[] = "xxAPI20220829,NTS\0API420220829,NTS\0yy";
	static const char zts[] = "API420230831,TS";
	static const char none[] = "API42022082,NTS API4202208290,NTS";
	uint32_t api = 0;
	bool is_zts = true;

	(void)state;
	/* The module id (8 digits) is not the extension id (9). */
	assert_int_equal(php_binary__find_api(nts, sizeof(nts), &api, &is_zts), 0);
	assert_int_equal(api, 420220829);
	assert_false(is_zts);
	assert_non_null(php_layout__by_api(api));
	assert_int_equal(php_layout__by_api(api)->minor, 2);
	assert_int_equal(php_binary__find_api(zts, strlen(zts), &api, &is_zts), 0);
	assert_int_equal(api, 420230831);
	assert_true(is_zts);
	assert_int_not_equal(php_binary__find_api(none, strlen(none), &api, &is_zts), 0);
	/* Cut before ",NTS" ends. */
	assert_int_not_equal(php_binary__find_api(nts + 18, 14, &api, &is_zts), 0);
}

/* Every row's walker offsets fit the walker's block and its head read. */
static void test_layouts_fit(void **state)
{
	static const unsigned int minors[][2] = {{7, 4}, {8, 0}, {8, 1}, {8, 2}, {8, 3}, {8, 4}};

	(void)state;
	for (size_t i = 0; i < sizeof(minors) / sizeof(minors[0]); i++) {
		const struct php_layout *l = php_layout__find(minors[i][0], minors[i][1]);

		assert_non_null(l);
		assert_true(php_layout__fits(&l->bpf));
		assert_ptr_equal(php_layout__by_api(l->extension_api), l);
	}
	assert_null(php_layout__find(7, 3));
}

/* PHP's row: its frames are `php` in OTLP, and its ops are found by kind and id. */
static void test_frame_kind(void **state)
{
	(void)state;
	assert_string_equal(profile_frame_kind__otlp_type(PROFILE_FRAME_PHP), "php");
	assert_string_equal(profile_frame_kind__name(PROFILE_FRAME_PHP), "php");
	assert_non_null(interp__of_kind(OP_FRAME_PHP));
	assert_ptr_equal(interp__of_id(OP_INTERP_PHP), interp__of_kind(OP_FRAME_PHP));
	assert_string_equal(interp__unwind_error(OP_UNWIND_ERR_PHP),
			    "[unwind stopped: unreadable PHP frame]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_usort_split_at_call_top, setup),
	    cmocka_unit_test_setup(test_dummy_frames_skipped, setup),
	    cmocka_unit_test_setup(test_jit_leaf, setup),
	    cmocka_unit_test_setup(test_leaf_opline_register, setup),
	    cmocka_unit_test(test_vm_uses_regs),
	    cmocka_unit_test_setup(test_bad_pointer, setup),
	    cmocka_unit_test_setup(test_no_frame, setup),
	    cmocka_unit_test(test_decode_eg_offset),
	    cmocka_unit_test(test_find_api),
	    cmocka_unit_test(test_layouts_fit),
	    cmocka_unit_test(test_frame_kind),
	};

	return cmocka_run_group_tests_name("php_unwind", tests, NULL, NULL);
}
