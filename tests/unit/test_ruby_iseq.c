// SPDX-License-Identifier: Apache-2.0
/*
 * What names a Ruby frame (src/interp/ruby/ruby_iseq.c), read from memory
 * built here by hand with the real 3.1 layout: the succinct line table
 * decoded back to the positions it was built from (small iseqs: its
 * immediate part only; large ones: 512-bit blocks too), an iseq's label,
 * path (String or [path, realpath]) and lines, names qualified as Ruby 3.4
 * writes them from the frame's method entry (Shop#leaf, Shop.open, block in
 * Shop#pick, Integer#times for a C function), and hostile objects (wrong
 * types, huge tables, unreadable pointers) refused or cut, never followed
 * past their bounds.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "interp/ruby/ruby_iseq.h"
#include "interp/ruby/ruby_layout.h"
#include "omniprof/interp/ruby_abi.h"

#define MEM_BASE 0x7f0000000000ull
#define MEM_SIZE 0x40000

static uint8_t mem[MEM_SIZE];
static uint64_t next_free;
static const struct ruby_layout *l;
static const struct ruby_roots no_roots; /* no global_symbols: names not qualified */

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < MEM_BASE || addr - MEM_BASE > MEM_SIZE || len > MEM_SIZE - (addr - MEM_BASE))
		return -14;
	memcpy(buf, &mem[addr - MEM_BASE], len);
	return 0;
}

static const struct remote_memory rmem = {mem_read, NULL};

static uint64_t alloc(size_t n)
{
	uint64_t a = next_free;

	next_free += (n + 15) & ~15ull;
	assert_true(next_free <= MEM_BASE + MEM_SIZE);
	return a;
}

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(&mem[addr - MEM_BASE], &v, sizeof(v));
}

static void put32(uint64_t addr, uint32_t v)
{
	memcpy(&mem[addr - MEM_BASE], &v, sizeof(v));
}

/* A String: embedded when it fits (23 bytes), else on the heap. The embedded length is in
 * the flags up to 3.1, a field from 3.2. */
static uint64_t str(const char *s)
{
	uint64_t o = alloc(48), len = strlen(s);

	if (len <= 23) {
		if (l->str_embed_len) {
			put64(o, RUBY_T_STRING);
			put64(o + l->str_embed_len, len);
		} else {
			put64(o, RUBY_T_STRING | (len << l->str_embed_len_shift));
		}
		memcpy(&mem[o + l->str_embed_ary - MEM_BASE], s, len);
	} else {
		uint64_t p = alloc(len);

		put64(o, RUBY_T_STRING | l->str_noembed);
		put64(o + l->str_heap_len, len);
		put64(o + l->str_heap_ptr, p);
		memcpy(&mem[p - MEM_BASE], s, len);
	}
	return o;
}

/* A heap Array of n VALUEs. */
static uint64_t ary(const uint64_t *v, size_t n)
{
	uint64_t o = alloc(40), p = alloc(n * 8 + 8);

	put64(o, RUBY_T_ARRAY);
	put64(o + l->ary_heap_len, n);
	put64(o + l->ary_heap_ptr, p);
	for (size_t i = 0; i < n; i++)
		put64(p + i * 8, v[i]);
	return o;
}

/* The succinct table of positions pos[0 .. n) of an iseq of size VALUEs, written the
 * way iseq.c lays it out: ranks (positions <= x) below 54, 512-bit blocks above. */
static size_t encode_succ(uint32_t size, const uint32_t *pos, size_t n, uint8_t *out)
{
	size_t imm = (size < 54 ? size + 8 : 54) / 9;
	size_t blocks = size < 54 ? 0 : (size - 54 + 511) / 512;
	size_t len = imm * 8 + blocks * 80;

	memset(out, 0, len);
	for (size_t j = 0; j < imm; j++) {
		uint64_t w = 0;

		for (unsigned int i = 0; i < 9; i++) {
			uint64_t r = 0;

			for (size_t k = 0; k < n; k++)
				r += pos[k] <= j * 9 + i;
			w |= r << (7 * i);
		}
		memcpy(out + j * 8, &w, 8);
	}
	for (size_t k = 0; k < n; k++) {
		uint64_t x, word;
		uint8_t *b;

		if (pos[k] < 54)
			continue;
		x = pos[k] - 54;
		b = out + imm * 8 + (x / 512) * 80 + 16 + ((x % 512) / 64) * 8;
		memcpy(&word, b, 8);
		word |= 1ull << (x % 64);
		memcpy(b, &word, 8);
	}
	return len;
}

static int setup(void **state)
{
	(void)state;
	memset(mem, 0, sizeof(mem));
	next_free = MEM_BASE + 0x100;
	l = ruby_layout__find(3, 1);
	assert_non_null(l);
	return 0;
}

static void check_succ(uint32_t size, const uint32_t *pos, size_t n)
{
	uint8_t table[4096];
	uint32_t out[64];
	size_t len = encode_succ(size, pos, n, table);

	assert_int_equal(len, ruby_iseq__succ_bytes(size));
	assert_int_equal(ruby_iseq__succ_positions(table, len, size, out, 64), n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(out[i], pos[i]);
	/* A table shorter than the iseq needs gives nothing. */
	assert_int_equal(ruby_iseq__succ_positions(table, len - 1, size, out, 64), 0);
}

static void test_succ_table(void **state)
{
	const uint32_t small[] = {0, 3, 9, 20, 39};
	const uint32_t large[] = {0, 5, 53, 54, 100, 565, 566, 1100, 1199};

	(void)state;
	check_succ(40, small, 5);
	check_succ(1200, large, 9);
}

/* An iseq: label, path, first line, `lines` entries at `pos` (succinct table). */
static uint64_t build_iseq(uint32_t type, const char *label, uint64_t pathobj, int first,
			   const int32_t *lines, const uint32_t *pos, size_t n, uint32_t size)
{
	uint64_t iseq = alloc(40), body = alloc(l->body_read), info = alloc(n * 12 + 8);
	uint64_t succ = alloc(4096);
	uint8_t table[4096];
	size_t len = encode_succ(size, pos, n, table);

	memcpy(&mem[succ - MEM_BASE], table, len);
	put64(iseq + l->off.iseq_body, body);
	put32(body, type);
	put32(body + l->body_iseq_size, size);
	put64(body + l->body_label, str(label));
	put64(body + l->body_pathobj, pathobj);
	put64(body + l->body_first_lineno, ((uint64_t)first << 1) | 1);
	put64(body + l->body_insns_info, info);
	put32(body + l->body_insns_size, (uint32_t)n);
	put64(body + l->body_succ_table, succ);
	for (size_t i = 0; i < n; i++)
		put32(info + i * 12, (uint32_t)lines[i]);
	return iseq;
}

static void test_iseq_lines(void **state)
{
	const int32_t lines[] = {41, 43, 45};
	const uint32_t pos[] = {0, 4, 10};
	uint64_t paths[2];
	uint64_t iseq;
	struct ruby_iseq *is;

	(void)state;
	paths[0] = str("/srv/app/lib/some/long/path/shop.rb");
	paths[1] = str("/srv/app/lib/some/long/path/shop.rb");
	iseq = build_iseq(RUBY_ISEQ_METHOD, "leaf", ary(paths, 2), 40, lines, pos, 3, 20);
	assert_int_equal(ruby_iseq__read(&rmem, l, &no_roots, iseq, 0, &is), 0);
	assert_string_equal(is->name, "leaf"); /* no global_symbols: not qualified */
	assert_string_equal(is->path, "/srv/app/lib/some/long/path/shop.rb");
	assert_int_equal(is->first_line, 40);
	assert_int_equal(is->n_lines, 3);
	/* aux points past the instruction: the one before it is looked up. */
	assert_int_equal(ruby_iseq__line(is, 1), 41);
	assert_int_equal(ruby_iseq__line(is, 4), 41);
	assert_int_equal(ruby_iseq__line(is, 5), 43);
	assert_int_equal(ruby_iseq__line(is, 11), 45);
	assert_int_equal(ruby_iseq__line(is, 19), 45);
	assert_int_equal(ruby_iseq__line(is, OP_RB_NO_POS), 40);
	ruby_iseq__free(is);
}

/* global_symbols with IDs of serial 20.. named names[]; returns its address. */
static uint64_t build_symbols(const char *const *names, size_t n)
{
	uint64_t chunk_v[1024] = {0}, ids, chunk, sym = alloc(32);

	for (size_t i = 0; i < n; i++)
		chunk_v[(20 + i) * 2] = str(names[i]);
	chunk = ary(chunk_v, 1024);
	ids = ary(&chunk, 1);
	put32(sym, 20 + (uint32_t)n);
	put64(sym + l->symbols_ids, ids);
	return sym;
}

static uint64_t id_of(size_t i)
{
	return (uint64_t)(20 + i) << 4 | 1; /* serial << 4, a scope in the low bits */
}

/* A class (or, singleton, its singleton class) with one instance variable. */
static uint64_t build_class(uint64_t flags, uint64_t ivar_id, uint64_t value)
{
	uint64_t klass = alloc(40), ext = alloc(64), tbl = alloc(64), ent = alloc(24 * 2);

	put64(klass, flags);
	put64(klass + l->class_ext, ext);
	put64(ext + l->ext_iv_tbl, tbl);
	put64(tbl + l->st_entries_start, 1);
	put64(tbl + l->st_entries_bound, 2);
	put64(tbl + l->st_entries, ent);
	put64(ent + 24 + 8, ivar_id);
	put64(ent + 24 + 16, value);
	return klass;
}

static uint64_t build_me(uint64_t owner, uint64_t def)
{
	uint64_t me = alloc(48);

	put64(me, RUBY_T_IMEMO | (uint64_t)RUBY_IMEMO_MENT << 12);
	put64(me + l->me_owner, owner);
	put64(me + l->off.me_def, def);
	return me;
}

static void test_qualified_names(void **state)
{
	static const char *const names[] = {"__classpath__", "__attached__", "times"};
	const int32_t lines[] = {7};
	const uint32_t pos[] = {0};
	uint64_t sym, shop, single, m_leaf, m_open, def = alloc(48), m_times, iseq, svar, svar2,
						    cref;
	struct ruby_roots roots = {0};
	struct ruby_iseq *is;

	(void)state;
	sym = build_symbols(names, 3);
	roots.global_symbols = sym;
	shop = build_class(RUBY_T_CLASS, id_of(0), str("Shop"));
	single = build_class(RUBY_T_CLASS | l->fl_singleton, id_of(1), shop);
	m_leaf = build_me(shop, 0);
	m_open = build_me(single, 0);
	put64(def + l->def_original_id, id_of(2));
	m_times = build_me(shop, def);

	iseq = build_iseq(RUBY_ISEQ_METHOD, "leaf", str("a.rb"), 7, lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, m_leaf, &is), 0);
	assert_string_equal(is->name, "Shop#leaf");
	ruby_iseq__free(is);
	iseq = build_iseq(RUBY_ISEQ_METHOD, "open", str("a.rb"), 7, lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, m_open, &is), 0);
	assert_string_equal(is->name, "Shop.open");
	ruby_iseq__free(is);
	iseq = build_iseq(RUBY_ISEQ_BLOCK, "block (2 levels) in pick", str("a.rb"), 7, lines, pos,
			  1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, m_leaf, &is), 0);
	assert_string_equal(is->name, "block (2 levels) in Shop#pick");
	ruby_iseq__free(is);
	/* A method's iseq met with a cref (a freed top-level iseq's address reused): refused. */
	cref = alloc(40);
	put64(cref, RUBY_T_IMEMO | (uint64_t)RUBY_IMEMO_CREF << 12);
	iseq = build_iseq(RUBY_ISEQ_METHOD, "step", str("a.rb"), 7, lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, cref, &is), -ESTALE);
	iseq = build_iseq(RUBY_ISEQ_BLOCK, "block in step", str("a.rb"), 7, lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, cref, &is), -ESTALE);
	/* ... a block of <main> (or a class body) keeps its label. */
	iseq = build_iseq(RUBY_ISEQ_BLOCK, "block in <main>", str("a.rb"), 7, lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, cref, &is), 0);
	assert_string_equal(is->name, "block in <main>");
	ruby_iseq__free(is);
	/* Rescue and ensure clauses (seen live: rubygems' "rescue in require"). */
	iseq = build_iseq(RUBY_ISEQ_RESCUE, "rescue in pick", str("a.rb"), 7, lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, m_leaf, &is), 0);
	assert_string_equal(is->name, "rescue in Shop#pick");
	ruby_iseq__free(is);
	iseq = build_iseq(RUBY_ISEQ_RESCUE, "rescue in block (2 levels) in pick", str("a.rb"), 7,
			  lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, m_leaf, &is), 0);
	assert_string_equal(is->name, "rescue in block (2 levels) in Shop#pick");
	ruby_iseq__free(is);
	iseq = build_iseq(RUBY_ISEQ_ENSURE, "ensure in open", str("a.rb"), 7, lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, m_open, &is), 0);
	assert_string_equal(is->name, "ensure in Shop.open");
	ruby_iseq__free(is);
	/* A method that matched a regexp: ep[-2] is an imemo_svar wrapping its entry. */
	svar = alloc(40);
	put64(svar, RUBY_T_IMEMO | (uint64_t)RUBY_IMEMO_SVAR << 12);
	put64(svar + RUBY_SVAR_CREF_OR_ME, m_leaf);
	iseq = build_iseq(RUBY_ISEQ_METHOD, "gem", str("a.rb"), 7, lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, svar, &is), 0);
	assert_string_equal(is->name, "Shop#gem");
	ruby_iseq__free(is);
	/* An svar wrapping an svar (never made by the VM): the plain label. */
	svar2 = alloc(40);
	put64(svar2, RUBY_T_IMEMO | (uint64_t)RUBY_IMEMO_SVAR << 12);
	put64(svar2 + RUBY_SVAR_CREF_OR_ME, svar);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, svar2, &is), 0);
	assert_string_equal(is->name, "gem");
	ruby_iseq__free(is);
	/*
	 * The entry was freed after the sample and another method's put there
	 * (its definition runs another iseq, or is a C function's): the label
	 * alone, never that method's owner. Its own definition: qualified.
	 */
	{
		uint64_t other_def = alloc(16), own_def = alloc(16), c_def = alloc(16), m;

		put64(other_def, RUBY_METHOD_TYPE_ISEQ);
		put64(other_def + RUBY_DEF_ISEQPTR, iseq + 8);
		put64(own_def, RUBY_METHOD_TYPE_ISEQ);
		put64(own_def + RUBY_DEF_ISEQPTR, iseq);
		put64(c_def, RUBY_METHOD_TYPE_CFUNC);
		m = build_me(single, other_def);
		assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, m, &is), 0);
		assert_string_equal(is->name, "gem");
		ruby_iseq__free(is);
		m = build_me(single, c_def);
		assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, m, &is), 0);
		assert_string_equal(is->name, "gem");
		ruby_iseq__free(is);
		m = build_me(single, own_def);
		assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, m, &is), 0);
		assert_string_equal(is->name, "Shop.gem");
		ruby_iseq__free(is);
	}
	/* <main>: its ep[-2] is a cref, no method entry. */
	iseq = build_iseq(0, "<main>", str("a.rb"), 1, lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, str("not a method entry"), &is),
			 0);
	assert_string_equal(is->name, "<main>");
	ruby_iseq__free(is);
	/* A C function: named from its definition's ID and its owner. */
	assert_int_equal(ruby_iseq__read_cfunc(&rmem, l, &roots, m_times, def, &is), 0);
	assert_string_equal(is->name, "Shop#times");
	assert_string_equal(is->path, "");
	ruby_iseq__free(is);
	/* Another definition at that address now: the entry was reused. */
	assert_int_equal(ruby_iseq__read_cfunc(&rmem, l, &roots, m_times, def + 8, &is), -ESTALE);
	/* Without global_symbols: a placeholder, never a wrong name. */
	assert_int_equal(ruby_iseq__read_cfunc(&rmem, l, &no_roots, m_times, def, &is), 0);
	assert_string_equal(is->name, "[C function]");
	ruby_iseq__free(is);
}

/* 3.2's shape tree: shape id -> {edge_name, next_iv_index, type, parent_id}. */
static void put_shape(uint64_t list, uint32_t id, uint64_t edge, uint32_t index, uint8_t type,
		      uint32_t parent)
{
	uint64_t s = list + (uint64_t)id * l->shape_size;

	put64(s + l->shape_edge_name, edge);
	put32(s + l->shape_next_iv_index, index);
	mem[s + l->shape_type - MEM_BASE] = type;
	put32(s + l->shape_parent_id, parent);
}

/* A 3.2 class of shape `shape` whose iv_ptr holds ivars[0 .. n). */
static uint64_t build_class32(uint64_t flags, uint32_t shape, const uint64_t *ivars, size_t n)
{
	uint64_t klass = alloc(l->class_ext + 160), iv = alloc(n * 8 + 8);

	put64(klass, flags | (uint64_t)shape << l->shape_id_shift);
	put64(klass + l->class_ext + l->ext_iv_ptr, iv);
	for (size_t i = 0; i < n; i++)
		put64(iv + i * 8, ivars[i]);
	return klass;
}

/*
 * Ruby 3.2 keeps a class's name as an instance variable found by its
 * object shape: Shop's shape is an ivar edge (@x) over a capacity change
 * over @registry over __classpath__ over the root, the walk finds
 * __classpath__ at index 0 past the others. Shop's singleton class has
 * __attached__. Hostile trees (a cycle, an id past next_shape_id) and a VM
 * not found leave the plain label, never a wrong class.
 */
static void test_shape_names(void **state)
{
	static const char *const names[] = {"__classpath__", "__attached__", "@registry", "@x"};
	const int32_t lines[] = {7};
	const uint32_t pos[] = {0};
	uint64_t vm_ptr = alloc(8), vm = alloc(512), list, shop, single, iseq, iv[3];
	struct ruby_roots roots = {0};
	struct ruby_iseq *is;

	(void)state;
	l = ruby_layout__find(3, 2);
	assert_non_null(l);
	assert_int_not_equal(l->vm_shape_list, 0);
	list = alloc(16 * l->shape_size);
	roots.global_symbols = build_symbols(names, 4);
	roots.current_vm_ptr = vm_ptr;
	put64(vm_ptr, vm);
	put64(vm + l->vm_shape_list, list);
	put32(vm + l->vm_next_shape_id, 8);
	put_shape(list, 0, 0, 0, 0, RUBY_SHAPE_INVALID);
	put_shape(list, 1, id_of(0), 1, RUBY_SHAPE_IVAR, 0);
	put_shape(list, 2, id_of(2), 2, RUBY_SHAPE_IVAR, 1);
	put_shape(list, 3, 0x1234, 2, 3 /* SHAPE_CAPACITY_CHANGE */, 2);
	put_shape(list, 4, id_of(3), 3, RUBY_SHAPE_IVAR, 3);
	put_shape(list, 5, id_of(1), 1, RUBY_SHAPE_IVAR, 0);
	put_shape(list, 6, id_of(2), 1, RUBY_SHAPE_IVAR, 6); /* its own parent */
	put_shape(list, 7, id_of(0), 1, RUBY_SHAPE_IVAR, 9); /* a parent past next_shape_id */
	iv[0] = str("Shop");
	iv[1] = str("not the name");
	iv[2] = str("nor this");
	shop = build_class32(RUBY_T_CLASS, 4, iv, 3);
	single = build_class32(RUBY_T_CLASS | l->fl_singleton, 5, &shop, 1);

	iseq = build_iseq(RUBY_ISEQ_METHOD, "serve", str("a.rb"), 7, lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, build_me(shop, 0), &is), 0);
	assert_string_equal(is->name, "Shop#serve");
	ruby_iseq__free(is);
	iseq = build_iseq(RUBY_ISEQ_METHOD, "open", str("a.rb"), 7, lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, build_me(single, 0), &is), 0);
	assert_string_equal(is->name, "Shop.open");
	ruby_iseq__free(is);
	iseq = build_iseq(RUBY_ISEQ_BLOCK, "block in pick", str("a.rb"), 7, lines, pos, 1, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &roots, iseq, build_me(shop, 0), &is), 0);
	assert_string_equal(is->name, "block in Shop#pick");
	ruby_iseq__free(is);

	/* Hostile or missing: the label as it is. */
	for (int k = 0; k < 4; k++) {
		struct ruby_roots r = roots;
		uint64_t klass = shop;

		if (k == 0)
			klass =
			    build_class32(RUBY_T_CLASS, 6, iv, 3); /* a cycle without the name */
		else if (k == 1)
			klass = build_class32(RUBY_T_CLASS, 7, iv, 3); /* parent out of range */
		else if (k == 2)
			klass = build_class32(RUBY_T_CLASS, 8, iv, 3); /* id == next_shape_id */
		else
			r.current_vm_ptr = 0; /* ruby_current_vm_ptr not found */
		iseq = build_iseq(RUBY_ISEQ_METHOD, "serve", str("a.rb"), 7, lines, pos, 1, 4);
		assert_int_equal(ruby_iseq__read(&rmem, l, &r, iseq, build_me(klass, 0), &is), 0);
		if (k == 1)
			assert_string_equal(is->name,
					    "Shop#serve"); /* found before the bad parent */
		else
			assert_string_equal(is->name, "serve");
		ruby_iseq__free(is);
	}
}

static void test_hostile(void **state)
{
	const int32_t lines[] = {1, 2};
	const uint32_t pos[] = {0, 2};
	uint64_t iseq, body, long_str;
	struct ruby_iseq *is;
	char big[2000];

	(void)state;
	/* A label that is no String: refused. */
	iseq = build_iseq(RUBY_ISEQ_METHOD, "x", str("a.rb"), 1, lines, pos, 2, 4);
	body = iseq + 48; /* build_iseq's body follows the iseq */
	assert_int_equal(*(uint64_t *)&mem[iseq + l->off.iseq_body - MEM_BASE], body);
	put64(body + l->body_label, 0x15); /* a Fixnum */
	assert_int_not_equal(ruby_iseq__read(&rmem, l, &no_roots, iseq, 0, &is), 0);
	/* A line table claiming more entries than any iseq has: the name, no lines. */
	iseq = build_iseq(RUBY_ISEQ_METHOD, "x", str("a.rb"), 3, lines, pos, 2, 4);
	body = *(uint64_t *)&mem[iseq + l->off.iseq_body - MEM_BASE];
	put32(body + l->body_insns_size, 0x7fffffff);
	assert_int_equal(ruby_iseq__read(&rmem, l, &no_roots, iseq, 0, &is), 0);
	assert_string_equal(is->name, "x");
	assert_int_equal(is->n_lines, 0);
	assert_int_equal(ruby_iseq__line(is, 3), 3);
	ruby_iseq__free(is);
	/* Positions that do not increase (a corrupt table): no lines. */
	iseq = build_iseq(RUBY_ISEQ_METHOD, "x", str("a.rb"), 3, lines, pos, 2, 4);
	body = *(uint64_t *)&mem[iseq + l->off.iseq_body - MEM_BASE];
	put32(body + l->body_insns_size, 3); /* 3 entries, the table has 2 positions */
	assert_int_equal(ruby_iseq__read(&rmem, l, &no_roots, iseq, 0, &is), 0);
	assert_int_equal(is->n_lines, 0);
	ruby_iseq__free(is);
	/* A name longer than RUBY_STR_MAX_CHARS is cut. */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	long_str = str(big);
	iseq = build_iseq(RUBY_ISEQ_METHOD, "x", long_str, 3, lines, pos, 2, 4);
	assert_int_equal(ruby_iseq__read(&rmem, l, &no_roots, iseq, 0, &is), 0);
	assert_int_equal(strlen(is->path), RUBY_STR_MAX_CHARS);
	ruby_iseq__free(is);
	/* An unreadable iseq. */
	assert_int_not_equal(ruby_iseq__read(&rmem, l, &no_roots, 0xdead0000ull, 0, &is), 0);
	assert_null(is);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_succ_table, setup),
	    cmocka_unit_test_setup(test_iseq_lines, setup),
	    cmocka_unit_test_setup(test_qualified_names, setup),
	    cmocka_unit_test_setup(test_shape_names, setup),
	    cmocka_unit_test_setup(test_hostile, setup),
	};

	return cmocka_run_group_tests_name("ruby_iseq", tests, NULL, NULL);
}
