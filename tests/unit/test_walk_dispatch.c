// SPDX-License-Identifier: Apache-2.0
/*
 * The walk's runtime dispatch (omniprof/unwind/walk.h) run in user space:
 * interpreter ranges get the frame after the native step, ranges flagged
 * OP_INTERP_RANGE_F_UNWINDS (JIT code) get it instead of the native step,
 * and a step that does not take such a frame leaves it to the native rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "unwind/user_unwind.h"

/* For struct op_walk only: the walk itself runs in src/unwind/user_unwind.c. */
#define OP_READ_USER(u, dst, size, addr)      user_unwind__read((u), (dst), (size), (addr))
#define OP_FIND_RULE(u, pc, rule)	      user_unwind__find_rule((u), (pc), (rule))
#define OP_INTERP_STEP(w, interp, frame, res) (res)
#include "omniprof/unwind/native.h"
#include "omniprof/unwind/walk.h"

#define MEM_BASE 0x7ff000000000ull
#define MEM_SIZE 4096
#define STACK	 (MEM_BASE + 0x100)

#define LEAF_PC	  0x401000ull /* native, frame-pointer rule */
#define JIT_START 0x500000ull /* the runtime's self-unwound code */
#define JIT_END	  0x510000ull
#define JIT_PC	  0x500100ull
#define CALLER_PC 0x402000ull /* native again, the outermost frame */

static uint8_t mem[MEM_SIZE];

static int mem_read(void *ctx, void *dst, size_t size, uint64_t addr)
{
	(void)ctx;
	if (addr < MEM_BASE || addr - MEM_BASE > MEM_SIZE || size > MEM_SIZE - (addr - MEM_BASE))
		return -14;
	memcpy(dst, &mem[addr - MEM_BASE], size);
	return 0;
}

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(&mem[addr - MEM_BASE], &v, sizeof(v));
}

/* Every pc the native rules were asked about. */
struct rule_log {
	int n;
	uint64_t pcs[32];
};

static void fp_rule(void *ctx, uint32_t pid, uint64_t pc, struct op_unwind_rule *rule)
{
	struct rule_log *log = ctx;

	(void)pid;
	if (log->n < 32)
		log->pcs[log->n++] = pc;
	*rule = (struct op_unwind_rule){
	    .cmd = OP_RULE_CFA, .cfa_base = OP_CFA_RBP, .cfa_offset = 16, .fp_offset = -16};
}

/* A JIT runtime that knows its frames are 24 bytes with the return address at sp + 16. */
struct fake_jit {
	bool take;	 /* unwind its frames itself */
	int own_calls;	 /* calls with OP_STEP_RUNTIME_UNWINDS */
	int after_calls; /* calls after a native step */
	int last_res;
};

static int fake_jit_step(void *ctx, struct op_walk *w, struct op_frame *frame, int res)
{
	struct fake_jit *j = ctx;
	uint64_t ret = 0;

	if (res != OP_STEP_RUNTIME_UNWINDS) {
		j->after_calls++;
		j->last_res = res;
		return res;
	}
	j->own_calls++;
	if (!j->take)
		return res;
	frame->addr = w->u.regs.pc;
	frame->data = 0xC0DE;
	frame->aux = 0;
	frame->kind = OP_FRAME_PYTHON; /* any runtime kind will do */
	frame->flags = w->u.pc_exact ? 0 : OP_FRAME_F_RETURN_ADDRESS;
	frame->reserved = 0;
	if (user_unwind__read(&w->u, &ret, sizeof(ret), w->u.regs.sp + 16))
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_READ;
	w->u.regs.pc = ret;
	w->u.regs.sp += 24;
	w->u.pc_exact = 0;
	w->u.n_frames++;
	return OP_STEP_CONTINUE;
}

/*
 * The stack: leaf (fp frame) -> JIT frame (24 bytes, rbp left alone, so rbp
 * still points at the caller's frame) -> caller (fp frame, outermost: saved
 * rbp 0 and return address 0).
 */
static void build_stack(void)
{
	uint64_t leaf_fp = STACK;	  /* leaf's frame: [saved rbp][ret] */
	uint64_t jit_sp = leaf_fp + 16;	  /* JIT frame: 24 bytes */
	uint64_t caller_fp = jit_sp + 24; /* caller's frame */

	memset(mem, 0, sizeof(mem));
	put64(leaf_fp, caller_fp); /* the JIT code did not push rbp */
	put64(leaf_fp + 8, JIT_PC);
	put64(jit_sp + 16, CALLER_PC);
	put64(caller_fp, 0);
	put64(caller_fp + 8, 0);
}

static struct user_unwind_result walk(struct fake_jit *j, uint32_t flags, struct rule_log *log,
				      struct op_frame *frames)
{
	struct op_interp_proc ranges = {0};
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, log};

	ranges.ranges[0] = (struct op_interp_range){
	    .start = JIT_START, .end = JIT_END, .interp = OP_INTERP_PYTHON, .flags = flags};
	build_stack();
	memset(log, 0, sizeof(*log));
	return user_unwind__walk(
	    &ops, &(struct user_unwind_interp){&ranges, {[OP_INTERP_PYTHON] = {fake_jit_step, j}}},
	    7, LEAF_PC, STACK - 32, STACK, frames, 16);
}

static bool asked_in_jit(const struct rule_log *log)
{
	for (int i = 0; i < log->n; i++)
		if (log->pcs[i] >= JIT_START && log->pcs[i] < JIT_END)
			return true;
	return false;
}

/* A flagged range: the runtime's frame replaces the native step, the walk goes on natively. */
static void test_unwinds_range_goes_to_runtime_first(void **state)
{
	struct fake_jit j = {.take = true};
	struct op_frame frames[16];
	struct rule_log log;
	struct user_unwind_result r;

	(void)state;
	r = walk(&j, OP_INTERP_RANGE_F_UNWINDS, &log, frames);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 3);
	assert_int_equal(frames[0].kind, OP_FRAME_NATIVE);
	assert_int_equal(frames[0].addr, LEAF_PC);
	assert_int_equal(frames[1].kind, OP_FRAME_PYTHON);
	assert_int_equal(frames[1].addr, JIT_PC);
	assert_int_equal(frames[1].data, 0xC0DE);
	assert_int_equal(frames[1].flags, OP_FRAME_F_RETURN_ADDRESS);
	assert_int_equal(frames[2].kind, OP_FRAME_NATIVE);
	assert_int_equal(frames[2].addr, CALLER_PC);
	assert_int_equal(j.own_calls, 1);
	assert_int_equal(j.after_calls, 0);
	/* The native rules were never asked about the JIT code. */
	assert_false(asked_in_jit(&log));
}

/* A flagged range whose runtime declines: the native rules unwind it, then the step sees it. */
static void test_declined_frame_falls_back_to_native(void **state)
{
	struct fake_jit j = {.take = false};
	struct op_frame frames[16];
	struct rule_log log;
	struct user_unwind_result r;

	(void)state;
	r = walk(&j, OP_INTERP_RANGE_F_UNWINDS, &log, frames);
	assert_int_equal(j.own_calls, 1);
	assert_int_equal(j.after_calls, 1);
	assert_true(asked_in_jit(&log));
	/* The fp rule on the JIT frame reads a frame the code never pushed: a wrong
	 * caller or an error, but the JIT pc itself is a native frame. */
	assert_true(r.n_frames >= 2);
	assert_int_equal(frames[1].kind, OP_FRAME_NATIVE);
	assert_int_equal(frames[1].addr, JIT_PC);
}

/* An interpreter range (no flag): the native step runs first and the step gets its result. */
static void test_interpreter_range_steps_after_native(void **state)
{
	struct fake_jit j = {.take = true};
	struct op_frame frames[16];
	struct rule_log log;

	(void)state;
	walk(&j, 0, &log, frames);
	assert_int_equal(j.own_calls, 0);
	assert_int_equal(j.after_calls, 1);
	/* The fp rule on the JIT frame used the caller's rbp, whose return address
	 * is 0: the native step ended the stack there, and the step was told so. */
	assert_int_equal(j.last_res, OP_STEP_END);
	assert_true(asked_in_jit(&log));
	assert_int_equal(frames[1].kind, OP_FRAME_NATIVE);
	assert_int_equal(frames[1].addr, JIT_PC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unwinds_range_goes_to_runtime_first),
	    cmocka_unit_test(test_declined_frame_falls_back_to_native),
	    cmocka_unit_test(test_interpreter_range_steps_after_native),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
