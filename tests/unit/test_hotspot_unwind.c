// SPDX-License-Identifier: Apache-2.0
/*
 * The HotSpot frame reader (bpf/include/omniprof/interp/hotspot_walk.h,
 * through its C build driven by user_unwind__walk() as the sampler drives the
 * BPF one) over a code cache and a stack built here by hand with JDK 17's
 * offsets (as its gHotSpotVMStructs gives them): a compiled leaf without debug
 * info, a compiled method that inlined three others (one frame each, with
 * their bcis), an interpreted frame (Method* and bcp below rbp), the call stub
 * (rbp-based) and the native frame below. Then what a hostile or changing JVM
 * can do: a pc in a free segment, an unreadable Method, a segment map that
 * loops, a frame size that is garbage: one clear error frame, never a crash
 * or a long walk. And the compressed line-number table decoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interp/hotspot/hotspot_method.h"
#include "interp/hotspot/hotspot_unwind.h"
#include "unwind/user_unwind.h"

#define MEM_BASE  0x7f0000000000ull
#define MEM_SIZE  0x20000
#define STACK	  (MEM_BASE + 0x1000)
#define STRINGS	  (MEM_BASE + 0x5000)
#define META	  (MEM_BASE + 0x6000) /* Methods and ConstMethods */
#define SEGMAP	  (MEM_BASE + 0x7000)
#define CODE	  (MEM_BASE + 0x8000) /* the code heap: 64-byte segments */
#define CODE_END  (MEM_BASE + 0x10000)
#define SCOPES	  (MEM_BASE + 0x11000)
#define NATIVE_RA 0x400100ull

/* Blobs (heap blocks; the blob is 16 bytes in) and the interpreter. */
#define RUN_BLOCK  (CODE + 0x0)
#define WORK_BLOCK (CODE + 0x800)
#define STUB_BLOCK (CODE + 0x1000)
#define INTERP	   (CODE + 0x2000) /* [INTERP, INTERP + 0x800) */
#define FREE_PC	   (CODE + 0x3000) /* a free segment */

/* JDK 17's offsets (gHotSpotVMStructs of Debian's 17.0 libjvm.so). */
static const struct op_jvm_proc proc17 = {
    .heaps = {{.low = CODE, .high = CODE_END, .segmap = SEGMAP, .log2_segment = 6}},
    .interp_start = INTERP,
    .interp_end = INTERP + 0x800,
    .blob_name = 96,
    .blob_frame_complete = 20,
    .blob_frame_size = 28,
    .blob_code_begin = 32,
    .blob_code_end = 40,
    .nmethod_method = 112,
    .method_const = 8,
    .const_method_size = 48,
    .heap_block_size = 16,
    .ifr_sender_sp = -1,
    .ifr_method = -3,
    .ifr_bcp = -8,
    .n_heaps = 1,
    .nm_scopes_data = 120,
    .nm_pcs_offset = 268,
    .nm_pcs_end_offset = 272,
    .nm_metadata_offset = 260,
    .nm_deopt_handler = 200,
    .nm_deopt_mh_handler = 208,
    .nm_orig_pc_offset = 256,
};

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

static void put8(uint64_t addr, uint8_t v)
{
	mem[addr - MEM_BASE] = v;
}

/* Methods: Method at META + 0x100 * i, its ConstMethod 0x80 after it. */
enum { M_WORK, M_C, M_B, M_A, M_RUN, M_MAIN, N_METHODS };
#define METHOD(i) (META + 0x100ull * (i))
#define CONST(i)  (METHOD(i) + 0x80)

/* The segment map of a block of n segments starting at segment first. */
static void mark_block(uint64_t block, uint32_t n)
{
	uint32_t first = (uint32_t)((block - CODE) >> 6);

	for (uint32_t i = 0; i < n; i++)
		put8(SEGMAP + first + i, (uint8_t)(i ? 1 : 0));
}

/*
 * A blob at block: code [begin, end) as offsets from the blob, frame_size
 * words; its HeapBlock header (JDK 17: _length in segments at 0, _used at 8)
 * says used, segs long.
 */
static uint64_t put_blob(uint64_t block, uint32_t segs, const char *name_addr_tag, uint64_t name,
			 int32_t frame_size, int32_t complete, uint32_t begin, uint32_t end)
{
	uint64_t blob = block + 16;

	(void)name_addr_tag;
	mark_block(block, segs);
	put64(block, segs);
	put8(block + 8, 1);
	put32(blob + proc17.blob_frame_size, (uint32_t)frame_size);
	put32(blob + proc17.blob_frame_complete, (uint32_t)complete);
	put64(blob + proc17.blob_code_begin, blob + begin);
	put64(blob + proc17.blob_code_end, blob + end);
	put64(blob + proc17.blob_name, name);
	return blob;
}

/* UNSIGNED5's excess put_u5 writes with: 0 (JDK 8 to 19), 1 (JDK 20+: OP_JVM_F_UNSIGNED5_X1). */
static uint32_t u5_excess;

/* UNSIGNED5 of v at *p (HotSpot's CompressedWriteStream::write_int): 192 - excess low codes. */
static void put_u5(uint64_t *p, uint32_t v)
{
	for (int i = 0; i < 4 && v >= 192 - u5_excess; i++) {
		v -= 192 - u5_excess;
		put8((*p)++, (uint8_t)(192 + (v & 63)));
		v >>= 6;
	}
	put8((*p)++, (uint8_t)(v + u5_excess));
}

/* A scope at off: (sender, metadata index, bci + 1). */
static void put_scope(uint32_t off, uint32_t sender, uint32_t index, uint32_t bci)
{
	uint64_t p = SCOPES + off;

	put_u5(&p, sender);
	put_u5(&p, index);
	put_u5(&p, bci + 1);
}

#define STUB_NAME    STRINGS
#define NMETHOD_NAME (STRINGS + 0x40)
#define RUN_RA_OFF   0x140 /* run's call of work: its return address, from code begin */
#define S0	     (STACK + 0x100)
#define WORK_PC	     (WORK_BLOCK + 16 + 0x180)
#define WORK_FRAME   4 /* words */
#define RUN_FRAME    6
#define FP_MAIN	     (STACK + 0x300)
#define FP_STUB	     (STACK + 0x400)
#define FP_NATIVE    (STACK + 0x500)
#define MAIN_BCI     7

static uint64_t run_blob, work_blob, stub_blob;

/*
 * native <- call stub <- main (interpreted) <- run (compiled; inlined a, b, c)
 * <- work (compiled leaf). Returns nothing: the registers are S0, WORK_PC, any rbp.
 */
static void build(void)
{
	uint64_t s1 = S0 + WORK_FRAME * 8, s2 = s1 + RUN_FRAME * 8;

	memset(mem, 0, sizeof(mem));
	memset(&mem[SEGMAP - MEM_BASE], 0xff, (CODE_END - CODE) >> 6);
	memcpy(&mem[STUB_NAME - MEM_BASE], "StubRoutines (1)", 17);
	memcpy(&mem[NMETHOD_NAME - MEM_BASE], "nmethod", 8);
	for (int i = 0; i < N_METHODS; i++)
		put64(METHOD(i) + proc17.method_const, CONST(i));

	/* run: PcDescs at 0x600 (sentinel, the call of work, the end), metadata at 0x680. */
	run_blob = put_blob(RUN_BLOCK, 32, "run", NMETHOD_NAME, RUN_FRAME, 0x10, 0x100, 0x500);
	put64(run_blob + proc17.nmethod_method, METHOD(M_RUN));
	put64(run_blob + proc17.nm_scopes_data, SCOPES);
	put32(run_blob + proc17.nm_pcs_offset, 0x600);
	put32(run_blob + proc17.nm_pcs_end_offset, 0x630);
	put32(run_blob + proc17.nm_metadata_offset, 0x680);
	put32(run_blob + 0x600, 0xffffffff); /* the sentinel: pc offset -1, no scope */
	put32(run_blob + 0x610, RUN_RA_OFF);
	put32(run_blob + 0x614, 0x10); /* c's scope */
	put32(run_blob + 0x620, 0x7fffffff);
	put64(run_blob + 0x680, METHOD(M_C));
	put64(run_blob + 0x688, METHOD(M_B));
	put64(run_blob + 0x690, METHOD(M_A));
	put64(run_blob + 0x698, METHOD(M_RUN));
	put_scope(0x10, 0x20, 1, 4);  /* c at bci 4, called by b */
	put_scope(0x20, 0x30, 2, 3);  /* b at bci 3, called by a */
	put_scope(0x30, 0x300, 3, 2); /* a at bci 2, called by run (an offset > 191) */
	put_scope(0x300, 0, 4, 9);    /* run at bci 9: the root */

	/* work: no PcDescs at all. */
	work_blob = put_blob(WORK_BLOCK, 32, "work", NMETHOD_NAME, WORK_FRAME, 0x10, 0x100, 0x500);
	put64(work_blob + proc17.nmethod_method, METHOD(M_WORK));

	/* The call stub: no frame size, rbp-based. */
	stub_blob = put_blob(STUB_BLOCK, 8, "stub", STUB_NAME, 0, 0, 0x40, 0x1f0);
	mark_block(INTERP - 16, 32);

	/* work's frame: its return address into run, run's into the interpreter. */
	put64(S0 + WORK_FRAME * 8 - 8, run_blob + 0x100 + RUN_RA_OFF);
	put64(s1 + RUN_FRAME * 8 - 8, INTERP + 0x100);
	put64(s1 + RUN_FRAME * 8 - 16, FP_MAIN);
	/* main, interpreted: its caller is the call stub. */
	put64(FP_MAIN, FP_STUB);
	put64(FP_MAIN + 8, stub_blob + 0x80);
	put64(FP_MAIN - 8, s2);
	put64(FP_MAIN - 24, METHOD(M_MAIN));
	put64(FP_MAIN - 64, CONST(M_MAIN) + 48 + MAIN_BCI);
	put64(FP_STUB, FP_NATIVE);
	put64(FP_STUB + 8, NATIVE_RA);
	put64(FP_NATIVE, 0);
	put64(FP_NATIVE + 8, 0);
}

static const struct op_interp_proc ranges = {
    .ranges = {{CODE, CODE_END, OP_INTERP_HOTSPOT, OP_INTERP_RANGE_F_UNWINDS}}};

static struct user_unwind_result walk(const struct op_jvm_proc *proc, uint64_t pc, uint64_t sp,
				      uint64_t fp, struct op_frame *frames, uint32_t max,
				      struct hotspot_unwind *hu)
{
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};

	memset(hu, 0, sizeof(*hu));
	hu->proc = proc;
	hu->read = mem_read;
	return user_unwind__walk(&ops,
				 &(struct user_unwind_interp){
				     &ranges, {[OP_INTERP_HOTSPOT] = hotspot_unwind__runtime(hu)}},
				 42, pc, sp, fp, frames, max);
}

static void assert_java(const struct op_frame *f, uint64_t method, uint32_t type, uint32_t bci)
{
	assert_int_equal(f->kind, OP_FRAME_HOTSPOT);
	assert_int_equal(f->addr, method);
	assert_int_equal(f->data >> OP_JVM_TYPE_SHIFT, type);
	if (type != OP_JVM_T_STUB)
		assert_int_equal(f->data & OP_JVM_FP_MASK, method + 0x80);
	assert_int_equal(f->aux & OP_JVM_BCI_MASK, bci);
	assert_int_equal(f->aux >> OP_JVM_AUX_TYPE_SHIFT, type);
}

static void test_whole_chain(void **state)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;

	(void)state;
	build();
	r = walk(&proc17, WORK_PC, S0, 0x1234, frames, 32, &hu);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 8);
	assert_java(&frames[0], METHOD(M_WORK), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	assert_java(&frames[1], METHOD(M_C), OP_JVM_T_INLINED, 4);
	assert_java(&frames[2], METHOD(M_B), OP_JVM_T_INLINED, 3);
	assert_java(&frames[3], METHOD(M_A), OP_JVM_T_INLINED, 2);
	assert_java(&frames[4], METHOD(M_RUN), OP_JVM_T_COMPILED, 9);
	assert_java(&frames[5], METHOD(M_MAIN), OP_JVM_T_INTERPRETED, MAIN_BCI);
	assert_java(&frames[6], STUB_NAME, OP_JVM_T_STUB, OP_JVM_BCI_NONE);
	assert_int_equal(frames[6].data & OP_JVM_FP_MASK, stub_blob);
	assert_int_equal(frames[7].kind, OP_FRAME_NATIVE);
	assert_int_equal(frames[7].addr, NATIVE_RA);
	assert_int_equal(hu.stats[OP_JVM_STAT_INLINED], 3);
	assert_int_equal(hu.stats[OP_JVM_STAT_NO_PCDESC], 1);
}

/*
 * JDK 23+: run's PcDescs and scopes in its immutable data (a C-heap block at
 * nmethod::_immutable_data: the dependencies first, PcDescs
 * [_scopes_pcs_offset, _scopes_data_offset), then the scopes), its metadata
 * at _mutable_data + _relocation_size (JDK 25) or at the blob's
 * _data_offset + _metadata_offset (a u2, JDK 23 and 24). Made-up offsets for
 * the new fields, JDK 17's for the rest; run's blob keeps nothing of the old
 * layout (its JDK 17 fields zeroed).
 */
#define IMM	 (MEM_BASE + 0x12000)
#define MUT	 (MEM_BASE + 0x13000)
#define IMM_PCS	 0x40
#define IMM_SCOP 0x70

static struct op_jvm_proc proc_imm(bool mutable_meta)
{
	struct op_jvm_proc p = proc17;

	p.flags = OP_JVM_F_IMMUTABLE | (mutable_meta ? OP_JVM_F_META_MUTABLE : 0);
	p.nm_immutable_data = 280;
	p.nm_pcs_offset = 272;
	p.nm_scopes_data = 276;
	p.nm_pcs_end_offset = 276;
	p.nm_meta_base = 288;
	p.nm_metadata_offset = 296;
	return p;
}

static void build_imm(bool mutable_meta)
{
	const struct op_jvm_proc p = proc_imm(mutable_meta);
	uint64_t scopes = IMM + IMM_SCOP, q;

	build();
	/* Nothing left where JDK 17 kept them: a wrong base finds no scope. */
	memset(&mem[run_blob + 0x600 - MEM_BASE], 0, 0x100);
	memset(&mem[SCOPES - MEM_BASE], 0, 0x400);
	put64(run_blob + proc17.nm_scopes_data, 0);
	put64(run_blob + p.nm_immutable_data, IMM);
	put32(run_blob + p.nm_pcs_offset, IMM_PCS);
	put32(run_blob + p.nm_scopes_data, IMM_SCOP);
	put32(IMM + IMM_PCS, 0xffffffff); /* the sentinel */
	put32(IMM + IMM_PCS + 0x10, RUN_RA_OFF);
	put32(IMM + IMM_PCS + 0x14, 0x10); /* c's scope */
	put32(IMM + IMM_PCS + 0x20, 0x7fffffff);
	if (mutable_meta) {
		put64(run_blob + p.nm_meta_base, MUT);
		put32(run_blob + p.nm_metadata_offset, 0x20);
		q = MUT + 0x20;
	} else {
		put32(run_blob + p.nm_meta_base, 0x600);
		/* A u2: its neighbour's bytes above it are not part of it. */
		put32(run_blob + p.nm_metadata_offset, 0xabcd0080);
		q = run_blob + 0x680;
	}
	put64(q, METHOD(M_C));
	put64(q + 8, METHOD(M_B));
	put64(q + 16, METHOD(M_A));
	put64(q + 24, METHOD(M_RUN));
	q = scopes + 0x10;
	put_u5(&q, 0x20);
	put_u5(&q, 1);
	put_u5(&q, 4 + 1);
	q = scopes + 0x20;
	put_u5(&q, 0x30);
	put_u5(&q, 2);
	put_u5(&q, 3 + 1);
	q = scopes + 0x30;
	put_u5(&q, 0x300);
	put_u5(&q, 3);
	put_u5(&q, 2 + 1);
	q = scopes + 0x300;
	put_u5(&q, 0);
	put_u5(&q, 4);
	put_u5(&q, 9 + 1);
}

static void test_jdk23_immutable_data(void **state)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;
	struct op_jvm_proc p;
	const uint8_t table[] = {(0 << 3) | 2, (5 << 3) | 2, 0};
	struct hotspot_line lines[4];
	struct hotspot_method m = {.lines = lines};
	int n;

	(void)state;
	for (int mutable_meta = 0; mutable_meta < 2; mutable_meta++) {
		/* JDK 20+'s UNSIGNED5: each byte its bits + 1. */
		u5_excess = 1;
		p = proc_imm(mutable_meta);
		p.flags |= OP_JVM_F_UNSIGNED5_X1;
		build_imm(mutable_meta);
		u5_excess = 0;
		r = walk(&p, WORK_PC, S0, 0x1234, frames, 32, &hu);
		assert_int_equal(r.error, 0);
		assert_int_equal(r.n_frames, 8);
		assert_java(&frames[0], METHOD(M_WORK), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
		assert_java(&frames[1], METHOD(M_C), OP_JVM_T_INLINED, 4);
		assert_java(&frames[2], METHOD(M_B), OP_JVM_T_INLINED, 3);
		assert_java(&frames[3], METHOD(M_A), OP_JVM_T_INLINED, 2);
		assert_java(&frames[4], METHOD(M_RUN), OP_JVM_T_COMPILED, 9);
		assert_java(&frames[5], METHOD(M_MAIN), OP_JVM_T_INTERPRETED, MAIN_BCI);
		assert_int_equal(hu.stats[OP_JVM_STAT_INLINED], 3);
		/* Their lines, from those bcis: (bci 0, line 2) (bci 5, line 4). */
		n = hotspot_method__decode_lines(table, sizeof(table), 0, lines, 4);
		assert_int_equal(n, 2);
		m.n_lines = (uint32_t)n;
		assert_int_equal(hotspot_method__line(&m, frames[1].aux & OP_JVM_BCI_MASK), 2);
		assert_int_equal(hotspot_method__line(&m, frames[4].aux & OP_JVM_BCI_MASK), 4);
		/* The same memory read with JDK 17's layout: run named alone. */
		r = walk(&proc17, WORK_PC, S0, 0x1234, frames, 32, &hu);
		assert_int_equal(r.error, 0);
		assert_int_equal(r.n_frames, 5);
		assert_java(&frames[1], METHOD(M_RUN), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
		assert_int_equal(hu.stats[OP_JVM_STAT_INLINED], 0);
	}
	/* JDK 17's layout over JDK 17's memory is decoded as before. */
	build();
	r = walk(&proc17, WORK_PC, S0, 0x1234, frames, 32, &hu);
	assert_int_equal(r.n_frames, 8);
	assert_java(&frames[1], METHOD(M_C), OP_JVM_T_INLINED, 4);
	assert_java(&frames[4], METHOD(M_RUN), OP_JVM_T_COMPILED, 9);
}

/* Stopped in work's prologue: only the return address is pushed. */
static void test_prologue(void **state)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;

	(void)state;
	build();
	put64(S0 + 0x800, run_blob + 0x100 + RUN_RA_OFF);
	r = walk(&proc17, work_blob + 0x100 + 4, S0 + 0x800, 0x1234, frames, 32, &hu);
	assert_int_equal(r.error, 0);
	assert_java(&frames[0], METHOD(M_WORK), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	assert_java(&frames[1], METHOD(M_C), OP_JVM_T_INLINED, 4);
}

static void assert_error_after(struct user_unwind_result r, const struct op_frame *frames,
			       uint32_t n)
{
	assert_int_equal(r.error, OP_UNWIND_ERR_HOTSPOT);
	assert_int_equal(r.n_frames, n + 1);
	assert_int_equal(frames[n].kind, OP_FRAME_ERROR);
	assert_int_equal(frames[n].addr, OP_UNWIND_ERR_HOTSPOT);
}

static void test_free_segment(void **state)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;

	(void)state;
	build();
	assert_error_after(walk(&proc17, FREE_PC, S0, 0, frames, 32, &hu), frames, 0);
	assert_int_equal(hu.stats[OP_JVM_STAT_NO_BLOB], 1);
}

static void test_unreadable_method(void **state)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;

	(void)state;
	build();
	put64(work_blob + proc17.nmethod_method, 0xdead0000ull);
	assert_error_after(walk(&proc17, WORK_PC, S0, 0, frames, 32, &hu), frames, 0);
	/* An interpreted frame whose Method is garbage, past the compiled ones. */
	build();
	put64(FP_MAIN - 24, 0xdead0000ull);
	assert_error_after(walk(&proc17, WORK_PC, S0, 0, frames, 32, &hu), frames, 5);
}

/* A segment map whose entries point back forever, or past its start. */
static void test_hostile_segmap(void **state)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;

	(void)state;
	build();
	for (uint32_t i = 0; i < 32; i++)
		put8(SEGMAP + 32 + i, 1);
	assert_error_after(walk(&proc17, WORK_PC, S0, 0, frames, 32, &hu), frames, 0);
	build();
	put8(SEGMAP + 38, 200);
	assert_error_after(walk(&proc17, WORK_PC, S0, 0, frames, 32, &hu), frames, 0);
}

/* A frame size that is garbage, a scope chain that loops: bounded, marked. */
static void test_hostile_frames(void **state)
{
	struct op_frame frames[64];
	struct hotspot_unwind hu;
	struct user_unwind_result r;

	(void)state;
	build();
	put32(work_blob + proc17.blob_frame_size, 0x7fffffff);
	assert_error_after(walk(&proc17, WORK_PC, S0, 0, frames, 64, &hu), frames, 0);
	build();
	put_scope(0x30, 0x10, 3, 2); /* a's sender is c again */
	r = walk(&proc17, WORK_PC, S0, 0, frames, 64, &hu);
	assert_int_equal(r.error, OP_UNWIND_ERR_MAX_DEPTH);
	assert_int_equal(r.n_frames, 64);
}

/* Reads of anything but the stack (the JVM's heap: blobs, PcDescs, scopes, Methods). */
static unsigned int heap_reads;

/* Reads of the segment map, of scopes. */
static unsigned int segmap_reads, scope_reads;

static int counting_read(void *ctx, void *dst, size_t size, uint64_t addr)
{
	if (addr < STACK || addr >= STACK + 0x1000)
		heap_reads++;
	if (addr >= SEGMAP && addr < CODE)
		segmap_reads++;
	if (addr >= SCOPES && addr < SCOPES + 0x1000)
		scope_reads++;
	return mem_read(ctx, dst, size, addr);
}

/*
 * run calling itself k times (each frame returning to the same pc in the
 * same nmethod): every frame is named, and the walk reads the nmethod, its
 * PcDescs, scopes and Methods once, then only the stack.
 */
static unsigned int walk_recursion(uint32_t k, struct op_frame *frames, uint32_t max)
{
	uint64_t s = S0 + WORK_FRAME * 8;
	struct hotspot_unwind hu;
	struct user_unwind_result r;

	build();
	for (uint32_t i = 0; i < k; i++, s += RUN_FRAME * 8) {
		put64(s + RUN_FRAME * 8 - 8,
		      i + 1 < k ? run_blob + 0x100 + RUN_RA_OFF : INTERP + 0x100);
		put64(s + RUN_FRAME * 8 - 16, i + 1 < k ? 0x5555 : FP_MAIN);
	}
	assert_true(s <= FP_MAIN - 64);
	put64(FP_MAIN - 8, s);
	memset(&hu, 0, sizeof(hu));
	hu.proc = &proc17;
	hu.read = counting_read;
	heap_reads = 0;
	r = user_unwind__walk(&(struct user_unwind_ops){counting_read, fp_rule, NULL, NULL},
			      &(struct user_unwind_interp){
				  &ranges, {[OP_INTERP_HOTSPOT] = hotspot_unwind__runtime(&hu)}},
			      42, WORK_PC, S0, 0x1234, frames, max);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 1 + 4 * k + 3);
	assert_java(&frames[0], METHOD(M_WORK), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	for (uint32_t i = 0; i < k; i++) {
		assert_java(&frames[1 + 4 * i], METHOD(M_C), OP_JVM_T_INLINED, 4);
		assert_java(&frames[2 + 4 * i], METHOD(M_B), OP_JVM_T_INLINED, 3);
		assert_java(&frames[3 + 4 * i], METHOD(M_A), OP_JVM_T_INLINED, 2);
		assert_java(&frames[4 + 4 * i], METHOD(M_RUN), OP_JVM_T_COMPILED, 9);
	}
	assert_java(&frames[1 + 4 * k], METHOD(M_MAIN), OP_JVM_T_INTERPRETED, MAIN_BCI);
	assert_int_equal(hu.stats[OP_JVM_STAT_INLINED], 3 * k);
	return heap_reads;
}

/*
 * A JDK 9+ segment map (each byte the distance back to its block's start)
 * costs one read per blob when the pc's segment is 15 or more in (the
 * window ending there holds the start of a small blob): work (segment 38,
 * its block at 32) and the call stub (66, at 64) one read each. Run's
 * return address is in segment 9, too near the map's start for the window:
 * one byte there, then its start's byte, two reads. The walk is the same
 * as with JDK 8's map (test_whole_chain).
 */
static void test_segmap_window(void **state)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;

	(void)state;
	build();
	for (uint32_t i = 0; i < 32; i++) {
		put8(SEGMAP + i, (uint8_t)i);
		put8(SEGMAP + 32 + i, (uint8_t)i);
	}
	for (uint32_t i = 0; i < 8; i++)
		put8(SEGMAP + 64 + i, (uint8_t)i);
	memset(&hu, 0, sizeof(hu));
	hu.proc = &proc17;
	hu.read = counting_read;
	segmap_reads = 0;
	r = user_unwind__walk(&(struct user_unwind_ops){counting_read, fp_rule, NULL, NULL},
			      &(struct user_unwind_interp){
				  &ranges, {[OP_INTERP_HOTSPOT] = hotspot_unwind__runtime(&hu)}},
			      42, WORK_PC, S0, 0x1234, frames, 32);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 8);
	assert_java(&frames[0], METHOD(M_WORK), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	assert_java(&frames[4], METHOD(M_RUN), OP_JVM_T_COMPILED, 9);
	assert_java(&frames[6], STUB_NAME, OP_JVM_T_STUB, OP_JVM_BCI_NONE);
	assert_int_equal(segmap_reads, 1 + 2 + 1);
}

/*
 * The cross-sample nmethod cache (BPF's `jvm_pc_cache`; the same code in C,
 * over a table here keyed like the map by pid and return address).
 */
#define PC_CACHE_N     8
#define GC_COUNT       (META + 0xf00) /* CollectedHeap::_total_collections */
#define COMPILE_ID_OFF 180	      /* nmethod::_compile_id (made up: a free offset) */
/* Where the tests put it: past Method* (180), or before it (64, another free offset). */
static uint32_t compile_id_off = COMPILE_ID_OFF;
#define RUN_ID	101
#define WORK_ID 102

static struct {
	bool used;
	uint32_t pid;
	uint64_t pc;
	struct op_jvm_pc_entry e;
} pc_slots[PC_CACHE_N];
static unsigned int pc_puts;   /* return addresses remembered */
static unsigned int leaf_puts; /* leaf nmethods remembered (OP_JVM_PC_LEAF) */

static const struct op_jvm_pc_entry *pc_get(void *ctx, uint32_t pid, uint64_t pc)
{
	(void)ctx;
	for (int i = 0; i < PC_CACHE_N; i++)
		if (pc_slots[i].used && pc_slots[i].pid == pid && pc_slots[i].pc == pc)
			return &pc_slots[i].e;
	return NULL;
}

static void pc_put(void *ctx, uint32_t pid, uint64_t pc, const struct op_jvm_pc_entry *e)
{
	int free_slot = -1;

	(void)ctx;
	if (pc == OP_JVM_PC_LEAF)
		leaf_puts++;
	else
		pc_puts++;
	for (int i = 0; i < PC_CACHE_N; i++) {
		if (pc_slots[i].used && pc_slots[i].pid == pid && pc_slots[i].pc == pc) {
			pc_slots[i].e = *e;
			return;
		}
		if (!pc_slots[i].used && free_slot < 0)
			free_slot = i;
	}
	assert_true(free_slot >= 0);
	pc_slots[free_slot].used = true;
	pc_slots[free_slot].pid = pid;
	pc_slots[free_slot].pc = pc;
	pc_slots[free_slot].e = *e;
}

static const struct hotspot_pc_cache pc_cache = {pc_get, pc_put, NULL};

/* BPF's `jvm_chain_cache`, its slots here; walk_cached_at() uses it when chain_on. */
static struct op_jvm_chain chain_slots[OP_JVM_CHAIN_SLOTS];
static bool chain_on;

static struct op_jvm_chain *chain_slot(void *ctx, uint32_t i)
{
	(void)ctx;
	return i < OP_JVM_CHAIN_SLOTS ? &chain_slots[i] : NULL;
}

static const struct hotspot_chain_cache chain_cache = {chain_slot, NULL};

static struct op_jvm_proc proc_cached(void)
{
	struct op_jvm_proc p = proc17;

	p.gc_count = GC_COUNT;
	p.nm_compile_id = (uint16_t)compile_id_off;
	p.hb_fields = 0 | (8 << 4); /* HeapBlock::Header::_length at 0, _used at 8 */
	p.gen = 1;
	return p;
}

/* build() with compile ids and a collection count. */
static void build_cached(void)
{
	build();
	put32(run_blob + compile_id_off, RUN_ID);
	put32(work_blob + compile_id_off, WORK_ID);
	put32(GC_COUNT, 5);
}

/* A walk from leaf pc pc with the cache, its reads counted. */
static struct user_unwind_result walk_cached_at(const struct op_jvm_proc *proc, uint32_t pid,
						uint64_t pc, struct op_frame *frames,
						struct hotspot_unwind *hu)
{
	memset(hu, 0, sizeof(*hu));
	hu->proc = proc;
	hu->read = counting_read;
	hu->pc_cache = &pc_cache;
	hu->chain_cache = chain_on ? &chain_cache : NULL;
	heap_reads = 0;
	segmap_reads = 0;
	scope_reads = 0;
	return user_unwind__walk(&(struct user_unwind_ops){counting_read, fp_rule, NULL, NULL},
				 &(struct user_unwind_interp){
				     &ranges, {[OP_INTERP_HOTSPOT] = hotspot_unwind__runtime(hu)}},
				 pid, pc, S0, 0x1234, frames, 32);
}

/* A walk from work's pc with the cache, its reads counted. */
static struct user_unwind_result walk_cached(const struct op_jvm_proc *proc, uint32_t pid,
					     struct op_frame *frames, struct hotspot_unwind *hu)
{
	return walk_cached_at(proc, pid, WORK_PC, frames, hu);
}

/* The walk of test_whole_chain, run's root frame named root. */
static void assert_chain(const struct user_unwind_result *r, const struct op_frame *frames,
			 uint64_t root)
{
	assert_int_equal(r->error, 0);
	assert_int_equal(r->n_frames, 8);
	assert_java(&frames[0], METHOD(M_WORK), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	assert_java(&frames[1], METHOD(M_C), OP_JVM_T_INLINED, 4);
	assert_java(&frames[2], METHOD(M_B), OP_JVM_T_INLINED, 3);
	assert_java(&frames[3], METHOD(M_A), OP_JVM_T_INLINED, 2);
	assert_java(&frames[4], root, OP_JVM_T_COMPILED, 9);
	assert_java(&frames[5], METHOD(M_MAIN), OP_JVM_T_INTERPRETED, MAIN_BCI);
	assert_java(&frames[6], STUB_NAME, OP_JVM_T_STUB, OP_JVM_BCI_NONE);
	assert_int_equal(frames[7].addr, NATIVE_RA);
}

/*
 * Run's nmethod is remembered for its return address (work, the leaf, is
 * at an exact pc: remembered as the pid's last leaf, test_leaf_cache), and
 * the next walk takes it: the same
 * frames without run's ten segment map reads (JDK 8's linear map), its
 * PcDesc search or its first scope's read (c's, decoded with it), its
 * compile id and Method* read again (one read of the span between them)
 * and its block's start checked in the segment map (one byte).
 */
static void test_pc_cache_hit(void **state)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;
	struct op_jvm_proc p = proc_cached();
	unsigned int first_reads;

	(void)state;
	build_cached();
	memset(pc_slots, 0, sizeof(pc_slots));
	pc_puts = 0;
	r = walk_cached(&p, 42, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(pc_puts, 1);
	assert_int_equal(hu.stats[OP_JVM_STAT_REMEMBERED], 0);
	assert_int_equal(segmap_reads, 1 + 10 + 1);
	assert_int_equal(scope_reads, 4); /* c, b, a, run */
	first_reads = heap_reads;

	r = walk_cached(&p, 42, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(hu.stats[OP_JVM_STAT_REMEMBERED], 1);
	assert_int_equal(pc_puts, 1); /* a remembered nmethod is not stored again */
	assert_int_equal(segmap_reads, 1 + 1 + 1);
	assert_int_equal(scope_reads, 3); /* b, a, run */
	assert_true(heap_reads + 10 < first_reads);
}

enum pc_cache_change {
	PCC_RECOMPILED,	  /* another compilation at the address (another id and method) */
	PCC_SAME_ID,	  /* the same id, another Method* at the address: not that nmethod */
	PCC_SAME_METHOD,  /* the same method compiled again there: another id */
	PCC_COLLECTED,	  /* a collection since (Methods may be freed) */
	PCC_OTHER_IMAGE,  /* an exec or a pid's reuse: another JVM image */
	PCC_OTHER_PID,	  /* another process, another JVM at the same addresses */
	PCC_EPOCH_UNKNOWN /* no collection count: nothing is remembered */
};

/* After a walk that fills the cache, change: the next walk takes nothing from it. */
static void pc_cache_refused(enum pc_cache_change change)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;
	struct op_jvm_proc p = proc_cached();
	uint64_t root = METHOD(M_RUN);
	uint32_t pid = 42;

	build_cached();
	memset(pc_slots, 0, sizeof(pc_slots));
	pc_puts = 0;
	if (change == PCC_EPOCH_UNKNOWN)
		p.gc_count = 0;
	r = walk_cached(&p, pid, frames, &hu);
	assert_chain(&r, frames, root);
	assert_int_equal(pc_puts, change == PCC_EPOCH_UNKNOWN ? 0 : 1);
	switch (change) {
	case PCC_RECOMPILED:
		put32(run_blob + compile_id_off, RUN_ID + 10);
		/* fallthrough */
	case PCC_SAME_ID:
		root = METHOD(M_MAIN);
		put64(run_blob + proc17.nmethod_method, root);
		break;
	case PCC_SAME_METHOD:
		put32(run_blob + compile_id_off, RUN_ID + 10);
		break;
	case PCC_COLLECTED:
		put32(GC_COUNT, 6);
		break;
	case PCC_OTHER_IMAGE:
		p.gen = 2;
		break;
	case PCC_OTHER_PID:
		pid = 43;
		break;
	case PCC_EPOCH_UNKNOWN:
		break;
	}
	r = walk_cached(&p, pid, frames, &hu);
	/* Read anew: the frame is the nmethod's now, never the one remembered. */
	assert_chain(&r, frames, root);
	assert_int_equal(hu.stats[OP_JVM_STAT_REMEMBERED], 0);
	/* Another nmethod at the address is counted; the other refusals end before the read. */
	assert_int_equal(hu.stats[OP_JVM_STAT_REPLACED],
			 change == PCC_RECOMPILED || change == PCC_SAME_ID);
	assert_int_equal(hu.stats[OP_JVM_STAT_RECOMPILED], change == PCC_SAME_METHOD);
	assert_int_equal(segmap_reads, 1 + 10 + 1);
	assert_int_equal(scope_reads, 4);
}

enum chain_change {
	CC_NONE,
	CC_RECOMPILED, /* another compilation at run's address, its scopes at the same offsets */
	CC_COLLECTED,  /* a collection since (its Methods may be freed) */
	CC_OTHER_PID,  /* another process, another JVM at the same addresses */
};

/*
 * The scope chain cache (BPF's `jvm_chain_cache`): the first walk decodes
 * run's scopes c, b, a, run and keeps them by run's compile id; the next
 * one takes them with no scope read (c from run's remembered nmethod, b, a
 * and run from the chain). After change, the chain is never taken: another
 * compilation at the same address, whose first scope is at the same place
 * in its scopes data (here inlining only b, at another bci), is named from
 * its own scopes.
 */
static void chain_cache_after(enum chain_change change)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;
	struct op_jvm_proc p = proc_cached();
	uint32_t pid = 42;

	build_cached();
	memset(pc_slots, 0, sizeof(pc_slots));
	memset(chain_slots, 0, sizeof(chain_slots));
	chain_on = true;
	r = walk_cached(&p, pid, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(hu.stats[OP_JVM_STAT_CHAIN], 0);
	assert_int_equal(scope_reads, 4); /* c, b, a, run */

	switch (change) {
	case CC_NONE:
		break;
	case CC_RECOMPILED:
		put32(run_blob + compile_id_off, RUN_ID + 10);
		put_scope(0x10, 0x300, 2, 5); /* b at bci 5, called by run */
		break;
	case CC_COLLECTED:
		put32(GC_COUNT, 6);
		break;
	case CC_OTHER_PID:
		pid = 43;
		break;
	}
	r = walk_cached(&p, pid, frames, &hu);
	chain_on = false;
	if (change == CC_NONE) {
		assert_chain(&r, frames, METHOD(M_RUN));
		assert_int_equal(hu.stats[OP_JVM_STAT_CHAIN], 1);
		assert_int_equal(hu.stats[OP_JVM_STAT_INLINED], 3);
		assert_int_equal(scope_reads, 0);
		return;
	}
	assert_int_equal(hu.stats[OP_JVM_STAT_CHAIN], 0);
	if (change != CC_RECOMPILED) {
		assert_chain(&r, frames, METHOD(M_RUN));
		assert_int_equal(scope_reads, 4);
		return;
	}
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 6);
	assert_java(&frames[0], METHOD(M_WORK), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	assert_java(&frames[1], METHOD(M_B), OP_JVM_T_INLINED, 5);
	assert_java(&frames[2], METHOD(M_RUN), OP_JVM_T_COMPILED, 9);
	assert_java(&frames[3], METHOD(M_MAIN), OP_JVM_T_INTERPRETED, MAIN_BCI);
	assert_int_equal(scope_reads, 2); /* b, run */
}

static void test_chain_cache(void **state)
{
	(void)state;
	chain_cache_after(CC_NONE);
	chain_cache_after(CC_RECOMPILED);
	chain_cache_after(CC_COLLECTED);
	chain_cache_after(CC_OTHER_PID);
}

static void test_pc_cache_checks(void **state)
{
	(void)state;
	pc_cache_refused(PCC_RECOMPILED);
	pc_cache_refused(PCC_SAME_ID);
	pc_cache_refused(PCC_SAME_METHOD);
	pc_cache_refused(PCC_COLLECTED);
	pc_cache_refused(PCC_OTHER_IMAGE);
	pc_cache_refused(PCC_OTHER_PID);
	pc_cache_refused(PCC_EPOCH_UNKNOWN);
}

/*
 * A hit reads the compile id and Method* again as one span, whichever comes
 * first in the nmethod: with the id before Method*, the same hit and the
 * same refusals.
 */
static void test_pc_cache_id_before_method(void **state)
{
	compile_id_off = 64;
	test_pc_cache_hit(state);
	pc_cache_refused(PCC_RECOMPILED);
	pc_cache_refused(PCC_SAME_ID);
	pc_cache_refused(PCC_SAME_METHOD);
	compile_id_off = COMPILE_ID_OFF;
}

enum pc_cache_block {
	PCB_USED,  /* the block as it was: the hit taken */
	PCB_FREED, /* run freed (its header's _used false), nothing else changed */
	PCB_TAIL, /* ... and a new nmethod carved from the free block's tail at run's return address
		   */
	PCB_SHORT /* the block's _length ends before the return address */
};

/*
 * run's nmethod remembered, then its CodeHeap block changed under the same
 * compile id and Method* (a freed nmethod's header stays as it was): the
 * hit is refused (counted) and the pc looked up anew. In PCB_TAIL the
 * lookup finds the new nmethod (b's, no PcDescs) in the tail of the freed
 * block, a frame of run's size: without the block's check the remembered
 * run, with its inlined c, b, a, would name it.
 */
static void pc_cache_block(enum pc_cache_block change)
{
	const uint64_t tail = RUN_BLOCK + 8 * 64; /* run's return address is in segment 9 */
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;
	struct op_jvm_proc p = proc_cached();
	uint64_t nb;

	build_cached();
	memset(pc_slots, 0, sizeof(pc_slots));
	pc_puts = 0;
	r = walk_cached(&p, 42, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(pc_puts, 1);
	switch (change) {
	case PCB_USED:
		break;
	case PCB_TAIL:
		nb = put_blob(tail, 24, "new", NMETHOD_NAME, RUN_FRAME, 0x10, 0x20, 0x500);
		put64(nb + proc17.nmethod_method, METHOD(M_B));
		put32(nb + compile_id_off, RUN_ID + 50);
		assert_true(nb + 0x20 <= run_blob + 0x100 + RUN_RA_OFF - 1);
		/* The free block: what is left of run's. */
		put64(RUN_BLOCK, 8);
		/* fallthrough */
	case PCB_FREED:
		put8(RUN_BLOCK + 8, 0);
		break;
	case PCB_SHORT:
		put64(RUN_BLOCK, 9); /* segments 0..8: the return address is in 9 */
		break;
	}
	r = walk_cached(&p, 42, frames, &hu);
	assert_int_equal(hu.stats[OP_JVM_STAT_REMEMBERED], change == PCB_USED ? 1 : 0);
	assert_int_equal(hu.stats[OP_JVM_STAT_FREED], change == PCB_USED ? 0 : 1);
	if (change == PCB_FREED) {
		/* Looked up anew, the pc is in a freed block: no frame for it, counted. */
		assert_error_after(r, frames, 1);
		assert_int_equal(hu.stats[OP_JVM_STAT_FREE_BLOCK], 1);
		return;
	}
	if (change != PCB_TAIL) {
		assert_chain(&r, frames, METHOD(M_RUN));
		assert_int_equal(segmap_reads, change == PCB_USED ? 1 + 1 + 1 : 1 + 10 + 1);
		return;
	}
	/* The new nmethod's frame, of b's (no PcDescs: no bci), then main as before. */
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 5);
	assert_java(&frames[0], METHOD(M_WORK), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	assert_java(&frames[1], METHOD(M_B), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	assert_java(&frames[2], METHOD(M_MAIN), OP_JVM_T_INTERPRETED, MAIN_BCI);
	assert_java(&frames[3], STUB_NAME, OP_JVM_T_STUB, OP_JVM_BCI_NONE);
	assert_int_equal(frames[4].addr, NATIVE_RA);
	/* The new nmethod is remembered for the address now, and taken next. */
	assert_int_equal(pc_puts, 2);
	r = walk_cached(&p, 42, frames, &hu);
	assert_int_equal(r.n_frames, 5);
	assert_java(&frames[1], METHOD(M_B), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	assert_int_equal(hu.stats[OP_JVM_STAT_REMEMBERED], 1);
	assert_int_equal(hu.stats[OP_JVM_STAT_FREED], 0);
}

static void test_pc_cache_block(void **state)
{
	(void)state;
	pc_cache_block(PCB_USED);
	pc_cache_block(PCB_FREED);
	pc_cache_block(PCB_TAIL);
	pc_cache_block(PCB_SHORT);
}

/*
 * With a code count (JDK 17: NMethodSweeper::_traversals, which moves
 * before any nmethod is freed): a remembered nmethod whose count is as when
 * it was last read or checked is taken without the check read (no header
 * span, no segment map byte: only the stub's lookup reads the map). When the
 * count moves, the next use checks it as before: a freed block is refused
 * (counted) and never named; one still used is stored again with the new
 * count and then taken unchecked. An unreadable count (or one of ~0, which
 * reads as not known) checks every use, as without one.
 */
#define CODE_COUNT (META + 0xf08) /* NMethodSweeper::_traversals (a long) */

static void test_pc_cache_code_count(void **state)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;
	struct op_jvm_proc p = proc_cached();
	unsigned int checked_reads;

	(void)state;
	p.code_count = CODE_COUNT;
	build_cached();
	put64(CODE_COUNT, 7);
	memset(pc_slots, 0, sizeof(pc_slots));
	pc_puts = leaf_puts = 0;
	r = walk_cached(&p, 42, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(pc_puts, 1);
	assert_int_equal(leaf_puts, 1);
	assert_int_equal(hu.stats[OP_JVM_STAT_UNCHANGED], 0);

	/* The count unchanged: run and the leaf taken without a read of them. */
	r = walk_cached(&p, 42, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(hu.stats[OP_JVM_STAT_REMEMBERED], 1);
	assert_int_equal(hu.stats[OP_JVM_STAT_LEAF], 1);
	assert_int_equal(hu.stats[OP_JVM_STAT_UNCHANGED], 2);
	assert_int_equal(segmap_reads, 1);
	assert_int_equal(pc_puts, 1);
	assert_int_equal(leaf_puts, 1);

	/* A sweep since, nothing freed: checked (header span and map byte) and stored again. */
	put64(CODE_COUNT, 8);
	r = walk_cached(&p, 42, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(hu.stats[OP_JVM_STAT_REMEMBERED], 1);
	assert_int_equal(hu.stats[OP_JVM_STAT_UNCHANGED], 0);
	assert_int_equal(segmap_reads, 1 + 1 + 1);
	assert_int_equal(pc_puts, 2);
	assert_int_equal(leaf_puts, 2);
	checked_reads = heap_reads;
	r = walk_cached(&p, 42, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(hu.stats[OP_JVM_STAT_UNCHANGED], 2);
	assert_int_equal(segmap_reads, 1);
	assert_true(heap_reads < checked_reads);
	assert_int_equal(pc_puts, 2);

	/* The count unreadable: every use checked, none stored again. */
	p.code_count = MEM_BASE - 0x1000;
	r = walk_cached(&p, 42, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(hu.stats[OP_JVM_STAT_REMEMBERED], 1);
	assert_int_equal(hu.stats[OP_JVM_STAT_UNCHANGED], 0);
	assert_int_equal(segmap_reads, 1 + 1 + 1);
	assert_int_equal(pc_puts, 2);
	p.code_count = CODE_COUNT;

	/* A count of ~0 (its mark would be 0): checked, as not known. */
	put64(CODE_COUNT, 0xffffffffull);
	for (int i = 0; i < 2; i++) {
		r = walk_cached(&p, 42, frames, &hu);
		assert_chain(&r, frames, METHOD(M_RUN));
		assert_int_equal(hu.stats[OP_JVM_STAT_UNCHANGED], 0);
		assert_int_equal(segmap_reads, 1 + 1 + 1);
	}

	/* Swept and run's block freed (its header as it was): refused, never named. */
	put64(CODE_COUNT, 10);
	put8(RUN_BLOCK + 8, 0);
	r = walk_cached(&p, 42, frames, &hu);
	assert_int_equal(hu.stats[OP_JVM_STAT_LEAF], 1); /* work, checked: not freed */
	assert_int_equal(hu.stats[OP_JVM_STAT_REMEMBERED], 0);
	assert_int_equal(hu.stats[OP_JVM_STAT_UNCHANGED], 0);
	assert_int_equal(hu.stats[OP_JVM_STAT_FREED], 1);
	assert_error_after(r, frames, 1);
	assert_int_equal(hu.stats[OP_JVM_STAT_FREE_BLOCK], 1);
}

/*
 * The leaf (an exact pc: never a return address) is remembered as the
 * pid's last leaf nmethod and taken, after a return address's checks, for
 * the next leaf pc in its code: another pc in work, read with one span of
 * its header and one segment map byte; a leaf pc in another nmethod (run)
 * is looked up anew and replaces it.
 */
static void test_leaf_cache(void **state)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;
	struct op_jvm_proc p = proc_cached();
	unsigned int first_reads;

	(void)state;
	build_cached();
	memset(pc_slots, 0, sizeof(pc_slots));
	pc_puts = leaf_puts = 0;
	r = walk_cached(&p, 42, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(leaf_puts, 1);
	assert_int_equal(hu.stats[OP_JVM_STAT_LEAF], 0);
	first_reads = heap_reads;

	r = walk_cached(&p, 42, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(hu.stats[OP_JVM_STAT_LEAF], 1);
	assert_int_equal(hu.stats[OP_JVM_STAT_REMEMBERED], 1);
	assert_int_equal(leaf_puts, 1); /* taken, not stored again */
	assert_int_equal(segmap_reads, 1 + 1 + 1);
	assert_true(heap_reads < first_reads);

	/* Another pc in work's code: the same nmethod, taken. */
	r = walk_cached_at(&p, 42, WORK_PC + 0x40, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(hu.stats[OP_JVM_STAT_LEAF], 1);
	assert_int_equal(hu.stats[OP_JVM_STAT_FREED], 0);

	/* Another pid: nothing of pid 42's leaf. */
	r = walk_cached(&p, 43, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(hu.stats[OP_JVM_STAT_LEAF], 0);

	/* A leaf pc in run (its PcDesc at the call: c inlined): run is the leaf now. */
	r = walk_cached_at(&p, 42, run_blob + 0x100 + 0x20, frames, &hu);
	assert_int_equal(hu.stats[OP_JVM_STAT_LEAF], 0);
	assert_java(&frames[0], METHOD(M_C), OP_JVM_T_INLINED, 4);
	assert_int_equal(leaf_puts, 3);
	r = walk_cached_at(&p, 42, run_blob + 0x100 + 0x30, frames, &hu);
	assert_int_equal(hu.stats[OP_JVM_STAT_LEAF], 1);
	assert_java(&frames[0], METHOD(M_C), OP_JVM_T_INLINED, 4);
	/* work's leaf entry is gone: looked up anew. */
	r = walk_cached(&p, 42, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(hu.stats[OP_JVM_STAT_LEAF], 0);
	assert_int_equal(leaf_puts, 4);
}

/*
 * work remembered as the leaf, then its block freed (its header as it was)
 * or another compilation put at its address: the leaf is refused and looked
 * up anew, never named from the cache.
 */
static void test_leaf_cache_refused(void **state)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;
	struct op_jvm_proc p = proc_cached();

	(void)state;
	for (int recompiled = 0; recompiled < 2; recompiled++) {
		build_cached();
		memset(pc_slots, 0, sizeof(pc_slots));
		pc_puts = leaf_puts = 0;
		r = walk_cached(&p, 42, frames, &hu);
		assert_chain(&r, frames, METHOD(M_RUN));
		assert_int_equal(leaf_puts, 1);
		if (!recompiled) {
			/* Freed: no frame for the pc, counted twice (refused, then a freed block).
			 */
			put8(WORK_BLOCK + 8, 0);
			r = walk_cached(&p, 42, frames, &hu);
			assert_error_after(r, frames, 0);
			assert_int_equal(hu.stats[OP_JVM_STAT_LEAF], 0);
			assert_int_equal(hu.stats[OP_JVM_STAT_FREED], 1);
			assert_int_equal(hu.stats[OP_JVM_STAT_FREE_BLOCK], 1);
			continue;
		}
		/* main compiled at work's address, another id: named main. */
		put32(work_blob + compile_id_off, WORK_ID + 10);
		put64(work_blob + proc17.nmethod_method, METHOD(M_MAIN));
		r = walk_cached(&p, 42, frames, &hu);
		assert_int_equal(hu.stats[OP_JVM_STAT_LEAF], 0);
		assert_java(&frames[0], METHOD(M_MAIN), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
		assert_java(&frames[1], METHOD(M_C), OP_JVM_T_INLINED, 4);
		assert_int_equal(leaf_puts, 2);
		/* The new compilation is the leaf now, and taken next. */
		r = walk_cached(&p, 42, frames, &hu);
		assert_int_equal(hu.stats[OP_JVM_STAT_LEAF], 1);
		assert_java(&frames[0], METHOD(M_MAIN), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	}
}

/*
 * A pc in a freed block (its HeapBlock's _used false, the segment map and
 * the rest of its header as they were): the full lookup gives no frame for
 * it, counted; when the header's layout is not known (no compile id) it
 * cannot tell, and names the blob as before.
 */
static void test_freed_block(void **state)
{
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct op_jvm_proc p = proc_cached();
	struct user_unwind_result r;

	(void)state;
	build_cached();
	put8(RUN_BLOCK + 8, 0);
	p.gc_count = 0; /* nothing remembered: every lookup is a full one */
	r = walk(&p, WORK_PC, S0, 0x1234, frames, 32, &hu);
	assert_error_after(r, frames, 1);
	assert_java(&frames[0], METHOD(M_WORK), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	assert_int_equal(hu.stats[OP_JVM_STAT_FREE_BLOCK], 1);
	assert_int_equal(hu.stats[OP_JVM_STAT_NO_BLOB], 1);
	/* The leaf's block freed too: not even the first frame. */
	put8(WORK_BLOCK + 8, 0);
	r = walk(&p, WORK_PC, S0, 0x1234, frames, 32, &hu);
	assert_error_after(r, frames, 0);
	assert_int_equal(hu.stats[OP_JVM_STAT_FREE_BLOCK], 1);
	/* Without the header's layout: the blob as the segment map finds it. */
	put8(WORK_BLOCK + 8, 1);
	p.nm_compile_id = 0;
	p.hb_fields = 0;
	r = walk(&p, WORK_PC, S0, 0x1234, frames, 32, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(hu.stats[OP_JVM_STAT_FREE_BLOCK], 0);
}

/*
 * run's block freed and merged into a free block before it, and a new
 * nmethod (b's) carved from that block beginning before run's header and
 * covering it, its code holding run's return address: run's header still
 * there with the same 12 bytes (compile id, Method*), used and covering the
 * pc (as an unwritten part of the new block would hold it). The segment map
 * says run's block no longer begins there: refused, counted, and the new
 * nmethod named. The heap begins 16 segments before CODE for room.
 */
static void test_pc_cache_covered_header(void **state)
{
	const uint64_t nb_block = CODE - 0x400;
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;
	struct op_jvm_proc p = proc_cached();
	uint64_t nb;

	(void)state;
	p.heaps[0].low = nb_block;
	p.heaps[0].segmap = SEGMAP - 16;
	build_cached();
	memset(&mem[SEGMAP - 16 - MEM_BASE], 0xff, 16);
	memset(pc_slots, 0, sizeof(pc_slots));
	pc_puts = 0;
	r = walk_cached(&p, 42, frames, &hu);
	assert_chain(&r, frames, METHOD(M_RUN));
	assert_int_equal(pc_puts, 1);
	r = walk_cached(&p, 42, frames, &hu);
	assert_int_equal(hu.stats[OP_JVM_STAT_REMEMBERED], 1);

	/* The new block: segments 0..31 of the heap, run's 16..47 before. */
	for (uint32_t i = 0; i < 32; i++)
		put8(SEGMAP - 16 + i, (uint8_t)(i ? 1 : 0));
	put64(nb_block, 32);
	put8(nb_block + 8, 1);
	nb = nb_block + 16;
	put32(nb + proc17.blob_frame_size, RUN_FRAME);
	put32(nb + proc17.blob_frame_complete, 0x10);
	put64(nb + proc17.blob_code_begin, nb + 0x20);
	put64(nb + proc17.blob_code_end, run_blob + 0x500);
	put64(nb + proc17.blob_name, NMETHOD_NAME);
	put64(nb + proc17.nmethod_method, METHOD(M_B));
	put32(nb + compile_id_off, RUN_ID + 60);
	r = walk_cached(&p, 42, frames, &hu);
	assert_int_equal(hu.stats[OP_JVM_STAT_REMEMBERED], 0);
	assert_int_equal(hu.stats[OP_JVM_STAT_FREED], 1);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 5);
	assert_java(&frames[0], METHOD(M_WORK), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	assert_java(&frames[1], METHOD(M_B), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	assert_java(&frames[2], METHOD(M_MAIN), OP_JVM_T_INTERPRETED, MAIN_BCI);
}

static void test_recursion_cached(void **state)
{
	struct op_frame frames[64];
	unsigned int one, eight;

	(void)state;
	one = walk_recursion(1, frames, 64);
	eight = walk_recursion(8, frames, 64);
	assert_true(one > 0);
	assert_int_equal(eight, one);
}

/*
 * The PcDesc search against the rule it implements, for nmethods of 1 to
 * 500 PcDescs (one read, the window's edges, a binary search first): run's
 * PcDescs are the sentinel (-1), (2i, scope of bci i) for i = 1..n and the
 * end (no scope); a return at pc offset t is bci ceil(t / 2), past 2n the
 * last one, n.
 */
static void test_pcdesc_search(void **state)
{
	static const uint32_t sizes[] = {1, 2, 15, 16, 17, 18, 19, 33, 100, 500};
	const uint32_t pcs = 0xb000, scopes = 0x400;
	struct op_frame frames[32];
	struct hotspot_unwind hu;

	(void)state;
	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		uint32_t n = sizes[z];

		build();
		put32(run_blob + proc17.nm_pcs_offset, pcs);
		put32(run_blob + proc17.nm_pcs_end_offset, pcs + (n + 2) * 16);
		put32(run_blob + pcs, 0xffffffff);
		for (uint32_t i = 1; i <= n; i++) {
			put32(run_blob + pcs + i * 16, 2 * i);
			put32(run_blob + pcs + i * 16 + 4, scopes + 4 * i);
			put_scope(scopes + 4 * i, 0, 4, i);
		}
		put32(run_blob + pcs + (n + 1) * 16, 0x3fff);
		for (uint32_t t = 1; t <= 2 * n + 3; t++) {
			uint32_t want = t <= 2 * n ? (t + 1) / 2 : n;
			struct user_unwind_result r;

			put64(S0 + WORK_FRAME * 8 - 8, run_blob + 0x100 + t);
			r = walk(&proc17, WORK_PC, S0, 0x1234, frames, 32, &hu);
			assert_int_equal(r.error, 0);
			assert_java(&frames[1], METHOD(M_RUN), OP_JVM_T_COMPILED, want);
		}
	}
}

/*
 * run deoptimised while work ran: its return address is run's deopt handler
 * (past all its PcDescs), its pc when it called work saved in its frame at
 * unextended sp + _orig_pc_offset. Named from that pc: c, b, a, run as
 * before, counted; a saved pc outside run's code is an error, not a guess.
 */
static void test_deoptimised_frame(void **state)
{
	const uint64_t handler = run_blob + 0x100 + 0x3f0, orig_off = 0x10;
	uint64_t s1 = S0 + WORK_FRAME * 8;
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;

	(void)state;
	build();
	put64(run_blob + proc17.nm_deopt_handler, handler);
	put64(run_blob + proc17.nm_deopt_mh_handler, handler + 0x10);
	put32(run_blob + proc17.nm_orig_pc_offset, orig_off);
	put64(S0 + WORK_FRAME * 8 - 8, handler);
	put64(s1 + orig_off, run_blob + 0x100 + RUN_RA_OFF);
	r = walk(&proc17, WORK_PC, S0, 0x1234, frames, 32, &hu);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 8);
	assert_java(&frames[1], METHOD(M_C), OP_JVM_T_INLINED, 4);
	assert_java(&frames[2], METHOD(M_B), OP_JVM_T_INLINED, 3);
	assert_java(&frames[3], METHOD(M_A), OP_JVM_T_INLINED, 2);
	assert_java(&frames[4], METHOD(M_RUN), OP_JVM_T_COMPILED, 9);
	assert_java(&frames[5], METHOD(M_MAIN), OP_JVM_T_INTERPRETED, MAIN_BCI);
	assert_int_equal(hu.stats[OP_JVM_STAT_DEOPT], 1);
	/* The method handle's deopt handler too. */
	put64(S0 + WORK_FRAME * 8 - 8, handler + 0x10);
	r = walk(&proc17, WORK_PC, S0, 0x1234, frames, 32, &hu);
	assert_int_equal(r.error, 0);
	assert_java(&frames[4], METHOD(M_RUN), OP_JVM_T_COMPILED, 9);
	/* A saved pc that is not run's. */
	put64(s1 + orig_off, work_blob + 0x200);
	assert_error_after(walk(&proc17, WORK_PC, S0, 0x1234, frames, 32, &hu), frames, 1);
}

/*
 * JDK 8 (OP_JVM_F_OFFSETS): the same chain, the blobs' code and run's scopes
 * data given as int offsets from the blob (CodeBlob::_code_offset /
 * _data_offset, nmethod::_scopes_data_offset) instead of pointers.
 */
static void test_jdk8_offsets(void **state)
{
	struct op_jvm_proc proc8 = proc17;
	struct op_frame frames[32];
	struct hotspot_unwind hu;
	struct user_unwind_result r;

	(void)state;
	proc8.flags = OP_JVM_F_OFFSETS;
	proc8.blob_code_begin = 48;
	proc8.blob_code_end = 52;
	proc8.nm_scopes_data = 56;
	build();
	put32(run_blob + 48, 0x100);
	put32(run_blob + 52, 0x500);
	put32(run_blob + 56, (uint32_t)(SCOPES - run_blob));
	put32(work_blob + 48, 0x100);
	put32(work_blob + 52, 0x500);
	put32(stub_blob + 48, 0x40);
	put32(stub_blob + 52, 0x1f0);
	/* The pointers JDK 17 would have are garbage here: never read. */
	put64(run_blob + 32, 1);
	put64(run_blob + 120, 1);
	r = walk(&proc8, WORK_PC, S0, 0x1234, frames, 32, &hu);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 8);
	assert_java(&frames[0], METHOD(M_WORK), OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
	assert_java(&frames[1], METHOD(M_C), OP_JVM_T_INLINED, 4);
	assert_java(&frames[3], METHOD(M_A), OP_JVM_T_INLINED, 2);
	assert_java(&frames[4], METHOD(M_RUN), OP_JVM_T_COMPILED, 9);
	assert_java(&frames[5], METHOD(M_MAIN), OP_JVM_T_INTERPRETED, MAIN_BCI);
	assert_java(&frames[6], STUB_NAME, OP_JVM_T_STUB, OP_JVM_BCI_NONE);
	/*
	 * run deoptimised, its handlers int offsets (JDK 8, 23+), the method
	 * handle's -1 (none, as Temurin 25 writes it): still named from the pc
	 * saved in its frame (before, the -1 dropped the deopt handling).
	 */
	put32(run_blob + proc8.nm_deopt_handler, 0x100 + 0x3f0);
	put32(run_blob + proc8.nm_deopt_mh_handler, 0xffffffffu);
	put32(run_blob + proc8.nm_orig_pc_offset, 0x10);
	put64(S0 + WORK_FRAME * 8 - 8, run_blob + 0x100 + 0x3f0);
	put64(S0 + WORK_FRAME * 8 + 0x10, run_blob + 0x100 + RUN_RA_OFF);
	r = walk(&proc8, WORK_PC, S0, 0x1234, frames, 32, &hu);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 8);
	assert_java(&frames[1], METHOD(M_C), OP_JVM_T_INLINED, 4);
	assert_java(&frames[4], METHOD(M_RUN), OP_JVM_T_COMPILED, 9);
	assert_int_equal(hu.stats[OP_JVM_STAT_DEOPT], 1);
	/* A negative offset is refused, not followed. */
	put32(work_blob + 48, 0xfffff000);
	assert_error_after(walk(&proc8, WORK_PC, S0, 0x1234, frames, 32, &hu), frames, 0);
}

static void test_line_table(void **state)
{
	/* (0, 10) (5, 12) (40, 9) (300, 500): short pairs and 0xff escapes. */
	const uint8_t table[] = {(0 << 3) | 2, (5 << 3) | 2, 0xff, 70, 5, 0xff, 198, 4,
				 0xf8,	       0xc4,	     5,	   0};
	struct hotspot_line lines[8];
	struct hotspot_method m = {.lines = lines};
	int n;

	(void)state;
	n = hotspot_method__decode_lines(table, sizeof(table), 0, lines, 8);
	assert_int_equal(n, 4);
	assert_int_equal(lines[0].bci, 0);
	assert_int_equal(lines[0].line, 2);
	assert_int_equal(lines[1].bci, 5);
	assert_int_equal(lines[1].line, 4);
	assert_int_equal(lines[2].bci, 40);
	assert_int_equal(lines[2].line, 1);
	m.n_lines = (uint32_t)n;
	assert_int_equal(hotspot_method__line(&m, 0), 2);
	assert_int_equal(hotspot_method__line(&m, 7), 4);
	assert_int_equal(hotspot_method__line(&m, 41), 1);
	assert_int_equal(hotspot_method__line(&m, OP_JVM_BCI_NONE), 0);
	/* Cut short: refused, not read past. */
	assert_int_equal(hotspot_method__decode_lines(table, 4, 0, lines, 8), -22);
	/* The same table as JDK 20+ writes it: each UNSIGNED5 byte its bits + 1. */
	{
		const uint8_t x1[] = {(0 << 3) | 2, (5 << 3) | 2, 0xff, 71, 6, 0xff, 199, 5,
				      249,	    197,	  6,	0};
		struct hotspot_line again[8];

		assert_int_equal(hotspot_method__decode_lines(x1, sizeof(x1), 1, again, 8), 4);
		assert_memory_equal(again, lines, 4 * sizeof(lines[0]));
		/* Read without the excess: other lines. */
		assert_true(hotspot_method__decode_lines(x1, sizeof(x1), 0, again, 8) != 4 ||
			    memcmp(again, lines, 4 * sizeof(lines[0])));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_whole_chain),
	    cmocka_unit_test(test_jdk23_immutable_data),
	    cmocka_unit_test(test_prologue),
	    cmocka_unit_test(test_free_segment),
	    cmocka_unit_test(test_unreadable_method),
	    cmocka_unit_test(test_hostile_segmap),
	    cmocka_unit_test(test_segmap_window),
	    cmocka_unit_test(test_pc_cache_hit),
	    cmocka_unit_test(test_pc_cache_checks),
	    cmocka_unit_test(test_chain_cache),
	    cmocka_unit_test(test_pc_cache_id_before_method),
	    cmocka_unit_test(test_pc_cache_block),
	    cmocka_unit_test(test_pc_cache_code_count),
	    cmocka_unit_test(test_leaf_cache),
	    cmocka_unit_test(test_leaf_cache_refused),
	    cmocka_unit_test(test_freed_block),
	    cmocka_unit_test(test_pc_cache_covered_header),
	    cmocka_unit_test(test_hostile_frames),
	    cmocka_unit_test(test_line_table),
	    cmocka_unit_test(test_recursion_cached),
	    cmocka_unit_test(test_pcdesc_search),
	    cmocka_unit_test(test_deoptimised_frame),
	    cmocka_unit_test(test_jdk8_offsets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
