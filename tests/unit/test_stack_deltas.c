// SPDX-License-Identifier: Apache-2.0
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "unwind/stack_deltas.h"
#include "unwind/unwind_maps.h"
#include "testutil.h"

/* ---- a small assembler for hand-written CFI sections ------------------------------ */

#define SEC_VADDR 0x10000 /* where the hand-written .eh_frame pretends to live */

struct buf {
	uint8_t d[4096];
	size_t n;
};

static void b_u8(struct buf *b, uint8_t v)
{
	assert_true(b->n < sizeof(b->d));
	b->d[b->n++] = v;
}

static void b_uint(struct buf *b, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b_u8(b, (uint8_t)(v >> (8 * i)));
}

static void b_uleb(struct buf *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		b_u8(b, byte | (v ? 0x80 : 0));
	} while (v);
}

static void b_sleb(struct buf *b, int64_t v)
{
	for (;;) {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		if ((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40))) {
			b_u8(b, byte);
			return;
		}
		b_u8(b, byte | 0x80);
	}
}

static void b_bytes(struct buf *b, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b_u8(b, ((const uint8_t *)p)[i]);
}

/* Starts an entry with a 4-byte length to be patched by b_end(). */
static size_t b_begin(struct buf *b)
{
	size_t at = b->n;

	b_uint(b, 0, 4);
	return at;
}

static void b_end(struct buf *b, size_t at)
{
	uint64_t len = b->n - at - 4;

	for (size_t i = 0; i < 4; i++)
		b->d[at + i] = (uint8_t)(len >> (8 * i));
}

/* The 64-bit DWARF format: 0xffffffff, then an 8-byte length. */
static size_t b_begin64(struct buf *b)
{
	size_t at;

	b_uint(b, 0xffffffff, 4);
	at = b->n;
	b_uint(b, 0, 8);
	return at;
}

static void b_end64(struct buf *b, size_t at)
{
	uint64_t len = b->n - at - 8;

	for (size_t i = 0; i < 8; i++)
		b->d[at + i] = (uint8_t)(len >> (8 * i));
}

/* The CIE GCC writes on x86-64: "zR", pcrel|sdata4 FDE addresses, CFA = rsp + 8, RA at CFA - 8. */
static const uint8_t std_init[] = {0x0c, 0x07, 0x08, 0x90, 0x01};

/* An .eh_frame CIE. Returns its offset. */
static size_t add_cie_full(struct buf *b, uint8_t version, const char *aug, const uint8_t *aug_data,
			   size_t aug_len, uint64_t caf, int64_t daf, unsigned int ra,
			   const uint8_t *init, size_t init_len)
{
	size_t at = b_begin(b);

	b_uint(b, 0, 4); /* CIE id */
	b_u8(b, version);
	b_bytes(b, aug, strlen(aug) + 1);
	b_uleb(b, caf);
	b_sleb(b, daf);
	if (version == 1)
		b_u8(b, (uint8_t)ra);
	else
		b_uleb(b, ra);
	if (aug[0] == 'z') {
		b_uleb(b, aug_len);
		b_bytes(b, aug_data, aug_len);
	}
	b_bytes(b, init, init_len);
	b_end(b, at);
	return at;
}

static size_t add_cie(struct buf *b, const char *aug, const uint8_t *aug_data, size_t aug_len,
		      unsigned int ra, const uint8_t *init, size_t init_len)
{
	return add_cie_full(b, 1, aug, aug_data, aug_len, 1, -8, ra, init, init_len);
}

static size_t add_std_cie(struct buf *b)
{
	static const uint8_t enc = 0x1b; /* pcrel | sdata4 */

	return add_cie(b, "zR", &enc, 1, 16, std_init, sizeof(std_init));
}

/* An FDE of a "zR" (pcrel sdata4) CIE covering [start, start + len). Returns where insns went. */
static size_t add_fde(struct buf *b, size_t cie, uint64_t start, uint32_t len, const uint8_t *insns,
		      size_t n)
{
	size_t at = b_begin(b), field, ret;

	b_uint(b, b->n - cie, 4); /* backwards to the CIE */
	field = b->n;
	b_uint(b, (uint32_t)(start - (SEC_VADDR + field)), 4);
	b_uint(b, len, 4);
	b_uleb(b, 0); /* augmentation data */
	ret = b->n;
	b_bytes(b, insns, n);
	b_end(b, at);
	return ret;
}

/* ---- checking tables -------------------------------------------------------------------- */

struct want {
	uint64_t addr;
	uint8_t cmd;
	uint8_t base;
	int32_t cfa;
	int16_t fp;
};

#define CFA(a, b, o, f)                                                                            \
	{                                                                                          \
		.addr = (a), .cmd = OP_RULE_CFA, .base = (b), .cfa = (o), .fp = (f)                \
	}
#define CMD(a, c)                                                                                  \
	{                                                                                          \
		.addr = (a), .cmd = (c)                                                            \
	}
#define RSP OP_CFA_RSP
#define RBP OP_CFA_RBP

static void print_table(const struct stack_delta_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct op_unwind_rule *r = &t->deltas[i].rule;

		fprintf(stderr, "  %#llx cmd %u base %u cfa %d fp %d\n",
			(unsigned long long)t->deltas[i].addr, r->cmd, r->cfa_base, r->cfa_offset,
			r->fp_offset);
	}
}

static void check_table(const struct stack_delta_table *t, const struct want *w, size_t n)
{
	if (t->n != n)
		print_table(t);
	assert_int_equal(t->n, n);
	for (size_t i = 0; i < n; i++) {
		const struct op_unwind_rule *r = &t->deltas[i].rule;

		if (t->deltas[i].addr != w[i].addr || r->cmd != w[i].cmd ||
		    r->cfa_base != w[i].base || r->cfa_offset != w[i].cfa ||
		    r->fp_offset != w[i].fp)
			print_table(t);
		assert_int_equal(t->deltas[i].addr, w[i].addr);
		assert_int_equal(r->cmd, w[i].cmd);
		assert_int_equal(r->cfa_base, w[i].base);
		assert_int_equal(r->cfa_offset, w[i].cfa);
		assert_int_equal(r->fp_offset, w[i].fp);
	}
}

/* Structural invariants every table must have, whatever its input. */
static void check_invariants(const struct stack_delta_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct op_unwind_rule *r = &t->deltas[i].rule;

		assert_true(r->cmd <= OP_RULE_SIGNAL || r->cmd == OP_RULE_CFA_RBX);
		/* rbx's slot (OP_CFA_F_BX) only beside a CFA */
		if ((r->cfa_base & OP_CFA_F_BX) &&
		    (r->cmd == OP_RULE_CFA || r->cmd == OP_RULE_PLT ||
		     r->cmd == OP_RULE_CFA_DEREF || r->cmd == OP_RULE_CFA_RBX))
			assert_true((r->cfa_base &
				     ~(OP_CFA_F_BX | OP_CFA_BX_SLOT_MAX << OP_CFA_BX_SLOT_SHIFT)) <=
				    OP_CFA_RBP);
		else
			assert_true(r->cfa_base <= OP_CFA_RBP);
		if (i) {
			const struct op_unwind_rule *p = &t->deltas[i - 1].rule;

			assert_true(t->deltas[i - 1].addr < t->deltas[i].addr);
			/* merged: no two neighbours alike */
			assert_false(p->cmd == r->cmd && p->cfa_base == r->cfa_base &&
				     p->cfa_offset == r->cfa_offset &&
				     p->fp_offset == r->fp_offset);
		}
	}
	if (t->n)
		assert_int_equal(t->deltas[t->n - 1].rule.cmd, OP_RULE_INVALID);
}

static void parse_ok(const struct buf *b, int debug, struct stack_delta_table *t)
{
	assert_int_equal(stack_deltas__parse(b->d, b->n, SEC_VADDR, debug, t), 0);
	check_invariants(t);
}

/* ---- hand-written sections ------------------------------------------------------------- */

/* push rbp; mov rbp, rsp; ...; pop rbp; ret with GCC's CFI. */
static void test_frame_pointer_prologue(void **state)
{
	static const uint8_t insns[] = {
	    0x41,	      /* advance_loc 1 (push %rbp done) */
	    0x0e, 0x10,	      /* def_cfa_offset 16 */
	    0x86, 0x02,	      /* offset r6 at cfa-16 */
	    0x43,	      /* advance_loc 3 (mov %rsp,%rbp done) */
	    0x0d, 0x06,	      /* def_cfa_register r6 */
	    0x50,	      /* advance_loc 16 */
	    0x0c, 0x07, 0x08, /* def_cfa r7 8 (pop %rbp done) */
	    0xc6,	      /* restore r6 */
	};
	static const struct want want[] = {
	    CFA(0x1000, RSP, 8, 0), CFA(0x1001, RSP, 16, -16),	  CFA(0x1004, RBP, 16, -16),
	    CFA(0x1014, RSP, 8, 0), CMD(0x1020, OP_RULE_INVALID),
	};
	struct stack_delta_table t;
	struct buf b = {0};
	size_t cie;

	(void)state;
	cie = add_std_cie(&b);
	add_fde(&b, cie, 0x1000, 0x20, insns, sizeof(insns));
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t.stats.cies, 1);
	assert_int_equal(t.stats.fdes, 1);
	assert_int_equal(t.stats.unsupported, 0);
	assert_int_equal(t.stats.bad_entries, 0);

	/* Lookups: before, at, between and after the entries. */
	assert_null(stack_delta_table__find(&t, 0xfff));
	assert_int_equal(stack_delta_table__find(&t, 0x1000)->addr, 0x1000);
	assert_int_equal(stack_delta_table__find(&t, 0x1003)->addr, 0x1001);
	assert_int_equal(stack_delta_table__find(&t, 0x101f)->addr, 0x1014);
	assert_int_equal(stack_delta_table__find(&t, 0x5000)->rule.cmd, OP_RULE_INVALID);
	stack_delta_table__free(&t);
	stack_delta_table__free(&t); /* twice, and NULL */
	stack_delta_table__free(NULL);
	assert_null(stack_delta_table__find(&t, 0x1000));
}

/* An early-return epilogue in the middle of the function, bracketed by remember/restore_state. */
static void test_remember_restore_state(void **state)
{
	static const uint8_t insns[] = {
	    0x41, 0x0e, 0x10, 0x86, 0x02, /* 0x2001: rsp+16, rbp at cfa-16 */
	    0x43, 0x0d, 0x06,		  /* 0x2004: rbp+16 */
	    0x48, 0x0a,			  /* 0x200c: remember_state */
	    0x0c, 0x07, 0x08, 0xc6,	  /*         rsp+8, rbp restored */
	    0x42, 0x0b,			  /* 0x200e: restore_state: rbp+16 again */
	    0x4a, 0x0c, 0x07, 0x08, 0xc6, /* 0x2018: final epilogue */
	};
	static const struct want want[] = {
	    CFA(0x2000, RSP, 8, 0),	  CFA(0x2001, RSP, 16, -16), CFA(0x2004, RBP, 16, -16),
	    CFA(0x200c, RSP, 8, 0),	  CFA(0x200e, RBP, 16, -16), CFA(0x2018, RSP, 8, 0),
	    CMD(0x2020, OP_RULE_INVALID),
	};
	static const uint8_t underflow[] = {0x41, 0x0b}; /* restore_state with nothing remembered */
	struct stack_delta_table t;
	struct buf b = {0};
	uint8_t deep[40];
	size_t cie;

	(void)state;
	cie = add_std_cie(&b);
	add_fde(&b, cie, 0x2000, 0x20, insns, sizeof(insns));
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	stack_delta_table__free(&t);

	/* Malformed state stacks drop the whole FDE (a gap), counted. */
	add_fde(&b, cie, 0x3000, 0x10, underflow, sizeof(underflow));
	memset(deep, 0x0a, sizeof(deep)); /* 40 remember_states: deeper than any compiler goes */
	add_fde(&b, cie, 0x4000, 0x10, deep, sizeof(deep));
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t.stats.fdes, 1);
	assert_int_equal(t.stats.bad_entries, 2);
	stack_delta_table__free(&t);
}

/* The .plt FDE GNU ld writes, and the IBT variant with threshold 9 (unsupported). */
static void test_plt_expression(void **state)
{
	static const uint8_t plt[] = {
	    0x0e, 0x10,	      /* def_cfa_offset 16 (after plt0's push) */
	    0x46, 0x0e, 0x18, /* 0x3006: def_cfa_offset 24 */
	    0x4a,	      /* 0x3010: */
	    0x0f, 0x0b,	      /* def_cfa_expression, 11 bytes: */
	    0x77, 0x08,	      /*   breg7 (rsp) 8 */
	    0x80, 0x00,	      /*   breg16 (rip) 0 */
	    0x3f, 0x1a,	      /*   lit15; and */
	    0x3b, 0x2a,	      /*   lit11; ge */
	    0x33, 0x24, 0x22, /*   lit3; shl; plus */
	};
	static const struct want want[] = {
	    CFA(0x3000, RSP, 16, 0),
	    CFA(0x3006, RSP, 24, 0),
	    {.addr = 0x3010, .cmd = OP_RULE_PLT, .base = RSP, .cfa = 8},
	    CMD(0x3040, OP_RULE_INVALID),
	};
	static const struct want want_ibt[] = {
	    CFA(0x3000, RSP, 16, 0),
	    CFA(0x3006, RSP, 24, 0),
	    CMD(0x3010, OP_RULE_INVALID),
	};
	struct stack_delta_table t;
	struct buf b = {0};
	uint8_t ibt[sizeof(plt)];
	size_t cie;

	(void)state;
	cie = add_std_cie(&b);
	add_fde(&b, cie, 0x3000, 0x40, plt, sizeof(plt));
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t.stats.unsupported, 0);
	stack_delta_table__free(&t);

	memcpy(ibt, plt, sizeof(plt));
	ibt[14] = 0x39; /* lit9 */
	b.n = 0;
	cie = add_std_cie(&b);
	add_fde(&b, cie, 0x3000, 0x40, ibt, sizeof(ibt));
	parse_ok(&b, 0, &t);
	check_table(&t, want_ibt, sizeof(want_ibt) / sizeof(want_ibt[0]));
	assert_int_equal(t.stats.unsupported, 1);
	stack_delta_table__free(&t);
}

/* GCC's DRAP realignment (the CFI of `lea 8(%rsp),%r10; and $-64,%rsp; push -8(%r10); ...`). */
static void test_realignment_expression(void **state)
{
	static const uint8_t insns[] = {
	    0x45, 0x0c, 0x0a, 0x00,		/* 0x4005: def_cfa r10 0 (unsupported) */
	    0x59, 0x10, 0x06, 0x02, 0x76, 0x00, /* 0x401e: expression r6 (breg6 0) */
	    0x42, 0x0f, 0x03, 0x76, 0x78, 0x06, /* 0x4020: def_cfa_expression breg6 -8; deref */
	    0x5b, 0x0c, 0x0a, 0x00,		/* 0x403b: def_cfa r10 0 */
	    0x47, 0x0c, 0x07, 0x08,		/* 0x4042: rsp+8, rbp rule left as breg6 0 */
	};
	static const struct want want[] = {
	    CFA(0x4000, RSP, 8, 0),
	    CMD(0x4005, OP_RULE_INVALID),
	    {.addr = 0x4020, .cmd = OP_RULE_CFA_DEREF, .base = RBP, .cfa = -8, .fp = 0},
	    CMD(0x403b, OP_RULE_INVALID),
	};
	struct stack_delta_table t;
	struct buf b = {0};
	size_t cie;

	(void)state;
	cie = add_std_cie(&b);
	add_fde(&b, cie, 0x4000, 0x43, insns, sizeof(insns));
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	/* r10-based rows at 0x4005, 0x401e, 0x403b and the stale rbp rule at 0x4042 */
	assert_int_equal(t.stats.unsupported, 4);
	stack_delta_table__free(&t);
}

/* An rbp rule written as an expression on the CFA's own base register is a plain offset. */
static void test_rbp_expression_on_cfa_base(void **state)
{
	static const uint8_t insns[] = {
	    0x41, 0x0e, 0x10,		  /* 0x5001: rsp+16 */
	    0x10, 0x06, 0x02, 0x77, 0x00, /* rbp saved at rsp+0 = CFA-16 */
	    0x41, 0x0c, 0x06, 0x10, /* 0x5002: rbp+16, rbp rule unchanged: now on another base */
	};
	static const struct want want[] = {
	    CFA(0x5000, RSP, 8, 0),
	    CFA(0x5001, RSP, 16, -16),
	    CMD(0x5002, OP_RULE_INVALID),
	};
	struct stack_delta_table t;
	struct buf b = {0};
	size_t cie;

	(void)state;
	cie = add_std_cie(&b);
	add_fde(&b, cie, 0x5000, 0x10, insns, sizeof(insns));
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	stack_delta_table__free(&t);
}

/* glibc's __restore_rt: an 'S' CIE; its FDE's expressions describe the ucontext. */
static void test_signal_frame(void **state)
{
	static const uint8_t enc = 0x1b;
	static const uint8_t insns[] = {
	    0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06, /* def_cfa_expression breg7 160; deref */
	    0x10, 0x06, 0x02, 0x77, 0x78,	/* expression r6: breg7 120 */
	    0x10, 0x10, 0x03, 0x77, 0xa8, 0x01, /* expression r16: breg7 168 */
	};
	static const struct want want[] = {
	    CFA(0x6000, RSP, 8, 0),
	    CMD(0x600f, OP_RULE_SIGNAL),
	    CMD(0x6019, OP_RULE_INVALID),
	};
	struct stack_delta_table t;
	struct buf b = {0};
	size_t cie, sig;

	(void)state;
	cie = add_std_cie(&b);
	sig = add_cie(&b, "zRS", &enc, 1, 16, NULL, 0);
	add_fde(&b, cie, 0x6000, 0xf, NULL, 0);
	add_fde(&b, sig, 0x600f, 0xa, insns, sizeof(insns));
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t.stats.cies, 2);
	assert_int_equal(t.stats.unsupported, 0);
	stack_delta_table__free(&t);
}

/* Every way of moving the row boundary, with code alignment factors 1 and 4. */
static void test_advance_variants(void **state)
{
	static const uint8_t enc = 0x1b;
	static const uint8_t insns[] = {
	    0x42, 0x0e, 0x10,			      /* advance_loc 2 -> +2 */
	    0x02, 0x03, 0x0e, 0x18,		      /* advance_loc1 3 -> +5 */
	    0x03, 0x00, 0x01, 0x0e, 0x20,	      /* advance_loc2 0x100 -> +0x105 */
	    0x04, 0x00, 0x00, 0x01, 0x00, 0x0e, 0x28, /* advance_loc4 0x10000 -> +0x10105 */
	    0x40, 0x13, 0x7a,			      /* advance_loc 0; def_cfa_offset_sf -6*-8 */
	};
	static const uint8_t set_loc[] = {
	    0x01, 0,	0, 0, 0, /* set_loc (pcrel sdata4, patched) */
	    0x0e, 0x10,
	};
	static const uint8_t scaled[] = {0x42, 0x0e, 0x10}; /* advance 2 * 4 */
	static const struct want want[] = {
	    CFA(0x100000, RSP, 8, 0),  CFA(0x100002, RSP, 16, 0), CFA(0x100005, RSP, 24, 0),
	    CFA(0x100105, RSP, 32, 0), CFA(0x110105, RSP, 48, 0), CMD(0x120000, OP_RULE_INVALID),
	    CFA(0x200000, RSP, 8, 0),  CFA(0x200004, RSP, 16, 0), CMD(0x200010, OP_RULE_INVALID),
	    CFA(0x300000, RSP, 8, 0),  CFA(0x300008, RSP, 16, 0), CMD(0x300100, OP_RULE_INVALID),
	};
	struct stack_delta_table t;
	struct buf b = {0};
	uint8_t sl[sizeof(set_loc)];
	size_t cie, cie4, at;
	int32_t rel;

	(void)state;
	cie = add_std_cie(&b);
	add_fde(&b, cie, 0x100000, 0x20000, insns, sizeof(insns));
	at = add_fde(&b, cie, 0x200000, 0x10, set_loc, sizeof(set_loc));
	rel = (int32_t)(0x200004 - (SEC_VADDR + at + 1));
	memcpy(sl, set_loc, sizeof(sl));
	memcpy(sl + 1, &rel, 4);
	memcpy(b.d + at, sl, sizeof(sl));
	cie4 = add_cie_full(&b, 1, "zR", &enc, 1, 4, -8, 16, std_init, sizeof(std_init));
	add_fde(&b, cie4, 0x300000, 0x100, scaled, sizeof(scaled));
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t.stats.fdes, 3);
	stack_delta_table__free(&t);

	/* set_loc going backwards makes the FDE meaningless. */
	rel = (int32_t)(0x1fffff - (SEC_VADDR + at + 1));
	memcpy(b.d + at + 1, &rel, 4);
	parse_ok(&b, 0, &t);
	assert_int_equal(t.stats.fdes, 2);
	assert_int_equal(t.stats.bad_entries, 1);
	assert_int_equal(stack_delta_table__find(&t, 0x200004)->rule.cmd, OP_RULE_INVALID);
	stack_delta_table__free(&t);
}

/* 64-bit lengths (and 8-byte CIE ids/pointers) mixed with 32-bit entries. */
static void test_64bit_lengths(void **state)
{
	static const uint8_t insns[] = {0x41, 0x0e, 0x10};
	static const struct want want[] = {
	    CFA(0x7000, RSP, 8, 0),  CFA(0x7001, RSP, 16, 0),	   CFA(0x7010, RSP, 8, 0),
	    CFA(0x7011, RSP, 16, 0), CMD(0x7020, OP_RULE_INVALID),
	};
	struct stack_delta_table t;
	struct buf b = {0};
	size_t cie_start, at, id_pos, field;

	(void)state;
	cie_start = b.n;
	at = b_begin64(&b);
	b_uint(&b, 0, 8); /* CIE id */
	b_u8(&b, 1);
	b_bytes(&b, "zR", 3);
	b_uleb(&b, 1);
	b_sleb(&b, -8);
	b_u8(&b, 16);
	b_uleb(&b, 1);
	b_u8(&b, 0x1b);
	b_bytes(&b, std_init, sizeof(std_init));
	b_end64(&b, at);

	at = b_begin64(&b);
	id_pos = b.n;
	b_uint(&b, id_pos - cie_start, 8);
	field = b.n;
	b_uint(&b, (uint32_t)(0x7000 - (SEC_VADDR + field)), 4);
	b_uint(&b, 0x10, 4);
	b_uleb(&b, 0);
	b_bytes(&b, insns, sizeof(insns));
	b_end64(&b, at);

	/* A 32-bit FDE pointing back to the 64-bit CIE. */
	add_fde(&b, cie_start, 0x7010, 0x10, insns, sizeof(insns));
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t.stats.cies, 1);
	assert_int_equal(t.stats.fdes, 2);
	assert_int_equal(t.stats.bad_entries, 0);
	stack_delta_table__free(&t);
}

/* Zero terminators end nothing we can still parse; an empty section is a valid empty table. */
static void test_zero_terminator(void **state)
{
	static const struct want want[] = {
	    CFA(0x8000, RSP, 8, 0),
	    CMD(0x8010, OP_RULE_INVALID),
	    CFA(0x8020, RSP, 8, 0),
	    CMD(0x8030, OP_RULE_INVALID),
	};
	struct stack_delta_table t;
	struct buf b = {0};
	size_t cie;

	(void)state;
	cie = add_std_cie(&b);
	add_fde(&b, cie, 0x8000, 0x10, NULL, 0);
	b_uint(&b, 0, 4);
	add_fde(&b, cie, 0x8020, 0x10, NULL, 0);
	b_uint(&b, 0, 4);
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t.stats.bad_entries, 0);
	stack_delta_table__free(&t);

	b.n = 4; /* just a terminator */
	memset(b.d, 0, 4);
	parse_ok(&b, 0, &t);
	assert_int_equal(t.n, 0);
	assert_int_equal(stack_deltas__parse(NULL, 0, 0, 0, &t), 0);
	assert_int_equal(t.n, 0);
	assert_null(stack_delta_table__find(&t, 0));
	stack_delta_table__free(&t);
}

/*
 * Augmentations: "zPLR" (C++: personality and LSDA) and the old "eh" parse;
 * an unknown letter makes the CIE and all its FDEs skipped, and counted.
 */
static void test_augmentations(void **state)
{
	/* P: udata4 personality 0x12345678; L: pcrel sdata4 LSDA; R: pcrel sdata4. */
	static const uint8_t plr[] = {0x03, 0x78, 0x56, 0x34, 0x12, 0x1b, 0x1b};
	static const uint8_t unknown[] = {0x1b, 0x00};
	static const uint8_t insns[] = {0x41, 0x0e, 0x10};
	static const struct want want[] = {
	    CFA(0x9000, RSP, 8, 0), CFA(0x9001, RSP, 16, 0), CMD(0x9010, OP_RULE_INVALID),
	    CFA(0xa000, RSP, 8, 0), CFA(0xa001, RSP, 16, 0), CMD(0xa010, OP_RULE_INVALID),
	};
	struct stack_delta_table t;
	struct buf b = {0};
	size_t cie, bad, eh, at, field;

	(void)state;
	/* zPLR: every FDE carries 4 bytes of augmentation data (the LSDA pointer). */
	cie = add_cie(&b, "zPLR", plr, sizeof(plr), 16, std_init, sizeof(std_init));
	at = b_begin(&b);
	b_uint(&b, b.n - cie, 4);
	field = b.n;
	b_uint(&b, (uint32_t)(0x9000 - (SEC_VADDR + field)), 4);
	b_uint(&b, 0x10, 4);
	b_uleb(&b, 4);
	b_uint(&b, 0xdeadbeef, 4);
	b_bytes(&b, insns, sizeof(insns));
	b_end(&b, at);

	bad = add_cie(&b, "zRX", unknown, sizeof(unknown), 16, std_init, sizeof(std_init));
	add_fde(&b, bad, 0xb000, 0x10, insns, sizeof(insns));
	add_fde(&b, bad, 0xc000, 0x10, insns, sizeof(insns));

	/* "eh": an 8-byte EH data word after the string, absolute 8-byte FDE addresses. */
	eh = b_begin(&b);
	b_uint(&b, 0, 4);
	b_u8(&b, 1);
	b_bytes(&b, "eh", 3);
	b_uint(&b, 0, 8);
	b_uleb(&b, 1);
	b_sleb(&b, -8);
	b_u8(&b, 16);
	b_bytes(&b, std_init, sizeof(std_init));
	b_end(&b, eh);
	at = b_begin(&b);
	b_uint(&b, b.n - eh, 4);
	b_uint(&b, 0xa000, 8);
	b_uint(&b, 0x10, 8);
	b_bytes(&b, insns, sizeof(insns));
	b_end(&b, at);

	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t.stats.cies, 2);
	assert_int_equal(t.stats.fdes, 2);
	assert_int_equal(t.stats.bad_entries, 3); /* the "zRX" CIE and its two FDEs */
	stack_delta_table__free(&t);
}

/*
 * Return-address rules: undefined (the outermost frame, like _start) stops,
 * anything but "at CFA - 8", or an RA column other than 16, is unsupported.
 */
static void test_return_address_rules(void **state)
{
	static const uint8_t enc = 0x1b;
	static const uint8_t undef_init[] = {0x0c, 0x07, 0x08, 0x07, 0x10}; /* RA undefined */
	static const uint8_t moved[] = {0x41, 0x90, 0x02};		    /* RA at cfa-16 */
	static const uint8_t in_reg[] = {0x41, 0x09, 0x10, 0x00};	    /* RA in rax */
	static const struct want want[] = {
	    CMD(0xd000, OP_RULE_STOP), CMD(0xd010, OP_RULE_INVALID),
	    CFA(0xe000, RSP, 8, 0),    CMD(0xe001, OP_RULE_INVALID),
	    CFA(0xe010, RSP, 8, 0),    CMD(0xe011, OP_RULE_INVALID),
	};
	struct stack_delta_table t;
	struct buf b = {0};
	size_t start, cie, ra8;

	(void)state;
	start = add_cie(&b, "zR", &enc, 1, 16, undef_init, sizeof(undef_init));
	cie = add_std_cie(&b);
	ra8 = add_cie(&b, "zR", &enc, 1, 8, std_init, sizeof(std_init));
	add_fde(&b, start, 0xd000, 0x10, NULL, 0);
	add_fde(&b, cie, 0xe000, 0x10, moved, sizeof(moved));
	add_fde(&b, cie, 0xe010, 0x10, in_reg, sizeof(in_reg));
	add_fde(&b, ra8, 0xe020, 0x10, NULL, 0);
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t.stats.unsupported, 3);
	stack_delta_table__free(&t);
}

/* Register and offset rules that do not fit the rule's fields. */
static void test_unexpressible_rules(void **state)
{
	static const uint8_t insns[] = {
	    0x41, 0x0e, 0x10, 0x86, 0x02,		    /* 0xf001: rsp+16, rbp at c-16 */
	    0x41, 0x86, 0x80, 0x20,			    /* 0xf002: rbp at c-32768 (fits) */
	    0x41, 0x86, 0x81, 0x20,			    /* 0xf003: rbp at c-32776 (does not) */
	    0x41, 0x06, 0x06, 0x0c, 0x03, 0x08,		    /* 0xf004: rbp restored; CFA rbx + 8 */
	    0x41, 0x0c, 0x07, 0x80, 0x80, 0x80, 0x80, 0x10, /* 0xf005: rsp + 2^32 */
	    0x41, 0x0c, 0x07, 0x08, 0x09, 0x06, 0x03,	    /* 0xf006: rbp in rbx */
	    0x41, 0x14, 0x06, 0x02,			    /* 0xf007: rbp = CFA-16 (val_offset) */
	    0x41, 0x08, 0x06,				    /* 0xf008: same_value */
	    0x41, 0x2f, 0x06, 0x02,			    /* 0xf009: negative_offset_extended */
	    0x41, 0x07, 0x06, 0x2e, 0x10,		    /* 0xf00a: undefined; args_size */
	};
	static const struct want want[] = {
	    CFA(0xf000, RSP, 8, 0),
	    CFA(0xf001, RSP, 16, -16),
	    CFA(0xf002, RSP, 16, -32768),
	    CMD(0xf003, OP_RULE_INVALID),
	    /* ld.so's lazy-binding trampolines' rule (OP_RULE_CFA_RBX) */
	    {.addr = 0xf004, .cmd = OP_RULE_CFA_RBX, .base = RSP, .cfa = 8, .fp = 0},
	    CMD(0xf005, OP_RULE_INVALID),
	    CFA(0xf008, RSP, 8, 0),
	    CFA(0xf009, RSP, 8, 16),
	    CFA(0xf00a, RSP, 8, 0),
	    CMD(0xf010, OP_RULE_INVALID),
	};
	struct stack_delta_table t;
	struct buf b = {0};
	size_t cie;

	(void)state;
	cie = add_std_cie(&b);
	add_fde(&b, cie, 0xf000, 0x10, insns, sizeof(insns));
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t.stats.unsupported, 4);
	stack_delta_table__free(&t);
}

/* Unusable FDE address encodings: the FDE is skipped and counted, the others stay. */
static void test_unsupported_encodings(void **state)
{
	static const uint8_t encs[] = {0x3b /* datarel */, 0x9b /* indirect */, 0xff /* omit */,
				       0x0e /* reserved format */};
	static const struct want want[] = {CFA(0x1000, RSP, 8, 0), CMD(0x1010, OP_RULE_INVALID)};
	struct stack_delta_table t;
	struct buf b = {0};
	size_t cie;

	(void)state;
	cie = add_std_cie(&b);
	add_fde(&b, cie, 0x1000, 0x10, NULL, 0);
	for (size_t i = 0; i < sizeof(encs); i++) {
		cie = add_cie(&b, "zR", &encs[i], 1, 16, std_init, sizeof(std_init));
		add_fde(&b, cie, 0x2000 + 0x100 * i, 0x10, NULL, 0);
	}
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t.stats.fdes, 1);
	assert_int_equal(t.stats.bad_entries, sizeof(encs));
	stack_delta_table__free(&t);
}

/* Overlapping FDEs: the lower start keeps its whole range; equal starts: the first one. */
static void test_overlapping_fdes(void **state)
{
	static const uint8_t a[] = {0x48, 0x0e, 0x10};	/* [0x1000,0x1100): +8: rsp+16 */
	static const uint8_t bb[] = {0x41, 0x0e, 0x20}; /* [0x1080,0x1200): +1: rsp+32 */
	static const uint8_t dup[] = {0x0e, 0x30};	/* [0x1000,0x1010): rsp+48, loses */
	static const struct want want[] = {
	    CFA(0x1000, RSP, 8, 0),
	    CFA(0x1008, RSP, 16, 0),
	    CFA(0x1100, RSP, 32, 0),
	    CMD(0x1200, OP_RULE_INVALID),
	};
	struct stack_delta_table t;
	struct buf b = {0};
	size_t cie;

	(void)state;
	cie = add_std_cie(&b);
	add_fde(&b, cie, 0x1080, 0x180, bb,
		sizeof(bb)); /* section order differs from address order */
	add_fde(&b, cie, 0x1000, 0x100, a, sizeof(a));
	add_fde(&b, cie, 0x1000, 0x10, dup, sizeof(dup));
	parse_ok(&b, 0, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	stack_delta_table__free(&t);
}

/*
 * The .debug_frame dialect: CIE id 0xffffffff, absolute CIE offsets (here
 * pointing forward), absolute 8-byte addresses, CIE versions 1, 3 and 4, and
 * the linker's tombstone (address 0) for discarded functions.
 */
static void test_debug_frame(void **state)
{
	static const uint8_t insns[] = {0x41, 0x0e, 0x10, 0x86, 0x02, 0x41, 0x0d, 0x06};
	static const struct want want[] = {
	    CFA(0x401000, RSP, 8, 0),	 CFA(0x401001, RSP, 16, -16),
	    CFA(0x401002, RBP, 16, -16), CMD(0x401010, OP_RULE_INVALID),
	    CFA(0x402000, RSP, 8, 0),	 CFA(0x402001, RSP, 16, -16),
	    CFA(0x402002, RBP, 16, -16), CMD(0x402010, OP_RULE_INVALID),
	    CFA(0x403000, RSP, 8, 0),	 CFA(0x403001, RSP, 16, -16),
	    CFA(0x403002, RBP, 16, -16), CMD(0x403010, OP_RULE_INVALID),
	};
	uint64_t fde_at[4] = {0x401000, 0x402000, 0x403000, 0};
	size_t cie_pos[3], fix[4], at;
	struct stack_delta_table t;
	struct buf b = {0};

	(void)state;
	/* FDEs first, CIE offsets patched in once the CIEs exist. */
	for (int i = 0; i < 4; i++) {
		at = b_begin(&b);
		fix[i] = b.n;
		b_uint(&b, 0, 4);
		b_uint(&b, fde_at[i], 8);
		b_uint(&b, 0x10, 8);
		b_bytes(&b, insns, sizeof(insns));
		b_end(&b, at);
	}
	for (int v = 0; v < 3; v++) {
		static const uint8_t versions[] = {1, 3, 4};

		cie_pos[v] = at = b_begin(&b);
		b_uint(&b, 0xffffffff, 4);
		b_u8(&b, versions[v]);
		b_u8(&b, 0); /* no augmentation */
		if (versions[v] == 4) {
			b_u8(&b, 8); /* address size */
			b_u8(&b, 0); /* segment selector size */
		}
		b_uleb(&b, 1);
		b_sleb(&b, -8);
		if (versions[v] == 1)
			b_u8(&b, 16);
		else
			b_uleb(&b, 16);
		b_bytes(&b, std_init, sizeof(std_init));
		b_end(&b, at);
	}
	for (int i = 0; i < 4; i++) {
		uint32_t off = (uint32_t)cie_pos[i % 3];

		memcpy(b.d + fix[i], &off, 4);
	}
	parse_ok(&b, 1, &t);
	check_table(&t, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t.stats.cies, 3);
	assert_int_equal(t.stats.fdes, 4);
	assert_int_equal(t.stats.bad_entries, 0);
	stack_delta_table__free(&t);

	/* The same bytes read as .eh_frame make no sense: nothing usable, all counted. */
	assert_int_equal(stack_deltas__parse(b.d, b.n, SEC_VADDR, 0, &t), -ENOEXEC);
	assert_int_equal(t.n, 0);
	assert_true(t.stats.bad_entries > 0);
}

/* Bytes that are not CFI at all. */
static void test_garbage_is_enoexec(void **state)
{
	static const uint8_t junk[] = {0xff, 0xff, 0xff, 0xf0, 1, 2, 3};
	static const uint8_t too_long[] = {0x40, 0, 0, 0, 0, 0, 0, 0};
	struct stack_delta_table t;

	(void)state;
	assert_int_equal(stack_deltas__parse(junk, sizeof(junk), 0, 0, &t), -ENOEXEC);
	assert_int_equal(t.stats.bad_entries, 1);
	assert_int_equal(stack_deltas__parse(too_long, sizeof(too_long), 0, 1, &t), -ENOEXEC);
	assert_int_equal(stack_deltas__parse(junk, 3, 0, 0, &t), -ENOEXEC);
	assert_null(t.deltas);
}

/* ---- malformed input ------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* A section using most of what the parser knows, for truncation and mutation. */
static void rich_section(struct buf *b)
{
	static const uint8_t enc = 0x1b, plr[] = {0x03, 0x78, 0x56, 0x34, 0x12, 0x1b, 0x1b};
	static const uint8_t prologue[] = {0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d,
					   0x06, 0x48, 0x0a, 0x0c, 0x07, 0x08, 0xc6,
					   0x42, 0x0b, 0x4a, 0x0c, 0x07, 0x08, 0xc6};
	static const uint8_t plt[] = {0x0e, 0x10, 0x46, 0x0e, 0x18, 0x4a, 0x0f, 0x0b, 0x77, 0x08,
				      0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22};
	static const uint8_t drap[] = {0x45, 0x0c, 0x0a, 0x00, 0x59, 0x10, 0x06, 0x02,
				       0x76, 0x00, 0x42, 0x0f, 0x03, 0x76, 0x78, 0x06,
				       0x5b, 0x0c, 0x0a, 0x00, 0x47, 0x0c, 0x07, 0x08};
	static const uint8_t adv[] = {0x02, 0x03, 0x0e, 0x18, 0x03, 0x00, 0x01, 0x0e, 0x20,
				      0x04, 0x00, 0x00, 0x01, 0x00, 0x13, 0x7a, 0x2f, 0x06,
				      0x02, 0x14, 0x06, 0x02, 0x16, 0x06, 0x01, 0x9c};
	size_t cie, lsda, sig, at, field;

	cie = add_std_cie(b);
	add_fde(b, cie, 0x1000, 0x20, prologue, sizeof(prologue));
	add_fde(b, cie, 0x1020, 0x40, plt, sizeof(plt));
	add_fde(b, cie, 0x1060, 0x43, drap, sizeof(drap));
	add_fde(b, cie, 0x10000, 0x20000, adv, sizeof(adv));
	lsda = add_cie(b, "zPLR", plr, sizeof(plr), 16, std_init, sizeof(std_init));
	at = b_begin(b);
	b_uint(b, b->n - lsda, 4);
	field = b->n;
	b_uint(b, (uint32_t)(0x2000 - (SEC_VADDR + field)), 4);
	b_uint(b, 0x10, 4);
	b_uleb(b, 4);
	b_uint(b, 0x1234, 4);
	b_bytes(b, prologue, sizeof(prologue));
	b_end(b, at);
	sig = add_cie(b, "zRS", &enc, 1, 16, NULL, 0);
	add_fde(b, sig, 0x3000, 0x10, NULL, 0);
	at = b_begin64(b);
	b_uint(b, 0, 8);
	b_u8(b, 3);
	b_bytes(b, "zR", 3);
	b_uleb(b, 1);
	b_sleb(b, -8);
	b_uleb(b, 16);
	b_uleb(b, 1);
	b_u8(b, 0x1b);
	b_bytes(b, std_init, sizeof(std_init));
	b_end64(b, at);
	add_fde(b, at - 4, 0x4000, 0x10, prologue, sizeof(prologue));
	b_uint(b, 0, 4);
}

/* Parses bytes in both dialects; whatever they are, the result is sane. */
static void parse_any(const uint8_t *data, size_t len, struct stack_delta_stats *stats)
{
	for (int debug = 0; debug < 2; debug++) {
		struct stack_delta_table t;
		int err = stack_deltas__parse(data, len, SEC_VADDR, debug, &t);

		assert_true(err == 0 || err == -ENOEXEC);
		if (err) {
			assert_null(t.deltas);
			assert_int_equal(t.n, 0);
		} else {
			check_invariants(&t);
		}
		/* every entry takes at least 8 bytes (length and id) */
		assert_true(t.stats.fdes + t.stats.cies <= len / 8);
		if (!debug && stats)
			*stats = t.stats;
		stack_delta_table__free(&t);
	}
}

/* Every prefix of a valid section: nothing beyond the cut is read (ASan), FDEs only get lost. */
static void truncate_all(const uint8_t *data, size_t len, size_t step)
{
	struct stack_delta_stats full, part;
	uint8_t *copy;

	parse_any(data, len, &full);
	for (size_t cut = 0; cut < len; cut += step) {
		/* an exact-size heap copy, so reading past the cut is caught */
		copy = malloc(cut ? cut : 1);
		assert_non_null(copy);
		memcpy(copy, data, cut);
		parse_any(copy, cut, &part);
		assert_true(part.fdes <= full.fdes);
		free(copy);
	}
}

static void mutate_many(const uint8_t *data, size_t len, int rounds)
{
	uint8_t *copy = malloc(len);

	assert_non_null(copy);
	for (int r = 0; r < rounds; r++) {
		int flips = 1 + (int)(rng() % 6);

		memcpy(copy, data, len);
		for (int i = 0; i < flips; i++) {
			size_t pos = rng() % len;

			switch (rng() % 4) {
			case 0:
				copy[pos] ^= (uint8_t)(1u << (rng() % 8));
				break;
			case 1:
				copy[pos] = (uint8_t)rng();
				break;
			case 2: /* interesting values */
				copy[pos] =
				    (uint8_t[]){0x00, 0xff, 0x80, 0x7f, 0x0a, 0x0b}[rng() % 6];
				break;
			default: /* a length or pointer off by a bit */
				copy[pos] += (uint8_t)(rng() % 3) - 1;
				break;
			}
		}
		parse_any(copy, len, NULL);
	}
	free(copy);
}

static void test_truncated_and_mutated(void **state)
{
	struct stack_delta_stats stats;
	struct buf b = {0};

	(void)state;
	rich_section(&b);
	parse_any(b.d, b.n, &stats);
	assert_int_equal(stats.bad_entries, 0);
	assert_int_equal(stats.cies, 4);
	assert_int_equal(stats.fdes, 7);
	truncate_all(b.d, b.n, 1);
	mutate_many(b.d, b.n, 5000);
}

/*
 * Random but well-formed sections, checked against a model. Arbitrary bytes
 * are the fuzz target's job (tests/fuzz/fuzz_eh_frame.c: libFuzzer in `make
 * fuzz`, its seeds and regressions in `make test`), and mutated real sections
 * are test_truncated_and_mutated's: here every section is valid, so the parser
 * must give exactly the rows the model computes. Each FDE of the standard CIE
 * runs a random program of the instructions compilers write on x86-64
 * (advance_loc, def_cfa, def_cfa_offset, def_cfa_register with rsp or rbp,
 * offset/restore of rbp, balanced remember/restore_state); FDEs cover
 * ascending ranges with random gaps (or none) but sit in the section in a
 * random order, so the table is sorted by the parser, not by the input.
 */
struct model_rule {
	uint8_t base;
	int32_t cfa;
	int16_t fp;
};

#define MODEL_FDES     12
#define MODEL_MAX_LEN  200
#define MODEL_MAX_OPS  16
#define MODEL_MAX_SAVE 4

struct model_fde {
	uint64_t start;
	uint32_t len;
	uint8_t insns[MODEL_MAX_OPS * 4];
	size_t n_insns;
	struct model_rule at[MODEL_MAX_LEN]; /* the rule at each address of the range */
};

/* A random program for f (start and len set) and the rule it gives each address. */
static void model_program(struct model_fde *f)
{
	struct model_rule cur = {.base = OP_CFA_RSP, .cfa = 8, .fp = 0}, saved[MODEL_MAX_SAVE];
	int n_ops = (int)(rng() % MODEL_MAX_OPS), depth = 0;
	uint32_t loc = 0;
	struct buf b = {0};

	for (int i = 0; i < n_ops; i++) {
		uint8_t reg = rng() % 2 ? 6 : 7; /* DWARF rbp, rsp */
		uint64_t off = 8 * (1 + rng() % 64);

		switch (rng() % 8) {
		case 0:
		case 1: /* advance_loc: the rows so far apply up to the new location */
			if (loc + 1 < f->len) {
				uint32_t d = 1 + (uint32_t)(rng() % (f->len - 1 - loc));

				d = d > 63 ? 63 : d;
				b_u8(&b, (uint8_t)(0x40 | d));
				for (; d; d--)
					f->at[loc++] = cur;
			}
			break;
		case 2: /* def_cfa_offset */
			b_u8(&b, 0x0e);
			b_uleb(&b, off);
			cur.cfa = (int32_t)off;
			break;
		case 3: /* def_cfa reg off */
			b_u8(&b, 0x0c);
			b_uleb(&b, reg);
			b_uleb(&b, off);
			cur.base = reg == 6 ? OP_CFA_RBP : OP_CFA_RSP;
			cur.cfa = (int32_t)off;
			break;
		case 4: /* def_cfa_register */
			b_u8(&b, 0x0d);
			b_uleb(&b, reg);
			cur.base = reg == 6 ? OP_CFA_RBP : OP_CFA_RSP;
			break;
		case 5: { /* offset rbp at CFA - 8n, or restore rbp (the CIE leaves it unsaved) */
			uint64_t n = 1 + rng() % 8;

			if (rng() % 3) {
				b_u8(&b, 0x86);
				b_uleb(&b, n);
				cur.fp = (int16_t)(-8 * (int64_t)n);
			} else {
				b_u8(&b, 0xc6);
				cur.fp = 0;
			}
			break;
		}
		case 6: /* remember_state */
			if (depth < MODEL_MAX_SAVE) {
				b_u8(&b, 0x0a);
				saved[depth++] = cur;
			}
			break;
		default: /* restore_state: the CFA rule comes back too */
			if (depth) {
				b_u8(&b, 0x0b);
				cur = saved[--depth];
			}
			break;
		}
	}
	for (; loc < f->len; loc++)
		f->at[loc] = cur;
	assert_true(b.n <= sizeof(f->insns));
	memcpy(f->insns, b.d, b.n);
	f->n_insns = b.n;
}

static void check_model_rule(const struct stack_delta_table *t, uint64_t addr,
			     const struct model_rule *m)
{
	const struct stack_delta *d = stack_delta_table__find(t, addr);

	assert_non_null(d);
	if (!m) {
		if (d->rule.cmd != OP_RULE_INVALID)
			print_table(t);
		assert_int_equal(d->rule.cmd, OP_RULE_INVALID);
		return;
	}
	if (d->rule.cmd != OP_RULE_CFA || d->rule.cfa_base != m->base ||
	    d->rule.cfa_offset != m->cfa || d->rule.fp_offset != m->fp) {
		print_table(t);
		fail_msg("%#llx: want base %u cfa %d fp %d", (unsigned long long)addr, m->base,
			 m->cfa, m->fp);
	}
}

static void test_random_well_formed(void **state)
{
	static struct model_fde fdes[MODEL_FDES];
	size_t checked = 0, max_rows = 0;

	(void)state;
	for (int r = 0; r < 300; r++) {
		size_t n = 1 + rng() % MODEL_FDES, order[MODEL_FDES], cie;
		uint64_t addr = 0x1000 + 16 * (rng() % 256);
		struct stack_delta_table t;
		struct buf b = {0};

		for (size_t i = 0; i < n; i++) {
			fdes[i].start = addr;
			fdes[i].len = 1 + (uint32_t)(rng() % MODEL_MAX_LEN);
			model_program(&fdes[i]);
			addr += fdes[i].len + (rng() % 2 ? 0 : rng() % 17);
			order[i] = i;
		}
		for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
			size_t j = rng() % (i + 1), tmp = order[i];

			order[i] = order[j];
			order[j] = tmp;
		}
		cie = add_std_cie(&b);
		for (size_t i = 0; i < n; i++) {
			const struct model_fde *f = &fdes[order[i]];

			add_fde(&b, cie, f->start, f->len, f->insns, f->n_insns);
		}
		parse_ok(&b, 0, &t);
		assert_int_equal(t.stats.cies, 1);
		assert_int_equal(t.stats.fdes, n);
		assert_int_equal(t.stats.bad_entries, 0);
		assert_int_equal(t.stats.unsupported, 0);
		assert_true(t.n >= 2); /* a rule, and the end of the last FDE */
		max_rows = t.n > max_rows ? t.n : max_rows;

		assert_null(stack_delta_table__find(&t, fdes[0].start - 1));
		for (size_t i = 0; i < n; i++) {
			const struct model_fde *f = &fdes[i];
			uint64_t end = f->start + f->len,
				 next = i + 1 < n ? fdes[i + 1].start : end + 64;

			for (uint64_t a = f->start; a < end; a++, checked++)
				check_model_rule(&t, a, &f->at[a - f->start]);
			for (uint64_t a = end; a < next; a++) /* gaps, and past the last FDE */
				check_model_rule(&t, a, NULL);
		}
		/* Every entry starts inside the FDEs' span or at its end. */
		assert_int_equal(t.deltas[0].addr, fdes[0].start);
		assert_int_equal(t.deltas[t.n - 1].addr, fdes[n - 1].start + fdes[n - 1].len);
		stack_delta_table__free(&t);
	}
	printf("    %zu addresses checked against the model, tables up to %zu rows\n", checked,
	       max_rows);
	assert_true(checked > 10000);
}

/* ---- real files, checked against readelf's own CFI interpreter -------------------------- */

static const char prog_src[] =
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "#define NOINL __attribute__((noinline))\n"
    "volatile int sink;\n"
    "NOINL int leaf(int x) { return x * 3 + sink; }\n"
    "NOINL long many_regs(long a, long b, long c, long d) {\n"
    "  long r = 0, s = 1, u = 2, v = 3;\n"
    "  for (long i = 0; i < a; i++) {\n"
    "    r += leaf((int)i) * b + c * leaf((int)(d + i)); s ^= leaf((int)r) + u;\n"
    "    u += leaf((int)s) * v; v -= leaf((int)(u + r)); }\n"
    "  return r + s + u + v; }\n"
    "NOINL int recurse(int n) { return n <= 0 ? leaf(n) : recurse(n - 1) + leaf(n); }\n"
    "NOINL int vla(int n) { char buf[n]; memset(buf, sink, n); return buf[n / 2] + leaf(n); }\n"
    "NOINL void use(char *p, int n) { sink = p[n - 1]; }\n"
    "NOINL int realign(int n) {\n"
    "  char buf[n]; __attribute__((aligned(64))) char x[64];\n"
    "  memset(buf, 0, n); use(buf, n); use(x, 64); return buf[0] + leaf(x[1]); }\n"
    "NOINL int early(int n) {\n"
    "  if (n > 5) { printf(\"%d\\n\", n); return leaf(n) + many_regs(n, 1, 2, 3); }\n"
    "  return n; }\n"
    "int main(int argc, char **argv) {\n"
    "  (void)argv;\n"
    "  printf(\"%ld\\n\", many_regs(argc, 2, 3, 4) + recurse(argc) + vla(argc + 8) +\n"
    "         realign(argc + 3) + early(argc));\n"
    "  return 0; }\n";

/* Compilers and flags the test program is built with; the last has .debug_frame. */
static const char *const variants[] = {
    "gcc -O2 -fomit-frame-pointer",
    "gcc -O2 -fno-omit-frame-pointer",
    "clang -O2 -fomit-frame-pointer",
    "clang -O2 -fno-omit-frame-pointer",
    "gcc -O2 -g -fno-asynchronous-unwind-tables",
};
#define N_VARIANTS (sizeof(variants) / sizeof(variants[0]))

/* The system's libc, found through the dynamic linker's cache. */
static const char *libc_path(void)
{
	static char path[512];

	if (!path[0] && tu_system_lib("libc.so.6", path, sizeof(path)))
		fail_msg("libc.so.6 is not in the dynamic linker's cache (ldconfig -p)");
	return path;
}
#define LIBC libc_path()

static struct {
	char *dir;
	char prog[N_VARIANTS][256];
	char nohdr[256];   /* variant 0 linked without .eh_frame_hdr */
	char nocfi[256];   /* variant 0 with its CFI sections removed */
	char dbgonly[256]; /* objcopy --only-keep-debug of variant 4: NOBITS .eh_frame */
	char ehbin[256];   /* variant 0's .eh_frame bytes */
} fx;

static int setup_files(void **state)
{
	char path[256], *out = NULL;
	FILE *f;
	int rc = 0;

	(void)state;
	fx.dir = tu_mkdtemp();
	if (!fx.dir)
		return -1;
	snprintf(path, sizeof(path), "%s/prog.c", fx.dir);
	f = fopen(path, "w");
	if (!f || fputs(prog_src, f) < 0 || fclose(f) != 0)
		return -1;
	for (size_t i = 0; i < N_VARIANTS && rc == 0; i++) {
		snprintf(fx.prog[i], sizeof(fx.prog[i]), "%s/prog%zu", fx.dir, i);
		rc = tu_run(&out, "%s -o '%s' '%s'", variants[i], fx.prog[i], path);
		if (rc) {
			fprintf(stderr, "%s failed:\n%s\n", variants[i], out ? out : "");
		}
		free(out);
		out = NULL;
	}
	if (rc)
		return -1;
	snprintf(fx.nohdr, sizeof(fx.nohdr), "%s/nohdr", fx.dir);
	snprintf(fx.nocfi, sizeof(fx.nocfi), "%s/nocfi", fx.dir);
	snprintf(fx.dbgonly, sizeof(fx.dbgonly), "%s/dbgonly", fx.dir);
	snprintf(fx.ehbin, sizeof(fx.ehbin), "%s/eh.bin", fx.dir);
	rc =
	    tu_run(&out,
		   "%s -Wl,--no-eh-frame-hdr -o '%s' '%s' && "
		   "objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr '%s' '%s' && "
		   "objcopy --only-keep-debug '%s' '%s' && "
		   "objcopy -O binary --only-section=.eh_frame '%s' '%s'",
		   variants[0], fx.nohdr, path, fx.prog[0], fx.nocfi, fx.prog[4], fx.dbgonly,
		   fx.prog[0], fx.ehbin);
	if (rc)
		fprintf(stderr, "preparing inputs failed:\n%s\n", out ? out : "");
	free(out);
	return rc ? -1 : 0;
}

static int teardown_files(void **state)
{
	(void)state;
	tu_rmtree(fx.dir);
	free(fx.dir);
	return 0;
}

static void build_file(const char *path, struct stack_delta_table *t)
{
	struct elf_file *ef;

	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	assert_int_equal(stack_deltas__build(ef, t), 0);
	elf_file__close(ef);
	check_invariants(t);
}

static bool rules_equal(const struct op_unwind_rule *a, const struct op_unwind_rule *b)
{
	return a->cmd == b->cmd && a->cfa_base == b->cfa_base && a->cfa_offset == b->cfa_offset &&
	       a->fp_offset == b->fp_offset;
}

/* "rsp+8", "rbp-16": the register and offset readelf prints for a CFA. */
static bool parse_reg_off(const char *s, uint8_t *base, int32_t *off)
{
	char *end;
	long v;

	/* rbx: 2 here, OP_RULE_CFA_RBX with base rsp in the table */
	if (!strncmp(s, "rsp", 3))
		*base = OP_CFA_RSP;
	else if (!strncmp(s, "rbp", 3))
		*base = OP_CFA_RBP;
	else if (!strncmp(s, "rbx", 3))
		*base = 2;
	else
		return false;
	if (s[3] != '+' && s[3] != '-')
		return false;
	v = strtol(s + 3, &end, 10);
	*off = (int32_t)v;
	return *end == '\0';
}

/* A dynamic loader, told from its headers: ET_DYN with an entry point and no PT_INTERP. */
static bool is_loader(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	bool interp = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		assert_int_equal(pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))),
				 sizeof(ph));
		interp |= ph.p_type == PT_INTERP;
	}
	close(fd);
	return eh.e_type == ET_DYN && eh.e_entry && !interp;
}

/*
 * The rule a readelf frames-interp row stands for, written from the
 * meaning of its columns rather than from our code. Returns false for rows
 * readelf shows as expressions ("exp"), checked separately.
 */
static bool expected_rule(const char *aug, const char *cfa, const char *rbp, const char *rbx,
			  const char *ra, bool track_bx, struct op_unwind_rule *e)
{
	char *end;
	long fp = 0;

	memset(e, 0, sizeof(*e));
	if (strchr(aug, 'S')) {
		e->cmd = OP_RULE_SIGNAL;
		return true;
	}
	if (!strcmp(ra, "u")) {
		e->cmd = OP_RULE_STOP;
		return true;
	}
	e->cmd = OP_RULE_INVALID;
	if (strcmp(ra, "c-8"))
		return true;
	if (!strcmp(cfa, "exp") || !strcmp(rbp, "exp"))
		return false;
	if (rbp[0] == 'c') {
		fp = strtol(rbp + 1, &end, 10);
		if (*end || fp == 0 || fp < INT16_MIN || fp > INT16_MAX)
			return true;
	} else if (strcmp(rbp, "u") && strcmp(rbp, "s")) {
		return true;
	}
	if (!parse_reg_off(cfa, &e->cfa_base, &e->cfa_offset)) {
		e->cfa_base = 0;
		e->cfa_offset = 0;
		return true;
	}
	e->cmd = OP_RULE_CFA;
	if (e->cfa_base == 2) {
		/* ld.so's lazy-binding trampolines: CFA = rbx + k */
		e->cmd = OP_RULE_CFA_RBX;
		e->cfa_base = OP_CFA_RSP;
	}
	e->fp_offset = (int16_t)fp;
	/* A dynamic loader's rules say where the caller's rbx is: unchanged ("u": no
	 * rule, or "s"), or at CFA - 8k; anywhere else it is not described. */
	if (track_bx) {
		long k = rbx[0] == 'c' ? strtol(rbx + 1, &end, 10) : 0;

		if (!strcmp(rbx, "u") || !strcmp(rbx, "s"))
			e->cfa_base |= OP_CFA_F_BX;
		else if (rbx[0] == 'c' && !*end && k < 0 && k % 8 == 0 &&
			 -k / 8 <= OP_CFA_BX_SLOT_MAX)
			e->cfa_base |= (uint8_t)(OP_CFA_F_BX | (-k / 8) << OP_CFA_BX_SLOT_SHIFT);
	}
	return true;
}

#define MAX_COLS 32
#define COL_LEN	 32

struct rd_cie {
	int sec;
	uint64_t off;
	char aug[16];
	char cfa[COL_LEN], rbp[COL_LEN], rbx[COL_LEN], ra[COL_LEN];
	bool has_row;
};

struct rd_fde {
	int sec;
	uint64_t start, end;
	uint64_t cie;
};

struct rd {
	struct rd_cie *cies;
	size_t n_cies;
	struct rd_fde *fdes;
	size_t n_fdes;
	size_t rows_checked, rows_skipped, mismatches;
	size_t rows_in[2]; /* checked rows from .eh_frame, .debug_frame */
	bool track_bx;	   /* a dynamic loader: rbx's slot in each rule (OP_CFA_F_BX) */
	size_t bx_rows;	   /* rows checked with an rbx slot */
};

/* Splits a row into columns; "r3 (rbx)" is one column. */
static int split_row(char *p, char cols[][COL_LEN])
{
	int n = 0;

	while (*p && n < MAX_COLS) {
		char *start;
		size_t len;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && *p != ' ')
			p++;
		if (p[0] == ' ' && p[1] == '(' && start[0] == 'r') {
			while (*p && *p != ')')
				p++;
			if (*p)
				p++;
		}
		len = (size_t)(p - start);
		if (len >= COL_LEN)
			len = COL_LEN - 1;
		memcpy(cols[n], start, len);
		cols[n][len] = '\0';
		n++;
	}
	return n;
}

static void pick_columns(char names[][COL_LEN], int n_names, char vals[][COL_LEN], int n_vals,
			 char *cfa, char *rbp, char *rbx, char *ra)
{
	strcpy(rbp, "u");
	strcpy(rbx, "u");
	strcpy(cfa, "?");
	strcpy(ra, "?");
	for (int i = 0; i < n_names && i < n_vals; i++) {
		if (!strcmp(names[i], "CFA"))
			strcpy(cfa, vals[i]);
		else if (!strcmp(names[i], "rbp"))
			strcpy(rbp, vals[i]);
		else if (!strcmp(names[i], "rbx"))
			strcpy(rbx, vals[i]);
		else if (!strcmp(names[i], "ra"))
			strcpy(ra, vals[i]);
	}
}

static const struct rd_cie *rd_find_cie(const struct rd *rd, int sec, uint64_t off)
{
	for (size_t i = rd->n_cies; i-- > 0;) {
		if (rd->cies[i].sec == sec && rd->cies[i].off == off)
			return &rd->cies[i];
	}
	return NULL;
}

static void rd_check_row(struct rd *rd, const struct stack_delta_table *t, int sec, const char *aug,
			 uint64_t loc, const char *cfa, const char *rbp, const char *rbx,
			 const char *ra)
{
	const struct stack_delta *d;
	struct op_unwind_rule want;

	if (!expected_rule(aug, cfa, rbp, rbx, ra, rd->track_bx, &want)) {
		rd->rows_skipped++;
		return;
	}
	d = stack_delta_table__find(t, loc);
	if (d && rules_equal(&d->rule, &want)) {
		rd->rows_checked++;
		rd->rows_in[sec == 1]++;
		rd->bx_rows += OP_CFA_BX_SLOT(want.cfa_base) != 0;
		return;
	}
	if (rd->mismatches++ < 10)
		fprintf(stderr, "%#llx: readelf %s %s %s %s; ours cmd %d base %d cfa %d fp %d\n",
			(unsigned long long)loc, cfa, rbp, rbx, ra, d ? d->rule.cmd : -1,
			d ? d->rule.cfa_base : -1, d ? d->rule.cfa_offset : 0,
			d ? d->rule.fp_offset : 0);
}

/*
 * Runs `readelf --debug-dump=frames-interp` on path and checks the rule
 * our table gives at every row readelf prints (or, for an FDE without
 * rows, the CIE's initial row at its start).
 */
static void compare_with_readelf(const char *path, const struct stack_delta_table *t, struct rd *rd)
{
	char *out = NULL, *line, *save = NULL;
	char names[MAX_COLS][COL_LEN], vals[MAX_COLS][COL_LEN];
	char cfa[COL_LEN], rbp[COL_LEN], rbx[COL_LEN], ra[COL_LEN];
	int sec = -1, n_names = 0;
	struct rd_cie *cie = NULL;
	struct rd_fde *fde = NULL;
	bool fde_has_rows = false;
	size_t cap_c = 0, cap_f = 0;

	memset(rd, 0, sizeof(*rd));
	rd->track_bx = is_loader(path);
	/* readelf exits with 1 on some valid files (libc) without saying why: the output counts */
	tu_run(&out, "readelf --debug-dump=frames-interp '%s'", path);
	assert_non_null(out);
	assert_non_null(strstr(out, "Contents of the .eh_frame section"));
	/* Appending a line that closes the last FDE. */
	for (line = strtok_r(out, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, b, c, d, e, f;
		bool new_entry = !line || strstr(line, " CIE ") || strstr(line, " FDE ") ||
				 strstr(line, "Contents of the");

		if (new_entry && fde && !fde_has_rows && !(fde->sec == 1 && fde->start == 0)) {
			const struct rd_cie *fc = rd_find_cie(rd, fde->sec, fde->cie);

			assert_non_null(fc);
			assert_true(fc->has_row);
			rd_check_row(rd, t, fde->sec, fc->aug, fde->start, fc->cfa, fc->rbp,
				     fc->rbx, fc->ra);
		}
		if (new_entry) {
			fde = NULL;
			cie = NULL;
			n_names = 0;
		}
		if (!line)
			break;
		if (strstr(line, "Contents of the .eh_frame section")) {
			sec = 0;
		} else if (strstr(line, "Contents of the .debug_frame section")) {
			sec = 1;
		} else if (sscanf(line, "%llx %llx %llx CIE", &a, &b, &c) == 3 &&
			   strstr(line, " CIE \"")) {
			const char *q = strstr(line, " CIE \"") + 6;
			size_t len = strcspn(q, "\"");

			if (rd->n_cies == cap_c) {
				cap_c = cap_c ? cap_c * 2 : 64;
				rd->cies = realloc(rd->cies, cap_c * sizeof(*rd->cies));
				assert_non_null(rd->cies);
			}
			cie = &rd->cies[rd->n_cies++];
			memset(cie, 0, sizeof(*cie));
			cie->sec = sec;
			cie->off = a;
			if (len >= sizeof(cie->aug))
				len = sizeof(cie->aug) - 1;
			memcpy(cie->aug, q, len);
		} else if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &a, &b, &c, &d,
				  &e, &f) == 6) {
			if (rd->n_fdes == cap_f) {
				cap_f = cap_f ? cap_f * 2 : 256;
				rd->fdes = realloc(rd->fdes, cap_f * sizeof(*rd->fdes));
				assert_non_null(rd->fdes);
			}
			fde = &rd->fdes[rd->n_fdes++];
			*fde = (struct rd_fde){.sec = sec, .start = e, .end = f, .cie = d};
			fde_has_rows = false;
		} else if (!strncmp(line, "   LOC", 6)) {
			n_names = split_row(line + 6, names);
		} else if (n_names && strlen(line) > 17 && line[16] == ' ' &&
			   sscanf(line, "%llx", &a) == 1) {
			int n_vals = split_row(line + 17, vals);

			pick_columns(names, n_names, vals, n_vals, cfa, rbp, rbx, ra);
			if (cie) {
				strcpy(cie->cfa, cfa);
				strcpy(cie->rbp, rbp);
				strcpy(cie->rbx, rbx);
				strcpy(cie->ra, ra);
				cie->has_row = true;
			} else if (fde) {
				const struct rd_cie *fc = rd_find_cie(rd, fde->sec, fde->cie);

				assert_non_null(fc);
				fde_has_rows = true;
				/* .debug_frame tombstones (address 0) are not code */
				if (!(fde->sec == 1 && fde->start == 0) && a < fde->end)
					rd_check_row(rd, t, fde->sec, fc->aug, a, cfa, rbp, rbx,
						     ra);
			}
		}
	}
	free(out);
	assert_int_equal(rd->mismatches, 0);
}

static bool any_fde(const struct rd *rd, uint64_t addr, bool at_end)
{
	for (size_t i = 0; i < rd->n_fdes; i++) {
		if ((at_end ? rd->fdes[i].end : rd->fdes[i].start) == addr)
			return true;
	}
	return false;
}

/*
 * Where no FDE ends at an FDE's start, a delta starts exactly there (unless
 * its first rule is INVALID and merges with the gap); where no FDE starts at
 * an FDE's end, the table says INVALID from there.
 */
/* The ELF entry point of path: stack_deltas__build() makes the code there a root
 * (OP_RULE_STOP) where no CFI covers it, up to the next code with CFI: at most
 * 256 bytes. */
#define ENTRY_ROOT_BYTES 256
static uint64_t entry_of(const char *path)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	close(fd);
	return eh.e_entry;
}

static bool at_entry(uint64_t entry, uint64_t addr)
{
	return entry && addr >= entry && addr < entry + ENTRY_ROOT_BYTES;
}

static uint64_t section_info(const char *path, const char *name, uint64_t *offset, uint64_t *size);

static void read_at(const char *path, const char *name, uint64_t v, void *buf, size_t n);

/* path's .init and .fini, and crtstuff's __do_global_dtors_aux and frame_dummy (at most
 * 64 bytes from each): the build gives them rules without CFI (crt_rows, crtstuff_rows). */
struct crt_ranges {
	uint64_t addr[4], size[4];
};

static struct crt_ranges crt_of(const char *path)
{
	static const char *arrays[2] = {".fini_array", ".init_array"};
	struct crt_ranges c = {0};

	c.addr[0] = section_info(path, ".init", NULL, &c.size[0]);
	c.addr[1] = section_info(path, ".fini", NULL, &c.size[1]);
	for (int i = 0; i < 2; i++) {
		uint64_t size = 0, a = section_info(path, arrays[i], NULL, &size);

		if (a && size >= 8) {
			read_at(path, arrays[i], a, &c.addr[2 + i], 8);
			c.size[2 + i] = 64;
		}
	}
	return c;
}

static bool in_crt(const struct crt_ranges *c, uint64_t addr)
{
	for (int i = 0; i < 4; i++)
		if (c->addr[i] && addr >= c->addr[i] && addr < c->addr[i] + c->size[i])
			return true;
	return false;
}

/*
 * a and b give every address the same rule, except in the entry point's root,
 * which only a table made by stack_deltas__build() has (stack_deltas__parse()
 * sees no ELF header).
 */
static void assert_same_rules(const struct stack_delta_table *a, const struct stack_delta_table *b,
			      const char *path)
{
	const struct stack_delta_table *t[2] = {a, b};
	uint64_t entry = entry_of(path);
	struct crt_ranges crt = crt_of(path);

	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < t[k]->n; i++) {
			uint64_t x = t[k]->deltas[i].addr;
			const struct stack_delta *da, *db;

			if (at_entry(entry, x) || in_crt(&crt, x))
				continue;
			da = stack_delta_table__find(a, x);
			db = stack_delta_table__find(b, x);
			assert_non_null(da);
			/* Before the parsed table's first row: the end of crt rows, no CFI. */
			if (!db && da->rule.cmd == OP_RULE_INVALID && in_crt(&crt, x - 1))
				continue;
			assert_non_null(db);
			if (memcmp(&da->rule, &db->rule, sizeof(da->rule)))
				fail_msg(
				    "%#llx: cmd %u base %u cfa %d, parsed cmd %u base %u cfa %d",
				    (unsigned long long)x, da->rule.cmd, da->rule.cfa_base,
				    da->rule.cfa_offset, db->rule.cmd, db->rule.cfa_base,
				    db->rule.cfa_offset);
		}
	}
}

static void check_fde_boundaries(const struct rd *rd, const struct stack_delta_table *t, size_t max,
				 const char *path)
{
	size_t step = rd->n_fdes > max ? rd->n_fdes / max : 1;
	uint64_t entry = entry_of(path);
	struct crt_ranges crt = crt_of(path);

	for (size_t i = 0; i < rd->n_fdes; i += step) {
		const struct rd_fde *f = &rd->fdes[i];
		const struct stack_delta *d;

		if (f->start == f->end || (f->sec == 1 && f->start == 0))
			continue;
		d = stack_delta_table__find(t, f->start);
		assert_non_null(d);
		if (!any_fde(rd, f->start, true) && d->rule.cmd != OP_RULE_INVALID)
			assert_int_equal(d->addr, f->start);
		if (!any_fde(rd, f->end, false)) {
			d = stack_delta_table__find(t, f->end);
			assert_non_null(d);
			if (at_entry(entry, f->end) && d->rule.cmd == OP_RULE_STOP)
				continue;
			if (in_crt(&crt, f->end) && d->rule.cmd == OP_RULE_CFA)
				continue;
			assert_int_equal(d->rule.cmd, OP_RULE_INVALID);
			if (stack_delta_table__find(t, f->end - 1)->rule.cmd != OP_RULE_INVALID)
				assert_int_equal(d->addr, f->end);
		}
	}
}

/*
 * readelf's plain decoding (--debug-dump=frames): every
 * DW_CFA_def_cfa_expression that is the PLT or the DRAP pattern must give
 * OP_RULE_PLT / OP_RULE_CFA_DEREF at the location readelf says it takes
 * effect. Returns how many were checked.
 */
static size_t check_expressions(const char *path, const struct stack_delta_table *t, size_t *plts,
				size_t *derefs, size_t *signals)
{
	static const char plt_expr[] = "(DW_OP_breg7 (rsp): 8; DW_OP_breg16 (rip): 0; DW_OP_lit15; "
				       "DW_OP_and; DW_OP_lit11; DW_OP_ge; DW_OP_lit3; DW_OP_shl; "
				       "DW_OP_plus)";
	char *out = NULL, *line, *save = NULL, *p;
	unsigned long long a, b, c, cie_off = 0, loc = 0, end = 0;
	struct {
		unsigned long long off;
		bool signal;
	} cies[256];
	size_t n_cies = 0, checked = 0;
	bool in_fde = false, signal = false;
	int off;

	*plts = *derefs = *signals = 0;
	tu_run(&out, "readelf --debug-dump=frames '%s'", path);
	assert_non_null(out);
	assert_non_null(strstr(out, "Contents of the .eh_frame section"));
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const struct stack_delta *d;

		if (strstr(line, "Contents of the")) {
			n_cies = 0;
			in_fde = false;
		} else if (sscanf(line, "%llx %llx %llx CIE", &a, &b, &c) == 3 &&
			   strstr(line, " CIE")) {
			assert_true(n_cies < 256);
			cies[n_cies].off = a;
			cies[n_cies++].signal = false;
			in_fde = false;
		} else if (strstr(line, "Augmentation:") && strchr(line, '"') && n_cies) {
			cies[n_cies - 1].signal = strchr(strchr(line, '"') + 1, 'S') != NULL;
		} else if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &a, &b, &c,
				  &cie_off, &loc, &end) == 6) {
			in_fde = true;
			signal = false;
			for (size_t i = 0; i < n_cies; i++) {
				if (cies[i].off == cie_off)
					signal = cies[i].signal;
			}
			if (signal) {
				d = stack_delta_table__find(t, loc);
				assert_non_null(d);
				assert_int_equal(d->rule.cmd, OP_RULE_SIGNAL);
				assert_int_equal(d->addr, loc);
				++*signals;
			}
		} else if (in_fde && strstr(line, "DW_CFA_advance_loc") &&
			   (p = strstr(line, " to ")) != NULL) {
			loc = strtoull(p + 4, NULL, 16);
		} else if (in_fde && !signal && loc < end &&
			   (p = strstr(line, "DW_CFA_def_cfa_expression ")) != NULL) {
			p += strlen("DW_CFA_def_cfa_expression ");
			d = stack_delta_table__find(t, loc);
			assert_non_null(d);
			if (!strcmp(p, plt_expr)) {
				assert_int_equal(d->rule.cmd, OP_RULE_PLT);
				assert_int_equal(d->rule.cfa_base, OP_CFA_RSP);
				assert_int_equal(d->rule.cfa_offset, 8);
				++*plts;
				checked++;
			} else if (sscanf(p, "(DW_OP_breg6 (rbp): %d; DW_OP_deref)", &off) == 1 &&
				   !strcmp(strstr(p, "; ") + 2, "DW_OP_deref)")) {
				/* GCC pairs it with rbp saved at rbp + 0 */
				assert_int_equal(d->rule.cmd, OP_RULE_CFA_DEREF);
				assert_int_equal(d->rule.cfa_base, OP_CFA_RBP);
				assert_int_equal(d->rule.cfa_offset, off);
				assert_int_equal(d->rule.fp_offset, 0);
				++*derefs;
				checked++;
			}
		}
	}
	free(out);
	return checked;
}

/* A section's address (and file offset and size) from readelf -SW; 0 when there is none. */
static uint64_t section_info(const char *path, const char *name, uint64_t *offset, uint64_t *size)
{
	char *out = NULL, *line, *save = NULL;
	uint64_t addr = 0;

	assert_int_equal(tu_run(&out, "readelf -SW '%s'", path), 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = strchr(line, ']'), sname[64], type[64];
		unsigned long long a, off, sz;

		if (p &&
		    sscanf(p + 1, " %63s %63s %llx %llx %llx", sname, type, &a, &off, &sz) == 5 &&
		    !strcmp(sname, name)) {
			addr = a;
			if (offset)
				*offset = off;
			if (size)
				*size = sz;
			break;
		}
	}
	free(out);
	return addr;
}

static void check_plt_section(const char *path, const struct stack_delta_table *t)
{
	uint64_t size = 0, plt = section_info(path, ".plt", NULL, &size);
	const struct stack_delta *d;

	assert_true(plt != 0);
	assert_true(size >= 32);
	/* plt0 pushed the link map: rsp + 16, then rsp + 24 once it pushed again */
	d = stack_delta_table__find(t, plt);
	assert_int_equal(d->addr, plt);
	assert_int_equal(d->rule.cmd, OP_RULE_CFA);
	assert_int_equal(d->rule.cfa_offset, 16);
	/* each 16-byte entry after plt0 */
	for (uint64_t a = plt + 16; a < plt + size; a++) {
		d = stack_delta_table__find(t, a);
		assert_int_equal(d->rule.cmd, OP_RULE_PLT);
		assert_int_equal(d->rule.cfa_offset, 8);
	}
}

static void test_compiled_programs(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_VARIANTS; i++) {
		struct stack_delta_table t;
		size_t plts, derefs, signals;
		struct rd rd;

		build_file(fx.prog[i], &t);
		assert_int_equal(t.stats.bad_entries, 0);
		compare_with_readelf(fx.prog[i], &t, &rd);
		/* crt files, our 7 functions, the PLT */
		assert_true(rd.rows_checked >= 20);
		assert_true(rd.n_fdes >= 8);
		check_fde_boundaries(&rd, &t, SIZE_MAX, fx.prog[i]);
		check_expressions(fx.prog[i], &t, &plts, &derefs, &signals);
		assert_int_equal(plts, 1);
		/* GCC realigns with DRAP; clang with rbp and rbx instead */
		if (!strncmp(variants[i], "gcc", 3))
			assert_int_equal(derefs, 1);
		check_plt_section(fx.prog[i], &t);
		/* the crt files always bring .eh_frame; only -g without unwind tables .debug_frame
		 */
		assert_true(rd.rows_in[0] > 0);
		if (i == 4)
			assert_true(rd.rows_in[1] >= 10);
		else
			assert_int_equal(rd.rows_in[1], 0);
		free(rd.cies);
		free(rd.fdes);
		stack_delta_table__free(&t);
	}
}

/* The system's libc: every row readelf prints, the FDE boundaries, the PLT, __restore_rt. */
static void test_system_libc(void **state)
{
	struct stack_delta_table t;
	size_t plts, derefs, signals;
	struct rd rd;

	(void)state;
	build_file(LIBC, &t);
	assert_int_equal(t.stats.bad_entries, 0);
	compare_with_readelf(LIBC, &t, &rd);
	assert_true(rd.n_fdes > 1000);
	assert_true(rd.rows_checked > 10000);
	assert_true(rd.rows_skipped < 10);
	check_fde_boundaries(&rd, &t, 500, LIBC);
	check_expressions(LIBC, &t, &plts, &derefs, &signals);
	assert_int_equal(plts, 1);
	assert_int_equal(signals, 1);
	check_plt_section(LIBC, &t);
	/* Not a loader (it has PT_INTERP): no rbx slots, the shared rule array stays as it was. */
	assert_false(rd.track_bx);
	for (size_t i = 0; i < t.n; i++)
		assert_false(t.deltas[i].rule.cfa_base & OP_CFA_F_BX);
	free(rd.cies);
	free(rd.fdes);
	stack_delta_table__free(&t);
}

/*
 * The dynamic loader's entry (_start calling _dl_start, _dl_start_user calling
 * _dl_init: assembly without CFI) is a root: the return address a sample in
 * relocation finds there ends the stack instead of "no unwind rule".
 */
static void test_loader_entry_root(void **state)
{
	struct stack_delta_table t;
	const struct stack_delta *d;
	char path[512];
	uint64_t entry;

	(void)state;
	if (tu_system_lib("ld-linux-x86-64.so.2", path, sizeof(path)))
		fail_msg("ld-linux-x86-64.so.2 is not in the dynamic linker's cache");
	entry = entry_of(path);
	assert_true(entry != 0);
	build_file(path, &t);
	/* The call to _dl_start is 3 bytes in: its return address is 8 bytes in. */
	for (uint64_t off = 0; off < 16; off++) {
		d = stack_delta_table__find(&t, entry + off);
		assert_non_null(d);
		assert_int_equal(d->rule.cmd, OP_RULE_STOP);
	}
	stack_delta_table__free(&t);
}

static void assert_cfa_rsp(const struct stack_delta_table *t, uint64_t pc, int32_t cfa)
{
	const struct stack_delta *d = stack_delta_table__find(t, pc);

	assert_non_null(d);
	if (d->rule.cmd != OP_RULE_CFA || d->rule.cfa_base != OP_CFA_RSP ||
	    d->rule.cfa_offset != cfa || d->rule.fp_offset != 0)
		fail_msg("%#llx: cmd %u base %u cfa %d fp %d, want rsp+%d", (unsigned long long)pc,
			 d->rule.cmd, d->rule.cfa_base, d->rule.cfa_offset, d->rule.fp_offset, cfa);
}

/*
 * _init and _fini (glibc's crti.o/crtn.o: `sub $8,%rsp; [call __gmon_start__ if
 * any;] add $8,%rsp; ret`, no CFI): a sample there (the page fault of the
 * first instruction a process runs in a library) is unwound, not "no unwind
 * rule". GCC's crt code in a program and in libstdc++.
 */
static void test_crt_init_fini(void **state)
{
	char paths[2][512];

	(void)state;
	assert_int_equal(tu_workload_path("cpp_templates", paths[0], sizeof(paths[0])), 0);
	if (tu_system_lib("libstdc++.so.6", paths[1], sizeof(paths[1])))
		fail_msg("libstdc++.so.6 is not in the dynamic linker's cache");
	for (int f = 0; f < 2; f++) {
		struct stack_delta_table t;
		uint64_t init, fini, init_size = 0, fini_size = 0;

		init = section_info(paths[f], ".init", NULL, &init_size);
		fini = section_info(paths[f], ".fini", NULL, &fini_size);
		/* endbr64 or not: 23 or 27 bytes, 9 or 13 */
		assert_true(init && (init_size == 23 || init_size == 27));
		assert_true(fini && (fini_size == 9 || fini_size == 13));
		build_file(paths[f], &t);
		check_invariants(&t);
		for (int s = 0; s < 2; s++) {
			uint64_t at = s ? fini : init, size = s ? fini_size : init_size;
			uint64_t sub = size == 23 || size == 9 ? at : at + 4;

			assert_cfa_rsp(&t, at, 8);
			assert_cfa_rsp(&t, sub, 8);	       /* the sub not done yet */
			assert_cfa_rsp(&t, sub + 4, 16);       /* done */
			assert_cfa_rsp(&t, at + size - 5, 16); /* the add not done yet */
			assert_cfa_rsp(&t, at + size - 1, 8);  /* at the ret */
		}
		stack_delta_table__free(&t);
	}
}

/* n bytes of path at vaddr v in section name (at most 64). */
static void read_at(const char *path, const char *name, uint64_t v, void *buf, size_t n)
{
	uint64_t off = 0, size = 0, addr = section_info(path, name, &off, &size);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(addr && v >= addr && v - addr + n <= size);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, n, (off_t)(off + (v - addr))), (ssize_t)n);
	close(fd);
}

static void assert_rule_at(const struct stack_delta_table *t, uint64_t pc, int32_t cfa, int16_t fp)
{
	const struct stack_delta *d = stack_delta_table__find(t, pc);

	assert_non_null(d);
	if (d->rule.cmd != OP_RULE_CFA || d->rule.cfa_base != OP_CFA_RSP ||
	    d->rule.cfa_offset != cfa || d->rule.fp_offset != fp)
		fail_msg("%#llx: cmd %u base %u cfa %d fp %d, want rsp+%d fp %d",
			 (unsigned long long)pc, d->rule.cmd, d->rule.cfa_base, d->rule.cfa_offset,
			 d->rule.fp_offset, cfa, fp);
}

/*
 * GCC's crtstuff without CFI: __do_global_dtors_aux (.fini_array's first
 * entry: the caller of __cxa_finalize at exit, which stopped libLLVM's,
 * libz3's and libclang-cpp's exit samples with "no unwind rule") and
 * frame_dummy (.init_array's first) get rules: rsp + 8, rsp + 16 with rbp at
 * CFA - 16 from its push to its pop. A program and libstdc++, both GCC's.
 */
static void test_crtstuff(void **state)
{
	static const uint8_t endbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
	char paths[2][512];

	(void)state;
	assert_int_equal(tu_workload_path("cpp_templates", paths[0], sizeof(paths[0])), 0);
	if (tu_system_lib("libstdc++.so.6", paths[1], sizeof(paths[1])))
		fail_msg("libstdc++.so.6 is not in the dynamic linker's cache");
	for (int f = 0; f < 2; f++) {
		struct stack_delta_table t;
		uint64_t dtors, dummy, k;
		uint8_t code[64];

		read_at(paths[f], ".fini_array", section_info(paths[f], ".fini_array", NULL, NULL),
			&dtors, sizeof(dtors));
		read_at(paths[f], ".init_array", section_info(paths[f], ".init_array", NULL, NULL),
			&dummy, sizeof(dummy));
		read_at(paths[f], ".text", dtors, code, sizeof(code));
		k = memcmp(code, endbr, sizeof(endbr)) ? 0 : sizeof(endbr);
		/* push %rbp at k + 9 and pop %rbp at k + 47, as GCC 12's crtstuff */
		assert_int_equal(code[k + 9], 0x55);
		assert_int_equal(code[k + 47], 0x5d);
		build_file(paths[f], &t);
		check_invariants(&t);
		assert_rule_at(&t, dtors, 8, 0);
		assert_rule_at(&t, dtors + k + 9, 8, 0);     /* the push not done yet */
		assert_rule_at(&t, dtors + k + 10, 16, -16); /* done */
		assert_rule_at(&t, dtors + k + 34, 16, -16); /* the return from __cxa_finalize */
		assert_rule_at(&t, dtors + k + 47, 16, -16); /* the pop not done yet */
		assert_rule_at(&t, dtors + k + 48, 8, 0);    /* the ret */
		assert_rule_at(&t, dummy, 8, 0);
		assert_rule_at(&t, dummy + k + 4, 8, 0); /* its jmp's last byte */
		stack_delta_table__free(&t);
	}
}

/*
 * The system's dynamic loader: every row readelf prints, rbx-based CFAs
 * included. _dl_runtime_resolve_{fxsave,xsave,xsavec} (lazy binding) keep
 * their CFA in rbx after realigning rsp for the xsave area: each must be
 * OP_RULE_CFA_RBX (rbx + 32: the PLT's two pushes, the return address and
 * the saved rbx) from the instruction after `mov %rsp,%rbx`.
 */
static void test_system_loader(void **state)
{
	struct stack_delta_table t;
	size_t resolvers = 0;
	char path[512];
	struct rd rd;

	(void)state;
	if (tu_system_lib("ld-linux-x86-64.so.2", path, sizeof(path)))
		fail_msg("ld-linux-x86-64.so.2 is not in the dynamic linker's cache");
	build_file(path, &t);
	assert_int_equal(t.stats.bad_entries, 0);
	compare_with_readelf(path, &t, &rd);
	assert_int_equal(rd.mismatches, 0);
	assert_true(rd.rows_checked > 500);
	for (size_t i = 0; i < t.n; i++) {
		const struct op_unwind_rule *r = &t.deltas[i].rule;

		/* rbx + 32, its caller's rbx at CFA - 32 (the trampoline's push) */
		if (r->cmd == OP_RULE_CFA_RBX && r->cfa_offset == 32 && r->fp_offset == 0 &&
		    r->cfa_base == (OP_CFA_F_BX | 4 << OP_CFA_BX_SLOT_SHIFT))
			resolvers++;
	}
	assert_true(resolvers >= 3);
	/* _dl_fixup's own save of the trampoline's rbx is among them (readelf's rbx column) */
	assert_true(rd.track_bx);
	assert_true(rd.bx_rows > 100);
	free(rd.cies);
	free(rd.fdes);
	stack_delta_table__free(&t);
}

/*
 * The same .eh_frame gives the same table through stack_deltas__build(),
 * through stack_deltas__parse() on its raw bytes, and without
 * .eh_frame_hdr; the .debug_frame-only functions are found in variant 4.
 */
static void test_build_paths(void **state)
{
	struct stack_delta_table a, b, c;
	struct elf_file *ef;
	char path[300];
	uint8_t *bytes;
	size_t len;
	uint64_t vaddr;

	(void)state;
	build_file(fx.prog[0], &a);
	bytes = (uint8_t *)tu_read_file(fx.ehbin, &len);
	assert_non_null(bytes);
	vaddr = section_info(fx.prog[0], ".eh_frame", NULL, NULL);
	assert_true(vaddr != 0);
	assert_int_equal(stack_deltas__parse(bytes, len, vaddr, 0, &b), 0);
	assert_same_rules(&a, &b, fx.prog[0]);
	free(bytes);
	stack_delta_table__free(&b);

	/* Without .eh_frame_hdr the code moves, but the shape is the same. */
	build_file(fx.nohdr, &c);
	assert_int_equal(c.n, a.n);
	assert_int_equal(c.stats.fdes, a.stats.fdes);
	for (size_t i = 0; i < a.n; i++)
		assert_int_equal(c.deltas[i].rule.cmd, a.deltas[i].rule.cmd);
	stack_delta_table__free(&a);
	stack_delta_table__free(&c);

	/* No CFI at all; NOBITS sections of a debug file are none either. */
	assert_int_equal(elf_file__open(fx.nocfi, -1, &ef), 0);
	assert_int_equal(stack_deltas__build(ef, &a), -ENOENT);
	assert_null(a.deltas);
	elf_file__close(ef);
	assert_int_equal(elf_file__open(fx.dbgonly, -1, &ef), 0);
	assert_int_equal(stack_deltas__build(ef, &a), 0); /* its .debug_frame is real */
	assert_true(a.n > 0);
	assert_int_equal(a.stats.bad_entries, 0);
	elf_file__close(ef);

	/* A compressed .debug_frame (SHF_COMPRESSED) reads the same. */
	snprintf(path, sizeof(path), "%s/zdebug", fx.dir);
	assert_int_equal(
	    tu_run(NULL, "objcopy --compress-debug-sections=zlib-gabi '%s' '%s'", fx.prog[4], path),
	    0);
	assert_int_equal(tu_run(NULL, "readelf -SW '%s' | grep -q ' .debug_frame .* C '", path), 0);
	build_file(fx.prog[4], &b);
	build_file(path, &c);
	assert_true(b.n > a.n); /* .eh_frame of the crt files and .debug_frame */
	assert_int_equal(b.n, c.n);
	assert_memory_equal(b.deltas, c.deltas, b.n * sizeof(*b.deltas));
	stack_delta_table__free(&a);
	stack_delta_table__free(&b);
	stack_delta_table__free(&c);
}

/* Truncations and mutations of a linker-made .eh_frame (and a sample of libc's). */
static void test_real_sections_malformed(void **state)
{
	struct stack_delta_table t;
	uint64_t off = 0, size = 0;
	struct elf_file *ef;
	uint8_t *bytes;
	size_t len;

	(void)state;
	bytes = (uint8_t *)tu_read_file(fx.ehbin, &len);
	assert_non_null(bytes);
	assert_true(len > 64);
	truncate_all(bytes, len, 1);
	mutate_many(bytes, len, 3000);
	free(bytes);

	/* libc's .eh_frame at a few hundred cut points, and mutated */
	assert_int_equal(
	    tu_run(NULL, "objcopy -O binary --only-section=.eh_frame '%s' '%s'", LIBC, fx.ehbin),
	    0);
	bytes = (uint8_t *)tu_read_file(fx.ehbin, &len);
	assert_non_null(bytes);
	assert_true(len > 4096);
	truncate_all(bytes, len, len / 300);
	mutate_many(bytes, len, 200);
	free(bytes);

	/* Whole ELF files with junk over their .eh_frame: refused or partly used, never trusted. */
	section_info(fx.prog[0], ".eh_frame", &off, &size);
	assert_true(off > 0 && size > 0);
	for (int i = 0; i < 20; i++) {
		char path[300], junk[300];
		size_t n = i ? 1 + rng() % 64 : size;
		FILE *f;
		int err;

		snprintf(path, sizeof(path), "%s/junk.elf", fx.dir);
		snprintf(junk, sizeof(junk), "%s/junk.bin", fx.dir);
		f = fopen(junk, "w");
		assert_non_null(f);
		for (size_t k = 0; k < n; k++)
			fputc((int)(rng() & 0xff), f);
		assert_int_equal(fclose(f), 0);
		assert_int_equal(tu_run(NULL,
					"cp '%s' '%s' && dd if='%s' of='%s' bs=1 seek=%llu "
					"conv=notrunc status=none",
					fx.prog[0], path, junk, path,
					(unsigned long long)(off + (i ? rng() % size : 0))),
				 0);
		assert_int_equal(elf_file__open(path, -1, &ef), 0);
		err = stack_deltas__build(ef, &t);
		assert_true(err == 0 || err == -ENOEXEC);
		if (!err)
			check_invariants(&t);
		stack_delta_table__free(&t);
		elf_file__close(ef);
	}
}

/* A file that is not x86-64 is refused rather than misread. */
static void test_other_machine(void **state)
{
	char path[300];
	struct stack_delta_table t;
	struct elf_file *ef;

	(void)state;
	snprintf(path, sizeof(path), "%s/arm", fx.dir);
	/* e_machine (offset 18) = EM_AARCH64 (183) */
	assert_int_equal(tu_run(NULL,
				"cp '%s' '%s' && printf '\\267\\000' | "
				"dd of='%s' bs=1 seek=18 conv=notrunc status=none",
				fx.prog[0], path, path),
			 0);
	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	assert_int_equal(stack_deltas__build(ef, &t), -EOPNOTSUPP);
	elf_file__close(ef);
}

/* ---- one FDE at a time (stack_deltas__fde_rows) against the whole table ---- */

static int fd_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	ssize_t n = pread(*(int *)ctx, buf, len, (off_t)off);

	return n == (ssize_t)len ? 0 : -EIO;
}

/*
 * For pcs all over the file (each delta's first byte, the byte before the
 * next, and its middle), the rule of the FDE found through .eh_frame_hdr
 * is the full table's rule, wherever the per-FDE path gives one; it gives
 * one for nearly every pc the table covers with a rule.
 */
static void check_fde_rules(const char *path, size_t stride, size_t min_checked, bool need_index)
{
	struct stack_delta_table t;
	struct elf_file *ef = NULL;
	struct fde_index ix;
	size_t checked = 0, refused = 0, gaps = 0;
	struct timespec t0, t1;
	uint64_t fde_ns = 0, find_ns = 0;

	build_file(path, &t);
	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	if (!need_index && stack_deltas__fde_index(ef, &ix) == -EOPNOTSUPP) {
		/* a variant without a search table (.debug_frame only) waits for its table */
		elf_file__close(ef);
		stack_delta_table__free(&t);
		return;
	}
	assert_int_equal(stack_deltas__fde_index(ef, &ix), 0);
	assert_true(ix.count > 0);
	for (size_t i = 0; i + 1 < t.n; i += stride) {
		uint64_t lo = t.deltas[i].addr, hi = t.deltas[i + 1].addr;
		uint64_t pcs[3] = {lo, lo + (hi - lo) / 2, hi - 1};

		for (int k = 0; k < 3; k++) {
			struct fde_rows r;
			const struct op_unwind_rule *got;
			const struct stack_delta *want;
			int err;

			/* Timed for bench/RESULTS.md (printed, not checked). */
			clock_gettime(CLOCK_MONOTONIC, &t0);
			want = stack_delta_table__find(&t, pcs[k]);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			find_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000L +
					      (t1.tv_nsec - t0.tv_nsec));
			err = stack_deltas__fde_rows(&ix, fd_read, &ef->fd, pcs[k], &r);
			clock_gettime(CLOCK_MONOTONIC, &t0);
			fde_ns += (uint64_t)((t0.tv_sec - t1.tv_sec) * 1000000000L +
					     (t0.tv_nsec - t1.tv_nsec));

			assert_non_null(want);
			if (err == -ENOENT) {
				/* No FDE there: the table's rule comes from elsewhere (a gap,
				 * the entry's stop), never from an FDE's rows. */
				gaps++;
				continue;
			}
			if (err) {
				assert_int_equal(err, -EOPNOTSUPP);
				refused++;
				continue;
			}
			got = fde_rows__rule(&r, pcs[k]);
			assert_non_null(got);
			if (memcmp(got, &want->rule, sizeof(*got))) {
				fail_msg("%s: pc 0x%llx: FDE rule cmd %u base %u cfa %d fp %d, "
					 "table cmd "
					 "%u base %u cfa %d fp %d",
					 path, (unsigned long long)pcs[k], got->cmd, got->cfa_base,
					 got->cfa_offset, got->fp_offset, want->rule.cmd,
					 want->rule.cfa_base, want->rule.cfa_offset,
					 want->rule.fp_offset);
			}
			checked++;
			fde_rows__free(&r);
		}
	}
	print_message(
	    "%s: %zu pcs with the table's rule, %zu refused, %zu in no FDE; per pc: "
	    "%.0f ns from the file's CFI (uncached), %.0f ns in the built table\n",
	    path, checked, refused, gaps,
	    (double)fde_ns / (double)(checked + refused + gaps ? checked + refused + gaps : 1),
	    (double)find_ns / (double)(checked + refused + gaps ? checked + refused + gaps : 1));
	assert_true(checked >= min_checked);
	assert_true(refused * 100 <= checked);
	elf_file__close(ef);
	stack_delta_table__free(&t);
}

static void test_fde_rules_equal_table(void **state)
{
	char path[512];

	(void)state;
	/* Every 7th of libc's deltas (each one of them agreed when the path was written,
	 * 74,609 pcs; all of them cost 75 s of the suite's ASan build). */
	check_fde_rules(LIBC, 7, 8000, true);
	/* The loader's rules carry rbx's slot: the FDE index tells a loader as the build does. */
	if (tu_system_lib("ld-linux-x86-64.so.2", path, sizeof(path)))
		fail_msg("ld-linux-x86-64.so.2 is not in the dynamic linker's cache");
	check_fde_rules(path, 1, 500, true);
	assert_int_equal(tu_workload_path("cpp_templates", path, sizeof(path)), 0);
	check_fde_rules(path, 1, 100, true);
	for (unsigned int i = 0; i < N_VARIANTS; i++)
		check_fde_rules(fx.prog[i], 1, 10, false);
	/* A large library when installed (the compiler loop's): every 499th delta (all of
	 * them, 2.58 million pcs, gave the table's rule too: 5 minutes under load). */
	if (access("/usr/lib/llvm-14/lib/libLLVM-14.so.1", R_OK) == 0)
		check_fde_rules("/usr/lib/llvm-14/lib/libLLVM-14.so.1", 499, 4000, true);
}

/* A file without .eh_frame_hdr has no per-FDE path: it waits for its table. */
static void test_fde_index_refusals(void **state)
{
	struct elf_file *ef = NULL;
	struct fde_index ix;
	uint8_t hdr[32] = {1, 0x1b, 0x03, 0x3b};

	(void)state;
	assert_int_equal(elf_file__open(fx.nohdr, -1, &ef), 0);
	assert_int_equal(stack_deltas__fde_index(ef, &ix), -EOPNOTSUPP);
	elf_file__close(ef);
	/* eh_frame_ptr (pcrel at hdr + 4) names .eh_frame: 0x1000 + 4 + 0x100 = 0x1104 */
	hdr[4] = 0x00;
	hdr[5] = 0x01;
	hdr[8] = 2; /* two entries, 16 bytes: the 32 bytes hold them */
	assert_int_equal(stack_deltas__fde_index_parse(hdr, sizeof(hdr), sizeof(hdr), 0x1000,
						       0x1000, 0x1104, 0x1104, 64, &ix),
			 0);
	assert_int_equal(ix.count, 2);
	assert_int_equal(ix.table_off, 0x1000 + 12);
	/* another table encoding, another eh_frame, a count past the section */
	hdr[3] = 0x03;
	assert_int_equal(stack_deltas__fde_index_parse(hdr, sizeof(hdr), sizeof(hdr), 0x1000,
						       0x1000, 0x1104, 0x1104, 64, &ix),
			 -EOPNOTSUPP);
	hdr[3] = 0x3b;
	assert_int_equal(stack_deltas__fde_index_parse(hdr, sizeof(hdr), sizeof(hdr), 0x1000,
						       0x1000, 0x2000, 0x2000, 64, &ix),
			 -EOPNOTSUPP);
	hdr[8] = 3;
	assert_int_equal(stack_deltas__fde_index_parse(hdr, sizeof(hdr), sizeof(hdr), 0x1000,
						       0x1000, 0x1104, 0x1104, 64, &ix),
			 -ENOENT);
}

/* The same through unwind_maps__fde_rule: what a copy's walk calls, and its memo. */
static void test_fde_rule_memo(void **state)
{
	struct stack_delta_table t;
	struct elf_file *ef = NULL;
	struct unwind_maps um;
	size_t found = 0, remembered = 0;

	(void)state;
	build_file(LIBC, &t);
	assert_int_equal(elf_file__open(LIBC, -1, &ef), 0);
	unwind_maps__init(&um, -1, -1, -1, -1, 1 << 16);
	for (size_t i = 0; i < t.n && i < 4000; i++) {
		struct op_unwind_rule r1, r2;
		int err = unwind_maps__fde_rule(&um, 0x77, ef, t.deltas[i].addr, &r1);

		if (err < 0)
			continue;
		assert_memory_equal(&r1, &t.deltas[i].rule, sizeof(r1));
		found++;
		/* Asked again: remembered, no read. */
		assert_int_equal(unwind_maps__fde_rule(&um, 0x77, ef, t.deltas[i].addr, &r2), 1);
		assert_memory_equal(&r1, &r2, sizeof(r1));
		remembered++;
	}
	assert_true(found > 2000);
	assert_int_equal(remembered, found);
	unwind_maps__clear(&um);
	elf_file__close(ef);
	stack_delta_table__free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame_pointer_prologue),
	    cmocka_unit_test(test_remember_restore_state),
	    cmocka_unit_test(test_plt_expression),
	    cmocka_unit_test(test_realignment_expression),
	    cmocka_unit_test(test_rbp_expression_on_cfa_base),
	    cmocka_unit_test(test_signal_frame),
	    cmocka_unit_test(test_advance_variants),
	    cmocka_unit_test(test_64bit_lengths),
	    cmocka_unit_test(test_zero_terminator),
	    cmocka_unit_test(test_augmentations),
	    cmocka_unit_test(test_return_address_rules),
	    cmocka_unit_test(test_unexpressible_rules),
	    cmocka_unit_test(test_unsupported_encodings),
	    cmocka_unit_test(test_overlapping_fdes),
	    cmocka_unit_test(test_debug_frame),
	    cmocka_unit_test(test_garbage_is_enoexec),
	    cmocka_unit_test(test_truncated_and_mutated),
	    cmocka_unit_test(test_random_well_formed),
	};

	const struct CMUnitTest file_tests[] = {
	    cmocka_unit_test(test_compiled_programs),
	    cmocka_unit_test(test_system_libc),
	    cmocka_unit_test(test_system_loader),
	    cmocka_unit_test(test_crt_init_fini),
	    cmocka_unit_test(test_crtstuff),
	    cmocka_unit_test(test_build_paths),
	    cmocka_unit_test(test_loader_entry_root),
	    cmocka_unit_test(test_real_sections_malformed),
	    cmocka_unit_test(test_other_machine),
	    cmocka_unit_test(test_fde_rules_equal_table),
	    cmocka_unit_test(test_fde_index_refusals),
	    cmocka_unit_test(test_fde_rule_memo),
	};
	int failed;

	failed = cmocka_run_group_tests(tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("files", file_tests, setup_files, teardown_files);
	return failed;
}
