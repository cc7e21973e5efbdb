// SPDX-License-Identifier: Apache-2.0
/*
 * /proc/kallsyms lines are "ADDR TYPE NAME" with an optional "\t[MODULE]".
 * A real file has ~200k lines, so names live in one arena sized by a first
 * counting pass over the text, and each module name is stored once and
 * shared by all its symbols.
 *
 * Only the text types t, T, w and W are kept: samples are instruction
 * addresses, and letting a data symbol (d, r, b, ...) be the "last symbol at
 * or below" an address would only ever mislabel code that follows it.
 * (w/W are weak symbols; in kallsyms they are functions.)
 */
#include "symbol/kallsyms.h"
#include "util/read_file.h"

#include "util/hashmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel's KSYM_NAME_LEN is 512; anything much longer is not kallsyms. */
#define KSYM_NAME_MAX	  1024
#define KSYM_MODULE_MAX	  1024
#define KALLSYMS_MAX_FILE (1u << 30)

struct kmodule {
	size_t len;
	char name[]; /* NUL-terminated */
};

struct kallsyms {
	struct ksym *syms; /* sorted by address, then file order */
	size_t n_syms;
	char *names;		/* every kept name, NUL-terminated, in file order */
	struct hashmap modules; /* struct kmodule entries, owned */
	size_t skipped;
	bool restricted;
};

/* One line split into fields; the pointers point into the parsed text. */
struct kline {
	uint64_t addr;
	char type;
	const char *name;
	size_t name_len;
	const char *module; /* without brackets; NULL when absent */
	size_t module_len;
};

struct module_key {
	const char *name;
	size_t len;
};

static bool module_equal(const void *entry, const void *key, void *ctx)
{
	const struct kmodule *m = entry;
	const struct module_key *k = key;

	(void)ctx;
	return m->len == k->len && memcmp(m->name, k->name, k->len) == 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Bytes a field may hold: printable ASCII without spaces (so no NUL either). */
static bool is_field_char(char c)
{
	return c > ' ' && c < 0x7f;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool parse_addr(const char *s, size_t len, uint64_t *addr)
{
	uint64_t v = 0;

	if (len == 0 || len > 16)
		return false;
	for (size_t i = 0; i < len; i++) {
		int d = hex_value(s[i]);

		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*addr = v;
	return true;
}

/*
 * Parses the line [p, end) (no newline in it). Returns 1 for a well-formed
 * line, 0 for a blank one, -1 for a malformed one.
 */
static int parse_line(const char *p, const char *end, struct kline *l)
{
	const char *tok[5];
	size_t tok_len[5];
	size_t n = 0;

	while (p < end) {
		const char *start;

		if (is_blank(*p)) {
			p++;
			continue;
		}
		if (n == 5)
			return -1;
		start = p;
		while (p < end && !is_blank(*p)) {
			if (!is_field_char(*p))
				return -1;
			p++;
		}
		tok[n] = start;
		tok_len[n] = (size_t)(p - start);
		n++;
	}
	if (n == 0)
		return 0;
	if (n < 3 || n > 4)
		return -1;
	if (!parse_addr(tok[0], tok_len[0], &l->addr))
		return -1;
	if (tok_len[1] != 1)
		return -1;
	l->type = tok[1][0];
	if (tok_len[2] > KSYM_NAME_MAX)
		return -1;
	l->name = tok[2];
	l->name_len = tok_len[2];
	l->module = NULL;
	l->module_len = 0;
	if (n == 4) {
		if (tok_len[3] < 3 || tok_len[3] - 2 > KSYM_MODULE_MAX || tok[3][0] != '[' ||
		    tok[3][tok_len[3] - 1] != ']')
			return -1;
		l->module = tok[3] + 1;
		l->module_len = tok_len[3] - 2;
	}
	return 1;
}

static bool is_text_type(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* The shared copy of a module name (owned by ks), or NULL on ENOMEM. */
static const char *intern_module(struct kallsyms *ks, const char *name, size_t len)
{
	struct module_key key = {name, len};
	uint64_t hash = hash_bytes(name, len, 0);
	struct kmodule *m;

	m = hashmap__find(&ks->modules, hash, &key);
	if (m)
		return m->name;
	m = malloc(sizeof(*m) + len + 1);
	if (!m)
		return NULL;
	m->len = len;
	memcpy(m->name, name, len);
	m->name[len] = '\0';
	if (hashmap__insert(&ks->modules, hash, m) != 0) {
		free(m);
		return NULL;
	}
	return m->name;
}

struct scan_totals {
	size_t n_text;	   /* text symbols */
	size_t name_bytes; /* their names with NULs */
	bool any_line;
	bool any_nonzero;
};

/* State of the filling pass. */
struct fill_state {
	size_t name_off;
	/* A module's symbols are listed together: the last one is usually it. */
	const char *last_mod, *last_src;
	size_t last_len;
};

static int store_symbol(struct kallsyms *ks, struct fill_state *fs, const struct kline *l)
{
	struct ksym *s = &ks->syms[ks->n_syms];
	char *name = ks->names + fs->name_off;

	if (l->module && (!fs->last_mod || fs->last_len != l->module_len ||
			  memcmp(fs->last_src, l->module, l->module_len) != 0)) {
		fs->last_mod = intern_module(ks, l->module, l->module_len);
		if (!fs->last_mod)
			return -ENOMEM;
		fs->last_src = l->module;
		fs->last_len = l->module_len;
	}
	memcpy(name, l->name, l->name_len);
	name[l->name_len] = '\0';
	fs->name_off += l->name_len + 1;
	s->addr = l->addr;
	s->name = name;
	s->module = l->module ? fs->last_mod : NULL;
	ks->n_syms++;
	return 0;
}

/*
 * Walks every line. With fill false it only counts (into *t); with fill
 * true it stores the text symbols into ks, whose arrays were sized by a
 * counting pass over the same text.
 */
static int scan(struct kallsyms *ks, const char *buf, size_t len, bool fill, struct scan_totals *t)
{
	const char *p = buf, *end = buf + len;
	struct fill_state fs = {0};

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;
		struct kline l;
		int r = parse_line(p, line_end, &l);

		p = nl ? nl + 1 : end;
		if (r == 0)
			continue;
		if (fill) {
			if (r > 0 && is_text_type(l.type) && store_symbol(ks, &fs, &l))
				return -ENOMEM;
			continue;
		}
		if (r < 0) {
			ks->skipped++;
			continue;
		}
		t->any_line = true;
		t->any_nonzero |= l.addr != 0;
		if (is_text_type(l.type)) {
			t->n_text++;
			t->name_bytes += l.name_len + 1;
		}
	}
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Names sit in the arena in file order, so this keeps aliases in file order. */
	return ((uintptr_t)x->name > (uintptr_t)y->name) -
	       ((uintptr_t)x->name < (uintptr_t)y->name);
}

int kallsyms__parse(const char *buf, size_t len, struct kallsyms **out)
{
	struct scan_totals totals = {0};
	struct kallsyms *ks;
	int err;

	*out = NULL;
	if (!buf && len)
		return -EINVAL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	hashmap__init(&ks->modules, module_equal, NULL);
	if (!len)
		goto done;

	scan(ks, buf, len, false, &totals);
	ks->restricted = totals.any_line && !totals.any_nonzero;
	/* With every address hidden there is nothing a lookup could return. */
	if (ks->restricted || !totals.n_text)
		goto done;

	ks->syms = malloc(totals.n_text * sizeof(*ks->syms));
	ks->names = malloc(totals.name_bytes);
	if (!ks->syms || !ks->names) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = scan(ks, buf, len, true, &totals);
	if (err)
		goto cleanup;
	qsort(ks->syms, ks->n_syms, sizeof(*ks->syms), ksym_cmp);
done:
	*out = ks;
	return 0;

cleanup:
	kallsyms__free(ks);
	return err;
}

int kallsyms__load(const char *path, struct kallsyms **out)
{
	size_t len;
	char *buf;
	int err;

	*out = NULL;
	err = read_file(path ? path : "/proc/kallsyms", &buf, &len);
	if (err)
		return err;
	err = kallsyms__parse(buf, len, out);
	free(buf);
	return err;
}

void kallsyms__free(struct kallsyms *ks)
{
	void *entry;

	if (!ks)
		return;
	for (size_t i = 0; hashmap__next(&ks->modules, &i, &entry);)
		free(entry);
	hashmap__clear(&ks->modules);
	free(ks->syms);
	free(ks->names);
	free(ks);
}

const struct ksym *kallsyms__find(const struct kallsyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->n_syms;
	uint64_t found;

	/* First symbol above addr; the one before it is the answer. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* Of several names at one address, give the one listed first. */
	found = ks->syms[lo - 1].addr;
	hi = lo - 1;
	lo = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr < found)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &ks->syms[lo];
}

size_t kallsyms__count(const struct kallsyms *ks)
{
	return ks->n_syms;
}

size_t kallsyms__skipped_lines(const struct kallsyms *ks)
{
	return ks->skipped;
}

bool kallsyms__restricted(const struct kallsyms *ks)
{
	return ks->restricted;
}
