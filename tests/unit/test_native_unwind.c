// SPDX-License-Identifier: Apache-2.0
/*
 * The BPF unwinder (bpf/include/omniprof/unwind/native.h) compiled as ordinary C and run
 * over a stack image built here: the same per-frame code the kernel runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* "User memory" is a fake stack at a fake address. */
#define STACK_BASE 0x7ffc0000000ull
#define STACK_SIZE 4096
static uint8_t stack_image[STACK_SIZE];

/* Reads below this fail too: a stack copy starts at the sampled sp. */
static uint64_t read_floor;

static int fake_read(void *dst, size_t size, uint64_t addr)
{
	if (addr < STACK_BASE || addr < read_floor || addr + size > STACK_BASE + STACK_SIZE) {
		memset(dst, 0, size); /* as bpf_probe_read_user */
		return -14;	      /* -EFAULT */
	}
	memcpy(dst, &stack_image[addr - STACK_BASE], size);
	return 0;
}

#include "omniprof/abi.h"

/* Rule lookup: a small table of (address range -> rule); frame pointers elsewhere. */
struct test_range {
	uint64_t start, end;
	struct op_unwind_rule rule;
};
static struct test_range ranges[8];
static int n_ranges;
static uint64_t looked_up[64];
static int n_looked_up;

struct op_unwinder;
static void op_unwind_fp_rule(struct op_unwind_rule *rule);
static void test_find_rule(uint64_t pc, struct op_unwind_rule *rule)
{
	if (n_looked_up < 64)
		looked_up[n_looked_up++] = pc;
	for (int i = 0; i < n_ranges; i++)
		if (pc >= ranges[i].start && pc < ranges[i].end) {
			*rule = ranges[i].rule;
			return;
		}
	op_unwind_fp_rule(rule);
}

/* The fast step's reads: only inside [window_lo, window_hi), as the BPF walk's
 * window serves them without a call. */
static uint64_t window_lo, window_hi;

static int window_read(__u64 *dst, uint64_t addr)
{
	if (addr < window_lo || addr + 8 > window_hi)
		return -1;
	return fake_read(dst, 8, addr);
}

#define OP_READ_USER(u, dst, size, addr)     fake_read((dst), (size), (addr))
#define OP_READ_STACK_U64_FAST(u, dst, addr) window_read((dst), (addr))
#define OP_FIND_RULE(u, pc, rule)	     test_find_rule((pc), (rule))
#include "omniprof/unwind/native.h"

static void put(uint64_t addr, uint64_t value)
{
	memcpy(&stack_image[addr - STACK_BASE], &value, sizeof(value));
}

/* Lays out n frame records, innermost at the lowest address: [saved rbp][return addr]. */
static uint64_t build_chain(int n, const uint64_t *return_addrs, uint64_t outer_fp)
{
	uint64_t fp = STACK_BASE + 64, first = fp;

	memset(stack_image, 0, sizeof(stack_image));
	for (int i = 0; i < n; i++) {
		uint64_t caller_fp = i + 1 < n ? fp + 64 : outer_fp;

		put(fp, caller_fp);
		put(fp + 8, return_addrs[i]);
		fp += 64;
	}
	return first;
}

static int unwind_all(uint64_t pc, uint64_t sp, uint64_t fp, struct op_frame *frames, int max,
		      int *result)
{
	struct op_unwinder u;
	int n = 0;

	op_unwinder__init(&u, 1234, pc, sp, fp);
	do {
		*result = op_unwind_step(&u, &frames[n++]);
	} while (*result == OP_STEP_CONTINUE && n < max);
	return n;
}

static void test_walks_frame_pointer_chain(void **state)
{
	const uint64_t ras[] = {0x401010, 0x401020, 0x401030};
	struct op_frame frames[16];
	uint64_t fp = build_chain(3, ras, 0);
	int result, n;

	(void)state;
	n = unwind_all(0x401000, STACK_BASE + 16, fp, frames, 16, &result);
	assert_int_equal(result, OP_STEP_END);
	assert_int_equal(n, 4);
	assert_int_equal(frames[0].addr, 0x401000);
	assert_int_equal(frames[0].flags, 0); /* the interrupted PC is exact */
	for (int i = 1; i < 4; i++) {
		assert_int_equal(frames[i].addr, ras[i - 1]);
		assert_int_equal(frames[i].kind, OP_FRAME_NATIVE);
		assert_int_equal(frames[i].flags, OP_FRAME_F_RETURN_ADDRESS);
	}
}

static void test_stops_on_unreadable_memory(void **state)
{
	const uint64_t ras[] = {0x401010, 0x401020};
	struct op_frame frames[16];
	/* The outermost saved rbp points outside the readable stack. */
	uint64_t fp = build_chain(2, ras, STACK_BASE + 10 * STACK_SIZE);
	int result;

	(void)state;
	unwind_all(0x401000, STACK_BASE, fp, frames, 16, &result);
	assert_int_equal(result, OP_STEP_ERROR_BASE + OP_UNWIND_ERR_READ);
}

static void test_rejects_frame_pointer_below_sp(void **state)
{
	struct op_frame frames[4];
	int result, n;

	(void)state;
	memset(stack_image, 0, sizeof(stack_image));
	n = unwind_all(0x401000, STACK_BASE + 512, STACK_BASE + 64, frames, 4, &result);
	assert_int_equal(n, 1);
	assert_int_equal(result, OP_STEP_ERROR_BASE + OP_UNWIND_ERR_BAD_FP);
}

static void test_cfi_rules_without_frame_pointers(void **state)
{
	/* leaf at 0x500000 (CFA = rsp + 8, rbp untouched), mid at 0x501000 (CFA = rsp + 48,
	 * rbp saved at CFA - 16), a PLT stub, then a frame-pointer caller. */
	const uint64_t sp0 = STACK_BASE + 256;
	struct op_frame frames[16];
	int result, n;

	(void)state;
	memset(stack_image, 0, sizeof(stack_image));
	n_ranges = 0;
	n_looked_up = 0;
	ranges[n_ranges++] =
	    (struct test_range){0x500000, 0x500100, {OP_RULE_CFA, OP_CFA_RSP, 0, 8}};
	ranges[n_ranges++] =
	    (struct test_range){0x501000, 0x501100, {OP_RULE_CFA, OP_CFA_RSP, -16, 48}};
	ranges[n_ranges++] = (struct test_range){0x502000, 0x502100, {OP_RULE_STOP, 0, 0, 0}};
	/* leaf: return address at sp0 */
	put(sp0, 0x501010);
	/* mid: frame of 48 bytes from sp0 + 8: RA at CFA - 8, saved rbp at CFA - 16 */
	put(sp0 + 8 + 48 - 8, 0x502020);
	put(sp0 + 8 + 48 - 16, 0xfeed);
	n = unwind_all(0x500010, sp0, 0x1111 /* garbage rbp */, frames, 16, &result);
	assert_int_equal(result, OP_STEP_END);
	assert_int_equal(n, 3);
	assert_int_equal(frames[1].addr, 0x501010);
	assert_int_equal(frames[2].addr, 0x502020);
	/* First frame looked up as is, return addresses as pc - 1. */
	assert_int_equal(looked_up[0], 0x500010);
	assert_int_equal(looked_up[1], 0x501010 - 1);
	assert_int_equal(looked_up[2], 0x502020 - 1);
	n_ranges = 0;
}

static void test_signal_frame(void **state)
{
	const uint64_t sp0 = STACK_BASE + 512;
	struct op_frame frames[8];
	int result, n;

	(void)state;
	memset(stack_image, 0, sizeof(stack_image));
	n_ranges = 0;
	n_looked_up = 0;
	ranges[n_ranges++] = (struct test_range){0x600000, 0x600010, {OP_RULE_SIGNAL, 0, 0, 0}};
	ranges[n_ranges++] = (struct test_range){0x700000, 0x700100, {OP_RULE_STOP, 0, 0, 0}};
	put(sp0 + OP_SIGFRAME_RIP, 0x700040);
	put(sp0 + OP_SIGFRAME_RSP, STACK_BASE + 2048);
	put(sp0 + OP_SIGFRAME_RBP, 0);
	n = unwind_all(0x600004, sp0, 0, frames, 8, &result);
	assert_int_equal(n, 2);
	assert_int_equal(result, OP_STEP_END);
	/* The interrupted instruction is exact: no return-address flag, looked up as is. */
	assert_int_equal(frames[1].addr, 0x700040);
	assert_int_equal(frames[1].flags, 0);
	assert_int_equal(looked_up[1], 0x700040);
	n_ranges = 0;
}

/*
 * ld.so's _dl_runtime_resolve_xsavec after `push %rbx; mov %rsp,%rbx; and
 * $-64,%rsp; sub SIZE,%rsp`: CFA = rbx + 32 (PLT's two pushes, the return
 * address, rbx). Sampled there, the thread's rbx gives the caller; one frame
 * up (a sample in _dl_fixup, which reuses rbx), or from a signal frame that
 * interrupted it, only the signal frame's saved rbx does.
 */
static void test_rbx_cfa_rule(void **state)
{
	const uint64_t sp0 = STACK_BASE + 256, bx = STACK_BASE + 1024;
	struct op_frame frames[8];
	struct op_unwinder u;
	int result, n;

	(void)state;
	memset(stack_image, 0, sizeof(stack_image));
	n_ranges = 0;
	ranges[n_ranges++] =
	    (struct test_range){0x121c4, 0x1227e, {OP_RULE_CFA_RBX, OP_CFA_RSP, 0, 32}};
	ranges[n_ranges++] = (struct test_range){0x900000, 0x900100, {OP_RULE_STOP, 0, 0, 0}};
	ranges[n_ranges++] =
	    (struct test_range){0xa00000, 0xa00100, {OP_RULE_CFA, OP_CFA_RSP, 0, 8}};
	ranges[n_ranges++] = (struct test_range){0xb00000, 0xb00010, {OP_RULE_SIGNAL, 0, 0, 0}};
	put(bx + 24, 0x900010); /* the PLT caller's return address at CFA - 8 */
	put(sp0, 0x12245 + 5);	/* _dl_fixup's return address into the trampoline */

	/* Leaf in the trampoline, rbx from the sample: complete. */
	op_unwinder__init(&u, 1234, 0x12238, sp0, 0x1111);
	op_unwinder__set_bx(&u, bx);
	n = 0;
	do {
		result = op_unwind_step(&u, &frames[n++]);
	} while (result == OP_STEP_CONTINUE && n < 8);
	assert_int_equal(result, OP_STEP_END);
	assert_int_equal(n, 2);
	assert_int_equal(frames[1].addr, 0x900010);

	/* Without the sample's rbx (a stack copy): the named stop, not a guess. */
	n = unwind_all(0x12238, sp0, 0x1111, frames, 8, &result);
	assert_int_equal(result, OP_STEP_ERROR_BASE + OP_UNWIND_ERR_RBX_CFA);
	assert_int_equal(n, 1);

	/* Leaf in _dl_fixup (CFA = rsp + 8): the thread's rbx is _dl_fixup's own. */
	op_unwinder__init(&u, 1234, 0xa00010, sp0, 0x1111);
	op_unwinder__set_bx(&u, bx);
	n = 0;
	do {
		result = op_unwind_step(&u, &frames[n++]);
	} while (result == OP_STEP_CONTINUE && n < 8);
	assert_int_equal(result, OP_STEP_ERROR_BASE + OP_UNWIND_ERR_RBX_CFA);
	assert_int_equal(n, 2);
	assert_int_equal(frames[1].addr, 0x12245 + 5);

	/* A signal frame that interrupted the trampoline: its ucontext's rbx. */
	put(sp0 + 512 + OP_SIGFRAME_RIP, 0x12238);
	put(sp0 + 512 + OP_SIGFRAME_RSP, sp0);
	put(sp0 + 512 + OP_SIGFRAME_RBX, bx);
	n = unwind_all(0xb00004, sp0 + 512, 0, frames, 8, &result);
	assert_int_equal(result, OP_STEP_END);
	assert_int_equal(n, 3);
	assert_int_equal(frames[1].addr, 0x12238);
	assert_int_equal(frames[2].addr, 0x900010);
	n_ranges = 0;
}

/* A rule of ld.so's (OP_CFA_F_BX): the caller's rbx at CFA - 8 * slot, 0: unchanged. */
static uint8_t bx_base(uint8_t base, unsigned int slot)
{
	return (uint8_t)(base | OP_CFA_F_BX | slot << OP_CFA_BX_SLOT_SHIFT);
}

/*
 * A sample two frames above the trampoline: a loader function called by
 * _dl_fixup (rbx untouched), _dl_fixup (which saved the trampoline's rbx at
 * CFA - 16 and reused rbx), then the trampoline (CFA = rbx + 32). ld.so's
 * rules say where rbx was saved, so the walk carries it up to the
 * trampoline. One frame of a file without that (libc's IFUNC resolver called
 * by _dl_fixup) and rbx is unknown again: the named stop. An unreadable save
 * slot too.
 */
static void test_rbx_tracked(void **state)
{
	const uint64_t sp0 = STACK_BASE + 256, bx = STACK_BASE + 1024;
	struct op_frame frames[8];
	struct op_unwinder u;
	int result, n;

	(void)state;
	memset(stack_image, 0, sizeof(stack_image));
	n_ranges = 0;
	ranges[n_ranges++] =
	    (struct test_range){0x121c4, 0x1227e, {OP_RULE_CFA_RBX, bx_base(OP_CFA_RSP, 4), 0, 32}};
	ranges[n_ranges++] = (struct test_range){0x900000, 0x900100, {OP_RULE_STOP, 0, 0, 0}};
	/* _dl_fixup after `push %rbx`: CFA = rsp + 16, rbx at CFA - 16 */
	ranges[n_ranges++] =
	    (struct test_range){0xc00000, 0xc00100, {OP_RULE_CFA, bx_base(OP_CFA_RSP, 2), 0, 16}};
	/* a loader function that does not touch rbx */
	ranges[n_ranges++] =
	    (struct test_range){0xd00000, 0xd00100, {OP_RULE_CFA, bx_base(OP_CFA_RSP, 0), 0, 8}};
	/* the same in a file without rbx slots */
	ranges[n_ranges++] =
	    (struct test_range){0xe00000, 0xe00100, {OP_RULE_CFA, OP_CFA_RSP, 0, 8}};
	put(sp0, 0xc00050);	    /* the leaf's return address into _dl_fixup */
	put(sp0 + 8, bx);	    /* _dl_fixup's push %rbx: the trampoline's rbx */
	put(sp0 + 16, 0x12245 + 5); /* _dl_fixup's return address into the trampoline */
	put(bx, 0x4242);	    /* the trampoline's push %rbx: its caller's */
	put(bx + 24, 0x900010);	    /* the PLT caller's return address at CFA - 8 */

	/* The leaf's own rbx is _dl_fixup's scratch value: the saved one is used. */
	op_unwinder__init(&u, 1234, 0xd00010, sp0, 0x1111);
	op_unwinder__set_bx(&u, 0x5555);
	n = 0;
	do {
		result = op_unwind_step(&u, &frames[n++]);
	} while (result == OP_STEP_CONTINUE && n < 8);
	assert_int_equal(result, OP_STEP_END);
	assert_int_equal(n, 4);
	assert_int_equal(frames[1].addr, 0xc00050);
	assert_int_equal(frames[2].addr, 0x12245 + 5);
	assert_int_equal(frames[3].addr, 0x900010);
	assert_int_equal(u.regs.bx, 0x4242); /* the trampoline's slot 4: its caller's rbx */

	/* The leaf in a file without slots: rbx unknown above it. */
	op_unwinder__init(&u, 1234, 0xe00010, sp0, 0x1111);
	op_unwinder__set_bx(&u, 0x5555);
	n = 0;
	do {
		result = op_unwind_step(&u, &frames[n++]);
	} while (result == OP_STEP_CONTINUE && n < 8);
	assert_int_equal(result, OP_STEP_ERROR_BASE + OP_UNWIND_ERR_RBX_CFA);
	assert_int_equal(n, 3);

	/* No rbx at the sample: nothing to carry. */
	n = unwind_all(0xd00010, sp0, 0x1111, frames, 8, &result);
	assert_int_equal(result, OP_STEP_ERROR_BASE + OP_UNWIND_ERR_RBX_CFA);
	assert_int_equal(n, 3);

	/* _dl_fixup's save slot below sp and unreadable (below the stack image's
	 * start, as below a stack copy's): popped already, so the thread's rbx is
	 * the trampoline's and is carried up to it. */
	put(STACK_BASE + 16, 0x12245 + 5);
	ranges[2].rule.cfa_base = bx_base(OP_CFA_RSP, 31);
	op_unwinder__init(&u, 1234, 0xc00010, STACK_BASE + 8, 0x1111);
	op_unwinder__set_bx(&u, bx);
	n = 0;
	do {
		result = op_unwind_step(&u, &frames[n++]);
	} while (result == OP_STEP_CONTINUE && n < 8);
	assert_int_equal(result, OP_STEP_END);
	assert_int_equal(n, 3);
	assert_int_equal(frames[1].addr, 0x12245 + 5);
	assert_int_equal(frames[2].addr, 0x900010);
	n_ranges = 0;
}

/*
 * A sample in an epilogue after `pop %rbp` (cc1plus's, at `pop %r14` or `ret`):
 * the CFI still says rbp is saved at CFA - 48, below sp now. The register holds
 * the caller's rbp already. A stack copy starts at sp, so the slot cannot be read
 * there: the walk keeps the register instead of stopping as unreadable, and the
 * caller's rbp-based rule then finds its frame through it.
 */
static void test_epilogue_slot_below_sp(void **state)
{
	const uint64_t sp0 = STACK_BASE + 256, caller_fp = STACK_BASE + 512;
	struct op_frame frames[8];
	int result, n;

	(void)state;
	memset(stack_image, 0, sizeof(stack_image));
	n_ranges = 0;
	/* the epilogue at `ret`: CFA = rsp + 8, rbp at CFA - 48 */
	ranges[n_ranges++] =
	    (struct test_range){0x600000, 0x600100, {OP_RULE_CFA, OP_CFA_RSP, -48, 8}};
	/* the caller keeps its CFA in rbp: CFA = rbp + 16, its rbp at CFA - 16 */
	ranges[n_ranges++] =
	    (struct test_range){0x601000, 0x601100, {OP_RULE_CFA, OP_CFA_RBP, -16, 16}};
	ranges[n_ranges++] = (struct test_range){0x602000, 0x602100, {OP_RULE_STOP, 0, 0, 0}};
	put(sp0, 0x601010);
	put(caller_fp, 0);
	put(caller_fp + 8, 0x602020);
	put(sp0 + 8 - 48, 0xdead); /* the stale slot, as the live walk reads it */

	/* The live walk (memory below sp readable) reads the slot as before. */
	n = unwind_all(0x600010, sp0, caller_fp, frames, 8, &result);
	assert_int_equal(n, 2);
	assert_int_equal(result, OP_STEP_ERROR_BASE + OP_UNWIND_ERR_BAD_FP);

	/* A copy from sp: the slot unreadable, the register kept. */
	put(sp0 + 8 - 48, caller_fp);
	read_floor = sp0;
	n = unwind_all(0x600010, sp0, caller_fp, frames, 8, &result);
	read_floor = 0;
	assert_int_equal(result, OP_STEP_END);
	assert_int_equal(n, 3);
	assert_int_equal(frames[1].addr, 0x601010);
	assert_int_equal(frames[2].addr, 0x602020);

	/* A slot at or above sp that cannot be read still stops the walk. */
	ranges[0].rule.fp_offset = 8 * 500; /* past the image */
	n = unwind_all(0x600010, sp0, caller_fp, frames, 8, &result);
	assert_int_equal(n, 1);
	assert_int_equal(result, OP_STEP_ERROR_BASE + OP_UNWIND_ERR_READ);
	n_ranges = 0;
}

static void test_plt_rule(void **state)
{
	const uint64_t sp0 = STACK_BASE + 128;
	struct op_frame frames[4];
	int result;

	(void)state;
	memset(stack_image, 0, sizeof(stack_image));
	n_ranges = 0;
	ranges[n_ranges++] =
	    (struct test_range){0x401020, 0x401040, {OP_RULE_PLT, OP_CFA_RSP, 0, 8}};
	ranges[n_ranges++] = (struct test_range){0x800000, 0x800100, {OP_RULE_STOP, 0, 0, 0}};
	/* First half of a PLT entry (pc & 15 < 11): return address at rsp. */
	put(sp0, 0x800010);
	unwind_all(0x401026, sp0, 0, frames, 4, &result);
	assert_int_equal(frames[1].addr, 0x800010);
	/* After the push (pc & 15 >= 11): one more word on the stack. */
	put(sp0 + 8, 0x800020);
	unwind_all(0x40102b, sp0, 0, frames, 4, &result);
	assert_int_equal(frames[1].addr, 0x800020);
	n_ranges = 0;
}

/*
 * Anonymous (JIT) code: frame pointers where the code keeps a frame, and an
 * explicit stop where it does not, even for rbp 0 (JIT code is never the
 * outermost frame, unlike _start).
 */
static void test_anonymous_code(void **state)
{
	const uint64_t ras[] = {0x401010};
	struct op_unwind_rule anon;
	struct op_frame frames[8];
	uint64_t fp;
	int result, n;

	(void)state;
	op_unwind_anon_rule(&anon);
	n_ranges = 0;
	ranges[n_ranges++] = (struct test_range){0x7f0000, 0x7f1000, anon};
	/* A proper frame: the walk goes on into the (frame-pointer) caller. */
	fp = build_chain(1, ras, 0);
	n = unwind_all(0x7f0010, STACK_BASE + 16, fp, frames, 8, &result);
	assert_int_equal(result, OP_STEP_END);
	assert_int_equal(n, 2);
	assert_int_equal(frames[1].addr, 0x401010);
	/* rbp used as a scratch register (below sp), or cleared: stop, saying why. */
	n = unwind_all(0x7f0010, STACK_BASE + 512, 0x1234, frames, 8, &result);
	assert_int_equal(n, 1);
	assert_int_equal(result, OP_STEP_ERROR_BASE + OP_UNWIND_ERR_ANON_CODE);
	n = unwind_all(0x7f0010, STACK_BASE + 512, 0, frames, 8, &result);
	assert_int_equal(result, OP_STEP_ERROR_BASE + OP_UNWIND_ERR_ANON_CODE);
	/* rbp pointing outside the readable stack. */
	n = unwind_all(0x7f0010, STACK_BASE + 512, STACK_BASE + 100 * STACK_SIZE, frames, 8,
		       &result);
	assert_int_equal(result, OP_STEP_ERROR_BASE + OP_UNWIND_ERR_ANON_CODE);
	n_ranges = 0;
}

static void test_error_frame_encoding(void **state)
{
	struct op_frame f;

	(void)state;
	memset(&f, 0xff, sizeof(f));
	op_frame__set_error(&f, OP_UNWIND_ERR_MAX_DEPTH);
	assert_int_equal(f.kind, OP_FRAME_ERROR);
	assert_int_equal(f.addr, OP_UNWIND_ERR_MAX_DEPTH);
	assert_int_equal(f.data, 0);
	assert_int_equal(f.flags, 0);
}

/* A small deterministic generator (xorshift64*): the cases differ, the run repeats. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* A stack address, 8-aligned, or now and then one outside the image. */
static uint64_t rng_stack_addr(void)
{
	uint64_t r = rng();

	if (r % 16 == 0)
		return r % 3 ? 0 : STACK_BASE + 2 * STACK_SIZE;
	return STACK_BASE + ((r >> 8) % (STACK_SIZE / 8)) * 8;
}

/*
 * op_unwind_step_fast() against op_unwind_step() over random rules,
 * registers, stacks and windows: where the fast step does not decline it
 * writes the same frame, leaves the unwinder in the same state and gives the
 * same result; where it declines, it changed nothing; it never gives an error
 * (those are the full step's); and it takes the plain CFA rules it can read.
 */
static void test_fast_step_agrees(void **state)
{
	const uint8_t cmds[] = {
	    OP_RULE_CFA,       OP_RULE_CFA,	  OP_RULE_CFA,	     OP_RULE_CFA,    OP_RULE_STOP,
	    OP_RULE_INVALID,   OP_RULE_PLT,	  OP_RULE_CFA_DEREF, OP_RULE_SIGNAL, OP_RULE_ANON,
	    OP_RULE_FP_SWITCH, OP_RULE_GO_SWITCH, OP_RULE_CFA_RBX};
	int taken = 0, taken_continue = 0, taken_end = 0, declined_cfa = 0, cases = 20000;

	(void)state;
	for (int c = 0; c < cases; c++) {
		struct op_unwinder full, fast, before;
		struct op_frame f_full, f_fast;
		struct op_unwind_rule rule;
		int r_full, r_fast;

		for (size_t i = 0; i < STACK_SIZE / 8; i++) {
			uint64_t v = rng();

			/* Stacks hold return addresses, saved frame pointers and zeros. */
			v = v % 4 == 0 ? 0 : v % 4 == 1 ? rng_stack_addr() : 0x400000 + v % 0x10000;
			memcpy(&stack_image[i * 8], &v, 8);
		}
		rule.cmd = cmds[rng() % sizeof(cmds)];
		rule.cfa_base = (uint8_t)(rng() % 2);
		if (rng() % 4 == 0)
			rule.cfa_base |=
			    OP_CFA_F_BX | (uint8_t)((rng() % 4) << OP_CFA_BX_SLOT_SHIFT);
		rule.cfa_offset = (int32_t)(rng() % 8) * 8 + (rng() % 8 == 0 ? -8 : 8);
		rule.fp_offset = rng() % 3 ? -(int32_t)(rng() % 4) * 8 : 0;
		memset(&full, 0, sizeof(full));
		op_unwinder__init(&full, 1234, 0x400000 + rng() % 0x10000, rng_stack_addr(),
				  rng() % 8 ? rng_stack_addr() : rng());
		full.pc_exact = rng() % 4 == 0;
		if (rng() % 3 == 0)
			op_unwinder__set_bx(&full, rng_stack_addr());
		read_floor = rng() % 4 == 0 ? full.regs.sp : 0;
		window_lo = rng() % 4 ? full.regs.sp : full.regs.sp + (rng() % 512) * 8;
		window_hi = window_lo + (rng() % 2 ? STACK_SIZE : (rng() % 128) * 8);
		fast = before = full;
		n_ranges = 1;
		ranges[0] = (struct test_range){0, UINT64_MAX, rule};
		memset(&f_full, 0xaa, sizeof(f_full));
		memset(&f_fast, 0x55, sizeof(f_fast));

		r_full = op_unwind_step(&full, &f_full);
		r_fast = op_unwind_step_fast(&fast, &rule, &f_fast);
		if (r_fast == OP_STEP_DECLINED) {
			assert_memory_equal(&fast, &before, sizeof(fast));
			for (size_t i = 0; i < sizeof(f_fast); i++)
				assert_int_equal(((uint8_t *)&f_fast)[i], 0x55);
			declined_cfa += rule.cmd == OP_RULE_CFA;
			continue;
		}
		assert_int_equal(rule.cmd, OP_RULE_CFA);
		assert_true(r_fast == OP_STEP_CONTINUE || r_fast == OP_STEP_END);
		assert_int_equal(r_fast, r_full);
		assert_memory_equal(&fast, &full, sizeof(fast));
		assert_memory_equal(&f_fast, &f_full, sizeof(f_fast));
		taken++;
		taken_continue += r_fast == OP_STEP_CONTINUE;
		taken_end += r_fast == OP_STEP_END;
	}
	n_ranges = 0;
	read_floor = 0;
	/* The cases reach both answers and both ways: the comparison above ran. */
	assert_true(taken_continue > cases / 50);
	assert_true(taken_end > 0);
	assert_true(declined_cfa > cases / 50);
	assert_true(taken > cases / 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_walks_frame_pointer_chain),
	    cmocka_unit_test(test_stops_on_unreadable_memory),
	    cmocka_unit_test(test_rejects_frame_pointer_below_sp),
	    cmocka_unit_test(test_cfi_rules_without_frame_pointers),
	    cmocka_unit_test(test_signal_frame),
	    cmocka_unit_test(test_rbx_cfa_rule),
	    cmocka_unit_test(test_rbx_tracked),
	    cmocka_unit_test(test_epilogue_slot_below_sp),
	    cmocka_unit_test(test_plt_rule),
	    cmocka_unit_test(test_anonymous_code),
	    cmocka_unit_test(test_error_frame_encoding),
	    cmocka_unit_test(test_fast_step_agrees),
	};

	return cmocka_run_group_tests_name("native_unwind", tests, NULL, NULL);
}
