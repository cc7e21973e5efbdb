// SPDX-License-Identifier: Apache-2.0
/*
 * A bounded reader of DWARF 2-5 line programs (see dwarf_lines.h).
 *
 * A unit is read once, on its first lookup: its header (directories and
 * files, joined into the names libdw gives), then its whole program run
 * through the state machine once to find its sequences and to keep a
 * checkpoint (program offset, address, file, line, is_stmt) at each
 * sequence's start and after every DWARF_LINES_CHECKPOINT rows. Nothing
 * per row is kept. A lookup finds the sequences that can hold the answer
 * and decodes from the last checkpoint at or below the address.
 *
 * libdw's choice among rows, found by testing against it (test_dwarf_lines):
 * it orders a unit's rows by address, end_sequence rows before the others
 * at one address, then in program order, and makes the last row an
 * end_sequence if it is not one; a lookup takes the last row at or below
 * addr, and no line when that row ends a sequence. So a row at a
 * sequence's end address (before its end_sequence) names that address and
 * those after it up to the next row, unless it is the unit's last.
 * is_stmt and discriminators play no part.
 *
 * Every read is bounded by the section, every loop by the bytes it reads or
 * by a fixed count.
 */
#include "symbol/dwarf_lines.h"

#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

/* Sequences whose ranges may hold one address that a lookup compares. */
#define MAX_OVERLAP 64
/*
 * Bounds on what a hostile program can make one unit cost (no compiler
 * comes near them): a directory or file name, all of a unit's joined
 * names, the program bytes between two rows; and a checkpoint at least
 * every CHECKPOINT_BYTES of program, so a lookup decodes a bounded number
 * of bytes as well as of rows.
 */
#define NAME_MAX_BYTES	 4096
#define NAMES_MAX_BYTES	 (8u << 20)
#define ROW_GAP_MAX	 (64u << 10)
#define CHECKPOINT_BYTES 4096

struct cp {
	uint64_t addr;
	uint32_t off; /* program offset of the next opcode, from the unit's start */
	uint32_t line;
	uint32_t file;
	uint8_t is_stmt;
	uint8_t has_row; /* the state is a row's (else the sequence's initial state) */
};

struct seq {
	uint64_t start, end; /* first row's address, end_sequence's */
	uint64_t max_end;    /* the highest end of this and every earlier one (sorted by start) */
	uint32_t order;	     /* in the program */
	uint32_t first_cp, n_cp;
	bool row_at_end; /* a row other than end_sequence at address end */
};

struct dwarf_lines_unit {
	uint64_t stmt_list;
	bool unsupported;
	bool refused; /* names past the bounds: no lines, and none from libdw either */
	/* the header, for decoding */
	const uint8_t *prog, *prog_end; /* the program (prog: the unit's start) */
	uint32_t prog_off;		/* the first opcode's offset from prog */
	uint8_t min_inst, default_is_stmt, opcode_base, line_range;
	int8_t line_base;
	const uint8_t *std_lens;
	uint16_t version;
	struct seq *seqs;
	uint32_t n_seqs;
	struct cp *cps;
	char **files; /* joined names, into names */
	uint32_t n_files;
	char *names;
	struct dwarf_lines *dl;
};

struct dwarf_lines {
	const uint8_t *line, *line_str, *str;
	size_t line_size, line_str_size, str_size;
	struct dwarf_lines_unit **units; /* sorted by stmt_list */
	size_t n_units, cap_units;
	size_t growth, bytes;
	size_t unsupported, refused, lookups_unsupported;
};

/* ---- bounded reads ------------------------------------------------------ */

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_fixed(struct rd *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; !r->bad; shift += 7) {
		uint8_t b;

		if (r->p >= r->end) {
			r->bad = true;
			break;
		}
		b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		else if (b & 0x7f)
			r->bad = true; /* does not fit 64 bits */
		if (!(b & 0x80))
			return v;
		if (shift > 70)
			r->bad = true;
	}
	return 0;
}

static int64_t rd_sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	do {
		if (r->bad || r->p >= r->end || shift > 63) {
			r->bad = true;
			return 0;
		}
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A NUL-terminated string inside the reader's bounds, else NULL. */
static const char *rd_str(struct rd *r)
{
	const uint8_t *nul;
	const char *s;

	if (r->bad || r->p >= r->end || !(nul = memchr(r->p, 0, (size_t)(r->end - r->p)))) {
		r->bad = true;
		return NULL;
	}
	s = (const char *)r->p;
	r->p = nul + 1;
	return s;
}

static void rd_skip(struct rd *r, uint64_t n)
{
	if (r->bad || (uint64_t)(r->end - r->p) < n)
		r->bad = true;
	else
		r->p += n;
}

/* A string at off of a string section, NUL-terminated inside it, else NULL. */
static const char *section_str(const uint8_t *sec, size_t size, uint64_t off)
{
	if (!sec || off >= size || !memchr(sec + off, 0, size - off))
		return NULL;
	return (const char *)sec + off;
}

/* ---- the header ----------------------------------------------------------- */

struct entry {
	const char *path;
	uint64_t dir;
};

struct header_lists {
	struct entry *dirs, *files;
	size_t n_dirs, cap_dirs, n_files, cap_files;
};

/* One DWARF 5 entry attribute's value, by form; *str for string forms. */
static int read_form(struct dwarf_lines *dl, struct rd *r, uint64_t form, int offset_size,
		     const char **str, uint64_t *num)
{
	*str = NULL;
	*num = 0;
	switch (form) {
	case DW_FORM_string:
		*str = rd_str(r);
		break;
	case DW_FORM_line_strp:
		*str = section_str(dl->line_str, dl->line_str_size, rd_fixed(r, offset_size));
		if (!*str)
			return -ENOTSUP;
		break;
	case DW_FORM_strp:
		*str = section_str(dl->str, dl->str_size, rd_fixed(r, offset_size));
		if (!*str)
			return -ENOTSUP;
		break;
	case DW_FORM_udata:
		*num = rd_uleb(r);
		break;
	case DW_FORM_data1:
		*num = rd_fixed(r, 1);
		break;
	case DW_FORM_data2:
		*num = rd_fixed(r, 2);
		break;
	case DW_FORM_data4:
		*num = rd_fixed(r, 4);
		break;
	case DW_FORM_data8:
		*num = rd_fixed(r, 8);
		break;
	case DW_FORM_data16:
		rd_skip(r, 16);
		break;
	case DW_FORM_block:
		rd_skip(r, rd_uleb(r));
		break;
	default:
		return -ENOTSUP; /* strx (needs the unit's str_offsets), sup forms, ... */
	}
	return r->bad ? -ENOTSUP : 0;
}

static int push_entry(struct entry **v, size_t *n, size_t *cap, struct entry e)
{
	if (array__grow(*v, *cap, *n))
		return -ENOMEM;
	(*v)[(*n)++] = e;
	return 0;
}

/* A DWARF 5 directory or file list (format, count, entries). */
static int read_v5_list(struct dwarf_lines *dl, struct rd *r, int offset_size, struct entry **v,
			size_t *n, size_t *cap)
{
	uint64_t fmt[2 * 16], nfmt = rd_fixed(r, 1), count;
	int err;

	if (nfmt > 16)
		return -ENOTSUP;
	for (uint64_t i = 0; i < nfmt; i++) {
		fmt[2 * i] = rd_uleb(r);
		fmt[2 * i + 1] = rd_uleb(r);
	}
	count = rd_uleb(r);
	if (r->bad || (nfmt == 0 && count))
		return -ENOTSUP;
	/* Each entry takes a byte at least: the count is bounded by the header. */
	if (count > (uint64_t)(r->end - r->p))
		return -ENOTSUP;
	for (uint64_t k = 0; k < count; k++) {
		struct entry e = {NULL, 0};

		for (uint64_t i = 0; i < nfmt; i++) {
			const char *s;
			uint64_t num;

			err = read_form(dl, r, fmt[2 * i + 1], offset_size, &s, &num);
			if (err)
				return err;
			if (fmt[2 * i] == DW_LNCT_path) {
				if (!s)
					return -ENOTSUP;
				e.path = s;
			} else if (fmt[2 * i] == DW_LNCT_directory_index) {
				if (s)
					return -ENOTSUP;
				e.dir = num;
			}
		}
		if (!e.path)
			return -ENOTSUP;
		err = push_entry(v, n, cap, e);
		if (err)
			return err;
	}
	return 0;
}

/* DWARF 2-4: include_directories, then file_names, each ended by an empty string. */
static int read_v4_lists(struct rd *r, struct header_lists *h)
{
	int err;

	for (;;) {
		const char *s = rd_str(r);

		if (!s)
			return -ENOTSUP;
		if (!*s)
			break;
		err = push_entry(&h->dirs, &h->n_dirs, &h->cap_dirs, (struct entry){s, 0});
		if (err)
			return err;
	}
	for (;;) {
		const char *s = rd_str(r);
		struct entry e;

		if (!s)
			return -ENOTSUP;
		if (!*s)
			break;
		e.path = s;
		e.dir = rd_uleb(r);
		rd_uleb(r); /* mtime */
		rd_uleb(r); /* length */
		if (r->bad)
			return -ENOTSUP;
		err = push_entry(&h->files, &h->n_files, &h->cap_files, e);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The directory a file's relative name is joined to, as libdw spells it:
 * DWARF 2-4 directory 0 is the unit's comp_dir, the others are the
 * header's (relative ones as written); DWARF 5 lists directory 0 itself.
 * NULL: the name stays as written. -ENOTSUP through *bad for an index out of range.
 */
static const char *dir_of(const struct dwarf_lines_unit *u, const struct header_lists *h,
			  uint64_t dir, const char *comp_dir, bool *bad)
{
	if (u->version < 5) {
		if (dir == 0)
			return comp_dir;
		if (dir > h->n_dirs) {
			*bad = true;
			return NULL;
		}
		return h->dirs[dir - 1].path;
	}
	if (dir >= h->n_dirs) {
		*bad = true;
		return NULL;
	}
	return h->dirs[dir].path;
}

/* Joins every file's name once (one allocation for all of them). */
static int join_files(struct dwarf_lines_unit *u, const struct header_lists *h,
		      const char *comp_dir)
{
	size_t total = 0, at = 0;
	bool bad = false;

	for (size_t i = 0; i < h->n_files; i++) {
		const struct entry *f = &h->files[i];
		const char *d = f->path[0] == '/' ? NULL : dir_of(u, h, f->dir, comp_dir, &bad);

		size_t fl = strnlen(f->path, NAME_MAX_BYTES),
		       dl = d ? strnlen(d, NAME_MAX_BYTES) : 0;

		if (bad)
			return -ENOTSUP;
		/* Many entries naming one long string would multiply it (libdw too). */
		if (fl == NAME_MAX_BYTES || dl == NAME_MAX_BYTES)
			return -EFBIG;
		total += fl + 1 + (d ? dl + 1 : 0);
		if (total > NAMES_MAX_BYTES)
			return -EFBIG;
	}
	u->files = calloc(h->n_files ? h->n_files : 1, sizeof(*u->files));
	u->names = malloc(total ? total : 1);
	if (!u->files || !u->names)
		return -ENOMEM;
	u->n_files = (uint32_t)h->n_files;
	for (size_t i = 0; i < h->n_files; i++) {
		const struct entry *f = &h->files[i];
		const char *d = f->path[0] == '/' ? NULL : dir_of(u, h, f->dir, comp_dir, &bad);
		size_t dl = d ? strlen(d) : 0, fl = strlen(f->path);

		u->files[i] = u->names + at;
		if (d) {
			memcpy(u->names + at, d, dl);
			at += dl;
			/* A directory already ending in '/' gets none added (probed: see tests). */
			if (!dl || d[dl - 1] != '/')
				u->names[at++] = '/';
		}
		memcpy(u->names + at, f->path, fl + 1);
		at += fl + 1;
	}
	u->dl->growth += h->n_files * sizeof(*u->files) + total;
	return 0;
}

/* The standard opcodes' operand counts (DWARF 2-5); a header saying otherwise is not handled. */
static const uint8_t std_operands[] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};

static int read_header(struct dwarf_lines_unit *u, const char *comp_dir)
{
	struct dwarf_lines *dl = u->dl;
	struct rd r = {dl->line + u->stmt_list, dl->line + dl->line_size, false};
	struct header_lists h = {0};
	uint64_t len, hlen;
	int offset_size = 4, err = -ENOTSUP;
	const uint8_t *unit_end, *prog;

	len = rd_fixed(&r, 4);
	if (len == 0xffffffff) {
		offset_size = 8;
		len = rd_fixed(&r, 8);
	} else if (len >= 0xfffffff0) {
		return -ENOTSUP;
	}
	if (r.bad || len > (uint64_t)(r.end - r.p))
		return -ENOTSUP;
	unit_end = r.p + len;
	r.end = unit_end;
	u->version = (uint16_t)rd_fixed(&r, 2);
	if (u->version < 2 || u->version > 5)
		return -ENOTSUP;
	if (u->version >= 5) {
		uint64_t asize = rd_fixed(&r, 1);

		if ((asize != 4 && asize != 8) || rd_fixed(&r, 1) != 0)
			return -ENOTSUP;
	}
	hlen = rd_fixed(&r, offset_size);
	if (r.bad || hlen > (uint64_t)(unit_end - r.p))
		return -ENOTSUP;
	prog = r.p + hlen;
	r.end = prog;
	u->min_inst = (uint8_t)rd_fixed(&r, 1);
	if (u->version >= 4 && rd_fixed(&r, 1) != 1)
		return -ENOTSUP; /* VLIW op_index */
	u->default_is_stmt = rd_fixed(&r, 1) != 0;
	u->line_base = (int8_t)rd_fixed(&r, 1);
	u->line_range = (uint8_t)rd_fixed(&r, 1);
	u->opcode_base = (uint8_t)rd_fixed(&r, 1);
	if (r.bad || !u->line_range || !u->opcode_base)
		return -ENOTSUP;
	u->std_lens = r.p;
	rd_skip(&r, u->opcode_base - 1u);
	if (r.bad)
		return -ENOTSUP;
	for (unsigned op = 1; op < u->opcode_base && op <= sizeof(std_operands); op++)
		if (u->std_lens[op - 1] != std_operands[op - 1])
			return -ENOTSUP;
	if (u->version < 5)
		err = read_v4_lists(&r, &h);
	else if (!(err = read_v5_list(dl, &r, offset_size, &h.dirs, &h.n_dirs, &h.cap_dirs)))
		err = read_v5_list(dl, &r, offset_size, &h.files, &h.n_files, &h.cap_files);
	if (!err && h.n_files > UINT32_MAX / 2)
		err = -ENOTSUP;
	if (!err)
		err = join_files(u, &h, comp_dir);
	free(h.dirs);
	free(h.files);
	if (err)
		return err;
	u->prog = dl->line + u->stmt_list;
	u->prog_end = unit_end;
	u->prog_off = (uint32_t)(prog - u->prog);
	return 0;
}

/* ---- the state machine ---------------------------------------------------- */

struct state {
	uint64_t addr, file;
	uint32_t line;
	bool is_stmt, end_seq;
};

static void state_init(const struct dwarf_lines_unit *u, struct state *s)
{
	*s = (struct state){.addr = 0, .file = 1, .line = 1, .is_stmt = u->default_is_stmt};
}

/*
 * Runs one opcode at *r. 1: it appended a row (s holds it; s->end_seq for
 * end_sequence), 0: no row, -ENOTSUP: not handled or malformed.
 */
static int step(const struct dwarf_lines_unit *u, struct rd *r, struct state *s)
{
	uint8_t op = (uint8_t)rd_fixed(r, 1);

	if (r->bad)
		return -ENOTSUP;
	s->end_seq = false;
	if (op >= u->opcode_base) {
		unsigned adj = op - u->opcode_base;

		s->addr += (uint64_t)u->min_inst * (adj / u->line_range);
		s->line += (uint32_t)(u->line_base + (int)(adj % u->line_range));
		return 1;
	}
	switch (op) {
	case 0: {
		uint64_t len = rd_uleb(r);
		const uint8_t *next;
		uint8_t sub;

		if (r->bad || len == 0 || len > (uint64_t)(r->end - r->p))
			return -ENOTSUP;
		next = r->p + len;
		sub = (uint8_t)rd_fixed(r, 1);
		switch (sub) {
		case DW_LNE_end_sequence:
			s->end_seq = true;
			r->p = next;
			return 1;
		case DW_LNE_set_address:
			if (len - 1 != 4 && len - 1 != 8)
				return -ENOTSUP;
			s->addr = rd_fixed(r, len - 1);
			break;
		case DW_LNE_define_file:
			return -ENOTSUP;
		default: /* set_discriminator and vendor ones: nothing a line needs */
			break;
		}
		r->p = next;
		return r->bad ? -ENOTSUP : 0;
	}
	case DW_LNS_copy:
		return 1;
	case DW_LNS_advance_pc:
		s->addr += (uint64_t)u->min_inst * rd_uleb(r);
		break;
	case DW_LNS_advance_line:
		s->line += (uint32_t)rd_sleb(r);
		break;
	case DW_LNS_set_file:
		s->file = rd_uleb(r);
		break;
	case DW_LNS_set_column:
		rd_uleb(r);
		break;
	case DW_LNS_negate_stmt:
		s->is_stmt = !s->is_stmt;
		break;
	case DW_LNS_const_add_pc:
		s->addr += (uint64_t)u->min_inst * ((255u - u->opcode_base) / u->line_range);
		break;
	case DW_LNS_fixed_advance_pc:
		s->addr += rd_fixed(r, 2);
		break;
	case DW_LNS_set_isa:
		rd_uleb(r);
		break;
	case DW_LNS_set_basic_block:
	case DW_LNS_set_prologue_end:
	case DW_LNS_set_epilogue_begin:
		break;
	default:
		for (unsigned i = 0; i < u->std_lens[op - 1]; i++)
			rd_uleb(r);
		break;
	}
	return r->bad ? -ENOTSUP : 0;
}

static int seq_cmp(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The one pass over the program: sequences and checkpoints. */
static int index_program(struct dwarf_lines_unit *u)
{
	struct rd r = {u->prog + u->prog_off, u->prog_end, false};
	struct state s;
	struct seq cur = {0};
	size_t cap_seqs = 0, n_cps = 0, cap_cps = 0, rows = 0;
	bool open = false;
	uint64_t prev = 0, last_row_addr = 0;
	size_t cp_off = 0, row_off = 0; /* where the last checkpoint, the last row ended */
	bool last_row = false;

	state_init(u, &s);
	while (r.p < r.end) {
		const uint8_t *at = r.p;
		int rc;

		if (!open) {
			/* A sequence's initial state: where its decoding starts. */
			if (array__grow(u->cps, cap_cps, n_cps))
				return -ENOMEM;
			u->cps[n_cps++] = (struct cp){.off = (uint32_t)(at - u->prog),
						      .line = s.line,
						      .file = (uint32_t)s.file,
						      .is_stmt = s.is_stmt};
			cur = (struct seq){.first_cp = (uint32_t)(n_cps - 1)};
			cp_off = row_off = (size_t)(at - u->prog);
			open = true;
			rows = 0;
			last_row = false;
		}
		rc = step(u, &r, &s);
		if (rc < 0)
			return rc;
		if (!rc)
			continue;
		if (rows && s.addr < prev)
			return -ENOTSUP; /* addresses going back: libdw sorts them; not handled */
		if ((size_t)(r.p - u->prog) - row_off > ROW_GAP_MAX)
			return -ENOTSUP; /* a lookup would decode all of it: left to libdw */
		row_off = (size_t)(r.p - u->prog);
		if (s.file > UINT32_MAX)
			return -ENOTSUP;
		if (!rows)
			cur.start = s.addr;
		prev = s.addr;
		rows++;
		if (s.end_seq) {
			cur.end = s.addr;
			cur.row_at_end = last_row && last_row_addr == s.addr;
			cur.n_cp = (uint32_t)(n_cps - cur.first_cp);
			cur.order = u->n_seqs;
			if (u->n_seqs == UINT32_MAX || array__grow(u->seqs, cap_seqs, u->n_seqs))
				return -ENOMEM;
			u->seqs[u->n_seqs++] = cur;
			open = false;
			state_init(u, &s);
			continue;
		}
		last_row = true;
		last_row_addr = s.addr;
		if (rows % DWARF_LINES_CHECKPOINT == 0 || row_off - cp_off >= CHECKPOINT_BYTES) {
			cp_off = row_off;
			if (array__grow(u->cps, cap_cps, n_cps))
				return -ENOMEM;
			u->cps[n_cps++] = (struct cp){.addr = s.addr,
						      .off = (uint32_t)(r.p - u->prog),
						      .line = s.line,
						      .file = (uint32_t)s.file,
						      .is_stmt = s.is_stmt,
						      .has_row = 1};
		}
	}
	if (open && rows)
		return -ENOTSUP; /* rows after the last end_sequence */
	if (u->n_seqs)
		qsort(u->seqs, u->n_seqs, sizeof(*u->seqs), seq_cmp);
	for (uint32_t i = 0; i < u->n_seqs; i++)
		u->seqs[i].max_end = i && u->seqs[i - 1].max_end > u->seqs[i].end
					 ? u->seqs[i - 1].max_end
					 : u->seqs[i].end;
	/* Kept at their exact size: a unit stays as long as the file. */
	if (u->n_seqs && u->n_seqs < cap_seqs) {
		struct seq *t = realloc(u->seqs, u->n_seqs * sizeof(*t));

		if (t)
			u->seqs = t, cap_seqs = u->n_seqs;
	}
	if (n_cps && n_cps < cap_cps) {
		struct cp *t = realloc(u->cps, n_cps * sizeof(*t));

		if (t)
			u->cps = t, cap_cps = n_cps;
	}
	u->dl->growth += cap_seqs * sizeof(*u->seqs) + cap_cps * sizeof(*u->cps);
	return 0;
}

/* ---- lookups ------------------------------------------------------------- */

/*
 * The last row (in the program) of sequence q other than its end_sequence
 * with an address <= x (x >= q->start). 0 and *row; -ENOENT: none (an
 * empty sequence); -ENOTSUP.
 */
static int last_row_upto(const struct dwarf_lines_unit *u, const struct seq *q, uint64_t x,
			 struct state *row)
{
	const struct cp *cps = u->cps + q->first_cp;
	uint32_t lo = 1, hi = q->n_cp;
	struct rd r;
	struct state s;
	bool have;

	/* The last checkpoint at or below x (the first, the initial state, always qualifies). */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cps[mid].addr <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct cp *c = &cps[lo - 1];

	state_init(u, &s);
	s.addr = c->addr;
	s.line = c->line;
	s.file = c->file;
	s.is_stmt = c->is_stmt;
	have = c->has_row;
	*row = s;
	r = (struct rd){u->prog + c->off, u->prog_end, false};
	/* The next checkpoint comes within DWARF_LINES_CHECKPOINT rows: bounded by bytes too. */
	for (unsigned rows = 0; r.p < r.end && rows <= DWARF_LINES_CHECKPOINT;) {
		int rc = step(u, &r, &s);

		if (rc < 0)
			return rc;
		if (!rc)
			continue;
		rows++;
		if (s.end_seq || s.addr > x)
			break;
		*row = s;
		have = true;
	}
	return have ? 0 : -ENOENT;
}

/* The best row so far, by libdw's order: address, end_sequence first, program order. */
struct pick {
	uint64_t addr;
	int kind; /* 0: end_sequence, 1: another row */
	uint32_t order;
	const struct seq *q;
	bool set;
	bool decoded; /* row holds it */
	struct state row;
};

/* Whether (addr, kind, order) comes after p in libdw's order of rows. */
static bool later(const struct pick *p, uint64_t addr, int kind, uint32_t order)
{
	if (!p->set)
		return true;
	if (addr != p->addr)
		return addr > p->addr;
	if (kind != p->kind)
		return kind > p->kind;
	return order > p->order;
}

int dwarf_lines__find(struct dwarf_lines_unit *u, uint64_t addr, const char **file, int *line)
{
	struct pick best = {0};
	uint32_t lo = 0, hi, visited = 0;
	struct state row;
	int rc;

	*file = NULL;
	*line = 0;
	if (u->refused)
		return -ENOENT;
	if (u->unsupported)
		return -ENOTSUP;
	hi = u->n_seqs;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (u->seqs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Sequences starting at or below addr, latest first, while one may still win. */
	for (uint32_t i = lo; i > 0; i--) {
		const struct seq *q = &u->seqs[i - 1];
		uint64_t top = q->max_end < addr ? q->max_end : addr;

		if (best.set && top < best.addr)
			break;
		if (++visited > MAX_OVERLAP)
			goto unsupported;
		if (q->end <= addr) {
			/* The whole sequence is at or below addr: its last rows are at q->end. */
			int kind = q->row_at_end ? 1 : 0;

			if (later(&best, q->end, kind, q->order))
				best = (struct pick){q->end, kind, q->order, q, true, false, {0}};
		} else if (later(&best, addr, 1, q->order)) {
			/* addr is inside: its row is at or below addr; decode to see if it wins. */
			rc = last_row_upto(u, q, addr, &row);
			if (rc)
				goto unsupported;
			if (later(&best, row.addr, 1, q->order))
				best = (struct pick){row.addr, 1, q->order, q, true, true, row};
		}
	}
	/*
	 * No line past an end_sequence; nor at the unit's very last row in
	 * libdw's order, which libdw makes an end_sequence when it is not one.
	 */
	if (!best.set || best.kind == 0 || best.addr == u->seqs[u->n_seqs - 1].max_end)
		return -ENOENT;
	if (!best.decoded) {
		rc = last_row_upto(u, best.q, best.addr, &best.row);
		if (rc || best.row.addr != best.addr)
			goto unsupported;
	}
	rc = dwarf_lines__file(u, best.row.file, file);
	if (rc)
		goto unsupported;
	*line = (int)best.row.line;
	return 0;
unsupported:
	*file = NULL;
	u->dl->lookups_unsupported++;
	return -ENOTSUP;
}

int dwarf_lines__file(struct dwarf_lines_unit *u, uint64_t idx, const char **name)
{
	*name = NULL;
	if (u->refused)
		return -EBADMSG;
	if (u->unsupported)
		return -ENOTSUP;
	/* DWARF 2-4 number files from 1; libdw's table has a placeholder at 0. */
	if (u->version < 5) {
		if (idx == 0 || idx > u->n_files)
			return -ENOTSUP;
		idx--;
	} else if (idx >= u->n_files) {
		return -ENOTSUP;
	}
	*name = u->files[idx];
	return 0;
}

/* ---- units --------------------------------------------------------------- */

static void unit_free(struct dwarf_lines_unit *u)
{
	if (!u)
		return;
	free(u->seqs);
	free(u->cps);
	free(u->files);
	free(u->names);
	free(u);
}

int dwarf_lines__unit(struct dwarf_lines *dl, uint64_t stmt_list, const char *comp_dir,
		      struct dwarf_lines_unit **unit)
{
	size_t lo = 0, hi = dl->n_units;
	struct dwarf_lines_unit *u;
	int err;

	*unit = NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dl->units[mid]->stmt_list == stmt_list) {
			*unit = dl->units[mid];
			return (*unit)->unsupported && !(*unit)->refused ? -ENOTSUP : 0;
		}
		if (dl->units[mid]->stmt_list < stmt_list)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t cap_before = dl->cap_units;

	if (array__grow(dl->units, dl->cap_units, dl->n_units))
		return -ENOMEM;
	dl->growth += (dl->cap_units - cap_before) * sizeof(*dl->units);
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->dl = dl;
	u->stmt_list = stmt_list;
	size_t before = dl->growth;

	/* Offsets of a unit are 32-bit from its start: bigger units are left to libdw. */
	err = stmt_list < dl->line_size && dl->line_size - stmt_list < UINT32_MAX ? 0 : -ENOTSUP;
	if (!err)
		err = read_header(u, comp_dir);
	if (!err)
		err = index_program(u);
	if (err == -ENOMEM) {
		dl->growth = before;
		unit_free(u);
		return err;
	}
	if (err) {
		/* Remembered as unsupported: nothing of it kept but the record. */
		free(u->seqs);
		free(u->cps);
		free(u->files);
		free(u->names);
		u->seqs = NULL;
		u->cps = NULL;
		u->files = NULL;
		u->names = NULL;
		u->n_seqs = u->n_files = 0;
		u->unsupported = true;
		u->refused = err == -EFBIG;
		dl->growth = before;
		if (u->refused)
			dl->refused++;
		else
			dl->unsupported++;
	}
	dl->growth += sizeof(*u);
	memmove(&dl->units[lo + 1], &dl->units[lo], (dl->n_units - lo) * sizeof(*dl->units));
	dl->units[lo] = u;
	dl->n_units++;
	*unit = u;
	return u->unsupported && !u->refused ? -ENOTSUP : 0;
}

int dwarf_lines__unit_of(struct dwarf_lines *dl, Dwarf_Die *cu, struct dwarf_lines_unit **unit)
{
	Dwarf_Attribute attr;
	Dwarf_Word off;

	*unit = NULL;
	if (dwarf_formudata(dwarf_attr(cu, DW_AT_stmt_list, &attr), &off) != 0)
		return -ENOTSUP;
	return dwarf_lines__unit(dl, off, dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)),
				 unit);
}

/* ---- the reader ---------------------------------------------------------- */

struct dwarf_lines *dwarf_lines__new_raw(const void *line, size_t line_size, const void *line_str,
					 size_t line_str_size, const void *str, size_t str_size)
{
	struct dwarf_lines *dl;

	if (!line || !line_size)
		return NULL;
	dl = calloc(1, sizeof(*dl));
	if (!dl)
		return NULL;
	dl->line = line;
	dl->line_size = line_size;
	dl->line_str = line_str;
	dl->line_str_size = line_str ? line_str_size : 0;
	dl->str = str;
	dl->str_size = str ? str_size : 0;
	dl->growth = sizeof(*dl);
	return dl;
}

/* A debug section's bytes as libdw holds them (decompressed already), else NULL. */
static const void *section_data(Elf *elf, size_t shstrndx, const char *want, size_t *size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, want))
			continue;
		/* Still compressed: libdw did not inflate it in place; left to libdw. */
		if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED))
			return NULL;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || !data->d_size)
			return NULL;
		*size = data->d_size;
		return data->d_buf;
	}
	return NULL;
}

struct dwarf_lines *dwarf_lines__new(Dwarf *dw)
{
	Elf *elf = dw ? dwarf_getelf(dw) : NULL;
	const void *line, *line_str, *str;
	size_t shstrndx, line_size = 0, line_str_size = 0, str_size = 0;
	GElf_Ehdr eh;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0 || !gelf_getehdr(elf, &eh))
		return NULL;
	/* Little-endian reads only (the hosts omniprof runs on). */
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return NULL;
	line = section_data(elf, shstrndx, ".debug_line", &line_size);
	line_str = section_data(elf, shstrndx, ".debug_line_str", &line_str_size);
	str = section_data(elf, shstrndx, ".debug_str", &str_size);
	return dwarf_lines__new_raw(line, line_size, line_str, line_str_size, str, str_size);
}

void dwarf_lines__free(struct dwarf_lines *dl)
{
	if (!dl)
		return;
	for (size_t i = 0; i < dl->n_units; i++)
		unit_free(dl->units[i]);
	free(dl->units);
	free(dl);
}

size_t dwarf_lines__growth(struct dwarf_lines *dl)
{
	size_t n;

	if (!dl)
		return 0;
	n = dl->growth;
	dl->bytes += n;
	dl->growth = 0;
	return n;
}

void dwarf_lines__stats(const struct dwarf_lines *dl, struct dwarf_lines_stats *st)
{
	*st = (struct dwarf_lines_stats){0};
	if (!dl)
		return;
	st->units = dl->n_units;
	st->unsupported = dl->unsupported;
	st->refused = dl->refused;
	st->lookups_unsupported = dl->lookups_unsupported;
	st->bytes = dl->bytes + dl->growth;
}
