// SPDX-License-Identifier: Apache-2.0
#include "folded_check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum pattern_kind {
	PATTERN_EXACT,
	PATTERN_LIKE, /* contains one of the '|'-separated substrings */
	PATTERN_GAP,
};

struct pattern {
	enum pattern_kind kind;
	char *text; /* NULL for a gap */
	unsigned int min, max;
};

struct chain_spec {
	struct pattern *pats;
	size_t n, cap;
};

/* One frame of a stack being matched: a slice of the caller's text. */
struct frame_ref {
	const char *name;
	size_t len;
};

struct chain_spec *chain_spec__new(void)
{
	return calloc(1, sizeof(struct chain_spec));
}

void chain_spec__free(struct chain_spec *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n; i++)
		free(cs->pats[i].text);
	free(cs->pats);
	free(cs);
}

/* Takes ownership of text (freed here on failure). */
static int chain_spec__push(struct chain_spec *cs, enum pattern_kind kind, char *text,
			    unsigned int min, unsigned int max)
{
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 32;
		struct pattern *tmp = realloc(cs->pats, cap * sizeof(*tmp));

		if (!tmp) {
			free(text);
			return -ENOMEM;
		}
		cs->pats = tmp;
		cs->cap = cap;
	}
	cs->pats[cs->n++] = (struct pattern){.kind = kind, .text = text, .min = min, .max = max};
	return 0;
}

static int chain_spec__vpush(struct chain_spec *cs, int kind, const char *fmt, va_list ap)
{
	char *text;

	if (vasprintf(&text, fmt, ap) < 0)
		return -ENOMEM;
	return chain_spec__push(cs, kind, text, 1, 1);
}

int chain_spec__add(struct chain_spec *cs, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = chain_spec__vpush(cs, PATTERN_EXACT, fmt, ap);
	va_end(ap);
	return err;
}

int chain_spec__add_like(struct chain_spec *cs, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = chain_spec__vpush(cs, PATTERN_LIKE, fmt, ap);
	va_end(ap);
	return err;
}

int chain_spec__add_fp_chain(struct chain_spec *cs)
{
	int err = chain_spec__add(cs, "main");

	for (int i = 1; i <= FP_CHAIN_LINKS && !err; i++)
		err = chain_spec__add(cs, "chain_%02d", i);
	return err ?: chain_spec__add(cs, "leaf");
}

void fp_chain__names(char *buf, size_t size)
{
	size_t off = (size_t)snprintf(buf, size, "main");

	for (int i = 1; i <= FP_CHAIN_LINKS && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, ",chain_%02d", i);
	if (off < size)
		snprintf(buf + off, size - off, ",leaf");
}

int chain_spec__add_gap(struct chain_spec *cs, unsigned int min, unsigned int max)
{
	if (min > max)
		return -EINVAL;
	return chain_spec__push(cs, PATTERN_GAP, NULL, min, max);
}

size_t chain_spec__len(const struct chain_spec *cs)
{
	size_t n = 0;

	for (size_t i = 0; i < cs->n; i++)
		n += cs->pats[i].kind != PATTERN_GAP;
	return n;
}

static bool frame_is_error(const struct frame_ref *f)
{
	return f->len >= 7 && !memcmp(f->name, "[unwind", 7);
}

static bool pattern__matches(const struct pattern *p, const struct frame_ref *f)
{
	const char *alt, *bar;
	size_t alen;

	if (p->kind == PATTERN_EXACT)
		return f->len == strlen(p->text) && !memcmp(f->name, p->text, f->len);
	for (alt = p->text;; alt = bar + 1) {
		bar = strchr(alt, '|');
		alen = bar ? (size_t)(bar - alt) : strlen(alt);
		if (alen && memmem(f->name, f->len, alt, alen))
			return true;
		if (!bar)
			return false;
	}
}

/* Does the chain from pattern pi on match the frames from fi on? */
static bool chain_spec__match_at(const struct chain_spec *cs, size_t pi,
				 const struct frame_ref *frames, size_t n_frames, size_t fi)
{
	const struct pattern *p;

	if (pi == cs->n)
		return true;
	p = &cs->pats[pi];
	if (p->kind != PATTERN_GAP)
		return fi < n_frames && pattern__matches(p, &frames[fi]) &&
		       chain_spec__match_at(cs, pi + 1, frames, n_frames, fi + 1);
	for (size_t k = 0; k <= p->max && fi + k <= n_frames; k++) {
		if (k && frame_is_error(&frames[fi + k - 1]))
			return false;
		if (k >= p->min && chain_spec__match_at(cs, pi + 1, frames, n_frames, fi + k))
			return true;
	}
	return false;
}

/* Splits "a;b;c" into frames. Returns the count; *out is the caller's to free (NULL on error). */
static size_t split_frames(const char *stack, size_t len, struct frame_ref **out)
{
	size_t n = 1, i = 0;
	const char *p = stack, *end = stack + len, *semi;
	struct frame_ref *frames;

	for (const char *q = stack; (q = memchr(q, ';', (size_t)(end - q))); q++)
		n++;
	frames = calloc(n, sizeof(*frames));
	*out = frames;
	if (!frames)
		return 0;
	for (; i < n; i++) {
		semi = memchr(p, ';', (size_t)(end - p));
		frames[i].name = p;
		frames[i].len = semi ? (size_t)(semi - p) : (size_t)(end - p);
		p = semi ? semi + 1 : end;
	}
	return n;
}

/* Out of memory counts as no match: the tests then fail, which they should. */
bool chain_spec__matches(const struct chain_spec *cs, const char *stack, size_t len)
{
	struct frame_ref *frames;
	size_t n = split_frames(stack, len, &frames);
	bool found = false;

	for (size_t start = 0; cs->n && start < n && !found; start++)
		found = chain_spec__match_at(cs, 0, frames, n, start);
	free(frames);
	return found;
}

bool chain_spec__has_leaf(const struct chain_spec *cs, const char *stack, size_t len)
{
	const struct pattern *leaf = cs->n ? &cs->pats[cs->n - 1] : NULL;
	struct frame_ref *frames;
	size_t n;
	bool found = false;

	if (!leaf || leaf->kind == PATTERN_GAP)
		return false;
	n = split_frames(stack, len, &frames);
	for (size_t i = 0; i < n && !found; i++)
		found = pattern__matches(leaf, &frames[i]);
	free(frames);
	return found;
}

struct chain_count chain_spec__count_folded(const struct chain_spec *cs, const char *text,
					    const char *comm)
{
	struct chain_count c = {0};
	size_t comm_len = strlen(comm);

	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *sp = memrchr(line, ' ', len);

		if (sp && (size_t)(sp - line) > comm_len && !strncmp(line, comm, comm_len) &&
		    line[comm_len] == ';') {
			const char *stack = line + comm_len + 1;
			size_t stack_len = (size_t)(sp - stack);
			long count = atol(sp + 1);

			if (chain_spec__has_leaf(cs, stack, stack_len)) {
				c.leaf += count;
				if (chain_spec__matches(cs, stack, stack_len)) {
					c.complete += count;
				} else if (count > c.worst_count) {
					c.worst = stack;
					c.worst_len = stack_len;
					c.worst_count = count;
				}
			}
		}
		line = nl ? nl + 1 : line + len;
	}
	return c;
}
