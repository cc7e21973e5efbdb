// SPDX-License-Identifier: Apache-2.0
/*
 * The V8 walker (bpf/include/omniprof/interp/v8_walk.h, through its plain-C
 * build driven by user_unwind__walk() as the sampler drives it) over memory
 * built here by hand with node 20's frame layout: a JIT frame, an
 * interpreted frame in the builtins, an entry frame (marked) and node's
 * native main. Checks each frame's kind and payload, that a builtins frame
 * whose bytecode slot holds no BytecodeArray stays native, that a marked
 * frame in JIT code is a stub frame, and that an unreadable or backwards
 * frame chain ends with one V8 error frame.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interp/v8/v8_unwind.h"
#include "unwind/user_unwind.h"

#define MEM_BASE 0x7f0000000000ull
#define MEM_SIZE 0x10000
#define STACK	 (MEM_BASE + 0x1000)
#define HEAP	 (MEM_BASE + 0x8000)

#define BUILTINS_START 0x1000000ull
#define BUILTINS_END   0x1100000ull
#define JIT_START      0x2000000ull
#define JIT_END	       0x2100000ull
#define JIT_PC	       0x2000100ull
#define INTERP_RA      0x1000200ull /* a bytecode handler's return address */
#define ENTRY_RA       0x1000300ull /* JSEntry's */
#define MAIN_RA	       0x400100ull

#define MAP_BYTECODE (HEAP + 0x000)
#define MAP_OTHER    (HEAP + 0x040)
#define BYTECODE     (HEAP + 0x100)
#define FN_INTERP    (HEAP + 0x200)
#define FN_JIT	     (HEAP + 0x280)
#define SFI_INTERP   (HEAP + 0x300)
#define SFI_JIT	     (HEAP + 0x380)
#define CONTEXT	     (HEAP + 0x400)
#define NOT_BYTECODE (HEAP + 0x480)

#define BYTECODE_ARRAY_TYPE 191
#define TAG(a)		    ((a) | 1)

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

static void put16(uint64_t addr, uint16_t v)
{
	memcpy(&mem[addr - MEM_BASE], &v, sizeof(v));
}

/* node 20's v8dbg_* values, as v8_binary.c would publish them. */
static const struct op_v8_proc proc = {
    .builtins_start = {BUILTINS_START},
    .builtins_end = {BUILTINS_END},
    .fp_marker = -8,
    .fp_function = -16,
    .fp_bytecode_array = -32,
    .fp_bytecode_offset = -40,
    .jsfunction_shared = 24,
    .map_instance_type = 12,
    .type_bytecode_array = BYTECODE_ARRAY_TYPE,
    .smi_shift = 32,
};

static const struct op_interp_proc ranges = {
    .ranges = {{BUILTINS_START, BUILTINS_END, OP_INTERP_V8, OP_INTERP_RANGE_F_UNWINDS},
	       {JIT_START, JIT_END, OP_INTERP_V8, OP_INTERP_RANGE_F_UNWINDS}}};

/* A frame at fp: marker (or context) and function below, caller's fp and return address above. */
static void put_frame(uint64_t fp, uint64_t marker, uint64_t fn, uint64_t caller_fp, uint64_t ra)
{
	put64(fp - 8, marker);
	put64(fp - 16, fn);
	put64(fp, caller_fp);
	put64(fp + 8, ra);
}

/* JIT frame (F1) <- interpreted frame (F2) <- entry frame (F3) <- main (F4). */
static void build(uint64_t bytecode_slot)
{
	const uint64_t f1 = STACK + 0x100, f2 = STACK + 0x200, f3 = STACK + 0x300,
		       f4 = STACK + 0x400;

	memset(mem, 0, sizeof(mem));
	put16(MAP_BYTECODE + 12, BYTECODE_ARRAY_TYPE);
	put16(MAP_OTHER + 12, 175);
	put64(BYTECODE, TAG(MAP_BYTECODE));
	put64(NOT_BYTECODE, TAG(MAP_OTHER));
	put64(FN_INTERP + 24, TAG(SFI_INTERP));
	put64(FN_JIT + 24, TAG(SFI_JIT));
	put_frame(f1, TAG(CONTEXT), TAG(FN_JIT), f2, INTERP_RA);
	put_frame(f2, TAG(CONTEXT), TAG(FN_INTERP), f3, ENTRY_RA);
	put64(f2 - 32, bytecode_slot);
	put64(f2 - 40, (uint64_t)77 << 32); /* the bytecode offset register, a Smi */
	put_frame(f3, 1 << 1 /* EntryFrame's marker */, 0, f4, MAIN_RA);
	put64(f4, 0);
	put64(f4 + 8, 0);
}

static struct user_unwind_result walk(uint64_t pc, uint64_t fp, struct op_frame *frames,
				      uint32_t max, struct v8_unwind *vu)
{
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};

	memset(vu, 0, sizeof(*vu));
	vu->proc = &proc;
	vu->read = mem_read;
	return user_unwind__walk(
	    &ops, &(struct user_unwind_interp){&ranges, {[OP_INTERP_V8] = v8_unwind__runtime(vu)}},
	    42, pc, STACK, fp, frames, max);
}

static void test_chain(void **state)
{
	struct op_frame frames[16];
	struct user_unwind_result r;
	struct v8_unwind vu;

	(void)state;
	build(TAG(BYTECODE));
	r = walk(JIT_PC, STACK + 0x100, frames, 16, &vu);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 4);
	/* The JIT frame: its pc and the function's SharedFunctionInfo. */
	assert_int_equal(frames[0].kind, OP_FRAME_V8);
	assert_int_equal(frames[0].addr, JIT_PC);
	assert_int_equal(frames[0].data, TAG(SFI_JIT));
	assert_int_equal(OP_V8_AUX_KIND(frames[0].aux), OP_V8_FRAME_JIT);
	assert_int_equal(frames[0].flags, 0);
	/* The interpreted frame: its bytecode, its function's SFI, the offset. */
	assert_int_equal(frames[1].kind, OP_FRAME_V8);
	assert_int_equal(frames[1].addr, TAG(BYTECODE));
	assert_int_equal(frames[1].data, TAG(SFI_INTERP));
	assert_int_equal(OP_V8_AUX_KIND(frames[1].aux), OP_V8_FRAME_INTERPRETED);
	assert_int_equal(OP_V8_AUX_VALUE(frames[1].aux), 77);
	/* The entry frame: a builtin, a native frame node's symbols name. */
	assert_int_equal(frames[2].kind, OP_FRAME_NATIVE);
	assert_int_equal(frames[2].addr, ENTRY_RA);
	assert_int_equal(frames[2].flags, OP_FRAME_F_RETURN_ADDRESS);
	assert_int_equal(frames[3].kind, OP_FRAME_NATIVE);
	assert_int_equal(frames[3].addr, MAIN_RA);
	assert_int_equal(vu.stats[OP_V8_STAT_JIT], 1);
	assert_int_equal(vu.stats[OP_V8_STAT_INTERPRETED], 1);
	assert_int_equal(vu.stats[OP_V8_STAT_FRAMES], 3);
}

static void test_builtin_js_frame_stays_native(void **state)
{
	struct op_frame frames[16];
	struct user_unwind_result r;
	struct v8_unwind vu;

	(void)state;
	/* A JavaScript builtin's frame (Array.prototype.map...): its slot holds
	 * some other object, so no interpreted frame is made up. */
	build(TAG(NOT_BYTECODE));
	r = walk(JIT_PC, STACK + 0x100, frames, 16, &vu);
	assert_int_equal(r.error, 0);
	assert_int_equal(frames[1].kind, OP_FRAME_NATIVE);
	assert_int_equal(frames[1].addr, INTERP_RA);
	assert_int_equal(vu.stats[OP_V8_STAT_INTERPRETED], 0);
	/* A pointer that is no heap object at all (a Smi) neither. */
	build(0x1234ull << 32);
	r = walk(JIT_PC, STACK + 0x100, frames, 16, &vu);
	assert_int_equal(frames[1].kind, OP_FRAME_NATIVE);
}

static void test_stub_in_jit_code(void **state)
{
	struct op_frame frames[16];
	struct v8_unwind vu;

	(void)state;
	build(TAG(BYTECODE));
	put64(STACK + 0x100 - 8, 17 << 1); /* StubFrame's marker */
	walk(JIT_PC, STACK + 0x100, frames, 16, &vu);
	assert_int_equal(frames[0].kind, OP_FRAME_V8);
	assert_int_equal(OP_V8_AUX_KIND(frames[0].aux), OP_V8_FRAME_STUB);
	assert_int_equal(OP_V8_AUX_VALUE(frames[0].aux), 17);
	assert_int_equal(vu.stats[OP_V8_STAT_STUB], 1);
}

static void test_broken_chains(void **state)
{
	struct op_frame frames[16];
	struct user_unwind_result r;
	struct v8_unwind vu;

	(void)state;
	/* fp outside readable memory: one error frame, nothing made up. */
	build(TAG(BYTECODE));
	r = walk(JIT_PC, 0xdead0000ull, frames, 16, &vu);
	assert_int_equal(r.error, OP_UNWIND_ERR_V8);
	assert_int_equal(r.n_frames, 1);
	assert_int_equal(frames[0].kind, OP_FRAME_ERROR);
	assert_int_equal(frames[0].addr, OP_UNWIND_ERR_V8);
	assert_int_equal(vu.stats[OP_V8_STAT_READ_ERR], 1);
	/* A caller's fp below the frame's: the frame is kept, then the error. */
	build(TAG(BYTECODE));
	put64(STACK + 0x100, STACK + 0x80);
	r = walk(JIT_PC, STACK + 0x100, frames, 16, &vu);
	assert_int_equal(r.error, OP_UNWIND_ERR_V8);
	assert_int_equal(r.n_frames, 2);
	assert_int_equal(frames[0].kind, OP_FRAME_V8);
	assert_int_equal(frames[1].kind, OP_FRAME_ERROR);
	/* No state for the pid: the native rules get the frame. */
	memset(&vu, 0, sizeof(vu));
	{
		struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};

		build(TAG(BYTECODE));
		r = user_unwind__walk(&ops,
				      &(struct user_unwind_interp){
					  &ranges, {[OP_INTERP_V8] = v8_unwind__runtime(&vu)}},
				      42, JIT_PC, STACK, STACK + 0x100, frames, 16);
		assert_int_equal(frames[0].kind, OP_FRAME_NATIVE);
		/* Asked for each frame in V8 code (JIT, handler, entry). */
		assert_int_equal(vu.stats[OP_V8_STAT_NO_PROC], 3);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_chain),
	    cmocka_unit_test(test_builtin_js_frame_stays_native),
	    cmocka_unit_test(test_stub_in_jit_code),
	    cmocka_unit_test(test_broken_chains),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
