// SPDX-License-Identifier: Apache-2.0
/*
 * Layout (from the Go runtime's documented structures):
 *
 *   header: magic u32, 2 zero bytes, PC quantum u8, pointer size u8, then
 *     1.2:   nfunc word; the function table follows the header
 *     1.16:  nfunc, nfiles, funcname, cu, filetab, pctab, functab offsets
 *     1.18+: nfunc, nfiles, text start, funcname, cu, filetab, pctab, functab
 *   function table: nfunc + 1 (pc, func offset) pairs sorted by pc; the last
 *     pc ends the last function. Words in 1.2/1.16, u32 offsets from the
 *     text start in 1.18+.
 *   function record (at the function table + func offset; 1.2: at the start):
 *     entry (word; u32 offset in 1.18+), name offset i32, args i32,
 *     deferreturn u32, pcsp u32, pcfile u32, pcln u32, npcdata u32,
 *     cu offset u32 (1.16+)
 *   pc-value tables: pairs of varints (zig-zag value delta, pc delta in
 *     quanta), starting at value -1 and the function's entry; a zero value
 *     delta after the first pair ends the table.
 *   files: 1.2 a u32 table of offsets, indexed by the pcfile value; 1.16+
 *     the cu table (u32) indexed by cu offset + pcfile value gives an offset
 *     into the file name table.
 */
#include "elf/gopclntab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC_GO12  0xfffffffbu
#define MAGIC_GO116 0xfffffffau
#define MAGIC_GO118 0xfffffff0u
#define MAGIC_GO120 0xfffffff1u

/* A pc-value table longer than this is corrupt (real ones have a few hundred pairs). */
#define MAX_PCVALUE_STEPS (1u << 20)

/*
 * A table read through a read function (gopclntab__open_read) keeps the last
 * bytes read: accesses are small (a u32, a varint's byte, a name) and mostly
 * near the one before (a pcsp table's bytes, a record's fields).
 */
/* Bytes a read fetches at least (a name longer than this is read again, up to the window). */
#define READ_MIN 512

struct window {
	uint64_t off;
	size_t len; /* 0: empty */
	int err;    /* the first failed read's error since gopclntab__read_error() */
	uint8_t buf[GOPCLNTAB_WINDOW];
};

struct gopclntab {
	const uint8_t *data; /* the whole table, or NULL when read through read */
	uint64_t len;
	gopclntab_read_fn read;
	void *ctx;
	struct window *win; /* owned; with read only */
	enum gopclntab_version version;
	uint32_t quantum;
	uint32_t ptrsize;
	uint64_t nfunc;
	uint64_t text_start;
	/* Offsets into data. */
	uint64_t funcnametab, cutab, filetab, pctab, functab, funcdata;
};

/* ---- bounds-checked little-endian reads --------------------------------- */

/*
 * n bytes at off, or NULL when they are not all in the table or cannot be
 * read (the window's error says which). Through read, valid until the next
 * access.
 */
static const uint8_t *bytes_at(const struct gopclntab *t, uint64_t off, size_t n)
{
	struct window *w = t->win;
	size_t len;
	int err;

	if (off > t->len || t->len - off < n)
		return NULL;
	if (!t->read)
		return t->data + off;
	if (n > sizeof(w->buf)) {
		w->err = w->err ? w->err : -E2BIG;
		return NULL;
	}
	/* A window shorter than n never holds them (w->len - n would wrap: a name
	 * read again past its first READ_MIN bytes). */
	if (w->len >= n && w->len && off >= w->off && off - w->off <= w->len - n)
		return w->buf + (off - w->off);
	/* A read's cost grows with its bytes: most accesses need a few of them. */
	len = n > READ_MIN ? n : READ_MIN;
	if (len > t->len - off)
		len = (size_t)(t->len - off);
	w->len = 0;
	err = t->read(t->ctx, off, w->buf, len);
	if (err) {
		w->err = w->err ? w->err : err;
		return NULL;
	}
	w->off = off;
	w->len = len;
	return w->buf;
}

static bool read_u32(const struct gopclntab *t, uint64_t off, uint32_t *v)
{
	const uint8_t *p = bytes_at(t, off, 4);

	if (!p)
		return false;
	*v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return true;
}

static bool read_word(const struct gopclntab *t, uint64_t off, uint64_t *v)
{
	uint32_t lo, hi = 0;

	if (!read_u32(t, off, &lo))
		return false;
	if (t->ptrsize == 8 && !read_u32(t, off + 4, &hi))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

/*
 * A NUL-terminated string at off, or NULL. Through read, one of at most
 * GOPCLNTAB_WINDOW - 1 bytes (a longer one is -E2BIG: the whole table may
 * have it), valid until the next access.
 */
static const char *string_at(const struct gopclntab *t, uint64_t off)
{
	uint64_t n;
	const uint8_t *p;

	if (off >= t->len)
		return NULL;
	n = t->len - off;
	if (t->read && n > READ_MIN) {
		/* Most names are short: the window's usual read first. */
		p = bytes_at(t, off, READ_MIN);
		if (!p || memchr(p, '\0', READ_MIN))
			return (const char *)p;
		if (n > GOPCLNTAB_WINDOW)
			n = GOPCLNTAB_WINDOW;
	}
	p = bytes_at(t, off, (size_t)n);
	if (!p)
		return NULL;
	if (!memchr(p, '\0', (size_t)n)) {
		if (n < t->len - off && !t->win->err)
			t->win->err = -E2BIG;
		return NULL;
	}
	return (const char *)p;
}

static bool add_off(uint64_t a, uint64_t b, uint64_t *sum)
{
	return !__builtin_add_overflow(a, b, sum);
}

/* ---- header --------------------------------------------------------------- */

/* Bytes of the header at most: magic, 4 bytes, 8 words. */
#define HEADER_MAX (8 + 8 * 8)

/*
 * The header's fields from its first hdr_len bytes (at hdr) into *h, whose
 * len (the table's size) is set. 0 or -ENOEXEC.
 */
static int parse_header(const uint8_t *hdr, size_t hdr_len, uint64_t text_start,
			struct gopclntab *out)
{
	struct gopclntab h = {.data = hdr, .len = hdr_len};
	uint64_t len = out->len, w[8];
	uint32_t magic = 0;
	size_t nwords;

	if (!hdr || hdr_len < 16 || hdr[4] || hdr[5])
		return -ENOEXEC;
	h.quantum = hdr[6];
	h.ptrsize = hdr[7];
	if ((h.quantum != 1 && h.quantum != 2 && h.quantum != 4) ||
	    (h.ptrsize != 4 && h.ptrsize != 8))
		return -ENOEXEC;
	read_u32(&h, 0, &magic);
	switch (magic) {
	case MAGIC_GO12:
		h.version = GOPCLNTAB_GO12;
		nwords = 1;
		break;
	case MAGIC_GO116:
		h.version = GOPCLNTAB_GO116;
		nwords = 7;
		break;
	case MAGIC_GO118:
		h.version = GOPCLNTAB_GO118;
		nwords = 8;
		break;
	case MAGIC_GO120:
		h.version = GOPCLNTAB_GO120;
		nwords = 8;
		break;
	default:
		return -ENOEXEC;
	}
	for (size_t i = 0; i < nwords; i++)
		if (!read_word(&h, 8 + i * h.ptrsize, &w[i]))
			return -ENOEXEC;
	h.nfunc = w[0];
	h.text_start = text_start;
	switch (h.version) {
	case GOPCLNTAB_GO12:
		/* Offsets of names, files and tables are from the start. */
		h.functab = 8 + h.ptrsize;
		break;
	case GOPCLNTAB_GO116:
		h.funcnametab = w[2];
		h.cutab = w[3];
		h.filetab = w[4];
		h.pctab = w[5];
		h.functab = w[6];
		break;
	default:
		if (w[2])
			h.text_start = w[2];
		h.funcnametab = w[3];
		h.cutab = w[4];
		h.filetab = w[5];
		h.pctab = w[6];
		h.functab = w[7];
		break;
	}
	h.funcdata = h.version == GOPCLNTAB_GO12 ? 0 : h.functab;
	/* The function table (nfunc + 1 pairs) must fit. */
	{
		uint64_t pair = h.version >= GOPCLNTAB_GO118 ? 8 : 2ull * h.ptrsize, need;

		if (h.nfunc == 0 || h.nfunc > len / pair ||
		    __builtin_mul_overflow(h.nfunc + 1, pair, &need) || h.functab > len ||
		    len - h.functab < need)
			return -ENOEXEC;
	}
	if (h.funcnametab > len || h.cutab > len || h.filetab > len || h.pctab > len)
		return -ENOEXEC;
	h.len = len;
	*out = h;
	return 0;
}

int gopclntab__open(const uint8_t *data, size_t len, uint64_t text_start, struct gopclntab **out)
{
	struct gopclntab h = {.len = len}, *t;
	int err;

	*out = NULL;
	err = parse_header(data, len, text_start, &h);
	if (err)
		return err;
	h.data = data;
	t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = h;
	*out = t;
	return 0;
}

int gopclntab__open_read(gopclntab_read_fn read, void *ctx, uint64_t len, uint64_t text_start,
			 struct gopclntab **out)
{
	struct gopclntab h = {.len = len}, *t;
	uint8_t hdr[HEADER_MAX];
	size_t n = len < sizeof(hdr) ? (size_t)len : sizeof(hdr);
	int err;

	*out = NULL;
	if (!read || len < 16)
		return -ENOEXEC;
	err = read(ctx, 0, hdr, n);
	if (err)
		return err;
	err = parse_header(hdr, n, text_start, &h);
	if (err)
		return err;
	t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = h;
	t->data = NULL;
	t->read = read;
	t->ctx = ctx;
	t->win = calloc(1, sizeof(*t->win));
	if (!t->win) {
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void gopclntab__free(struct gopclntab *t)
{
	if (!t)
		return;
	free(t->win);
	free(t);
}

int gopclntab__read_error(const struct gopclntab *t)
{
	int err;

	if (!t->win)
		return 0;
	err = t->win->err;
	t->win->err = 0;
	return err;
}

void gopclntab__functab(const struct gopclntab *t, uint64_t *off, uint64_t *len)
{
	uint64_t pair = t->version >= GOPCLNTAB_GO118 ? 8 : 2ull * t->ptrsize;

	/* parse_header() checked that nfunc + 1 pairs fit. */
	*off = t->functab;
	*len = (t->nfunc + 1) * pair;
}

enum gopclntab_version gopclntab__version(const struct gopclntab *t)
{
	return t->version;
}

size_t gopclntab__n_funcs(const struct gopclntab *t)
{
	return (size_t)t->nfunc;
}

/* ---- function table --------------------------------------------------------- */

/* The pc and record offset of function table entry i (0..nfunc). */
static bool functab_entry(const struct gopclntab *t, uint64_t i, uint64_t *pc, uint64_t *funcoff)
{
	if (t->version >= GOPCLNTAB_GO118) {
		uint32_t a, b;

		if (!read_u32(t, t->functab + i * 8, &a) ||
		    !read_u32(t, t->functab + i * 8 + 4, &b))
			return false;
		*pc = t->text_start + a;
		*funcoff = b;
		return true;
	}
	return read_word(t, t->functab + i * 2 * t->ptrsize, pc) &&
	       read_word(t, t->functab + (i * 2 + 1) * t->ptrsize, funcoff);
}

/* Decodes an unsigned LEB128-style varint at *off (advanced). */
static bool read_uvarint(const struct gopclntab *t, uint64_t *off, uint32_t *v)
{
	uint32_t result = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		const uint8_t *p = bytes_at(t, *off, 1);

		if (!p)
			return false;
		b = *p;
		(*off)++;
		result |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = result;
			return true;
		}
	}
	return false;
}

/* The value a pc-value table at off gives for pc in a function starting at entry. */
static bool pcvalue(const struct gopclntab *t, uint64_t off, uint64_t entry, uint64_t pc,
		    int32_t *out)
{
	uint64_t cur = entry;
	int32_t val = -1;

	for (uint32_t step = 0; step < MAX_PCVALUE_STEPS; step++) {
		uint32_t uvdelta, pcdelta;

		if (!read_uvarint(t, &off, &uvdelta))
			return false;
		if (uvdelta == 0 && step > 0)
			return false; /* end of table before pc */
		/* Zig-zag delta, added with wrap-around as Go's int32 does: values come
		 * from the file, so the sum can overflow, which signed C must not. */
		val = (int32_t)((uint32_t)val + (-(uvdelta & 1) ^ (uvdelta >> 1)));
		if (!read_uvarint(t, &off, &pcdelta))
			return false;
		cur += (uint64_t)pcdelta * t->quantum;
		if (pc < cur) {
			*out = val;
			return true;
		}
	}
	return false;
}

static const char *file_name(const struct gopclntab *t, uint32_t cu_offset, int32_t fileno)
{
	uint64_t off;
	uint32_t name_off;

	if (fileno < 0)
		return NULL;
	if (t->version == GOPCLNTAB_GO12) {
		/* The file table's first entry counts the entries. */
		uint32_t nfiles;

		if (!read_u32(t, t->filetab, &nfiles) || (uint32_t)fileno >= nfiles ||
		    !read_u32(t, t->filetab + 4ull * (uint32_t)fileno, &name_off))
			return NULL;
		return string_at(t, name_off);
	}
	off = t->cutab + 4ull * ((uint64_t)cu_offset + (uint32_t)fileno);
	if (!read_u32(t, off, &name_off) || name_off == UINT32_MAX)
		return NULL;
	return add_off(t->filetab, name_off, &off) ? string_at(t, off) : NULL;
}

int gopclntab__find_func(const struct gopclntab *t, uint64_t pc, size_t *index)
{
	uint64_t lo = 0, hi = t->nfunc, first, end, funcoff;

	if (!functab_entry(t, 0, &first, &funcoff) || !functab_entry(t, t->nfunc, &end, &funcoff))
		return -EINVAL;
	if (pc < first || pc >= end)
		return -ENOENT;
	/* The last entry whose pc is <= pc: at most 64 probes (nfunc < 2^64). */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2, mpc;

		if (!functab_entry(t, mid, &mpc, &funcoff))
			return -EINVAL;
		if (mpc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	*index = (size_t)lo;
	return 0;
}

int gopclntab__lookup(const struct gopclntab *t, uint64_t pc, struct gopclntab_frame *out)
{
	uint64_t funcoff, rec, entry, name_off;
	uint32_t fields[9];
	size_t n_fields, lo;
	int32_t line = 0, fileno = -1;
	int err;

	err = gopclntab__find_func(t, pc, &lo);
	if (err)
		return err;
	if (!functab_entry(t, lo, &entry, &funcoff) || !add_off(t->funcdata, funcoff, &rec))
		return -EINVAL;

	/* The record: entry, then u32 fields (name, args, deferreturn, pcsp, pcfile, pcln, npcdata,
	 * cu). */
	if (t->version >= GOPCLNTAB_GO118) {
		uint32_t entryoff;

		if (!read_u32(t, rec, &entryoff))
			return -EINVAL;
		rec += 4;
	} else {
		uint64_t e;

		if (!read_word(t, rec, &e))
			return -EINVAL;
		rec += t->ptrsize;
	}
	n_fields = t->version == GOPCLNTAB_GO12 ? 6 : 8;
	for (size_t i = 0; i < n_fields; i++)
		if (!read_u32(t, rec + 4 * i, &fields[i]))
			return -EINVAL;

	name_off = (uint32_t)fields[0];
	if (!add_off(t->funcnametab, name_off, &name_off))
		return -EINVAL;
	out->name = string_at(t, name_off);
	if (!out->name || !out->name[0])
		return -EINVAL;
	out->entry = entry;
	out->file = NULL;
	out->line = 0;

	/* pcfile and pcln are offsets into the pc-value tables (from the start in 1.2). */
	{
		uint64_t base = t->version == GOPCLNTAB_GO12 ? 0 : t->pctab, off;

		if (fields[5] && add_off(base, fields[5], &off) &&
		    pcvalue(t, off, entry, pc, &line) && line > 0)
			out->line = (uint32_t)line;
		if (fields[4] && add_off(base, fields[4], &off) &&
		    pcvalue(t, off, entry, pc, &fileno))
			out->file = file_name(t, n_fields > 7 ? fields[7] : 0, fileno);
	}
	return 0;
}

/* ---- iteration for the unwinder ---------------------------------------------- */

int gopclntab__func(const struct gopclntab *t, size_t i, struct gopclntab_func *out)
{
	uint64_t entry, end, funcoff, next_off, rec, name_off;
	uint32_t name, pcsp;

	if (i >= t->nfunc || !functab_entry(t, i, &entry, &funcoff) ||
	    !functab_entry(t, i + 1, &end, &next_off) || end <= entry ||
	    !add_off(t->funcdata, funcoff, &rec))
		return -EINVAL;
	/* The record: entry (u32 from 1.18, else a word), then name, args, deferreturn, pcsp. */
	if (!add_off(rec, t->version >= GOPCLNTAB_GO118 ? 4 : t->ptrsize, &rec) ||
	    !read_u32(t, rec, &name) || !read_u32(t, rec + 12, &pcsp))
		return -EINVAL;
	if (!add_off(t->funcnametab, name, &name_off))
		return -EINVAL;
	out->name = string_at(t, name_off);
	if (!out->name)
		return -EINVAL;
	out->entry = entry;
	out->end = end;
	out->pcsp = pcsp;
	return 0;
}

int gopclntab__pcsp(const struct gopclntab *t, const struct gopclntab_func *f,
		    int (*cb)(void *ctx, uint64_t start, uint64_t end, int32_t sp_delta), void *ctx)
{
	uint64_t off, cur = f->entry;
	int32_t val = -1;

	if (!f->pcsp || !add_off(t->version == GOPCLNTAB_GO12 ? 0 : t->pctab, f->pcsp, &off))
		return -EINVAL;
	for (uint32_t step = 0; step < MAX_PCVALUE_STEPS && cur < f->end; step++) {
		uint32_t uvdelta, pcdelta;
		uint64_t next;
		int err;

		if (!read_uvarint(t, &off, &uvdelta))
			return -EINVAL;
		if (uvdelta == 0 && step > 0)
			return 0; /* the end; what is left is padding after the last instruction */
		val = (int32_t)((uint32_t)val + (-(uvdelta & 1) ^ (uvdelta >> 1)));
		if (!read_uvarint(t, &off, &pcdelta))
			return -EINVAL;
		/* An empty run (pcdelta 0) is reported too: the caller's budget counts it. */
		next = cur + (uint64_t)pcdelta * t->quantum;
		if (next > f->end)
			next = f->end; /* Go pads the last run to the quantum */
		err = cb(ctx, cur, next, val);
		if (err)
			return err;
		cur = next;
	}
	return cur < f->end ? -EINVAL : 0; /* too many steps */
}
