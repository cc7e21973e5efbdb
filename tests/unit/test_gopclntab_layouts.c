// SPDX-License-Identifier: Apache-2.0
/*
 * .gopclntab's layouts of Go 1.16 (magic 0xfffffffa), 1.18/1.19 (0xfffffff0)
 * and 1.20-1.23 (0xfffffff1), amd64. Debian ships Go 1.19 only, so the other
 * layouts are built here, by a generator written from the format's
 * description (Go's runtime/symtab.go and cmd/link's pcln.go describe it):
 *
 *   header: magic u32, two zero bytes, PC quantum (1), pointer size (8),
 *     then words: nfunc, nfiles, [1.18+: text start], and the offsets (from
 *     the header) of the function names, cu table, file table, pc tables
 *     and function table
 *   function table: nfunc + 1 pairs sorted by pc, the last pc the end of the
 *     last function; 1.16: (pc word, record offset word), 1.18+: (u32 pc
 *     offset from the text start, u32 record offset); record offsets from
 *     the function table's start
 *   record: entry (1.16: word; 1.18+: u32 offset from the text start), name
 *     offset i32, args i32, deferreturn u32, pcsp u32 (offset into the pc
 *     tables), pcfile, pcln, npcdata u32, cu offset u32, ...
 *   pcsp: (zig-zag value delta, pc delta) uvarint pairs from value -1 at the
 *     entry, a zero value delta ending it
 *
 * Each layout holds the same three functions; every one of their PCs must
 * get its SP delta from gopclntab__pcsp and its rule from go_deltas__build
 * (CFA = rsp + delta + 8, rbp at CFA - 16 with a frame; runtime.goexit the
 * root), and its name from gopclntab__lookup. A table of one layout read
 * with another's magic must not give the same answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/gopclntab.h"
#include "unwind/go_deltas.h"
#include "unwind/stack_deltas.h"

#define TEXT 0x401000ull /* the text start the tables describe */

struct layout {
	const char *name;
	uint32_t magic;
	bool go118; /* text start in the header, u32 function table and entries */
	enum gopclntab_version version;
};

static const struct layout layouts[] = {
    {"Go 1.16", 0xfffffffau, false, GOPCLNTAB_GO116},
    {"Go 1.18", 0xfffffff0u, true, GOPCLNTAB_GO118},
    {"Go 1.20", 0xfffffff1u, true, GOPCLNTAB_GO120},
};

/* One function: its size and its pcsp runs (bytes, SP delta), which cover it. */
struct sfunc {
	const char *name;
	uint32_t size;
	struct {
		uint32_t len;
		int32_t delta;
	} runs[4];
	size_t n_runs;
};

static const struct sfunc funcs[] = {
    /* A frame of 0x28 bytes between its prologue and its RET, and 0 after it
     * (the stack-growth path). */
    {"main.work", 0x60, {{4, 0}, {0x48, 0x28}, {0x14, 0}}, 3},
    /* Frameless: rbp left alone. */
    {"main.leaf", 0x20, {{0x20, 0}}, 1},
    {"runtime.goexit", 0x10, {{0x10, 0}}, 1},
    /* A large frame (multi-byte varints). */
    {"main.big", 0x400, {{6, 0}, {0x3f0, 0x2008}, {0xa, 0}}, 3},
};

#define N_FUNCS (sizeof(funcs) / sizeof(funcs[0]))

struct buf {
	uint8_t b[8192];
	size_t n;
};

static size_t put(struct buf *b, const void *p, size_t n)
{
	size_t at = b->n;

	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
	return at;
}

static size_t put_u32(struct buf *b, uint32_t v)
{
	uint8_t le[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24};

	return put(b, le, 4);
}

static size_t put_u64(struct buf *b, uint64_t v)
{
	size_t at = put_u32(b, (uint32_t)v);

	put_u32(b, (uint32_t)(v >> 32));
	return at;
}

static void put_uvarint(struct buf *b, uint32_t v)
{
	while (v >= 0x80) {
		uint8_t c = (uint8_t)(v | 0x80);

		put(b, &c, 1);
		v >>= 7;
	}
	put(b, &(uint8_t){(uint8_t)v}, 1);
}

static void set_u64(struct buf *b, size_t at, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b->b[at + i] = (uint8_t)(v >> (8 * i));
}

static void set_u32(struct buf *b, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b->b[at + i] = (uint8_t)(v >> (8 * i));
}

/* The table of layout l holding funcs[], laid out from TEXT on, in *b. */
static void build(const struct layout *l, struct buf *b)
{
	size_t hdr_words, names, cutab, filetab, pctab, functab, pcsp[N_FUNCS], name_off[N_FUNCS];
	size_t rec_at[N_FUNCS], pair = l->go118 ? 8 : 16, at;
	uint64_t entry = TEXT;

	memset(b, 0, sizeof(*b));
	put_u32(b, l->magic);
	put(b, (uint8_t[]){0, 0, 1, 8}, 4);
	hdr_words = b->n;
	for (int i = 0; i < (l->go118 ? 8 : 7); i++)
		put_u64(b, 0);
	/* Names. */
	names = b->n;
	for (size_t i = 0; i < N_FUNCS; i++)
		name_off[i] = put(b, funcs[i].name, strlen(funcs[i].name) + 1) - names;
	/* One cu, one file. */
	cutab = put_u32(b, 0);
	filetab = put(b, "x.go", 5);
	/* pc tables: offset 0 is left unused (0 means "none"). */
	pctab = put(b, (uint8_t[]){0}, 1);
	for (size_t i = 0; i < N_FUNCS; i++) {
		int32_t val = -1;

		pcsp[i] = b->n - pctab;
		for (size_t r = 0; r < funcs[i].n_runs; r++) {
			int32_t d = funcs[i].runs[r].delta - val;

			put_uvarint(b, ((uint32_t)d << 1) ^ (uint32_t)(d >> 31));
			put_uvarint(b, funcs[i].runs[r].len);
			val = funcs[i].runs[r].delta;
		}
		put_uvarint(b, 0);
	}
	/* The function table, then the records (offsets from the table). */
	while (b->n % 8)
		put(b, (uint8_t[]){0}, 1);
	functab = b->n;
	for (size_t i = 0; i <= N_FUNCS; i++)
		put(b, (uint8_t[16]){0}, pair);
	for (size_t i = 0; i < N_FUNCS; i++) {
		rec_at[i] = b->n;
		if (l->go118)
			put_u32(b, (uint32_t)(entry - TEXT));
		else
			put_u64(b, entry);
		put_u32(b, (uint32_t)name_off[i]); /* name */
		put_u32(b, 0);			   /* args */
		put_u32(b, 0);			   /* deferreturn */
		put_u32(b, (uint32_t)pcsp[i]);	   /* pcsp */
		put_u32(b, 0);			   /* pcfile */
		put_u32(b, 0);			   /* pcln */
		put_u32(b, 0);			   /* npcdata */
		put_u32(b, 0);			   /* cu offset */
		put_u32(b, 0);			   /* funcID, flag, padding, nfuncdata */
		entry += funcs[i].size;
	}
	entry = TEXT;
	for (size_t i = 0; i <= N_FUNCS; i++) {
		uint64_t rec = i < N_FUNCS ? rec_at[i] - functab : 0;

		at = functab + i * pair;
		if (l->go118) {
			set_u32(b, at, (uint32_t)(entry - TEXT));
			set_u32(b, at + 4, (uint32_t)rec);
		} else {
			set_u64(b, at, entry);
			set_u64(b, at + 8, rec);
		}
		if (i < N_FUNCS)
			entry += funcs[i].size;
	}
	/* The header's words. */
	at = hdr_words;
	set_u64(b, at, N_FUNCS);
	set_u64(b, at + 8, 1);
	at += 16;
	if (l->go118) {
		set_u64(b, at, TEXT);
		at += 8;
	}
	set_u64(b, at, names);
	set_u64(b, at + 8, cutab);
	set_u64(b, at + 16, filetab);
	set_u64(b, at + 24, pctab);
	set_u64(b, at + 32, functab);
}

/* The SP delta funcs[] gives pc, or INT32_MIN outside them. */
static int32_t expected_delta(uint64_t pc, size_t *fi)
{
	uint64_t entry = TEXT;

	for (size_t i = 0; i < N_FUNCS; i++) {
		uint64_t at = entry;

		for (size_t r = 0; r < funcs[i].n_runs; r++) {
			if (pc >= at && pc < at + funcs[i].runs[r].len) {
				*fi = i;
				return funcs[i].runs[r].delta;
			}
			at += funcs[i].runs[r].len;
		}
		entry += funcs[i].size;
	}
	return INT32_MIN;
}

struct collected {
	int32_t delta[0x800];
	uint64_t covered;
};

static int on_run(void *ctx, uint64_t start, uint64_t end, int32_t sp_delta)
{
	struct collected *c = ctx;

	assert_true(start >= TEXT && end <= TEXT + sizeof(c->delta) / sizeof(c->delta[0]));
	for (uint64_t pc = start; pc < end; pc++)
		c->delta[pc - TEXT] = sp_delta;
	c->covered += end - start;
	return 0;
}

static uint64_t text_size(void)
{
	uint64_t n = 0;

	for (size_t i = 0; i < N_FUNCS; i++)
		n += funcs[i].size;
	return n;
}

static void test_layouts(void **state)
{
	struct buf *b = malloc(sizeof(*b));

	(void)state;
	assert_non_null(b);
	for (size_t li = 0; li < sizeof(layouts) / sizeof(layouts[0]); li++) {
		const struct layout *l = &layouts[li];
		struct stack_delta_table table;
		struct go_delta_stats stats;
		struct collected c = {0};
		struct gopclntab *t = NULL;
		uint64_t end = TEXT + text_size();

		build(l, b);
		/* The text start is the header's from 1.18 on: a wrong one given is unused. */
		assert_int_equal(gopclntab__open(b->b, b->n, l->go118 ? 0x1234 : TEXT, &t), 0);
		assert_int_equal(gopclntab__version(t), l->version);
		assert_int_equal(gopclntab__n_funcs(t), N_FUNCS);
		for (size_t i = 0; i < N_FUNCS; i++) {
			struct gopclntab_func f;

			assert_int_equal(gopclntab__func(t, i, &f), 0);
			assert_string_equal(f.name, funcs[i].name);
			assert_int_equal(f.end - f.entry, funcs[i].size);
			assert_int_equal(gopclntab__pcsp(t, &f, on_run, &c), 0);
		}
		assert_int_equal(c.covered, text_size());
		for (uint64_t pc = TEXT; pc < end; pc++) {
			struct gopclntab_frame fr;
			size_t fi = 0;
			int32_t want = expected_delta(pc, &fi);

			assert_int_equal(c.delta[pc - TEXT], want);
			assert_int_equal(gopclntab__lookup(t, pc, &fr), 0);
			assert_string_equal(fr.name, funcs[fi].name);
		}
		assert_int_equal(gopclntab__lookup(t, end, &(struct gopclntab_frame){0}), -ENOENT);
		gopclntab__free(t);

		/* The same answers as the rules the unwinder's table holds. */
		assert_int_equal(go_deltas__build(b->b, b->n, TEXT, &table, &stats), 0);
		assert_int_equal(stats.bad_funcs, 0);
		for (uint64_t pc = TEXT; pc < end; pc++) {
			const struct stack_delta *d = stack_delta_table__find(&table, pc);
			size_t fi = 0;
			int32_t want = expected_delta(pc, &fi);

			assert_non_null(d);
			if (!strcmp(funcs[fi].name, "runtime.goexit")) {
				assert_int_equal(d->rule.cmd, OP_RULE_STOP);
				continue;
			}
			assert_int_equal(d->rule.cmd, OP_RULE_CFA);
			assert_int_equal(d->rule.cfa_base, OP_CFA_RSP);
			assert_int_equal(d->rule.cfa_offset, want + 8);
			assert_int_equal(d->rule.fp_offset, want >= 8 ? -16 : 0);
		}
		assert_int_equal(stack_delta_table__find(&table, end)->rule.cmd, OP_RULE_INVALID);
		stack_delta_table__free(&table);
		/* Found by its magic in a file's bytes (no section headers). */
		assert_int_equal(go_deltas__find_pclntab(b->b, b->n, TEXT, end), 0);
		printf("    %s (magic 0x%08x): %zu bytes, every pc's SP delta and rule\n", l->name,
		       l->magic, b->n);
	}
	free(b);
}

/* A 1.16 table read as 1.18's and the other way round: never the same answers. */
static void test_layouts_told_apart(void **state)
{
	struct buf *b = malloc(sizeof(*b));

	(void)state;
	assert_non_null(b);
	for (size_t li = 0; li < 2; li++) {
		const struct layout *l = &layouts[li], *other = &layouts[1 - li];
		struct gopclntab *t = NULL;
		struct gopclntab_func f;
		bool same = true;

		build(l, b);
		set_u32(b, 0, other->magic);
		if (gopclntab__open(b->b, b->n, TEXT, &t) == 0) {
			for (size_t i = 0; same && i < N_FUNCS; i++)
				same = !gopclntab__func(t, i, &f) && f.name &&
				       !strcmp(f.name, funcs[i].name);
			gopclntab__free(t);
		} else {
			same = false;
		}
		assert_false(same);
	}
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layouts),
	    cmocka_unit_test(test_layouts_told_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
