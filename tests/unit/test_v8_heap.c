// SPDX-License-Identifier: Apache-2.0
/*
 * Reading V8's objects (src/interp/v8/v8_heap.c) over memory built here with
 * node 20's layout: source position tables encoded by an encoder of the
 * test's own (zig-zag VLQ, the statement flag in the code delta's sign,
 * inlining ids), malformed tables refused; line ends to lines; baseline
 * pcs to bytecode offsets with Wide prefixes; strings (one- and two-byte,
 * cons, thin, sliced) and function names (a name string, a ScopeInfo, an
 * anonymous function); objects whose type does not check out refused;
 * an interpreted function with V8 13's (Node 24) layout, its bytecode in
 * trusted space: named only while its function still runs that bytecode;
 * V8 9's (Node 16) BaselineData, and its baseline code lined through it;
 * V8 10's (Node 18) code objects,
 * instructions inline; Maglev safepoint tables (V8 12's and 13's headers,
 * built here): a return address's deopt index, and the bounds (entry count,
 * pcs rising inside the code, a safepoint without deopt entry);
 * deoptimization translations (V8 13.6's opcodes, built here: frames of a
 * translation, one matching its lookback's, and what does not decode);
 * the real files (V8 13.6's operand counts found in Node 24's node).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "elf/elf_file.h"
#include "interp/v8/v8.h"
#include "interp/v8/v8_binary.h"
#include "interp/v8/v8_code.h"
#include "interp/v8/v8_heap.h"
#include "proc/remote_memory.h"
#include "testutil.h"

/* ---- source position tables ----------------------------------------------- */

static size_t put_vlq(uint8_t *out, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	do {
		uint8_t b = z & 0x7f;

		z >>= 7;
		out[n++] = (uint8_t)(b | (z ? 0x80 : 0));
	} while (z);
	return n;
}

/* One entry: code offset delta (its sign: not a statement) and position delta. */
static size_t put_entry(uint8_t *out, int64_t dcode, bool statement, int64_t dpos)
{
	size_t n = put_vlq(out, statement ? dcode : -dcode - 1);

	return n + put_vlq(out + n, dpos);
}

static int64_t position(uint32_t script_offset, uint16_t inlining_id)
{
	return ((int64_t)inlining_id << 31) | ((int64_t)script_offset << 1);
}

static void test_positions(void **state)
{
	uint8_t t[64];
	size_t len = 0, n;
	struct v8_position *p;

	(void)state;
	len += put_entry(t + len, 0, false, position(17, 0));
	len += put_entry(t + len, 5, true, position(300, 0) - position(17, 0));
	len += put_entry(t + len, 200, true, position(20000, 3) - position(300, 0));
	len += put_entry(t + len, 1, false, position(40, 0) - position(20000, 3));
	assert_int_equal(v8_heap__decode_positions(t, len, &p, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(p[0].code_offset, 0);
	assert_int_equal(p[0].script_offset, 17);
	assert_int_equal(p[1].code_offset, 5);
	assert_int_equal(p[1].script_offset, 300);
	assert_int_equal(p[2].code_offset, 205);
	assert_int_equal(p[2].script_offset, 20000);
	assert_int_equal(p[2].inlining_id, 3);
	assert_int_equal(p[3].code_offset, 206);
	assert_int_equal(p[3].script_offset, 40);
	assert_int_equal(p[3].inlining_id, 0);
	assert_ptr_equal(v8_heap__position_at(p, n, 4), &p[0]);
	assert_ptr_equal(v8_heap__position_at(p, n, 205), &p[2]);
	assert_ptr_equal(v8_heap__position_at(p, n, 99999), &p[3]);
	free(p);
	/* A value cut in the middle, a position going negative: refused. */
	t[len - 1] |= 0x80;
	assert_int_equal(v8_heap__decode_positions(t, len, &p, &n), -EINVAL);
	assert_null(p);
	len = put_entry(t, 0, true, -4);
	assert_int_equal(v8_heap__decode_positions(t, len, &p, &n), -EINVAL);
	/* Empty: no entries. */
	assert_int_equal(v8_heap__decode_positions(t, 0, &p, &n), 0);
	assert_int_equal(n, 0);
}

static void test_lines(void **state)
{
	const uint32_t ends[] = {10, 20, 30};

	(void)state;
	assert_int_equal(v8_heap__line_of(ends, 3, 0), 1);
	assert_int_equal(v8_heap__line_of(ends, 3, 10), 1); /* the terminator is its line's */
	assert_int_equal(v8_heap__line_of(ends, 3, 11), 2);
	assert_int_equal(v8_heap__line_of(ends, 3, 30), 3);
	assert_int_equal(v8_heap__line_of(ends, 3, 31), 4); /* after the last terminator */
	assert_int_equal(v8_heap__line_of(NULL, 0, 5), 1);
}

static void test_baseline_offsets(void **state)
{
	static uint8_t sizes[3][256];
	/* Bytecodes: 5 (2 bytes), 6 (3 bytes), Wide 6 (1 + 5 bytes), 5. */
	const uint8_t bc[] = {5, 0xaa, 6, 0xbb, 0xcc, 0, 6, 1, 2, 3, 4, 5, 0xdd};
	/* pc deltas: the entry (4), then one per bytecode. */
	const uint8_t table[] = {4, 3, 4, 5, 6};
	int64_t bo = 99;

	(void)state;
	sizes[0][5] = 2;
	sizes[0][6] = 3;
	sizes[1][6] = 5;
	assert_int_equal(v8_heap__baseline_offset(table, 5, bc, sizeof(bc), sizes, 8, 3, &bo), 0);
	assert_int_equal(bo, -1); /* the function's entry */
	assert_int_equal(v8_heap__baseline_offset(table, 5, bc, sizeof(bc), sizes, 8, 4, &bo), 0);
	assert_int_equal(bo, -1);
	assert_int_equal(v8_heap__baseline_offset(table, 5, bc, sizeof(bc), sizes, 8, 5, &bo), 0);
	assert_int_equal(bo, 0);
	assert_int_equal(v8_heap__baseline_offset(table, 5, bc, sizeof(bc), sizes, 8, 8, &bo), 0);
	assert_int_equal(bo, 2);
	assert_int_equal(v8_heap__baseline_offset(table, 5, bc, sizeof(bc), sizes, 8, 12, &bo), 0);
	assert_int_equal(bo, 5); /* the Wide prefix's offset */
	assert_int_equal(v8_heap__baseline_offset(table, 5, bc, sizeof(bc), sizes, 8, 22, &bo), 0);
	assert_int_equal(bo, 11);
	/* Past the table, an unknown bytecode, no sizes: refused. */
	assert_int_equal(v8_heap__baseline_offset(table, 5, bc, sizeof(bc), sizes, 8, 23, &bo),
			 -EINVAL);
	assert_int_equal(v8_heap__baseline_offset(table, 5, bc, sizeof(bc), sizes, 6, 8, &bo),
			 -EINVAL);
	assert_int_equal(v8_heap__baseline_offset(table, 5, bc, sizeof(bc), sizes, 0, 8, &bo),
			 -EINVAL);
}

/* ---- Maglev safepoint tables ---------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
	for (int b = 0; b < 4; b++)
		p[b] = (uint8_t)(v >> (8 * b));
}

/*
 * A table of n safepoints {pc, deopt index + 1} with 2-byte pcs, 1-byte
 * deopt indexes and one register index byte; the header's count at word
 * count_word (V8 13: 1, after the stack slot count; V8 12: 0). Its size.
 */
static size_t build_safepoints(uint8_t *out, unsigned count_word, uint32_t n,
			       const uint32_t (*entries)[2])
{
	/* has deopt data, 1 register index byte, 2 pc bytes, 1 deopt index byte */
	const uint32_t cfg = 1 | (1u << 1) | (2u << 4) | (1u << 7);
	const size_t esize = 2 * 2 + 1 + 1 + 1;
	uint8_t *e = out + V8_MAGLEV_SAFEPOINT_HEADER;

	memset(out, 0, V8_MAGLEV_SAFEPOINT_HEADER);
	put32(out, 0x30); /* V8 13: stack slots; V8 12: overwritten by the count */
	put32(out + 4 * count_word, n);
	put32(out + 4 * (count_word + 1), cfg);
	for (uint32_t i = 0; i < n; i++, e += esize) {
		e[0] = (uint8_t)entries[i][0];
		e[1] = (uint8_t)(entries[i][0] >> 8);
		e[2] = (uint8_t)entries[i][1];
		e[3] = 0xff; /* trampoline + 1: none */
		e[4] = 0;
		e[5] = 0; /* pushed registers */
		e[6] = 0x3;
	}
	return V8_MAGLEV_SAFEPOINT_HEADER + n * esize;
}

static void test_maglev_safepoints(void **state)
{
	/* Three calls (deopt indexes 4 and 7) and a safepoint with no deopt entry. */
	const uint32_t calls[][2] = {{0x10, 5}, {0x123, 8}, {0x200, 0}};
	const uint32_t unordered[][2] = {{0x10, 5}, {0x300, 8}, {0x200, 1}};
	uint8_t t[V8_MAGLEV_SAFEPOINT_HEADER + 8 * 16];
	size_t len;

	(void)state;
	for (unsigned cw = 0; cw < 2; cw++) {
		len = build_safepoints(t, cw, 3, calls);
		assert_int_equal(v8_heap__maglev_safepoints_size(t, cw), len);
		assert_int_equal(v8_heap__maglev_deopt_index(t, len, cw, 0x400, 0x10), 4);
		assert_int_equal(v8_heap__maglev_deopt_index(t, len, cw, 0x400, 0x123), 7);
		/* A safepoint without deopt entry, a pc no safepoint's. */
		assert_int_equal(v8_heap__maglev_deopt_index(t, len, cw, 0x400, 0x200), -1);
		assert_int_equal(v8_heap__maglev_deopt_index(t, len, cw, 0x400, 0x124), -1);
		/* The table one byte short of its entries: refused. */
		assert_int_equal(v8_heap__maglev_deopt_index(t, len - 1, cw, 0x400, 0x10), -1);
		/* A pc past the code's end, even after the one looked for: not a table. */
		assert_int_equal(v8_heap__maglev_deopt_index(t, len, cw, 0x200, 0x10), -1);
		/* Pcs not rising: not a table. */
		len = build_safepoints(t, cw, 3, unordered);
		assert_int_equal(v8_heap__maglev_deopt_index(t, len, cw, 0x400, 0x10), -1);
	}
	/* V8 13's header read as V8 12's (and back): the count is a configuration
	 * without pc bytes, refused. */
	len = build_safepoints(t, 1, 3, calls);
	assert_int_equal(v8_heap__maglev_safepoints_size(t, 0), 0);
	assert_int_equal(v8_heap__maglev_deopt_index(t, len, 0, 0x400, 0x10), -1);
	len = build_safepoints(t, 0, 3, calls);
	assert_int_equal(v8_heap__maglev_deopt_index(t, len, 1, 0x400, 0x10), -1);
	/* No entries, too many, unknown configuration bits, no deopt data. */
	len = build_safepoints(t, 1, 0, calls);
	assert_int_equal(v8_heap__maglev_safepoints_size(t, 1), 0);
	build_safepoints(t, 1, 3, calls);
	put32(t + 4, V8_SAFEPOINTS_MAX + 1);
	assert_int_equal(v8_heap__maglev_safepoints_size(t, 1), 0);
	put32(t + 4, 3);
	put32(t + 8, (1 | (1u << 1) | (2u << 4) | (1u << 7)) | (1u << 10));
	assert_int_equal(v8_heap__maglev_safepoints_size(t, 1), 0);
	put32(t + 8, (1u << 1) | (2u << 4) | (1u << 7));
	assert_int_equal(v8_heap__maglev_safepoints_size(t, 1), 0);
	/* A short buffer is never read past. */
	assert_int_equal(v8_heap__maglev_deopt_index(t, 8, 1, 0x400, 0x10), -1);
}

/* ---- deoptimization translations ------------------------------------------ */

/* V8 13.6's opcode numbers (as v8_translation_v13). */
enum {
	T_IFWR = 0,   /* interpreted frame with return: 6 operands */
	T_IFWOR = 1,  /* without return: 4 */
	T_JSBCF = 2,  /* builtin continuation: 3 */
	T_EXTRA = 10, /* inlined extra arguments: 3 */
	T_BEGIN = 14, /* without feedback: 3 */
	T_REG = 39,   /* register: 1 */
	T_LITERAL = 38,
	T_UPDATE_FEEDBACK = 43, /* 2 */
	T_MATCH = 44,
	T_N = 45,
};

struct tbuf {
	uint8_t b[256];
	size_t n;
};

static void t_uvlq(struct tbuf *t, uint32_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		t->b[t->n++] = (uint8_t)(byte | (v ? 0x80 : 0));
	} while (v);
}

/* Signed: magnitude above the sign bit. */
static void t_svlq(struct tbuf *t, int32_t v)
{
	t_uvlq(t, v < 0 ? ((uint32_t)-v << 1) | 1 : (uint32_t)v << 1);
}

static void t_op(struct tbuf *t, uint8_t op, int n, const int32_t *operands)
{
	t->b[t->n++] = op;
	for (int k = 0; k < n; k++)
		t_svlq(t, operands[k]);
}

static void test_translations(void **state)
{
	const struct v8_translation_ops *ops = &v8_translation_v13;
	struct v8_deopt_frame f[V8_DEOPT_FRAMES_MAX];
	struct tbuf t = {0}, bad;
	size_t a, b, c, n;

	(void)state;
	/* A: two interpreted frames (outer at offset 10, function 0; inner at
	 * 200, function 2), values between, inlined extra arguments first. */
	a = t.n;
	t.b[t.n++] = T_BEGIN;
	t_uvlq(&t, 0); /* no lookback */
	t_svlq(&t, 3);
	t_svlq(&t, 2);
	t_op(&t, T_EXTRA, 3, (int32_t[]){4, 1, 0});
	t_op(&t, T_REG, 1, (int32_t[]){1});
	t_op(&t, T_IFWOR, 4, (int32_t[]){10, 0, 1, 3});
	t_op(&t, T_REG, 1, (int32_t[]){2});
	t_op(&t, T_REG, 1, (int32_t[]){3});
	t_op(&t, T_LITERAL, 1, (int32_t[]){-7});
	t_op(&t, T_UPDATE_FEEDBACK, 2, (int32_t[]){5, 6});
	t_op(&t, T_IFWR, 6, (int32_t[]){200, 2, 3, 1, 0, 1});
	t_op(&t, T_REG, 1, (int32_t[]){4});
	/* B, matching A: its own BEGIN, A's first four operations (an implicit
	 * match: byte T_N + 4), a register of its own, A's next two (an explicit
	 * match), then its own inner frame at offset 300. */
	b = t.n;
	t.b[t.n++] = T_BEGIN;
	t_uvlq(&t, (uint32_t)(b - a));
	t_svlq(&t, 3);
	t_svlq(&t, 2);
	t.b[t.n++] = T_N + 4; /* extra arguments, register, outer frame, register */
	t_op(&t, T_REG, 1, (int32_t[]){9});
	t.b[t.n++] = T_MATCH;
	t_uvlq(&t, 2); /* literal, update feedback */
	t_op(&t, T_IFWR, 6, (int32_t[]){300, 2, 3, 1, 0, 1});
	/* C: one frame, function 5 at offset 1000 (a two-byte VLQ). */
	c = t.n;
	t.b[t.n++] = T_BEGIN;
	t_uvlq(&t, 0);
	t_svlq(&t, 1);
	t_svlq(&t, 1);
	t_op(&t, T_IFWR, 6, (int32_t[]){1000, 5, 6, 0, 0, 1});

	assert_int_equal(v8_heap__translation_frames(t.b, t.n, (uint32_t)a, ops, f, 16, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(f[0].bytecode_offset, 10);
	assert_int_equal(f[0].literal, 0);
	assert_int_equal(f[1].bytecode_offset, 200);
	assert_int_equal(f[1].literal, 2);
	assert_int_equal(v8_heap__translation_frames(t.b, t.n, (uint32_t)b, ops, f, 16, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(f[0].bytecode_offset, 10); /* A's outer frame */
	assert_int_equal(f[0].literal, 0);
	assert_int_equal(f[1].bytecode_offset, 300);
	assert_int_equal(f[1].literal, 2);
	assert_int_equal(v8_heap__translation_frames(t.b, t.n, (uint32_t)c, ops, f, 16, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].bytecode_offset, 1000);
	assert_int_equal(f[0].literal, 5);

	/* Not at a BEGIN; room for fewer frames than it has; cut short. */
	assert_int_equal(v8_heap__translation_frames(t.b, t.n, (uint32_t)a + 1, ops, f, 16, &n),
			 -EINVAL);
	assert_int_equal(v8_heap__translation_frames(t.b, t.n, (uint32_t)a, ops, f, 1, &n),
			 -EINVAL);
	assert_int_equal(v8_heap__translation_frames(t.b, c - 3, (uint32_t)b, ops, f, 16, &n),
			 -EINVAL);
	/* B read alone (its lookback before the buffer): refused. */
	assert_int_equal(v8_heap__translation_frames(t.b + b, t.n - b, 0, ops, f, 16, &n), -EINVAL);
	/* An unknown opcode (T_N is a match of none), a JavaScript frame count
	 * its frames do not have, a builtin continuation frame. */
	bad = t;
	bad.b[c + 4] = T_N;
	assert_int_equal(v8_heap__translation_frames(bad.b, bad.n, (uint32_t)c, ops, f, 16, &n),
			 -EINVAL);
	bad = t;
	bad.b[c + 3] = 2 << 1; /* C: two JavaScript frames in one frame */
	assert_int_equal(v8_heap__translation_frames(bad.b, bad.n, (uint32_t)c, ops, f, 16, &n),
			 -EINVAL);
	bad = t;
	bad.b[c + 4] = T_JSBCF;
	assert_int_equal(v8_heap__translation_frames(bad.b, bad.n, (uint32_t)c, ops, f, 16, &n),
			 -EINVAL);
	/* B's lookback not at a BEGIN. */
	bad = t;
	bad.b[b + 1] = (uint8_t)(b - a - 1);
	assert_int_equal(v8_heap__translation_frames(bad.b, bad.n, (uint32_t)b, ops, f, 16, &n),
			 -EINVAL);
	/* A match in a translation with no lookback. */
	bad = t;
	bad.b[b + 1] = 0;
	assert_int_equal(v8_heap__translation_frames(bad.b, bad.n, (uint32_t)b, ops, f, 16, &n),
			 -EINVAL);
	/* Every prefix of the buffer: an error or the frames, never a read past it. */
	for (size_t len = 0; len < t.n; len++)
		for (size_t at = 0; at < len; at++)
			(void)v8_heap__translation_frames(t.b, len, (uint32_t)at, ops, f, 16, &n);
}

/*
 * V8 13.6's operand counts are node's own: Node 24's binary holds its
 * TranslationOpcodeOperandCount table, 45 int32s, exactly.
 */
static void test_translation_counts_v13(void **state)
{
	size_t len = 0, n = v8_translation_v13.n;
	char *bin = tu_read_file("/opt/omniprof-node/24/node", &len);
	int32_t want[64];
	bool found = false;

	(void)state;
	assert_non_null(bin);
	assert_true(n <= 64);
	for (size_t k = 0; k < n; k++)
		want[k] = v8_translation_v13.operands[k];
	for (size_t at = 0; at + n * 4 <= len && !found; at += 4)
		found = !memcmp(bin + at, want, n * 4);
	free(bin);
	assert_true(found);
}

/* ---- objects ---------------------------------------------------------------- */

#define BASE 0x10000ull
#define SIZE 0x4000
static uint8_t heap[SIZE];

static int heap_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr - BASE > SIZE || len > SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, &heap[addr - BASE], len);
	return 0;
}

static void put(uint64_t addr, const void *v, size_t n)
{
	memcpy(&heap[addr - BASE], v, n);
}

static void put64(uint64_t addr, uint64_t v)
{
	put(addr, &v, 8);
}

static struct v8_layout layout(void)
{
	/* node 20 (V8 11.3) as v8_binary__inspect() reads it. */
	return (struct v8_layout){
	    .has_lines = true,
	    .smi_shift = 32,
	    .map_instance_type = 12,
	    .jsfunction_shared = 24,
	    .sfi_name_or_scope_info = 16,
	    .sfi_script = 32,
	    .string_length = 12,
	    .seq_string_data = 16,
	    .cons_first = 16,
	    .cons_second = 24,
	    .sliced_parent = 16,
	    .sliced_offset = 24,
	    .thin_actual = 16,
	    .fixed_array_length = 8,
	    .fixed_array_data = 16,
	    .scopeinfo_ncontextlocals = 2,
	    .scopeinfo_first_vars = 3,
	    .scope_class = 0,
	    .scope_function = 2,
	    .type_first_nonstring = 128,
	    .type_sfi = 262,
	    .type_scope_info = 261,
	    .type_script = 150,
	    .type_map = 180,
	    .script_source = 8,
	    .str_repr_mask = 7,
	    .str_encoding_mask = 8,
	    .str_one_byte_tag = 8,
	    .str_seq_tag = 0,
	    .str_cons_tag = 1,
	    .str_sliced_tag = 3,
	    .str_thin_tag = 5,
	    .str_external_tag = 2,
	    .external_resource = 16,
	};
}

/* A map at addr of instance type t; returns its tagged pointer. */
static uint64_t map_of(uint64_t addr, uint16_t t)
{
	put(addr + 12, &t, 2);
	return addr | 1;
}

static uint64_t one_byte(uint64_t addr, uint64_t map, const char *s)
{
	int32_t len = (int32_t)strlen(s);

	put64(addr, map);
	put(addr + 12, &len, 4);
	put(addr + 16, s, (size_t)len);
	return addr | 1;
}

static void test_strings_and_names(void **state)
{
	const struct v8_layout l = layout();
	struct remote_memory mem = {heap_read, NULL};
	uint64_t m_one, m_two, m_cons, m_thin, m_sliced, m_sfi, m_scope, m_other;
	uint64_t a, b, cons, thin, two, sliced, scope, sfi;
	const uint16_t chars[] = {'c', 0xe9, 'l', 0x2028};
	int32_t n = 4;
	char out[64];

	(void)state;
	memset(heap, 0, sizeof(heap));
	m_one = map_of(BASE + 0x000, 8 | 0);
	m_two = map_of(BASE + 0x040, 0);
	m_cons = map_of(BASE + 0x080, 8 | 1);
	m_thin = map_of(BASE + 0x0c0, 5);
	m_sliced = map_of(BASE + 0x100, 8 | 3);
	m_sfi = map_of(BASE + 0x140, 262);
	m_scope = map_of(BASE + 0x180, 261);
	m_other = map_of(BASE + 0x1c0, 175);
	a = one_byte(BASE + 0x400, m_one, "render");
	b = one_byte(BASE + 0x440, m_one, "Layout");
	cons = BASE + 0x480;
	put64(cons, m_cons);
	n = 12;
	put(cons + 12, &n, 4);
	put64(cons + 16, a);
	put64(cons + 24, b);
	cons |= 1;
	assert_int_equal(v8_heap__string(&mem, &l, cons, out, sizeof(out)), 0);
	assert_string_equal(out, "renderLayout");
	thin = BASE + 0x4c0;
	put64(thin, m_thin);
	n = 12;
	put(thin + 12, &n, 4);
	put64(thin + 16, cons);
	assert_int_equal(v8_heap__string(&mem, &l, thin | 1, out, sizeof(out)), 0);
	assert_string_equal(out, "renderLayout");
	sliced = BASE + 0x500;
	put64(sliced, m_sliced);
	n = 5;
	put(sliced + 12, &n, 4);
	put64(sliced + 16, cons);
	put64(sliced + 24, 4ull << 32);
	assert_int_equal(v8_heap__string(&mem, &l, sliced | 1, out, sizeof(out)), 0);
	assert_string_equal(out, "erLay");
	two = BASE + 0x540;
	put64(two, m_two);
	n = 4;
	put(two + 12, &n, 4);
	put(two + 16, chars, sizeof(chars));
	assert_int_equal(v8_heap__string(&mem, &l, two | 1, out, sizeof(out)), 0);
	assert_string_equal(out, "c\xc3\xa9l\xe2\x80\xa8");
	/* Cut to the buffer, on a character boundary. */
	assert_int_equal(v8_heap__string(&mem, &l, two | 1, out, 3), 0);
	assert_string_equal(out, "c");
	/* Not a string: refused. */
	put64(BASE + 0x580, m_other);
	assert_int_equal(v8_heap__string(&mem, &l, BASE + 0x581, out, sizeof(out)), -EINVAL);
	/* A cons string pointing at itself ends (depth bound). */
	put64(cons - 1 + 16, cons);
	assert_int_not_equal(v8_heap__string(&mem, &l, cons, out, sizeof(out)), 0);

	/* A cached external one-byte string (node's built-in sources): its data
	 * pointer after the resource; an uncached one has none: refused. */
	{
		uint64_t ext = BASE + 0xa00, m_ext = map_of(BASE + 0x280, 8 | 2);
		uint64_t m_unc = map_of(BASE + 0x2c0, 0x10 | 8 | 2);

		n = 6;
		put64(ext, m_ext);
		put(ext + 12, &n, 4);
		put64(ext + 16, 0x1234);       /* the resource (a C++ object) */
		put64(ext + 24, BASE + 0xa40); /* its data */
		put(BASE + 0xa40, "node:x", 6);
		assert_int_equal(v8_heap__string(&mem, &l, ext | 1, out, sizeof(out)), 0);
		assert_string_equal(out, "node:x");
		assert_int_equal(v8_heap__substring(&mem, &l, ext | 1, 2, 3, out, sizeof(out)), 0);
		assert_string_equal(out, "de:");
		put64(ext, m_unc);
		assert_int_equal(v8_heap__string(&mem, &l, ext | 1, out, sizeof(out)), -EINVAL);
	}
	/* Names: a string, a ScopeInfo (2 context locals before the function's name), none. */
	sfi = BASE + 0x600;
	put64(sfi, m_sfi);
	put64(sfi + 16, a);
	assert_int_equal(v8_heap__function_name(&mem, &l, sfi | 1, out, sizeof(out)), 0);
	assert_string_equal(out, "render");
	scope = BASE + 0x700;
	put64(scope, m_scope);
	put64(scope + 8 + 8 * 2, 2ull << 32); /* context locals */
	put64(scope + 8 + 8 * 3, b);	      /* their names, then infos */
	put64(scope + 8 + 8 * 4, b);
	put64(scope + 8 + 8 * 5, 0);
	put64(scope + 8 + 8 * 6, 0);
	put64(scope + 8 + 8 * 7, a); /* the function variable's name */
	put64(sfi + 16, scope | 1);
	assert_int_equal(v8_heap__function_name(&mem, &l, sfi | 1, out, sizeof(out)), 0);
	assert_string_equal(out, "render");
	put64(sfi + 16, 0);
	assert_int_equal(v8_heap__function_name(&mem, &l, sfi | 1, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	/* A class's method: its ScopeInfo's outer ScopeInfo is a class scope
	 * whose start (after a saved class variable index) reads "class Shape". */
	{
		uint64_t m_script = map_of(BASE + 0x200, 150), m_map = map_of(BASE + 0x240, 180);
		uint64_t src =
		    one_byte(BASE + 0x800, m_one, "x;\nclass  Shape extends B { area() {} }");
		uint64_t cls = BASE + 0x900, script = BASE + 0x880;

		put64(script, m_script);
		put64(script + 8, src);
		put64(sfi + 32, script | 1);
		put64(cls, m_scope);
		put64(cls + 8, 0x1000020ull << 32); /* flags: CLASS_SCOPE */
		put64(cls + 8 + 8 * 2, 0);	    /* no context locals */
		put64(cls + 8 + 8 * 3, 0);	    /* saved class variable index */
		put64(cls + 8 + 8 * 4, 3ull << 32); /* start: "class" */
		put64(cls + 8 + 8 * 5, 40ull << 32);
		put64(scope + 8, 0x1000022ull << 32); /* flags: FUNCTION_SCOPE */
		memset(heap + (scope - BASE) + 8 + 8 * 8, 0, 8 * 8);
		put64(scope + 8 + 8 * 8, 0xffffffffull << 32); /* the function variable's slot */
		put64(scope + 8 + 8 * 9, 5ull << 32);	       /* positions */
		put64(scope + 8 + 8 * 10, 9ull << 32);
		put64(scope + 8 + 8 * 11, cls | 1); /* the outer scope */
		put64(sfi + 16, scope | 1);
		assert_int_equal(v8_heap__function_name(&mem, &l, sfi | 1, out, sizeof(out)), 0);
		assert_string_equal(out, "Shape.render");
		/* V8 13 numbers scope types from SCRIPT_SCOPE (class 2, function
		 * 4) in raw 32-bit flags, and keeps a class's positions in the two
		 * slots before its context locals (here slot 1: "class"). */
		{
			struct v8_layout l13 = l;

			l13.scope_class = 2;
			l13.scope_function = 4;
			l13.scope_flags_raw = true;
			assert_int_equal(
			    v8_heap__function_name(&mem, &l13, sfi | 1, out, sizeof(out)), 0);
			assert_string_equal(out, "render"); /* V8 11's flags: no class */
			put64(scope + 8, 0x4171e4);
			put64(cls + 8, 0x400020);
			assert_int_equal(
			    v8_heap__function_name(&mem, &l13, sfi | 1, out, sizeof(out)), 0);
			assert_string_equal(out, "render"); /* the outer scope's 0: a script's */
			put64(cls + 8, 0x400022);
			assert_int_equal(
			    v8_heap__function_name(&mem, &l13, sfi | 1, out, sizeof(out)), 0);
			assert_string_equal(out, "render"); /* no "class" at slot 1's 0 */
			put64(cls + 8 + 8 * 1, 3ull << 32);
			assert_int_equal(
			    v8_heap__function_name(&mem, &l13, sfi | 1, out, sizeof(out)), 0);
			assert_string_equal(out, "Shape.render");
			put64(scope + 8, 0x1000022ull << 32);
			put64(cls + 8, 0x1000020ull << 32);
			put64(cls + 8 + 8 * 1, 0);
		}
		/* The method's own scope not a function's: no class. */
		put64(scope + 8, 0x1000020ull << 32);
		assert_int_equal(v8_heap__function_name(&mem, &l, sfi | 1, out, sizeof(out)), 0);
		assert_string_equal(out, "render");
		put64(scope + 8, 0x1000022ull << 32);
		/* Not at "class": no class name guessed. */
		put64(cls + 8 + 8 * 4, 4ull << 32);
		assert_int_equal(v8_heap__function_name(&mem, &l, sfi | 1, out, sizeof(out)), 0);
		assert_string_equal(out, "render");
		/* An anonymous class ("class extends B"): the method alone. */
		one_byte(BASE + 0x800, m_one, "x;\nclass  extends B { area() {} }");
		put64(cls + 8 + 8 * 4, 3ull << 32);
		assert_int_equal(v8_heap__function_name(&mem, &l, sfi | 1, out, sizeof(out)), 0);
		assert_string_equal(out, "render");
		/* Not a class scope (a function's): no prefix. */
		one_byte(BASE + 0x800, m_one, "x;\nclass  Shape extends B { area() {} }");
		put64(cls + 8, 0x1000022ull << 32);
		assert_int_equal(v8_heap__function_name(&mem, &l, sfi | 1, out, sizeof(out)), 0);
		assert_string_equal(out, "render");
		/* The next object's map before any ScopeInfo: the ScopeInfo ended. */
		put64(cls + 8, 0x1000020ull << 32);
		put64(BASE + 0x240, m_map); /* the meta map: a Map's own map */
		put64(scope + 8 + 8 * 10, m_map);
		assert_int_equal(v8_heap__function_name(&mem, &l, sfi | 1, out, sizeof(out)), 0);
		assert_string_equal(out, "render");
		put64(sfi + 32, 0);
	}
	/*
	 * V8 9 (Node 16): a slot for the receiver (a Smi) may come first, so the
	 * name and the inferred name sit one slot later; its class scopes keep
	 * no positions, so the class is named by its class variable, the one
	 * context local named as an identifier (not ".brand", "#x"); the
	 * next object's map ends the ScopeInfo's slots.
	 */
	{
		uint64_t m_map = map_of(BASE + 0x240, 180);
		uint64_t empty = one_byte(BASE + 0xb00, m_one, "");
		uint64_t inferred = one_byte(BASE + 0xb40, m_one, "Module.load");
		uint64_t ring = one_byte(BASE + 0xb80, m_one, "Ring");
		uint64_t brand = one_byte(BASE + 0xbc0, m_one, ".brand");
		uint64_t priv = one_byte(BASE + 0xc80, m_one, "#x");
		uint64_t cls9 = BASE + 0xc00;
		struct v8_layout l9 = l;

		l9.type_baseline_data = 99; /* V8 9 */

		put64(BASE + 0x240, m_map);
		put64(cls9, m_scope);
		put64(cls9 + 8, 0x1000020ull << 32); /* flags: CLASS_SCOPE */
		put64(cls9 + 8 + 8 * 2, 2ull << 32); /* two context locals */
		put64(cls9 + 8 + 8 * 3, brand);
		put64(cls9 + 8 + 8 * 4, ring);
		put64(cls9 + 8 + 8 * 5, 0);
		put64(cls9 + 8 + 8 * 6, 0);
		put64(cls9 + 8 + 8 * 7, m_map); /* the next object */
		memset(heap + (scope - BASE) + 8 + 8 * 7, 0, 8 * 8);
		put64(scope + 8 + 8 * 7, 2ull << 32);	       /* the receiver's slot */
		put64(scope + 8 + 8 * 8, a);		       /* the name */
		put64(scope + 8 + 8 * 9, 0xffffffffull << 32); /* its slot */
		put64(scope + 8 + 8 * 10, 5ull << 32);	       /* positions */
		put64(scope + 8 + 8 * 11, 9ull << 32);
		put64(scope + 8 + 8 * 12, cls9 | 1); /* the outer scope: the class's */
		put64(sfi + 16, scope | 1);
		assert_int_equal(v8_heap__function_name(&mem, &l9, sfi | 1, out, sizeof(out)), 0);
		assert_string_equal(out, "Ring.render");
		/* Only synthetic and private locals: the method alone. */
		put64(cls9 + 8 + 8 * 4, priv);
		assert_int_equal(v8_heap__function_name(&mem, &l9, sfi | 1, out, sizeof(out)), 0);
		assert_string_equal(out, "render");
		/* No name, an inferred one after the function variable's slot. */
		put64(scope + 8 + 8 * 8, empty);
		put64(scope + 8 + 8 * 10, inferred);
		put64(scope + 8 + 8 * 11, 5ull << 32);
		put64(scope + 8 + 8 * 12, 9ull << 32);
		assert_int_equal(v8_heap__function_name(&mem, &l, sfi | 1, out, sizeof(out)), 0);
		assert_string_equal(out, "Module.load");
		/* The ScopeInfo ended (the next object's map) before it: not read. */
		put64(scope + 8 + 8 * 9, m_map);
		assert_int_equal(v8_heap__function_name(&mem, &l, sfi | 1, out, sizeof(out)), 0);
		assert_string_equal(out, "");
	}
	/* An object that is no SharedFunctionInfo: no name at all. */
	assert_int_equal(v8_heap__function_name(&mem, &l, BASE + 0x581, out, sizeof(out)), -EINVAL);
	assert_int_not_equal(v8_heap__function_name(&mem, &l, 0xdead1, out, sizeof(out)), 0);
}

/*
 * V8 13 (Node 24): the SharedFunctionInfo's first field (trusted function
 * data) holds the bytecode, its baseline Code or its InterpreterData, and the
 * source position table is a TrustedByteArray. A frame's bytecode is named
 * only while its function runs it: flushed and replaced, it is not.
 */
static void test_trusted_function_data(void **state)
{
	struct v8_layout l = layout();
	struct remote_memory mem = {heap_read, NULL};
	struct v8_stats stats = {0};
	struct hashmap scripts;
	uint64_t stream_map = 0;
	const struct v8_code_ctx cc = {&mem, &l, &scripts, 1, &stats, &stream_map};
	uint64_t m_one, m_sfi, m_ba, m_code, m_idata, m_tba, m_script;
	uint64_t sfi = BASE + 0x600, ba = BASE + 0xb00, other = BASE + 0xb80, code = BASE + 0xd00;
	uint64_t table = BASE + 0xc00, script = BASE + 0x880, idata = BASE + 0xd80;
	uint64_t bdata = BASE + 0xe00, m_bdata;
	const char *name, *file;
	struct v8_code *c;
	int64_t line;
	uint8_t t[16];
	int32_t n;
	size_t len = 0;

	(void)state;
	memset(heap, 0, sizeof(heap));
	v8_scripts__init(&scripts);
	l.sfi_function_data = 8;
	l.sfi_name_or_scope_info = 24;
	l.sfi_script = 40;
	l.has_function_data = true;
	l.has_code_objects = true;
	l.type_bytecode_array = 186;
	l.type_code = 187;
	l.type_byte_array = 217;
	l.type_trusted_byte_array = 196;
	l.code_bytecode = 8;
	l.bytecode_array_positions = 24;
	l.bytecode_array_data = 64;
	m_one = map_of(BASE + 0x000, 8 | 0);
	m_sfi = map_of(BASE + 0x140, 262);
	m_ba = map_of(BASE + 0x040, 186);
	m_code = map_of(BASE + 0x080, 187);
	m_idata = map_of(BASE + 0x0c0, 188);
	m_tba = map_of(BASE + 0x100, 196);
	m_script = map_of(BASE + 0x200, 150);
	put64(sfi, m_sfi);
	put64(sfi + 8, ba | 1);
	put64(sfi + 24, one_byte(BASE + 0x400, m_one, "render"));
	put64(sfi + 40, script | 1);
	put64(script, m_script);
	put64(script + 8, one_byte(BASE + 0x900, m_one, "x;\nfunction render() {\n  y();\n}\n"));
	put64(script + 16, one_byte(BASE + 0x980, m_one, "/app/a.js"));
	l.script_name = 16;
	put64(ba, m_ba);
	put64(ba + 8, 4ull << 32);
	put64(ba + 24, table | 1);
	put64(other, m_ba);
	/* Bytecode offset 0 at "function" (line 2), offset 3 at "y()" (line 3). */
	len += put_entry(t + len, 0, true, position(3, 0));
	len += put_entry(t + len, 3, true, position(27, 0) - position(3, 0));
	put64(table, m_tba);
	n = (int32_t)len;
	put64(table + 8, (uint64_t)n << 32);
	put(table + 16, t, len);

	assert_int_equal(v8_code__read_interpreted(&cc, ba | 1, sfi | 1, &c), 0);
	v8_code__describe(c, OP_V8_AUX(OP_V8_FRAME_INTERPRETED, 63 + 3), &name, &file, &line);
	assert_string_equal(name, "render");
	assert_string_equal(file, "/app/a.js");
	assert_int_equal(line, 3);
	v8_code__describe(c, OP_V8_AUX(OP_V8_FRAME_INTERPRETED, 63), &name, &file, &line);
	assert_int_equal(line, 2);
	v8_code__free(c);
	/* Through its baseline code, through its InterpreterData. */
	put64(code, m_code);
	put64(code + 8, ba | 1);
	put64(sfi + 8, code | 1);
	assert_int_equal(v8_code__read_interpreted(&cc, ba | 1, sfi | 1, &c), 0);
	v8_code__free(c);
	put64(idata, m_idata);
	put64(idata + 8, ba | 1);
	put64(sfi + 8, idata | 1);
	assert_int_equal(v8_code__read_interpreted(&cc, ba | 1, sfi | 1, &c), 0);
	v8_code__free(c);
	/* V8 9 (Node 16): a BaselineData, its code at 8, its bytecode (or
	 * InterpreterData) at 16; without its type known, the code at 8 is not
	 * the bytecode: refused. */
	m_bdata = map_of(BASE + 0x1c0, 94);
	put64(bdata, m_bdata);
	put64(bdata + 8, code | 1);
	put64(bdata + 16, ba | 1);
	put64(sfi + 8, bdata | 1);
	assert_int_equal(v8_code__read_interpreted(&cc, ba | 1, sfi | 1, &c), -ESTALE);
	l.type_baseline_data = 94;
	assert_int_equal(v8_code__read_interpreted(&cc, ba | 1, sfi | 1, &c), 0);
	v8_code__free(c);
	put64(bdata + 16, idata | 1);
	assert_int_equal(v8_code__read_interpreted(&cc, ba | 1, sfi | 1, &c), 0);
	v8_code__free(c);
	put64(bdata + 16, other | 1);
	assert_int_equal(v8_code__read_interpreted(&cc, ba | 1, sfi | 1, &c), -ESTALE);
	l.type_baseline_data = 0;
	stats.mismatches = 0;
	/* Flushed and recompiled: the function runs another bytecode array. */
	put64(sfi + 8, other | 1);
	assert_int_equal(v8_code__read_interpreted(&cc, ba | 1, sfi | 1, &c), -ESTALE);
	assert_null(c);
	assert_int_equal(stats.mismatches, 1);
	put64(sfi + 8, 0);
	assert_int_equal(v8_code__read_interpreted(&cc, ba | 1, sfi | 1, &c), -ESTALE);
	/* Described as absent (has_function_data false): never named. */
	put64(sfi + 8, ba | 1);
	l.has_function_data = false;
	assert_int_equal(v8_code__read_interpreted(&cc, ba | 1, sfi | 1, &c), -ESTALE);
	l.has_function_data = true;
	/* A position table of another type: named, without a line. */
	put64(table, m_one);
	assert_int_equal(v8_code__read_interpreted(&cc, ba | 1, sfi | 1, &c), 0);
	v8_code__describe(c, OP_V8_AUX(OP_V8_FRAME_INTERPRETED, 63 + 3), &name, &file, &line);
	assert_string_equal(name, "render");
	assert_int_equal(line, 0);
	v8_code__free(c);
	v8_scripts__clear(&scripts, 0, true);
}

/*
 * The real files (scripts/install-deps.sh installs them): what V8 12 and 13
 * (Node 22, 24) do not describe is derived, so both name interpreted frames
 * and read code objects; Node 20 keeps V8 11's layout; V8 10 (Node 18)
 * reads its inline-instruction code objects; V8 9 (Node 16) derives V8
 * 9.4's layouts from what it describes.
 */
static void inspect(const char *path, struct v8_binary *bin, int want)
{
	struct elf_file *ef = NULL;

	if (elf_file__open(path, -1, &ef))
		fail_msg("%s is missing: scripts/install-deps.sh installs it", path);
	assert_int_equal(v8_binary__inspect(ef, bin), want);
	elf_file__close(ef);
}

/*
 * V8 9's derived bytecode start is checked against node's interpreter entry:
 * its first "mov $imm32, %r9d" (the bytecode offset register) is the start
 * less the heap object tag; no such load, or one past any object, gives -1
 * (and V8 9 no lines).
 */
static void test_bytecode_start(void **state)
{
	/* push rbp; mov rbp,rsp; ...; mov $0x35,%r9d; mov $0x99,%r9d */
	static const uint8_t v9[] = {0x55, 0x48, 0x89, 0xe5, 0x41, 0x52, 0x41, 0xb9, 0x35,
				     0x00, 0x00, 0x00, 0x41, 0xb9, 0x99, 0x00, 0x00, 0x00};
	static const uint8_t none[] = {0x55, 0x48, 0x89, 0xe5, 0x41, 0xb8, 0x35, 0x00, 0x00, 0x00};
	static const uint8_t huge[] = {0x41, 0xb9, 0x00, 0x00, 0x01, 0x00};

	(void)state;
	assert_int_equal(v8_binary__bytecode_start(v9, sizeof(v9)), 54);
	/* Cut inside the immediate: not read. */
	assert_int_equal(v8_binary__bytecode_start(v9, 10), -1);
	assert_int_equal(v8_binary__bytecode_start(none, sizeof(none)), -1);
	assert_int_equal(v8_binary__bytecode_start(huge, sizeof(huge)), -1);
	assert_int_equal(v8_binary__bytecode_start(v9, 0), -1);
}

static void test_real_binaries(void **state)
{
	struct v8_binary b16, b18, b20, b22, b24;

	(void)state;
	/* V8 9.4: what it does not describe derived from what it does (the
	 * interpreter's slots, the script's source, the bytecodes' start, the
	 * Code's flags and kinds), so it is named and lined like V8 10. */
	inspect("/opt/omniprof-node/16/node", &b16, 0);
	assert_int_equal(b16.layout.fp_bytecode_array, -32);
	assert_int_equal(b16.layout.fp_bytecode_offset, -40);
	assert_true(b16.layout.has_lines);
	assert_true(b16.layout.has_function_data);
	assert_int_equal(b16.layout.script_source, 8);
	assert_int_equal(b16.layout.script_name, 16);
	assert_int_equal(b16.layout.bytecode_array_data, 54);
	assert_int_equal(b16.layout.bytecode_array_positions, 32);
	assert_true(b16.layout.has_code_objects);
	assert_int_equal(b16.layout.code_inline, 96);
	assert_int_equal(b16.layout.code_positions, 24);
	assert_int_equal(b16.layout.code_bytecode, 16);
	assert_int_equal(b16.layout.code_size, 40);
	assert_int_equal(b16.layout.code_flags, 48);
	assert_int_equal(b16.layout.code_kind_baseline, 11);
	assert_int_equal(b16.layout.type_instruction_stream, b16.layout.type_code);
	assert_int_not_equal(b16.layout.type_baseline_data, 0);
	/* V8 10: code objects with their instructions inline, after the header. */
	inspect("/opt/omniprof-node/18/node", &b18, 0);
	assert_true(b18.layout.has_code_objects && b18.layout.has_lines);
	assert_true(b18.layout.code_inline > b18.layout.code_size);
	assert_int_equal(b18.layout.type_instruction_stream, b18.layout.type_code);
	/* V8 10 describes what V8 9 derives: the same values. */
	assert_int_equal(b18.layout.script_source, b16.layout.script_source);
	assert_int_equal(b18.layout.code_flags, b16.layout.code_flags);
	assert_int_equal(b18.layout.code_kind_baseline, b16.layout.code_kind_baseline);
	assert_int_equal(b18.layout.code_kind_interpreted, b16.layout.code_kind_interpreted);
	assert_int_equal(b18.layout.code_kind_mask, b16.layout.code_kind_mask);
	assert_int_equal(b18.layout.type_baseline_data, 0);
	inspect("/usr/bin/node", &b20, 0);
	assert_true(b20.layout.has_lines);
	assert_int_equal(b20.layout.code_inline, 0);
	inspect("/opt/omniprof-node/22/node", &b22, 0);
	inspect("/opt/omniprof-node/24/node", &b24, 0);
	assert_true(b20.layout.has_function_data && b20.layout.has_code_objects);
	assert_false(b20.layout.code_described);
	assert_int_equal(b20.layout.sfi_wrapper_sfi, 0);
	for (int i = 0; i < 2; i++) {
		const struct v8_layout *l = i ? &b24.layout : &b22.layout;

		assert_true(l->has_function_data);
		assert_true(l->has_code_objects);
		assert_true(l->code_described);
		/* Derived fields lie inside the objects, before what is described after them. */
		assert_true(l->sfi_function_data < l->sfi_name_or_scope_info);
		assert_true(l->code_bytecode < l->code_positions);
		assert_true(l->code_positions < l->code_stream);
		assert_true(l->bytecode_array_positions < l->bytecode_array_data);
		assert_int_not_equal(l->type_trusted_byte_array, l->type_byte_array);
	}
	assert_int_equal(b22.layout.sfi_wrapper_sfi, 0);
	assert_int_not_equal(b24.layout.sfi_wrapper_sfi, 0);
}

/*
 * V8 10 (Node 18): a JIT pc's Code holds its instructions inline after its
 * header, found by walking back to the Code map; optimized code gives the
 * pc's line only when its deoptimization data names the frame's function,
 * and a pc past the instructions gives none.
 */
static void test_inline_code(void **state)
{
	struct v8_layout l = layout();
	struct remote_memory mem = {heap_read, NULL};
	struct v8_stats stats = {0};
	struct hashmap scripts;
	uint64_t stream_map = 0;
	const struct v8_code_ctx cc = {&mem, &l, &scripts, 1, &stats, &stream_map};
	uint64_t m_one, m_sfi, m_code, m_fa, m_ba, m_script;
	uint64_t sfi = BASE + 0x600, other = BASE + 0x680, code = BASE + 0x1000;
	uint64_t deopt = BASE + 0x800, table = BASE + 0xa00, script = BASE + 0x880;
	uint32_t size = 0x100, flags = 13; /* TurboFan */
	const char *name, *file;
	struct v8_code *c;
	int64_t line;
	uint8_t t[16];
	int32_t n;
	size_t len = 0;

	(void)state;
	memset(heap, 0, sizeof(heap));
	v8_scripts__init(&scripts);
	l.has_code_objects = true;
	l.code_inline = 128;
	l.code_bytecode = 16;
	l.code_positions = 24;
	l.code_size = 40;
	l.code_flags = 48;
	l.code_kind_mask = 15;
	l.code_kind_baseline = 11;
	l.type_code = 240;
	l.type_instruction_stream = 240;
	l.type_byte_array = 194;
	l.type_trusted_byte_array = 194;
	l.deopt_sfi_index = 6;
	l.deopt_inlining_index = 7;
	l.deopt_literal_index = 2;
	l.script_name = 16;
	m_one = map_of(BASE + 0x000, 8 | 0);
	m_sfi = map_of(BASE + 0x140, 262);
	m_code = map_of(BASE + 0x040, 240);
	m_fa = map_of(BASE + 0x080, 179);
	m_ba = map_of(BASE + 0x0c0, 194);
	m_script = map_of(BASE + 0x200, 150);
	put64(sfi, m_sfi);
	put64(sfi + 16, one_byte(BASE + 0x400, m_one, "measure"));
	put64(sfi + 32, script | 1);
	put64(other, m_sfi);
	put64(other + 16, one_byte(BASE + 0x440, m_one, "other"));
	put64(script, m_script);
	put64(script + 8, one_byte(BASE + 0x900, m_one, "x;\nfunction measure() {\n  y();\n}\n"));
	put64(script + 16, one_byte(BASE + 0x980, m_one, "/app/m.js"));
	put64(deopt, m_fa);
	put64(deopt + 8, 8ull << 32);
	put64(deopt + 16 + 8 * 6, sfi | 1);
	/* pc offset 0x10 at "y()" (line 3). */
	len += put_entry(t + len, 0, true, position(3, 0));
	len += put_entry(t + len, 0x10, true, position(27, 0) - position(3, 0));
	put64(table, m_ba);
	n = (int32_t)len;
	put64(table + 8, (uint64_t)n << 32);
	put(table + 16, t, len);
	put64(code, m_code);
	put64(code + 16, deopt | 1);
	put64(code + 24, table | 1);
	put(code + 40, &size, 4);
	put(code + 48, &flags, 4);

	assert_int_equal(v8_code__read_jit(&cc, code + 128 + 0x20, sfi | 1, &c), 0);
	v8_code__describe(c, OP_V8_AUX(OP_V8_FRAME_JIT, 0), &name, &file, &line);
	assert_string_equal(name, "measure");
	assert_string_equal(file, "/app/m.js");
	assert_int_equal(line, 3);
	/* The same pc later: still this code while its tables are the ones read;
	 * recompiled at that address (new positions or deoptimization data): not. */
	assert_true(v8_code__current(&cc, c));
	put64(code + 24, (table + 0x40) | 1);
	assert_false(v8_code__current(&cc, c));
	put64(code + 24, table | 1);
	put64(code + 16, (deopt + 0x40) | 1);
	assert_false(v8_code__current(&cc, c));
	put64(code + 16, deopt | 1);
	assert_true(v8_code__current(&cc, c));
	v8_code__free(c);
	/* Past its instructions: no line. */
	assert_int_equal(v8_code__read_jit(&cc, code + 128 + size + 8, sfi | 1, &c), 0);
	v8_code__describe(c, OP_V8_AUX(OP_V8_FRAME_JIT, 0), &name, &file, &line);
	assert_string_equal(name, "measure");
	assert_int_equal(line, 0);
	assert_true(v8_code__current(&cc, c)); /* no line: the function alone names it */
	v8_code__free(c);
	/* Code of another function (its deoptimization data says so): no line. */
	put64(deopt + 16 + 8 * 6, other | 1);
	assert_int_equal(v8_code__read_jit(&cc, code + 128 + 0x20, sfi | 1, &c), 0);
	v8_code__describe(c, OP_V8_AUX(OP_V8_FRAME_JIT, 0), &name, &file, &line);
	assert_string_equal(name, "measure");
	assert_int_equal(line, 0);
	v8_code__free(c);
	v8_scripts__clear(&scripts, 0, true);
}

/*
 * V8 9 (Node 16): baseline code's bytecode is its function's BaselineData's
 * (the data at 16), found only while that BaselineData holds this code (at
 * 8); the pc maps to a bytecode offset through the code's bytecode offset
 * table, the bytecode to its line. Another code there, or the BaselineData
 * not known (V8 10's Code field read instead, empty here): no line.
 */
static void test_v9_baseline_code(void **state)
{
	struct v8_layout l = layout();
	struct remote_memory mem = {heap_read, NULL};
	struct v8_stats stats = {0};
	struct hashmap scripts;
	uint64_t stream_map = 0;
	const struct v8_code_ctx cc = {&mem, &l, &scripts, 1, &stats, &stream_map};
	uint64_t m_one, m_sfi, m_code, m_ba, m_bca, m_script, m_bdata;
	uint64_t sfi = BASE + 0x600, bdata = BASE + 0x680, code = BASE + 0x1000;
	uint64_t ba = BASE + 0x800, offsets = BASE + 0xa00, table = BASE + 0xa80;
	uint64_t script = BASE + 0x880;
	uint32_t size = 0x40, flags = 11; /* BASELINE */
	/* Bytecodes 5 (2 bytes), 6 (3 bytes), 5; pc deltas: entry 4, then 3, 4, 5. */
	const uint8_t bc[] = {5, 0xaa, 6, 0xbb, 0xcc, 5, 0xdd};
	const uint8_t deltas[] = {4, 3, 4, 5};
	const char *name, *file;
	struct v8_code *c;
	int64_t line;
	uint8_t t[16];
	int32_t n;
	size_t len = 0;

	(void)state;
	memset(heap, 0, sizeof(heap));
	v8_scripts__init(&scripts);
	l.has_code_objects = true;
	l.has_function_data = true;
	l.sfi_function_data = 8;
	l.code_inline = 96;
	l.code_bytecode = 16;
	l.code_positions = 24;
	l.code_size = 40;
	l.code_flags = 48;
	l.code_kind_mask = 15;
	l.code_kind_baseline = 11;
	l.type_code = 162;
	l.type_instruction_stream = 162;
	l.type_byte_array = 132;
	l.type_trusted_byte_array = 132;
	l.type_bytecode_array = 133;
	l.type_baseline_data = 94;
	l.bytecode_array_positions = 32;
	l.bytecode_array_data = 54;
	l.script_name = 16;
	l.n_bytecodes = 8;
	l.bytecode_sizes[0][5] = 2;
	l.bytecode_sizes[0][6] = 3;
	m_one = map_of(BASE + 0x000, 8 | 0);
	m_sfi = map_of(BASE + 0x140, 262);
	m_code = map_of(BASE + 0x040, 162);
	m_bca = map_of(BASE + 0x080, 133);
	m_ba = map_of(BASE + 0x0c0, 132);
	m_bdata = map_of(BASE + 0x100, 94);
	m_script = map_of(BASE + 0x200, 150);
	put64(sfi, m_sfi);
	put64(sfi + 8, bdata | 1);
	put64(sfi + 16, one_byte(BASE + 0x400, m_one, "measure"));
	put64(sfi + 32, script | 1);
	put64(script, m_script);
	put64(script + 8, one_byte(BASE + 0x900, m_one, "x;\nfunction measure() {\n  y();\n}\n"));
	put64(script + 16, one_byte(BASE + 0x980, m_one, "/app/m.js"));
	put64(bdata, m_bdata);
	put64(bdata + 8, code | 1);
	put64(bdata + 16, ba | 1);
	/* The bytecode: offset 0 at "function" (line 2), offset 2 at "y()" (line 3). */
	put64(ba, m_bca);
	put64(ba + 8, (uint64_t)sizeof(bc) << 32);
	put64(ba + 32, table | 1);
	put(ba + 54, bc, sizeof(bc));
	len += put_entry(t + len, 0, true, position(3, 0));
	len += put_entry(t + len, 2, true, position(27, 0) - position(3, 0));
	put64(table, m_ba);
	n = (int32_t)len;
	put64(table + 8, (uint64_t)n << 32);
	put(table + 16, t, len);
	put64(offsets, m_ba);
	put64(offsets + 8, (uint64_t)sizeof(deltas) << 32);
	put(offsets + 16, deltas, sizeof(deltas));
	put64(code, m_code);
	put64(code + 24, offsets | 1);
	put(code + 40, &size, 4);
	put(code + 48, &flags, 4);

	/* pc offset 8: the second bytecode (offset 2), line 3. */
	assert_int_equal(v8_code__read_jit(&cc, code + 96 + 8, sfi | 1, &c), 0);
	v8_code__describe(c, OP_V8_AUX(OP_V8_FRAME_JIT, 0), &name, &file, &line);
	assert_string_equal(name, "measure");
	assert_string_equal(file, "/app/m.js");
	assert_int_equal(line, 3);
	v8_code__free(c);
	/* pc offset 5: the first bytecode, line 2. */
	assert_int_equal(v8_code__read_jit(&cc, code + 96 + 5, sfi | 1, &c), 0);
	v8_code__describe(c, OP_V8_AUX(OP_V8_FRAME_JIT, 0), &name, &file, &line);
	assert_int_equal(line, 2);
	v8_code__free(c);
	/* The BaselineData holds another code: this code is not the function's. */
	put64(bdata + 8, (code + 0x200) | 1);
	assert_int_equal(v8_code__read_jit(&cc, code + 96 + 8, sfi | 1, &c), 0);
	v8_code__describe(c, OP_V8_AUX(OP_V8_FRAME_JIT, 0), &name, &file, &line);
	assert_string_equal(name, "measure");
	assert_int_equal(line, 0);
	v8_code__free(c);
	/* Through InterpreterData (its bytecode first). */
	put64(bdata + 8, code | 1);
	put64(bdata + 16, (BASE + 0x700) | 1);
	put64(BASE + 0x700, m_one);
	put64(BASE + 0x708, ba | 1);
	assert_int_equal(v8_code__read_jit(&cc, code + 96 + 8, sfi | 1, &c), 0);
	v8_code__describe(c, OP_V8_AUX(OP_V8_FRAME_JIT, 0), &name, &file, &line);
	assert_int_equal(line, 3);
	v8_code__free(c);
	/* BaselineData not known (V8 10 on): the Code's own field, empty here. */
	put64(bdata + 16, ba | 1);
	l.type_baseline_data = 0;
	assert_int_equal(v8_code__read_jit(&cc, code + 96 + 8, sfi | 1, &c), 0);
	v8_code__describe(c, OP_V8_AUX(OP_V8_FRAME_JIT, 0), &name, &file, &line);
	assert_int_equal(line, 0);
	v8_code__free(c);
	v8_scripts__clear(&scripts, 0, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_positions),	      cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_baseline_offsets),  cmocka_unit_test(test_maglev_safepoints),
	    cmocka_unit_test(test_translations),      cmocka_unit_test(test_translation_counts_v13),
	    cmocka_unit_test(test_strings_and_names), cmocka_unit_test(test_trusted_function_data),
	    cmocka_unit_test(test_inline_code),	      cmocka_unit_test(test_v9_baseline_code),
	    cmocka_unit_test(test_real_binaries),     cmocka_unit_test(test_bytecode_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
