// SPDX-License-Identifier: Apache-2.0
#include "interp/python/python_code.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "interp/python/python_layout.h"

#define CODE_HEADER_LEN 256 /* more than the last field read below, in every version */
#define STR_HEADER_LEN	72  /* sizeof(PyCompactUnicodeObject), the larger of the two */

/* Reads len bytes at addr, all or nothing. 0 or -errno. */
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

static int32_t get_i32(const uint8_t *buf, uint16_t off)
{
	int32_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* Appends code point cp as UTF-8 (up to 4 bytes) at *p. */
static char *put_utf8(char *p, uint32_t cp)
{
	if (cp < 0x80) {
		*p++ = (char)cp;
	} else if (cp < 0x800) {
		*p++ = (char)(0xc0 | cp >> 6);
		*p++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*p++ = (char)(0xe0 | cp >> 12);
		*p++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*p++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*p++ = (char)(0xf0 | (cp >> 18 & 0x07));
		*p++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*p++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*p++ = (char)(0x80 | (cp & 0x3f));
	}
	return p;
}

/*
 * A str object (PyASCIIObject): length at 16, then the state bit field at
 * 32: interned (2 bits), kind (3: bytes per character), compact (1), ascii
 * (1). Compact strings keep their characters right after the header, whose
 * size depends on ascii (Include/cpython/unicodeobject.h). Code names and
 * file names are always compact.
 */
int python_code__read_str(const struct remote_memory *mem, const struct python_layout *layout,
			  uint64_t addr, char **out, bool *cut)
{
	uint8_t hdr[STR_HEADER_LEN];
	uint32_t state, kind;
	int64_t length;
	uint8_t *raw = NULL;
	char *s = NULL, *p;
	bool ascii;
	int err;

	*out = NULL;
	err = read_mem(mem, addr, hdr, layout->unicode_compact_size);
	if (err)
		return err;
	memcpy(&length, hdr + PYTHON_OB_SIZE, sizeof(length));
	memcpy(&state, hdr + PYTHON_STR_STATE, sizeof(state));
	kind = (state >> 2) & 7;
	ascii = (state >> 6) & 1;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4) || length < 0)
		return -EINVAL;
	if (length > PYTHON_STR_MAX_CHARS) {
		length = PYTHON_STR_MAX_CHARS;
		if (cut)
			*cut = true;
	}
	raw = malloc((size_t)length * kind + 1);
	s = malloc((size_t)length * 4 + 1);
	if (!raw || !s) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = read_mem(mem,
		       addr + (ascii ? layout->unicode_ascii_size : layout->unicode_compact_size),
		       raw, (size_t)length * kind);
	if (err && length)
		goto cleanup;
	err = 0;
	p = s;
	for (int64_t i = 0; i < length; i++) {
		uint32_t cp;

		if (kind == 1) {
			cp = raw[i];
		} else if (kind == 2) {
			uint16_t u;

			memcpy(&u, raw + 2 * i, 2);
			cp = u;
		} else {
			memcpy(&cp, raw + 4 * i, 4);
			if (cp > 0x10ffff)
				cp = 0xfffd;
		}
		p = put_utf8(p, cp);
	}
	*p = '\0';
	/* Held until the profile is built: no more than the characters need. */
	*out = realloc(s, (size_t)(p - s) + 1);
	if (!*out)
		*out = s;
	s = NULL;
cleanup:
	free(raw);
	free(s);
	return err;
}

/* The bytes of a bytes object (PyBytesObject): size at 16, data at 32; at most
 * PYTHON_LINE_TABLE_MAX of them (*cut set when there are more). */
static int read_bytes(const struct remote_memory *mem, uint64_t addr, uint8_t **out, size_t *len,
		      bool *cut)
{
	int64_t size;
	uint8_t *buf;
	int err;

	*out = NULL;
	*len = 0;
	err = read_mem(mem, addr + PYTHON_OB_SIZE, &size, sizeof(size));
	if (err)
		return err;
	if (size < 0)
		return -EINVAL;
	if (size > (int64_t)PYTHON_LINE_TABLE_MAX) {
		size = PYTHON_LINE_TABLE_MAX;
		*cut = true;
	}
	buf = malloc(size ? (size_t)size : 1);
	if (!buf)
		return -ENOMEM;
	err = read_mem(mem, addr + PYTHON_BYTES_DATA, buf, (size_t)size);
	if (err && size) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = (size_t)size;
	return 0;
}

/* Is the object at addr of type "code"? (ob_type -> tp_name) */
static bool is_code_object(const struct remote_memory *mem, const uint8_t *obj)
{
	uint64_t type = get_u64(obj, PYTHON_OB_TYPE), name_ptr;
	char name[8] = {0};

	return !read_mem(mem, type + PYTHON_TP_NAME, &name_ptr, sizeof(name_ptr)) &&
	       !read_mem(mem, name_ptr, name, 5) && !memcmp(name, "code", 5);
}

/* Bytes up to the end of the last field read: no further (the object may end there). */
static size_t code_header_len(const struct python_layout *l)
{
	uint16_t offs[] = {l->code_filename,	    l->code_name,
			   l->code_qualname,	    l->code_line_table,
			   l->bpf.code_fingerprint, l->code_firstlineno};
	size_t end = 0;

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		if (offs[i] != OP_PY_NONE && offs[i] + 8u > end)
			end = offs[i] + 8u;
	return end < CODE_HEADER_LEN ? end : CODE_HEADER_LEN;
}

size_t python_code__bytes(const struct python_code *c)
{
	if (!c)
		return 0;
	return sizeof(*c) + (c->name ? strlen(c->name) + 1 : 0) +
	       (c->filename ? strlen(c->filename) + 1 : 0) + c->n_lines;
}

void python_code__free(struct python_code *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->filename);
	free(c->lines);
	free(c);
}

int python_code__read_from(const struct remote_memory *mem, const struct python_layout *layout,
			   uint64_t addr, uint64_t fingerprint, struct python_code **out)
{
	uint8_t obj[CODE_HEADER_LEN];
	uint16_t name_off =
	    layout->code_qualname != OP_PY_NONE ? layout->code_qualname : layout->code_name;
	bool cut_name = false, cut_file = false, cut_lines = false;
	struct python_code *c;
	int err;

	*out = NULL;
	err = read_mem(mem, addr, obj, code_header_len(layout));
	if (err)
		return err;
	if (get_u64(obj, layout->bpf.code_fingerprint) != fingerprint)
		return -ESTALE;
	if (!is_code_object(mem, obj))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->firstlineno = get_i32(obj, layout->code_firstlineno);
	c->line_kind = layout->line_table;
	err = python_code__read_str(mem, layout, get_u64(obj, name_off), &c->name, &cut_name);
	if (err)
		goto fail;
	/* A file name or line table that cannot be read still leaves a name. */
	if (python_code__read_str(mem, layout, get_u64(obj, layout->code_filename), &c->filename,
				  &cut_file))
		c->filename = strdup("");
	if (!c->filename) {
		err = -ENOMEM;
		goto fail;
	}
	read_bytes(mem, get_u64(obj, layout->code_line_table), &c->lines, &c->n_lines, &cut_lines);
	c->cut = (cut_name ? PYTHON_CODE_CUT_NAME : 0) | (cut_file ? PYTHON_CODE_CUT_FILENAME : 0) |
		 (cut_lines ? PYTHON_CODE_CUT_LINES : 0);
	*out = c;
	return 0;
fail:
	python_code__free(c);
	return err;
}
