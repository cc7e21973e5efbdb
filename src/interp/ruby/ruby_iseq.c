// SPDX-License-Identifier: Apache-2.0
#include "interp/ruby/ruby_iseq.h"

#include <errno.h>
#include <stdbool.h>
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

/* Element 0 of a Ruby Array (pathobj's [path, realpath]), in *v. */
static int array_first(const struct remote_memory *mem, const struct ruby_layout *l, uint64_t ary,
		       uint64_t *v)
{
	uint8_t hdr[OBJ_HEADER];
	uint64_t flags, len;
	int err;

	err = read_mem(mem, ary, hdr, sizeof(hdr));
	if (err)
		return err;
	flags = get_u64(hdr, 0);
	if ((flags & RUBY_T_MASK) != RUBY_T_ARRAY)
		return -EINVAL;
	if (flags & l->ary_embed_flag) {
		len = (flags & l->ary_embed_len_mask) >> l->ary_embed_len_shift;
		if (!len)
			return -EINVAL;
		*v = get_u64(hdr, l->ary_embed_ary);
		return 0;
	}
	len = get_u64(hdr, l->ary_heap_len);
	if (!len)
		return -EINVAL;
	return read_mem(mem, get_u64(hdr, l->ary_heap_ptr), v, sizeof(*v));
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
		if (array_first(mem, l, pathobj, &first))
			return -EINVAL;
		return read_string(mem, l, first, out);
	}
	return read_string(mem, l, pathobj, out);
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

int ruby_iseq__read(const struct remote_memory *mem, const struct ruby_layout *l, uint64_t addr,
		    uint64_t body_addr, struct ruby_iseq **out)
{
	uint8_t body[BODY_MAX_READ];
	struct ruby_iseq *is;
	uint64_t p, lineno;
	int err;

	*out = NULL;
	if (l->body_read > sizeof(body) || l->body_read < 8)
		return -EINVAL;
	err = read_mem(mem, addr + l->off.iseq_body, &p, sizeof(p));
	if (err)
		return err;
	if (p != body_addr)
		return -ESTALE;
	err = read_mem(mem, body_addr, body, l->body_read);
	if (err)
		return err;
	is = calloc(1, sizeof(*is));
	if (!is)
		return -ENOMEM;
	err = read_string(mem, l, get_u64(body, l->body_label), &is->name);
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

int ruby_iseq__read_cfunc(const struct remote_memory *mem, const struct ruby_layout *l, uint64_t me,
			  uint64_t def, struct ruby_iseq **out)
{
	struct ruby_iseq *is;
	uint64_t p;
	int err;

	(void)def;
	*out = NULL;
	err = read_mem(mem, me + l->off.me_def, &p, sizeof(p));
	if (err)
		return err;
	if (p != def)
		return -ESTALE;
	is = calloc(1, sizeof(*is));
	if (!is)
		return -ENOMEM;
	is->name = strdup("[C function]");
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
