// SPDX-License-Identifier: Apache-2.0
#include "interp/python/python_lines.h"

#include <stdbool.h>

#include "interp/python/python_layout.h"

#define NOT_STARTED 0xffffffffu

static int64_t lnotab_line(const uint8_t *t, size_t len, int64_t line, uint32_t offset)
{
	uint64_t addr = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += t[i];
		if (addr > offset)
			break;
		line += (int8_t)t[i + 1];
	}
	return line;
}

/* 3.10: offsets in the table are bytes, f_lasti counts 2-byte code units. */
static int64_t linetable_310_line(const uint8_t *t, size_t len, int64_t first, uint32_t lasti)
{
	uint64_t start = 0, end = 0, offset = (uint64_t)lasti * 2;
	int64_t line = first;

	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t delta = (int8_t)t[i + 1];

		start = end;
		end += t[i];
		if (delta != -128)
			line += delta;
		if (offset >= start && offset < end)
			return delta == -128 ? first : line;
	}
	return first;
}

struct cursor {
	const uint8_t *p, *end;
};

/* 6-bit chunks, least significant first; bit 6 says another chunk follows. */
static bool read_varint(struct cursor *c, uint64_t *v)
{
	unsigned int shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (c->p >= c->end || shift > 60)
			return false;
		b = *c->p++;
		*v |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return true;
}

static bool read_svarint(struct cursor *c, int64_t *v)
{
	uint64_t u;

	if (!read_varint(c, &u))
		return false;
	*v = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return true;
}

static int64_t locations_line(const uint8_t *t, size_t len, int64_t first, uint32_t offset)
{
	struct cursor c = {t, t + len};
	uint64_t unit = 0, skip;
	int64_t line = first;

	while (c.p < c.end) {
		uint8_t head = *c.p++;
		unsigned int code = (head >> 3) & 15;
		uint64_t units = (uint64_t)(head & 7) + 1;
		bool has_line = code != 15;
		int64_t delta = 0;

		if (!(head & 0x80))
			return first; /* not the start of an entry: a table we misread */
		if (code == 14) {
			if (!read_svarint(&c, &delta) || !read_varint(&c, &skip) ||
			    !read_varint(&c, &skip) || !read_varint(&c, &skip))
				return first;
		} else if (code == 13) {
			if (!read_svarint(&c, &delta))
				return first;
		} else if (code >= 10 && code <= 12) {
			delta = code - 10;
			if (c.end - c.p < 2)
				return first;
			c.p += 2;
		} else if (code < 10) {
			if (c.p == c.end)
				return first;
			c.p += 1;
		}
		line += delta;
		if (offset >= unit && offset < unit + units)
			return has_line ? line : first;
		unit += units;
	}
	return first;
}

int64_t python_lines__find(int kind, const uint8_t *table, size_t len, int64_t firstlineno,
			   uint32_t offset)
{
	if (offset == NOT_STARTED || !table)
		return firstlineno;
	switch (kind) {
	case PYTHON_LNOTAB:
		return lnotab_line(table, len, firstlineno, offset);
	case PYTHON_LINETABLE_310:
		return linetable_310_line(table, len, firstlineno, offset);
	case PYTHON_LOCATIONS_311:
		return locations_line(table, len, firstlineno, offset);
	default:
		return firstlineno;
	}
}
