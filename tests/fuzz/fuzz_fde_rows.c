// SPDX-License-Identifier: Apache-2.0
/*
 * One FDE at a time through .eh_frame_hdr (stack_deltas__fde_index_parse,
 * stack_deltas__fde_rows): the walk of a held stack copy before its file's
 * table is built. Input: a 4-byte little-endian length of .eh_frame_hdr, a
 * 4-byte signed distance from .eh_frame's address to the header's, the
 * header's bytes, then .eh_frame's. The two sections are read through a
 * bounded reader as one file (.eh_frame first). Each pc the search table
 * names (and the bytes after it) is looked up; rows given must be sorted,
 * start at the FDE's start, lie inside it and give a rule for the pc. The
 * whole input is also read as an ELF file (stack_deltas__fde_index_read: its
 * own reading of the ELF and section headers), and looked up the same way.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/stack_deltas.h"

#define EH_VADDR    0x100000ull
#define MAX_LOOKUPS 16

struct file {
	const uint8_t *data;
	size_t len;
};

static int file_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct file *f = ctx;

	if (off > f->len || len > f->len - off)
		return -5; /* -EIO */
	memcpy(buf, f->data + off, len);
	return 0;
}

static void check(const struct fde_index *ix, struct file *f, uint64_t pc)
{
	struct fde_rows r;

	if (stack_deltas__fde_rows(ix, file_read, f, pc, &r) == 0) {
		if (!r.n || r.rows[0].addr != r.start || pc < r.start || pc >= r.end)
			abort();
		for (size_t i = 0; i < r.n; i++)
			if (r.rows[i].addr >= r.end || (i && r.rows[i - 1].addr >= r.rows[i].addr))
				abort();
		if (!fde_rows__rule(&r, pc))
			abort();
	}
	fde_rows__free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct file f;
	struct fde_index ix;
	uint32_t hdr_len;
	int32_t dist;
	size_t eh_len;
	uint64_t hdr_vaddr;

	if (size < 8)
		return 0;
	f = (struct file){.data = data, .len = size};
	if (stack_deltas__fde_index_read(file_read, &f, size, &ix) == 0) {
		for (uint32_t i = 0; i < ix.count && i < MAX_LOOKUPS; i++) {
			int32_t rel;

			if (file_read(&f, ix.table_off + (uint64_t)i * 8, &rel, 4))
				break;
			check(&ix, &f, ix.hdr_vaddr + (uint64_t)(int64_t)rel);
		}
	}
	memcpy(&hdr_len, data, 4);
	memcpy(&dist, data + 4, 4);
	data += 8;
	size -= 8;
	if (hdr_len > size)
		hdr_len = (uint32_t)size;
	eh_len = size - hdr_len;
	/* One file: .eh_frame at offset 0, the header after it. */
	f.data = data + hdr_len;
	f.len = eh_len;
	{
		uint8_t *whole = malloc(size ? size : 1);

		if (!whole)
			return 0;
		memcpy(whole, data + hdr_len, eh_len);
		memcpy(whole + eh_len, data, hdr_len);
		f.data = whole;
		f.len = size;
		hdr_vaddr = EH_VADDR + (uint64_t)(int64_t)dist;
		if (stack_deltas__fde_index_parse(data, hdr_len, hdr_len, hdr_vaddr, eh_len,
						  EH_VADDR, 0, eh_len, &ix) == 0) {
			for (uint32_t i = 0; i < ix.count && i < MAX_LOOKUPS; i++) {
				int32_t rel;
				uint64_t pc;

				if (file_read(&f, ix.table_off + (uint64_t)i * 8, &rel, 4))
					break;
				pc = hdr_vaddr + (uint64_t)(int64_t)rel;
				check(&ix, &f, pc);
				check(&ix, &f, pc + 1 + (i & 7) * 3);
				check(&ix, &f, pc - 1);
			}
		}
		free(whole);
	}
	return 0;
}
