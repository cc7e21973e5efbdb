// SPDX-License-Identifier: Apache-2.0
/*
 * /proc/kallsyms lines are "ADDR TYPE NAME" with an optional "\t[MODULE]".
 * A real file has ~200k lines, so names live in one arena, the file is
 * read in pieces and parsed as it comes, and each module name is stored
 * once and shared by all its symbols.
 *
 * Only the text types t, T, w and W are kept: samples are instruction
 * addresses, and letting a data symbol (d, r, b, ...) be the "last symbol at
 * or below" an address would only ever mislabel code that follows it.
 * (w/W are weak symbols; in kallsyms they are functions.)
 */
#include "symbol/kallsyms.h"

#include "util/array.h"
#include "util/string_intern.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel's KSYM_NAME_LEN is 512; anything much longer is not kallsyms. */
#define KSYM_NAME_MAX	  1024
#define KSYM_MODULE_MAX	  1024
#define KALLSYMS_MAX_FILE (1u << 30)

/* Symbols [first, next run's first) of one module (or the kernel), within 4 GiB of base. */
struct ksym_run {
	size_t first;
	uint64_t base;
	const char *module; /* NULL for the kernel image */
};

/* One symbol of the packed table. */
struct ksym_entry {
	uint32_t off;  /* address - its run's base */
	uint32_t name; /* offset of its name in names */
};

struct kallsyms {
	/* By symbol, sorted by address then file order. Written over the sorted
	 * build array (ksym_build, twice its size), not into arrays of their own:
	 * on a VM a page's first touch costs 20-25 us, and a second pair of
	 * arrays was 1 MiB (240 pages) more to fault in at each load. */
	struct ksym_entry *sym;
	size_t n_syms;
	struct ksym_run *runs; /* by first symbol (so by address) */
	size_t n_runs;
	char *names;		      /* every kept name, NUL-terminated, in file order */
	struct string_intern modules; /* module names, copies shared by their symbols */
	size_t skipped;
	bool restricted;
};

/* A symbol while the table is built: 16 bytes, sorted, then packed. */
struct ksym_build {
	uint64_t addr;
	uint32_t name;	 /* offset in the name arena */
	uint32_t module; /* index in modules + 1; 0 for the kernel image */
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

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
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

#define BYTES_OF(b) (0x0101010101010101ull * (b))

/*
 * The end of the field starting at p: its first byte that is not printable
 * ASCII without spaces ('!' to '~', so no NUL), or end. Eight bytes at a
 * time (5 MB a load; byte by byte this loop was a fifth of a load's CPU).
 * In each word, a byte below '!' makes x - 0x21.. borrow into its top bit
 * and a byte above '~' makes x + 0x01.. (127 - '~') carry into it (or has
 * it set already); a borrow or carry can flag bytes above a flagged one but
 * never below it, so the lowest flag is the first byte that ends the field.
 */
static const char *field_end(const char *p, const char *end)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ /* the lowest flag is the first byte */
	while (end - p >= 8) {
		uint64_t x, low, high, flags;

		memcpy(&x, p, sizeof(x));
		low = (x - BYTES_OF('!')) & ~x;
		high = (x + BYTES_OF(0x7f - '~')) | x;
		flags = (low | high) & BYTES_OF(0x80);
		if (flags)
			return p + __builtin_ctzll(flags) / 8;
		p += 8;
	}
#endif
	while (p < end && (unsigned char)(*p - '!') < 0x7f - '!')
		p++;
	return p;
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
		p = field_end(p, end);
		if (p < end && !is_blank(*p))
			return -1;
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

/* The module's index in ks->modules + 1, or 0 on ENOMEM. */
static uint32_t intern_module(struct kallsyms *ks, const char *name, size_t len)
{
	int64_t i = string_intern__add_len(&ks->modules, name, len);

	return i < 0 || i >= UINT32_MAX ? 0 : (uint32_t)i + 1;
}

/*
 * Symbols are added as lines arrive, so /proc/kallsyms (5 MB of text) is read
 * in small pieces rather than held whole. Until kallsyms_builder__finish(),
 * a symbol's name field holds its offset in the growing name arena.
 */
struct kallsyms_builder {
	struct kallsyms *ks;
	struct ksym_build *syms;
	size_t cap_syms;
	size_t names_len;
	size_t cap_names;
	/* A module's symbols are listed together: the last one is usually it. */
	uint32_t last_mod;
	size_t last_len;
	char last_buf[KSYM_MODULE_MAX]; /* the last module name as read (its text goes away) */
	bool any_line;
	bool any_nonzero;
};

#define PFX	"__pfx_"
#define PFX_LEN (sizeof(PFX) - 1)

/* Whether the symbol stored last is "__pfx_" + l's name, of the same module
 * (b->last_mod already l's), and its name the arena's last. */
static bool pfx_of(const struct kallsyms_builder *b, const struct kline *l)
{
	const struct kallsyms *ks = b->ks;
	const struct ksym_build *prev;
	size_t off;

	if (!ks->n_syms)
		return false;
	prev = &b->syms[ks->n_syms - 1];
	off = prev->name;
	return b->names_len - off == PFX_LEN + l->name_len + 1 &&
	       prev->module == (l->module ? b->last_mod : 0) &&
	       !memcmp(ks->names + off, PFX, PFX_LEN) &&
	       !memcmp(ks->names + off + PFX_LEN, l->name, l->name_len);
}

static int store_symbol(struct kallsyms_builder *b, const struct kline *l)
{
	struct kallsyms *ks = b->ks;
	struct ksym_build *s;

	if (l->module && (!b->last_mod || b->last_len != l->module_len ||
			  memcmp(b->last_buf, l->module, l->module_len) != 0)) {
		b->last_mod = intern_module(ks, l->module, l->module_len);
		if (!b->last_mod)
			return -ENOMEM;
		memcpy(b->last_buf, l->module, l->module_len);
		b->last_len = l->module_len;
	}
	if (array__grow(b->syms, b->cap_syms, ks->n_syms))
		return -ENOMEM;
	/* Kernels with function padding list "__pfx_NAME" right before each NAME
	 * (half of all text symbols): NAME shares the tail of that name's bytes. */
	if (pfx_of(b, l)) {
		s = &b->syms[ks->n_syms];
		s->name = s[-1].name + (uint32_t)PFX_LEN;
		ks->n_syms++;
		s->addr = l->addr;
		s->module = l->module ? b->last_mod : 0;
		return 0;
	}
	/* KALLSYMS_MAX_FILE keeps the arena's offsets within 32 bits. */
	if (array__reserve(ks->names, b->cap_names, b->names_len + l->name_len + 1))
		return -ENOMEM;
	s = &b->syms[ks->n_syms++];
	memcpy(ks->names + b->names_len, l->name, l->name_len);
	ks->names[b->names_len + l->name_len] = '\0';
	s->addr = l->addr;
	s->name = (uint32_t)b->names_len;
	s->module = l->module ? b->last_mod : 0;
	b->names_len += l->name_len + 1;
	return 0;
}

/* One line [p, end) without its newline. 0 or -ENOMEM. */
static int builder_line(struct kallsyms_builder *b, const char *p, const char *end)
{
	struct kline l;
	int r = parse_line(p, end, &l);

	if (r == 0)
		return 0;
	if (r < 0) {
		b->ks->skipped++;
		return 0;
	}
	b->any_line = true;
	b->any_nonzero |= l.addr != 0;
	return is_text_type(l.type) ? store_symbol(b, &l) : 0;
}

/* Every complete line of [buf, buf + len); returns the bytes used, or -ENOMEM. */
static long builder_lines(struct kallsyms_builder *b, const char *buf, size_t len, bool last)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl && !last)
			break;
		if (builder_line(b, p, nl ? nl : end))
			return -ENOMEM;
		p = nl ? nl + 1 : end;
	}
	return (long)(p - buf);
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym_build *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Names sit in the arena in file order, so this keeps aliases in file order. */
	return (x->name > y->name) - (x->name < y->name);
}

/*
 * Sorts syms with ksym_cmp. /proc/kallsyms lists the kernel's own symbols in
 * address order and then the modules' (122,093 of 122,131 text symbols here
 * were in order): the sorted prefix is kept, only the rest is sorted, and the
 * two are merged from the back with a copy of the rest. The result is the one
 * a full sort gives (ksym_cmp is a total order: names have distinct offsets);
 * a full qsort cost a third of a load (65 M instructions).
 */
static void sort_symbols(struct ksym_build *syms, size_t n)
{
	size_t k = 1, t, i, j, o;
	struct ksym_build *rest;

	while (k < n && ksym_cmp(&syms[k - 1], &syms[k]) <= 0)
		k++;
	if (k >= n)
		return;
	t = n - k;
	rest = t <= n / 4 ? malloc(t * sizeof(*rest)) : NULL;
	if (!rest) { /* mostly out of order (or no memory for the copy): sort it all */
		qsort(syms, n, sizeof(*syms), ksym_cmp);
		return;
	}
	qsort(syms + k, t, sizeof(*syms), ksym_cmp);
	memcpy(rest, syms + k, t * sizeof(*rest));
	for (i = k, j = t, o = n; j > 0;)
		if (i > 0 && ksym_cmp(&syms[i - 1], &rest[j - 1]) > 0)
			syms[--o] = syms[--i];
		else
			syms[--o] = rest[--j];
	free(rest);
}

static int builder_start(struct kallsyms_builder *b)
{
	memset(b, 0, sizeof(*b));
	b->ks = calloc(1, sizeof(*b->ks));
	if (!b->ks)
		return -ENOMEM;
	string_intern__init(&b->ks->modules, STRING_INTERN_COPY); /* allocates nothing yet */
	return 0;
}

static void builder_free(struct kallsyms_builder *b)
{
	free(b->syms);
	b->syms = NULL;
	kallsyms__free(b->ks);
	b->ks = NULL;
}

/*
 * The sorted symbols packed into ks->sym and ks->runs, in place: entry i (8
 * bytes at 8 * i) is written once build symbol i (16 bytes at 16 * i) has been
 * read, so no unread symbol is overwritten. syms then belongs to ks (shrunk
 * to the entries). 0, or -ENOMEM with syms still the caller's.
 */
static int pack_symbols(struct kallsyms *ks, struct ksym_build *syms)
{
	_Static_assert(sizeof(struct ksym_entry) <= sizeof(struct ksym_build),
		       "entries are written over the build symbols");
	struct ksym_entry *sym = (struct ksym_entry *)syms;
	size_t cap_runs = 0;

	/* The runs first: a failure leaves syms as it was, for the caller to free. */
	for (size_t i = 0; i < ks->n_syms; i++) {
		const struct ksym_run *run = ks->n_runs ? &ks->runs[ks->n_runs - 1] : NULL;
		const char *module =
		    syms[i].module ? string_intern__at(&ks->modules, syms[i].module - 1) : NULL;

		if (!run || run->module != module || syms[i].addr - run->base > UINT32_MAX) {
			if (array__grow(ks->runs, cap_runs, ks->n_runs))
				return -ENOMEM;
			ks->runs[ks->n_runs++] =
			    (struct ksym_run){.first = i, .base = syms[i].addr, .module = module};
		}
	}
	for (size_t i = 0, r = 0; i < ks->n_syms; i++) {
		const struct ksym_build b = syms[i];

		if (r + 1 < ks->n_runs && ks->runs[r + 1].first == i)
			r++;
		sym[i] = (struct ksym_entry){.off = (uint32_t)(b.addr - ks->runs[r].base),
					     .name = b.name};
	}
	/* Gives back the upper half (a mapping shrinks in place). */
	ks->sym = realloc(sym, ks->n_syms * sizeof(*sym)) ?: sym;
	ks->runs = realloc(ks->runs, ks->n_runs * sizeof(*ks->runs)) ?: ks->runs;
	return 0;
}

/* Sorts and packs the symbols and returns the table, or NULL on ENOMEM (b freed). */
static struct kallsyms *builder_finish(struct kallsyms_builder *b)
{
	struct kallsyms *ks = b->ks;

	ks->restricted = b->any_line && !b->any_nonzero;
	/* With every address hidden there is nothing a lookup could return. */
	if (ks->restricted || !ks->n_syms) {
		free(ks->names);
		ks->names = NULL;
		ks->n_syms = 0;
		free(b->syms);
		b->syms = NULL;
		b->ks = NULL;
		return ks;
	}
	/* Give back what the doubling left unused (a mapping shrinks in place). */
	ks->names = realloc(ks->names, b->names_len) ?: ks->names;
	sort_symbols(b->syms, ks->n_syms);
	if (pack_symbols(ks, b->syms)) {
		builder_free(b);
		return NULL;
	}
	b->syms = NULL; /* now ks->sym */
	b->ks = NULL;
	return ks;
}

int kallsyms__parse(const char *buf, size_t len, struct kallsyms **out)
{
	struct kallsyms_builder b;
	int err;

	*out = NULL;
	if (!buf && len)
		return -EINVAL;
	err = builder_start(&b);
	if (err)
		return err;
	if (len && builder_lines(&b, buf, len, true) < 0) {
		builder_free(&b);
		return -ENOMEM;
	}
	*out = builder_finish(&b);
	return *out ? 0 : -ENOMEM;
}

/* Pieces read at a time: a line is at most ~2 KiB (name and module bounds). */
#define READ_CHUNK (64u << 10)

/*
 * Room reserved before /proc/kallsyms is read: 256k text symbols (a 6.18
 * kernel with its modules lists 122k) and 4 MiB of names (1.8 MiB). Grown
 * from nothing, each doubling of the arrays copied them into pages touched
 * for the first time (a third of a load's page faults, 20-25 us each on a
 * VM); reserved, only the pages used are touched (blocks this large are
 * mappings of their own), the rest never is, and builder_finish() gives it
 * back. A larger table still grows.
 */
#define RESERVE_SYMS	   (256u << 10)
#define RESERVE_NAME_BYTES (4u << 20)

/* Reserves that room (failing quietly: the arrays then grow as they come). */
static void builder_reserve(struct kallsyms_builder *b)
{
	if (array__reserve(b->syms, b->cap_syms, RESERVE_SYMS))
		return;
	array__reserve(b->ks->names, b->cap_names, RESERVE_NAME_BYTES);
}

int kallsyms__load(const char *path, struct kallsyms **out)
{
	struct kallsyms_builder b;
	size_t have = 0, total = 0;
	char *buf = NULL;
	int fd = -1, err;

	*out = NULL;
	err = builder_start(&b);
	if (err)
		return err;
	builder_reserve(&b);
	buf = malloc(READ_CHUNK);
	fd = open(path ? path : "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (!buf || fd < 0) {
		err = !buf ? -ENOMEM : -errno;
		goto cleanup;
	}
	for (;;) {
		ssize_t r = read(fd, buf + have, READ_CHUNK - have);
		long used;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto cleanup;
		}
		total += (size_t)r;
		if (total > KALLSYMS_MAX_FILE) {
			err = -EFBIG;
			goto cleanup;
		}
		have += (size_t)r;
		used = builder_lines(&b, buf, have, r == 0);
		if (used < 0) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (r == 0)
			break;
		if (!used && have == READ_CHUNK) {
			/* No newline in a whole piece: not kallsyms text; drop it. */
			b.ks->skipped++;
			used = (long)have;
		}
		memmove(buf, buf + used, have - (size_t)used);
		have -= (size_t)used;
	}
	*out = builder_finish(&b);
	if (!*out)
		err = -ENOMEM;
cleanup:
	if (fd >= 0)
		close(fd);
	free(buf);
	builder_free(&b);
	return err;
}

void kallsyms__free(struct kallsyms *ks)
{
	if (!ks)
		return;
	string_intern__free(&ks->modules);
	free(ks->sym);
	free(ks->runs);
	free(ks->names);
	free(ks);
}

/* The index of the run holding addr (the last whose base is at or below it), or -1. */
static long run_at(const struct kallsyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->n_runs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->runs[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

static size_t run_end(const struct kallsyms *ks, size_t r)
{
	return r + 1 < ks->n_runs ? ks->runs[r + 1].first : ks->n_syms;
}

/* The first symbol of run r at or above offset off (run_end when none). */
static size_t first_at_or_above(const struct kallsyms *ks, size_t r, uint64_t off)
{
	size_t lo = ks->runs[r].first, hi = run_end(ks, r);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->sym[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool kallsyms__find(const struct kallsyms *ks, uint64_t addr, struct ksym *out)
{
	long r = run_at(ks, addr);
	uint64_t off;
	size_t i;

	if (r < 0)
		return false;
	/* Runs are in address order: the answer is run r's last symbol at or below addr. */
	off = addr - ks->runs[r].base;
	i = off > UINT32_MAX ? run_end(ks, (size_t)r) : first_at_or_above(ks, (size_t)r, off + 1);
	/* Of several names at one address, give the one listed first: the first of
	 * them in its run, or in an earlier run starting at the same address (a
	 * module change). */
	off = ks->sym[i - 1].off;
	i = first_at_or_above(ks, (size_t)r, off);
	while (i == ks->runs[r].first && r > 0 && !off &&
	       ks->runs[r - 1].base + ks->sym[ks->runs[r].first - 1].off == ks->runs[r].base) {
		r--;
		off = ks->sym[ks->runs[r + 1].first - 1].off;
		i = first_at_or_above(ks, (size_t)r, off);
	}
	out->addr = ks->runs[r].base + off;
	out->name = ks->names + ks->sym[i].name;
	out->module = ks->runs[r].module;
	return true;
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
