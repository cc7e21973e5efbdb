// SPDX-License-Identifier: Apache-2.0
/*
 * One Go function at a time (go_deltas__func_rows over a table read through
 * gopclntab__open_read, and go_deltas__index_read's own reading of the ELF
 * and section headers): the walk of a held stack copy of a Go process before
 * its file's table is built. The input is read as an ELF file (its
 * .gopclntab found by the section headers) and, failing that, as the table's
 * bytes alone. Each lookup's rows must be sorted, start at their start and
 * lie inside [start, end), and must equal what the same lookup gives over
 * the table in memory (gopclntab__open): the reader changes how bytes are
 * fetched, never the answer (but for bytes it refuses: a name longer than
 * its window, a read budget).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/gopclntab.h"
#include "unwind/go_deltas.h"

/* Where Go's linker puts .text in an amd64 executable: the seeds' tables use it. */
#define TEXT_START  0x401000ull
#define MAX_LOOKUPS 64
/* Reads of one lookup at most (as unwind_maps.c bounds them). */
#define MAX_READS 48

struct file {
	const uint8_t *data;
	uint64_t base, len;
	unsigned int reads;
};

static int file_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct file *f = ctx;

	if (off > f->len || len > f->len - off)
		return -ERANGE;
	if (++f->reads > MAX_READS)
		return -E2BIG;
	memcpy(buf, f->data + f->base + off, len);
	return 0;
}

static void check(const struct gopclntab *rt, const struct gopclntab *mt, struct file *sect,
		  uint64_t pc)
{
	struct fde_rows r, m;
	int err, merr;

	sect->reads = 0;
	err = go_deltas__func_rows(rt, pc, &r);
	merr = mt ? go_deltas__func_rows(mt, pc, &m) : -ENOENT;
	if (!err) {
		if (!r.n || r.rows[0].addr != r.start || r.start >= r.end)
			abort();
		for (size_t i = 0; i < r.n; i++)
			if (r.rows[i].addr >= r.end || (i && r.rows[i - 1].addr >= r.rows[i].addr))
				abort();
		/* Read or in memory: the same rows. */
		if (mt && (merr || m.n != r.n || m.start != r.start || m.end != r.end ||
			   memcmp(m.rows, r.rows, r.n * sizeof(*r.rows))))
			abort();
	} else if (mt && err == -ENOENT && merr == 0) {
		abort(); /* the reader refused what memory answers, with no read error */
	}
	fde_rows__free(&r);
	if (mt)
		fde_rows__free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct file whole = {.data = data, .len = size}, sect = {.data = data};
	struct gopclntab *rt = NULL, *mt = NULL;
	struct go_index gi = {0};
	uint64_t text = TEXT_START;

	if (go_deltas__index_read(file_read, &whole, size, &gi) == 0) {
		sect.base = gi.off;
		sect.len = gi.size;
		if (gi.text_addr)
			text = gi.text_addr;
	} else {
		sect.len = size;
	}
	sect.reads = 0;
	if (gopclntab__open_read(file_read, &sect, sect.len, text, &rt))
		return 0;
	if (gopclntab__open(data + sect.base, (size_t)sect.len, text, &mt))
		abort(); /* the same header in memory */
	for (uint64_t i = 0; i < MAX_LOOKUPS; i++) {
		struct gopclntab_func f;

		check(rt, mt, &sect, text + i * 0x731);
		sect.reads = 0;
		if (i < gopclntab__n_funcs(rt) && !gopclntab__func(rt, i, &f)) {
			check(rt, mt, &sect, f.entry);
			check(rt, mt, &sect, f.end - 1);
		}
	}
	check(rt, mt, &sect, 0);
	check(rt, mt, &sect, UINT64_MAX);
	gopclntab__free(rt);
	gopclntab__free(mt);
	return 0;
}
