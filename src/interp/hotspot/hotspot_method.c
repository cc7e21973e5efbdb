// SPDX-License-Identifier: Apache-2.0
#include "interp/hotspot/hotspot_method.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/hotspot/hotspot_vm.h"
#include "proc/remote_memory.h"

void hotspot_method__free(struct hotspot_method *m)
{
	if (!m)
		return;
	free(m->name);
	free(m->filename);
	free(m->lines);
	free(m);
}

static int read_u64(const struct remote_memory *m, uint64_t addr, uint64_t *v)
{
	return remote_memory__read(m, addr, v, sizeof(*v));
}

static int read_u16(const struct remote_memory *m, uint64_t addr, uint16_t *v)
{
	return remote_memory__read(m, addr, v, sizeof(*v));
}

/* ConstMethod's flags (a u2 to JDK 20, a u4 from JDK 21) of the ConstMethod at cm. */
static int read_flags(const struct remote_memory *m, const struct hotspot_layout *l, uint64_t cm,
		      uint32_t *v)
{
	uint16_t v16;

	if (l->cm_flags_size == 4)
		return remote_memory__read(m, cm + l->cm_flags, v, sizeof(*v));
	if (read_u16(m, cm + l->cm_flags, &v16))
		return -EFAULT;
	*v = v16;
	return 0;
}

/* A Symbol's bytes into buf (NUL-terminated, at most cap - 1, cut beyond). */
static int read_symbol(const struct remote_memory *m, const struct hotspot_layout *l, uint64_t sym,
		       char *buf, size_t cap)
{
	uint16_t len;

	if (!sym || read_u16(m, sym + l->sym_length, &len))
		return -EFAULT;
	if (len > cap - 1)
		len = (uint16_t)(cap - 1);
	if (len && remote_memory__read(m, sym + l->sym_body, buf, len))
		return -EFAULT;
	buf[len] = 0;
	return 0;
}

/* The Symbol* in slot index of constant pool cp (Utf8 entries hold one). */
static int pool_symbol(const struct remote_memory *m, const struct hotspot_layout *l, uint64_t cp,
		       uint16_t index, char *buf, size_t cap)
{
	uint64_t sym;

	if (!index || read_u64(m, cp + l->constant_pool_size + (uint64_t)index * 8, &sym))
		return -EFAULT;
	return read_symbol(m, l, sym, buf, cap);
}

/*
 * UNSIGNED5 (HotSpot's CompressedReadStream::read_int): bytes >= 192 go on,
 * each its bits + excess (1 from JDK 20: OP_JVM_F_UNSIGNED5_X1).
 */
static int read_unsigned5(const uint8_t *p, size_t len, unsigned int excess, size_t *pos,
			  uint32_t *out)
{
	uint32_t sum = 0;
	int shift = 0;

	for (int i = 0; i < 5; i++) {
		uint32_t b;

		if (*pos >= len)
			return -EINVAL;
		b = p[(*pos)++];
		sum += (b - excess) << shift;
		if (b < 192 || i == 4) {
			*out = sum;
			return 0;
		}
		shift += 6;
	}
	return -EINVAL;
}

static int read_signed5(const uint8_t *p, size_t len, unsigned int excess, size_t *pos,
			int32_t *out)
{
	uint32_t v;

	if (read_unsigned5(p, len, excess, pos, &v))
		return -EINVAL;
	*out = (int32_t)((v >> 1) ^ (0u - (v & 1)));
	return 0;
}

int hotspot_method__decode_lines(const uint8_t *p, size_t len, unsigned int excess,
				 struct hotspot_line *lines, size_t max)
{
	size_t pos = 0, n = 0;
	int64_t bci = 0, line = 0;

	while (n < max) {
		int32_t db, dl;
		uint8_t b;

		if (pos >= len)
			return -EINVAL;
		b = p[pos++];
		if (!b)
			break;
		if (b == 0xff) {
			if (read_signed5(p, len, excess, &pos, &db) ||
			    read_signed5(p, len, excess, &pos, &dl))
				return -EINVAL;
		} else {
			db = b >> 3;
			dl = b & 7;
		}
		bci += db;
		line += dl;
		if (bci < 0 || bci > 0xffff || line < 0 || line > INT32_MAX)
			return -EINVAL;
		lines[n++] = (struct hotspot_line){.bci = (uint32_t)bci, .line = (int32_t)line};
	}
	return (int)n;
}

/* The compressed line table at addr (read page by page up to its end) into m. */
static int read_lines(const struct remote_memory *mem, uint64_t addr, unsigned int excess,
		      struct hotspot_method *m)
{
	uint8_t *buf = malloc(HOTSPOT_LINES_MAX);
	struct hotspot_line *lines = NULL;
	size_t got = 0;
	int n = -EINVAL;

	if (!buf)
		return -ENOMEM;
	while (got < HOTSPOT_LINES_MAX) {
		size_t len = 4096 - ((addr + got) & 4095);

		if (len > HOTSPOT_LINES_MAX - got)
			len = HOTSPOT_LINES_MAX - got;
		if (remote_memory__read(mem, addr + got, buf + got, len))
			break;
		got += len;
		/* Each entry is at least one byte: as many entries as bytes, at most. */
		lines = realloc(lines, got * sizeof(*lines));
		if (!lines) {
			free(buf);
			return -ENOMEM;
		}
		n = hotspot_method__decode_lines(buf, got, excess, lines, got);
		if (n >= 0)
			break;
	}
	free(buf);
	if (n < 0) {
		free(lines);
		return n;
	}
	m->lines = n ? realloc(lines, (size_t)n * sizeof(*lines)) : NULL;
	if (n && !m->lines)
		m->lines = lines;
	else if (!n)
		free(lines);
	m->n_lines = (uint32_t)n;
	return 0;
}

/* "a/b/C" + "m" -> "a.b.C.m" */
static char *join_name(const char *klass, const char *method)
{
	size_t kl = strlen(klass), ml = strlen(method);
	char *s = malloc(kl + ml + 2);

	if (!s)
		return NULL;
	for (size_t i = 0; i < kl; i++)
		s[i] = klass[i] == '/' ? '.' : klass[i];
	s[kl] = '.';
	memcpy(s + kl + 1, method, ml + 1);
	return s;
}

int hotspot_method__read(const struct remote_memory *mem, const struct hotspot_layout *l,
			 uint64_t method_addr, uint64_t const_method, struct hotspot_method **out)
{
	char *klass = NULL, *name = NULL, *file = NULL;
	uint64_t cm, cp, holder, ksym;
	uint16_t name_index, file_index = 0, code_size;
	uint32_t flags;
	struct hotspot_method *m = NULL;
	int err = -EFAULT;

	*out = NULL;
	if (read_u64(mem, method_addr + l->method_const, &cm))
		return -EFAULT;
	if (!cm || (cm & OP_JVM_FP_MASK) != (const_method & OP_JVM_FP_MASK))
		return -ESTALE;
	klass = malloc(HOTSPOT_NAME_MAX);
	name = malloc(HOTSPOT_NAME_MAX);
	file = malloc(HOTSPOT_NAME_MAX);
	m = calloc(1, sizeof(*m));
	if (!klass || !name || !file || !m) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (read_u64(mem, cm + l->cm_constants, &cp) || !cp ||
	    read_u16(mem, cm + l->cm_name_index, &name_index) || read_flags(mem, l, cm, &flags) ||
	    read_u16(mem, cm + l->cm_code_size, &code_size) ||
	    read_u64(mem, cp + l->cp_holder, &holder) || !holder ||
	    read_u64(mem, holder + l->klass_name, &ksym))
		goto cleanup;
	if (read_symbol(mem, l, ksym, klass, HOTSPOT_NAME_MAX) ||
	    pool_symbol(mem, l, cp, name_index, name, HOTSPOT_NAME_MAX))
		goto cleanup;
	if (l->cp_source_file)
		read_u16(mem, cp + l->cp_source_file, &file_index);
	else
		read_u16(mem, holder + l->ik_source_file, &file_index);
	if (pool_symbol(mem, l, cp, file_index, file, HOTSPOT_NAME_MAX))
		file[0] = 0;
	if (flags & l->cm_has_linenumbers) {
		err =
		    read_lines(mem, cm + l->const_method_size + code_size, l->unsigned5_excess, m);
		if (err == -ENOMEM)
			goto cleanup;
	}
	m->name = join_name(klass, name);
	m->filename = strdup(file);
	if (!m->name || !m->filename) {
		err = -ENOMEM;
		goto cleanup;
	}
	m->bytes =
	    sizeof(*m) + strlen(m->name) + strlen(m->filename) + 2 + m->n_lines * sizeof(*m->lines);
	*out = m;
	m = NULL;
	err = 0;
cleanup:
	hotspot_method__free(m);
	free(klass);
	free(name);
	free(file);
	return err;
}

int hotspot_method__read_stub(const struct remote_memory *mem, uint64_t name_addr,
			      struct hotspot_method **out)
{
	struct hotspot_method *m;
	char buf[128];
	size_t len = sizeof(buf) - 1;

	*out = NULL;
	if (!name_addr)
		return -EFAULT;
	/* Never past the page unless needed: the string may end near it. */
	if (4096 - (name_addr & 4095) < len)
		len = 4096 - (name_addr & 4095);
	if (remote_memory__read(mem, name_addr, buf, len))
		return -EFAULT;
	buf[len] = 0;
	buf[strnlen(buf, len)] = 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->name = malloc(strlen(buf) + 3);
	m->filename = strdup("");
	if (!m->name || !m->filename) {
		hotspot_method__free(m);
		return -ENOMEM;
	}
	snprintf(m->name, strlen(buf) + 3, "[%s]", buf);
	m->bytes = sizeof(*m) + strlen(m->name) + 2;
	*out = m;
	return 0;
}

bool hotspot_method__same(const struct hotspot_method *a, const struct hotspot_method *b)
{
	return a && b && !strcmp(a->name, b->name) && !strcmp(a->filename, b->filename) &&
	       a->n_lines == b->n_lines &&
	       (!a->n_lines || !memcmp(a->lines, b->lines, a->n_lines * sizeof(*a->lines)));
}

int64_t hotspot_method__line(const struct hotspot_method *m, uint32_t bci)
{
	int64_t best_line = 0;
	int64_t best_bci = -1;

	if (!m || bci == OP_JVM_BCI_NONE)
		return 0;
	for (uint32_t i = 0; i < m->n_lines; i++) {
		if (m->lines[i].bci <= bci && (int64_t)m->lines[i].bci >= best_bci) {
			best_bci = m->lines[i].bci;
			best_line = m->lines[i].line;
		}
	}
	return best_line;
}
