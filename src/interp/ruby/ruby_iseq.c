// SPDX-License-Identifier: Apache-2.0
#include "interp/ruby/ruby_iseq.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/ruby/ruby_layout.h"
#include "omniprof/interp/ruby_abi.h"

#define BODY_MAX_READ 512
#define OBJ_HEADER    48 /* flags, klass and the largest inline part read below */

/*
 * The succinct line table (iseq.c, VM_INSN_INFO_TABLE_IMPL 2): positions
 * below SUCC_IMM are kept as ranks, 9 per u64, 7 bits each (the rank up to
 * and including that position); the rest in blocks of 512 bits (a u32 rank,
 * a u64 of small ranks, 8 u64 of bits: 80 bytes with padding), bit i of a
 * block set when position SUCC_IMM + block * 512 + i starts an entry.
 */
#define SUCC_IMM	 54
#define SUCC_IMM_WORDS	 (SUCC_IMM / 9)
#define SUCC_BLOCK_BYTES 80
#define SUCC_BITS_OFF	 16

static int read_mem(const struct remote_memory *mem, uint64_t addr, void *buf, size_t len)
{
	if (!addr)
		return -EFAULT;
	if (!len)
		return 0;
	return remote_memory__read(mem, addr, buf, len);
}

static uint64_t get_u64(const uint8_t *buf, uint16_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

static uint32_t get_u32(const uint8_t *buf, uint16_t off)
{
	uint32_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* A Ruby String's bytes, cut at RUBY_STR_MAX_CHARS, NUL-terminated: *out (caller frees). */
static int read_string(const struct remote_memory *mem, const struct ruby_layout *l, uint64_t str,
		       char **out)
{
	uint8_t hdr[OBJ_HEADER];
	uint64_t flags, len, ptr;
	char *s;
	int err;

	*out = NULL;
	if (!str || (str & 7))
		return -EINVAL; /* a special constant (nil, Fixnum...) is no String */
	err = read_mem(mem, str, hdr, sizeof(hdr));
	if (err)
		return err;
	flags = get_u64(hdr, 0);
	if ((flags & RUBY_T_MASK) != RUBY_T_STRING)
		return -EINVAL;
	if (flags & l->str_noembed) {
		len = get_u64(hdr, l->str_heap_len);
		ptr = get_u64(hdr, l->str_heap_ptr);
	} else if (l->str_embed_len) {
		len = get_u64(hdr, l->str_embed_len);
		ptr = str + l->str_embed_ary;
	} else {
		len = (flags & l->str_embed_len_mask) >> l->str_embed_len_shift;
		ptr = str + l->str_embed_ary;
	}
	if (len > RUBY_STR_MAX_CHARS)
		len = RUBY_STR_MAX_CHARS;
	s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	err = read_mem(mem, ptr, s, len);
	if (err) {
		free(s);
		return err;
	}
	s[len] = '\0';
	/* A NUL inside ends the name: the exporters take C strings. */
	*out = s;
	return 0;
}

/* Element idx of a Ruby Array, in *v. */
static int array_elem(const struct remote_memory *mem, const struct ruby_layout *l, uint64_t ary,
		      uint64_t idx, uint64_t *v)
{
	uint8_t hdr[OBJ_HEADER];
	uint64_t flags, len;
	int err;

	if (!ary || (ary & 7))
		return -EINVAL;
	err = read_mem(mem, ary, hdr, sizeof(hdr));
	if (err)
		return err;
	flags = get_u64(hdr, 0);
	if ((flags & RUBY_T_MASK) != RUBY_T_ARRAY)
		return -EINVAL;
	if (flags & l->ary_embed_flag) {
		len = (flags & l->ary_embed_len_mask) >> l->ary_embed_len_shift;
		if (idx >= len || l->ary_embed_ary + (idx + 1) * 8 > sizeof(hdr))
			return -EINVAL;
		*v = get_u64(hdr, (uint16_t)(l->ary_embed_ary + idx * 8));
		return 0;
	}
	len = get_u64(hdr, l->ary_heap_len);
	if (idx >= len)
		return -EINVAL;
	return read_mem(mem, get_u64(hdr, l->ary_heap_ptr) + idx * 8, v, sizeof(*v));
}

/* pathobj: a String, or an Array whose first element is the path String. */
static int read_path(const struct remote_memory *mem, const struct ruby_layout *l, uint64_t pathobj,
		     char **out)
{
	uint64_t flags, first;

	*out = NULL;
	if (!pathobj || (pathobj & 7) || read_mem(mem, pathobj, &flags, sizeof(flags)))
		return -EINVAL;
	if ((flags & RUBY_T_MASK) == RUBY_T_ARRAY) {
		if (array_elem(mem, l, pathobj, 0, &first))
			return -EINVAL;
		return read_string(mem, l, first, out);
	}
	return read_string(mem, l, pathobj, out);
}

/* ---- names: IDs, classes, method entries -------------------------------------- */

#define ID_ENTRY_UNIT 512 /* IDs per chunk of global_symbols.ids, 2 VALUEs each */
#define IV_MAX	      64  /* instance variables of a class looked at */
#define SHAPE_STEPS   256 /* shapes looked at for one instance variable (3.2) */

/* The name of ID id, from global_symbols at symbols: *out (caller frees). */
static int id_name(const struct remote_memory *mem, const struct ruby_layout *l, uint64_t symbols,
		   uint64_t id, char **out)
{
	uint64_t serial = id > l->id_last_op ? id >> 4 : id, ids, chunk, str;
	uint32_t last_id;
	int err;

	*out = NULL;
	if (!symbols || !serial)
		return -ENOENT;
	err = read_mem(mem, symbols, &last_id, sizeof(last_id));
	if (err)
		return err;
	if (serial > last_id)
		return -ENOENT;
	err = read_mem(mem, symbols + l->symbols_ids, &ids, sizeof(ids));
	if (!err)
		err = array_elem(mem, l, ids, serial / ID_ENTRY_UNIT, &chunk);
	if (!err)
		err = array_elem(mem, l, chunk, (serial % ID_ENTRY_UNIT) * 2, &str);
	if (err)
		return err;
	return read_string(mem, l, str, out);
}

/* Where klass's rb_classext_t is: inline after the RClass (3.2+) or behind RClass.ptr. */
static int class_ext(const struct remote_memory *mem, const struct ruby_layout *l, uint64_t klass,
		     uint64_t *ext)
{
	if (l->class_ext_inline) {
		*ext = klass + l->class_ext;
		return 0;
	}
	return read_mem(mem, klass + l->class_ext, ext, sizeof(*ext));
}

/*
 * 3.2: class klass's instance variable called name, through its object
 * shape (see struct ruby_layout): its shape and each parent up to the root,
 * an ivar edge named name gives the index in iv_ptr. At most SHAPE_STEPS
 * shapes are looked at; every shape id is checked against next_shape_id.
 */
static int class_ivar_shape(const struct remote_memory *mem, const struct ruby_layout *l,
			    const struct ruby_roots *roots, uint64_t klass, const char *name,
			    uint64_t *v)
{
	uint8_t shape[64];
	uint64_t flags, vm, list, ext, iv_ptr;
	uint32_t next_id, id;
	int err;

	if (!roots->current_vm_ptr || l->shape_size > sizeof(shape) ||
	    (size_t)l->shape_parent_id + 4 > l->shape_size ||
	    (size_t)l->shape_edge_name + 8 > l->shape_size ||
	    (size_t)l->shape_next_iv_index + 4 > l->shape_size || l->shape_type >= l->shape_size)
		return -ENOTSUP;
	err = read_mem(mem, klass, &flags, sizeof(flags));
	if (!err)
		err = read_mem(mem, roots->current_vm_ptr, &vm, sizeof(vm));
	if (!err)
		err = read_mem(mem, vm + l->vm_shape_list, &list, sizeof(list));
	if (!err)
		err = read_mem(mem, vm + l->vm_next_shape_id, &next_id, sizeof(next_id));
	if (err)
		return err;
	id = (uint32_t)(flags >> l->shape_id_shift);
	for (int step = 0; step < SHAPE_STEPS; step++) {
		uint32_t parent, index;
		uint64_t edge;
		char *key;
		bool match;

		if (id >= next_id)
			return -EINVAL;
		err = read_mem(mem, list + (uint64_t)id * l->shape_size, shape, l->shape_size);
		if (err)
			return err;
		parent = get_u32(shape, l->shape_parent_id);
		if (parent == RUBY_SHAPE_INVALID)
			return -ENOENT; /* the root: no edge */
		index = get_u32(shape, l->shape_next_iv_index);
		edge = get_u64(shape, l->shape_edge_name);
		if (shape[l->shape_type] == RUBY_SHAPE_IVAR && index &&
		    !id_name(mem, l, roots->global_symbols, edge, &key)) {
			match = !strcmp(key, name);
			free(key);
			if (match) {
				err = class_ext(mem, l, klass, &ext);
				if (!err)
					err = read_mem(mem, ext + l->ext_iv_ptr, &iv_ptr,
						       sizeof(iv_ptr));
				if (!err)
					err = read_mem(mem, iv_ptr + (uint64_t)(index - 1) * 8, v,
						       sizeof(*v));
				return err;
			}
		}
		id = parent;
	}
	return -E2BIG;
}

/* Class klass's instance variable called name (from its iv_tbl or its shape), in *v. */
static int class_ivar(const struct remote_memory *mem, const struct ruby_layout *l,
		      const struct ruby_roots *roots, uint64_t klass, const char *name, uint64_t *v)
{
	uint8_t tbl[64], entries[IV_MAX * 24];
	uint64_t ext, iv_tbl, start, bound, n;
	int err;

	if (l->vm_shape_list)
		return class_ivar_shape(mem, l, roots, klass, name, v);
	if (!l->ext_iv_tbl)
		return -ENOTSUP;
	if (l->st_entry_size != 24 || (size_t)l->st_entries + 8 > sizeof(tbl))
		return -EINVAL;
	err = class_ext(mem, l, klass, &ext);
	if (!err)
		err = read_mem(mem, ext + l->ext_iv_tbl, &iv_tbl, sizeof(iv_tbl));
	if (!err)
		err = read_mem(mem, iv_tbl, tbl, sizeof(tbl));
	if (err)
		return err;
	start = get_u64(tbl, l->st_entries_start);
	bound = get_u64(tbl, l->st_entries_bound);
	if (bound < start || bound - start > IV_MAX)
		return -E2BIG;
	n = bound - start;
	err = read_mem(mem, get_u64(tbl, l->st_entries) + start * 24, entries, n * 24);
	if (err)
		return err;
	for (uint64_t i = 0; i < n; i++) {
		char *key;
		bool match;

		if (id_name(mem, l, roots->global_symbols, get_u64(entries, (uint16_t)(i * 24 + 8)),
			    &key))
			continue;
		match = !strcmp(key, name);
		free(key);
		if (match) {
			*v = get_u64(entries, (uint16_t)(i * 24 + 16));
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * A class's __classpath__ or a singleton's __attached__: a field of
 * rb_classext_t from 3.3 (ext_field, its offset), an instance variable
 * before.
 */
static int class_attr(const struct remote_memory *mem, const struct ruby_layout *l,
		      const struct ruby_roots *roots, uint64_t klass, uint16_t ext_field,
		      const char *ivar, uint64_t *v)
{
	uint64_t ext;
	int err;

	if (!ext_field)
		return class_ivar(mem, l, roots, klass, ivar, v);
	err = class_ext(mem, l, klass, &ext);
	if (!err)
		err = read_mem(mem, ext + ext_field, v, sizeof(*v));
	return err ? err : (*v ? 0 : -ENOENT);
}

/*
 * The name of class or module klass ("Shop", "Net::HTTP"), *singleton when
 * klass is the singleton class of a named class or module (Shop's, for
 * Shop.open): then the name is that class's.
 */
static int class_name(const struct remote_memory *mem, const struct ruby_layout *l,
		      const struct ruby_roots *roots, uint64_t klass, char **out, bool *singleton)
{
	uint64_t flags, v;
	int err;

	*out = NULL;
	*singleton = false;
	for (int depth = 0; depth < 2; depth++) {
		if (!klass || (klass & 7) || read_mem(mem, klass, &flags, sizeof(flags)))
			return -EINVAL;
		if ((flags & RUBY_T_MASK) != RUBY_T_CLASS && (flags & RUBY_T_MASK) != RUBY_T_MODULE)
			return -EINVAL;
		if (!(flags & l->fl_singleton))
			break;
		if (depth)
			return -ENOENT; /* a singleton's singleton: not named */
		err = class_attr(mem, l, roots, klass, l->ext_attached, "__attached__", &v);
		if (err)
			return err;
		*singleton = true;
		klass = v;
	}
	err = class_attr(mem, l, roots, klass, l->ext_classpath, "__classpath__", &v);
	if (err)
		return err;
	return read_string(mem, l, v, out);
}

/*
 * me, when it is a method entry: its owner's name (see class_name()). A
 * method that used $~ or $_ (a regexp match, gsub, gets) has its ep[-2]
 * replaced by an imemo_svar holding them, whose cref_or_me is the entry
 * (internal/imemo.h's struct vm_svar, the same 2.7 to 3.4): followed once.
 */
static int owner_name(const struct remote_memory *mem, const struct ruby_layout *l,
		      const struct ruby_roots *roots, uint64_t me, char **out, bool *singleton,
		      uint64_t *ment)
{
	uint64_t flags, owner;
	int err;

	*out = NULL;
	for (int hop = 0;; hop++) {
		if (!me || (me & 7) || read_mem(mem, me, &flags, sizeof(flags)))
			return -EINVAL;
		if ((flags & RUBY_T_MASK) != RUBY_T_IMEMO)
			return -EINVAL;
		if (((flags >> 12) & 0xf) == RUBY_IMEMO_MENT)
			break;
		if (hop || ((flags >> 12) & 0xf) != RUBY_IMEMO_SVAR ||
		    read_mem(mem, me + RUBY_SVAR_CREF_OR_ME, &me, sizeof(me)))
			return -EINVAL;
	}
	if (ment)
		*ment = me;
	err = read_mem(mem, me + l->me_owner, &owner, sizeof(owner));
	if (err)
		return err;
	return class_name(mem, l, roots, owner, out, singleton);
}

/* "Class#method" / "Class.method" (owner's name, separator, name): caller frees. */
static char *qualify(const char *owner, bool singleton, const char *name)
{
	char *out;

	if (asprintf(&out, "%s%s%s", owner, singleton ? "." : "#", name) < 0)
		return NULL;
	return out;
}

/* The last " in " of a label, NULL without one. */
static const char *last_in(const char *label)
{
	const char *in = NULL;

	for (const char *p = strstr(label, " in "); p; p = strstr(p + 1, " in "))
		in = p;
	return in;
}

/*
 * An iseq's name as Ruby 3.4's backtraces write it: "Shop#serve",
 * "Shop.open", "block in Shop#pick", "block (2 levels) in Shop#pick"; the
 * label as it is elsewhere (<main>, <top (required)>, <class:Shop>) or when
 * the method's class has no name. Replaces is->name. A rescue or ensure
 * clause's frame (3.4 names it after its method, as if the same frame) keeps
 * its own: "rescue in Kernel#require", "rescue in block in Shop#pick". The
 * method's name follows the last " in " (a block's label nests its parent's).
 */
static int qualify_iseq(const struct remote_memory *mem, const struct ruby_layout *l,
			const struct ruby_roots *roots, uint64_t iseq, uint64_t me, uint32_t type,
			struct ruby_iseq *is)
{
	const char *in;
	char *owner, *name = NULL;
	bool singleton;
	uint64_t ment = 0, def, w[2];

	if (type != RUBY_ISEQ_METHOD && type != RUBY_ISEQ_BLOCK && type != RUBY_ISEQ_RESCUE &&
	    type != RUBY_ISEQ_ENSURE)
		return 0;
	/*
	 * A method's frame has its entry at ep[-2], never a cref: a cref means
	 * the sampled iseq (a required file's <top (required)>, say) was freed
	 * and another method's took its address before the host read it (seen
	 * live on 2.7.8 at rubygems' start-up: main.rb's "step" under
	 * Kernel#require). Its name would be wrong: refused. So is a block (or
	 * rescue clause) of a method, "block in step": its local ep is the
	 * method's. Those of <main>, <top (required)>, <class:X> have a cref.
	 */
	in = last_in(is->name);
	if ((type == RUBY_ISEQ_METHOD || (in && in[4] != '<')) && me && !(me & 7) &&
	    !read_mem(mem, me, &w[0], sizeof(w[0])) && (w[0] & RUBY_T_MASK) == RUBY_T_IMEMO &&
	    ((w[0] >> 12) & 0xf) == RUBY_IMEMO_CREF)
		return -ESTALE;
	if (owner_name(mem, l, roots, me, &owner, &singleton, &ment))
		return 0;
	/*
	 * The entry is read on the host after the sample: GC may have freed it
	 * (rubygems' start-up drops entries; issue 18) and put another method's
	 * there. A method's own entry runs this iseq; one whose definition runs
	 * another iseq, or is a C function's, is not taken: the label alone.
	 */
	_Static_assert(RUBY_DEF_ISEQPTR == sizeof(w[0]), "w[1] is body.iseq.iseqptr");
	if (type == RUBY_ISEQ_METHOD && !read_mem(mem, ment + l->off.me_def, &def, sizeof(def)) &&
	    !read_mem(mem, def, w, sizeof(w)) &&
	    (((w[0] & 0xf) == RUBY_METHOD_TYPE_ISEQ && w[1] != iseq) ||
	     (w[0] & 0xf) == RUBY_METHOD_TYPE_CFUNC)) {
		free(owner);
		return 0;
	}
	if (type == RUBY_ISEQ_METHOD) {
		name = qualify(owner, singleton, is->name);
	} else if (in) {
		if (asprintf(&name, "%.*s%s%s%s", (int)(in + 4 - is->name), is->name, owner,
			     singleton ? "." : "#", in + 4) < 0)
			name = NULL;
	} else {
		free(owner);
		return 0;
	}
	free(owner);
	if (!name)
		return -ENOMEM;
	free(is->name);
	is->name = name;
	return 0;
}

size_t ruby_iseq__succ_bytes(uint32_t iseq_size)
{
	size_t imm = (iseq_size < SUCC_IMM ? iseq_size + 8 : SUCC_IMM) / 9;
	size_t blocks = iseq_size < SUCC_IMM ? 0 : (iseq_size - SUCC_IMM + 511) / 512;

	return imm * 8 + blocks * SUCC_BLOCK_BYTES;
}

size_t ruby_iseq__succ_positions(const uint8_t *table, size_t len, uint32_t iseq_size,
				 uint32_t *out, size_t max)
{
	size_t imm = (iseq_size < SUCC_IMM ? iseq_size + 8 : SUCC_IMM) / 9;
	size_t blocks = iseq_size < SUCC_IMM ? 0 : (iseq_size - SUCC_IMM + 511) / 512;
	size_t n = 0;
	int prev = 0;

	if (imm > SUCC_IMM_WORDS || len < ruby_iseq__succ_bytes(iseq_size))
		return 0;
	/* A position starts an entry where the rank up to it grows. */
	for (size_t j = 0; j < imm; j++) {
		uint64_t word = get_u64(table, (uint16_t)(j * 8));

		for (unsigned int i = 0; i < 9; i++) {
			int rank = (int)(word >> (7 * i)) & 0x7f;

			if (rank != prev && n < max)
				out[n++] = (uint32_t)(j * 9 + i);
			prev = rank;
		}
	}
	for (size_t k = 0; k < blocks; k++) {
		const uint8_t *b = table + imm * 8 + k * SUCC_BLOCK_BYTES;

		for (unsigned int j = 0; j < 8; j++) {
			uint64_t bits = get_u64(b, (uint16_t)(SUCC_BITS_OFF + j * 8));

			for (unsigned int i = 0; i < 64 && bits; i++)
				if ((bits >> i) & 1 && n < max)
					out[n++] = (uint32_t)(SUCC_IMM + k * 512 + j * 64 + i);
		}
	}
	return n;
}

/* The line table: entries' lines and positions. Leaves is without one when unreadable. */
static int read_lines(const struct remote_memory *mem, const struct ruby_layout *l,
		      const uint8_t *body, struct ruby_iseq *is)
{
	uint32_t size = get_u32(body, l->body_insns_size);
	uint32_t iseq_size = get_u32(body, l->body_iseq_size);
	uint64_t entries = get_u64(body, l->body_insns_info);
	uint64_t positions = get_u64(body, l->body_positions);
	uint64_t succ = get_u64(body, l->body_succ_table);
	uint8_t *raw = NULL, *table = NULL;
	size_t n, tlen;
	int err = -ENOMEM;

	if (!size || !entries)
		return 0;
	if (size > RUBY_LINES_MAX || iseq_size > RUBY_ISEQ_MAX_SIZE || l->insn_info_size < 4)
		return -E2BIG;
	raw = malloc((size_t)size * l->insn_info_size);
	is->pos = calloc(size, sizeof(*is->pos));
	is->lines = calloc(size, sizeof(*is->lines));
	if (!raw || !is->pos || !is->lines)
		goto cleanup;
	err = read_mem(mem, entries, raw, (size_t)size * l->insn_info_size);
	if (err)
		goto cleanup;
	for (uint32_t i = 0; i < size; i++)
		memcpy(&is->lines[i], raw + (size_t)i * l->insn_info_size, sizeof(is->lines[i]));
	if (size == 1) {
		n = 1; /* a single entry covers the whole iseq: no position table */
	} else if (positions) {
		err = read_mem(mem, positions, is->pos, (size_t)size * sizeof(*is->pos));
		if (err)
			goto cleanup;
		n = size;
	} else {
		tlen = ruby_iseq__succ_bytes(iseq_size);
		table = malloc(tlen ? tlen : 1);
		err = -ENOMEM;
		if (!table)
			goto cleanup;
		err = read_mem(mem, succ, table, tlen);
		if (err)
			goto cleanup;
		n = ruby_iseq__succ_positions(table, tlen, iseq_size, is->pos, size);
		err = -EINVAL;
		if (n != size)
			goto cleanup;
	}
	/* Positions must increase: a lookup bisects them. */
	err = -EINVAL;
	for (size_t i = 1; i < n; i++)
		if (is->pos[i] <= is->pos[i - 1])
			goto cleanup;
	is->n_lines = (uint32_t)n;
	is->bytes += n * (sizeof(*is->pos) + sizeof(*is->lines));
	err = 0;
cleanup:
	free(raw);
	free(table);
	if (err) {
		free(is->pos);
		free(is->lines);
		is->pos = NULL;
		is->lines = NULL;
		is->n_lines = 0;
	}
	return err;
}

int ruby_iseq__read(const struct remote_memory *mem, const struct ruby_layout *l,
		    const struct ruby_roots *roots, uint64_t addr, uint64_t me,
		    struct ruby_iseq **out)
{
	uint8_t body[BODY_MAX_READ];
	struct ruby_iseq *is;
	uint64_t body_addr, lineno;
	int err;

	*out = NULL;
	if (l->body_read > sizeof(body) || l->body_read < 8)
		return -EINVAL;
	err = read_mem(mem, addr + l->off.iseq_body, &body_addr, sizeof(body_addr));
	if (!err)
		err = read_mem(mem, body_addr, body, l->body_read);
	if (err)
		return err;
	is = calloc(1, sizeof(*is));
	if (!is)
		return -ENOMEM;
	err = read_string(mem, l, get_u64(body, l->body_label), &is->name);
	if (err)
		goto fail;
	err = qualify_iseq(mem, l, roots, addr, me, get_u32(body, 0), is);
	if (err)
		goto fail;
	if (read_path(mem, l, get_u64(body, l->body_pathobj), &is->path)) {
		is->path = strdup("");
		if (!is->path) {
			err = -ENOMEM;
			goto fail;
		}
	}
	lineno = get_u64(body, l->body_first_lineno);
	is->first_line = (lineno & 1) ? (int64_t)lineno >> 1 : 0; /* a Fixnum */
	is->bytes = sizeof(*is) + strlen(is->name) + strlen(is->path) + 2;
	/* A line table that cannot be read leaves the first line for every frame. */
	err = read_lines(mem, l, body, is);
	if (err == -ENOMEM)
		goto fail;
	*out = is;
	return 0;
fail:
	ruby_iseq__free(is);
	return err;
}

int ruby_iseq__read_cfunc(const struct remote_memory *mem, const struct ruby_layout *l,
			  const struct ruby_roots *roots, uint64_t me, uint64_t def,
			  struct ruby_iseq **out)
{
	struct ruby_iseq *is;
	uint64_t p, id;
	char *owner = NULL, *method = NULL;
	bool singleton = false;
	int err;

	*out = NULL;
	err = read_mem(mem, me + l->off.me_def, &p, sizeof(p));
	if (err)
		return err;
	if (p != def)
		return -ESTALE;
	is = calloc(1, sizeof(*is));
	if (!is)
		return -ENOMEM;
	if (!read_mem(mem, def + l->def_original_id, &id, sizeof(id)))
		id_name(mem, l, roots->global_symbols, id, &method);
	if (method)
		owner_name(mem, l, roots, me, &owner, &singleton, NULL);
	if (method && owner)
		is->name = qualify(owner, singleton, method);
	else
		is->name = strdup(method ? method : "[C function]");
	free(owner);
	free(method);
	is->path = strdup("");
	if (!is->name || !is->path) {
		ruby_iseq__free(is);
		return -ENOMEM;
	}
	is->bytes = sizeof(*is) + strlen(is->name) + 2;
	*out = is;
	return 0;
}

void ruby_iseq__free(struct ruby_iseq *is)
{
	if (!is)
		return;
	free(is->name);
	free(is->path);
	free(is->pos);
	free(is->lines);
	free(is);
}

int64_t ruby_iseq__line(const struct ruby_iseq *is, uint32_t pos)
{
	uint32_t lo = 0, hi;

	if (pos == OP_RB_NO_POS || !is->n_lines)
		return is->first_line;
	/* The pc points past the instruction it runs (or called from): look up the one before. */
	if (pos)
		pos--;
	hi = is->n_lines;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (is->pos[mid] <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return is->lines[lo];
}
