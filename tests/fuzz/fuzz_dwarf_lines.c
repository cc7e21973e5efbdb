// SPDX-License-Identifier: Apache-2.0
/*
 * .debug_line programs (src/symbol/dwarf_lines.c) as a file's DWARF hands
 * them to us: every unit the bytes hold, read and then asked for lines
 * over a spread of addresses (where a small executable's code lies, and
 * the edges) and for its file names.
 *
 * Input: a 4-byte little-endian length L, L bytes of .debug_line, then the
 * rest as .debug_line_str (DWARF 5's strings); .debug_str is the same
 * bytes, so DW_FORM_strp reaches real strings too.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbol/dwarf_lines.h"

/* Units tried at most: the offsets the unit lengths chain through. */
#define MAX_UNITS 64

static void ask(struct dwarf_lines_unit *u)
{
	const char *file;
	int line;

	for (uint64_t i = 0; i < 1024; i++) {
		/* A small PIE's .text (0x1000-0x3000) densely, then wider. */
		uint64_t addr = i < 768 ? 0x1000 + i * 11 : (i - 768) * 0x10003;

		if (dwarf_lines__find(u, addr, &file, &line) == 0)
			(void)strlen(file);
	}
	dwarf_lines__find(u, UINT64_MAX, &file, &line);
	for (uint64_t i = 0; i < 64; i++)
		if (dwarf_lines__file(u, i, &file) == 0)
			(void)strlen(file);
	dwarf_lines__file(u, UINT64_MAX, &file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarf_lines *dl;
	struct dwarf_lines_stats st;
	uint32_t len;
	uint64_t off = 0;

	if (size < 4)
		return 0;
	memcpy(&len, data, 4);
	data += 4;
	size -= 4;
	if (len > size)
		len = (uint32_t)size;
	dl = dwarf_lines__new_raw(data, len, data + len, size - len, data + len, size - len);
	if (!dl)
		return 0;
	for (int n = 0; n < MAX_UNITS && off + 4 <= len; n++) {
		struct dwarf_lines_unit *u;
		uint32_t unit_len;

		if (dwarf_lines__unit(dl, off, n & 1 ? "/comp/dir" : NULL, &u) == 0)
			ask(u);
		/* Asked again: the remembered answer. */
		(void)dwarf_lines__unit(dl, off, NULL, &u);
		memcpy(&unit_len, data + off, 4);
		if (unit_len >= 0xfffffff0u)
			break;
		off += 4ull + unit_len;
	}
	(void)dwarf_lines__growth(dl);
	dwarf_lines__stats(dl, &st);
	dwarf_lines__free(dl);
	return 0;
}
