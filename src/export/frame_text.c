// SPDX-License-Identifier: Apache-2.0
#include "export/frame_text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "util/array.h"

/* ---- formatting ---------------------------------------------------------- */

/* snprintf-style output: counts every character, stores what fits. */
struct text_out {
	char *buf;
	size_t size;
	size_t len;
};

static void out_char(struct text_out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

/* Appends s with the characters the folded format reserves replaced. */
static void out_clean(struct text_out *o, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == ';')
			c = ':';
		else if (c < 0x20 || c == 0x7f)
			c = ' ';
		out_char(o, (char)c);
	}
}

static size_t out_finish(struct text_out *o)
{
	if (o->size)
		o->buf[o->len < o->size ? o->len : o->size - 1] = '\0';
	return o->len;
}

size_t frame_text__format(const struct profile *p, const struct profile_location *loc,
			  uint32_t line_idx, char *buf, size_t size)
{
	struct text_out o = {.buf = buf, .size = size};
	const struct profile_function *f = profile__function(p, loc->lines[line_idx].function_id);
	const char *name = f->name[0] ? f->name : f->system_name;
	char addr[64];

	if (!name[0]) {
		/* No symbol: the file and offset still tell the user where to look. */
		const char *file = "";

		if (loc->mapping_id) {
			const char *slash;

			file = p->mappings[loc->mapping_id - 1].filename;
			slash = strrchr(file, '/');
			if (slash && slash[1])
				file = slash + 1;
		}
		snprintf(addr, sizeof(addr), "%s0x%" PRIx64, file[0] ? "+" : "", loc->address);
		out_clean(&o, file);
		out_clean(&o, addr);
	} else if (loc->kind == PROFILE_FRAME_ERROR) {
		size_t len = strlen(name);
		bool bracketed = name[0] == '[' && name[len - 1] == ']';

		if (!bracketed)
			out_char(&o, '[');
		out_clean(&o, name);
		if (!bracketed)
			out_char(&o, ']');
		return out_finish(&o);
	} else {
		out_clean(&o, name);
	}
	if (loc->kind == PROFILE_FRAME_KERNEL)
		out_clean(&o, "_[k]");
	else
		out_clean(&o, interp__folded_suffix(loc->kind, loc->address));
	return out_finish(&o);
}

size_t frame_text__comm(const char *comm, char *buf, size_t size)
{
	struct text_out o = {.buf = buf, .size = size};

	out_clean(&o, comm && comm[0] ? comm : "[unknown]");
	return out_finish(&o);
}

const char *frame_text__kind_name(int kind)
{
	const char *name;

	if (kind == FRAME_KIND_ROOT)
		return "root";
	if (kind == FRAME_KIND_PROCESS)
		return "process";
	name = kind >= 0 ? profile_frame_kind__name((enum profile_frame_kind)kind) : NULL;
	return name ? name : "other";
}

/* ---- frame_names --------------------------------------------------------- */

int frame_names__intern(struct frame_names *n, const char *text, uint32_t *id)
{
	int64_t i = string_intern__add(&n->texts, text);

	if (i < 0)
		return -ENOMEM; /* text is never NULL */
	*id = (uint32_t)i;
	return 0;
}

/* Formats into n->buf, growing it until the text fits: 0 or -ENOMEM. */
static int format_line(struct frame_names *n, const struct profile *p,
		       const struct profile_location *loc, uint32_t line_idx)
{
	for (;;) {
		size_t len = frame_text__format(p, loc, line_idx, n->buf, n->buf_size);
		char *buf;

		if (len < n->buf_size)
			return 0;
		buf = realloc(n->buf, len + 1);
		if (!buf)
			return -ENOMEM;
		n->buf = buf;
		n->buf_size = len + 1;
	}
}

int frame_names__build(struct frame_names *n, const struct profile *p)
{
	size_t total_lines = 0, k = 0;
	int err = -ENOMEM;

	memset(n, 0, sizeof(*n));
	string_intern__init(&n->texts, STRING_INTERN_COPY); /* allocates nothing yet */
	n->buf_size = 256;
	n->buf = malloc(n->buf_size);
	for (size_t i = 0; i < p->n_locations; i++)
		total_lines += p->locations[i].n_lines;
	n->loc_first = malloc((p->n_locations ? p->n_locations : 1) * sizeof(*n->loc_first));
	n->line_text = malloc((total_lines ? total_lines : 1) * sizeof(*n->line_text));
	if (!n->buf || !n->loc_first || !n->line_text)
		goto cleanup;

	for (size_t i = 0; i < p->n_locations; i++) {
		const struct profile_location *loc = &p->locations[i];

		n->loc_first[i] = (uint32_t)k;
		for (uint32_t j = 0; j < loc->n_lines; j++, k++) {
			err = format_line(n, p, loc, j);
			if (!err)
				err = frame_names__intern(n, n->buf, &n->line_text[k]);
			if (err)
				goto cleanup;
		}
	}
	return 0;

cleanup:
	frame_names__free(n);
	return err;
}

void frame_names__free(struct frame_names *n)
{
	if (!n)
		return;
	string_intern__free(&n->texts);
	free(n->line_text);
	free(n->loc_first);
	free(n->buf);
	memset(n, 0, sizeof(*n));
}

/* ---- frame_tree ---------------------------------------------------------- */

struct child_key {
	uint32_t parent;
	uint32_t text;
	int32_t kind;
};

static bool child_equal(const void *entry, const void *key, void *ctx)
{
	const struct frame_tree *t = ctx;
	const struct frame_tree_node *node = &t->nodes[(uintptr_t)entry];
	const struct child_key *k = key;

	return node->parent == k->parent && node->text == k->text && node->kind == k->kind;
}

/* Index of parent's child (text, kind), created when missing, in *child. 0 or -ENOMEM. */
static int tree_child(struct frame_tree *t, uint32_t parent, uint32_t text, int32_t kind,
		      uint32_t *child)
{
	struct child_key k = {.parent = parent, .text = text, .kind = kind};
	uint64_t hash = hash_u64(((uint64_t)parent << 32 | text) ^ hash_u64((uint32_t)kind));
	struct frame_tree_node *node;
	void *found = hashmap__find(&t->children, hash, &k);

	if (found) {
		*child = (uint32_t)(uintptr_t)found;
		return 0;
	}
	if (array__reserve_max(t->nodes, t->cap_nodes, t->n_nodes + 1, UINT32_MAX))
		return -ENOMEM;
	if (hashmap__insert(&t->children, hash, (void *)(uintptr_t)t->n_nodes))
		return -ENOMEM;
	node = &t->nodes[t->n_nodes];
	*node = (struct frame_tree_node){
	    .text = text,
	    .kind = kind,
	    .parent = parent,
	    .next_sibling = t->nodes[parent].first_child,
	    .depth = t->nodes[parent].depth + 1,
	};
	t->nodes[parent].first_child = (uint32_t)t->n_nodes;
	if (node->depth > t->max_depth)
		t->max_depth = node->depth;
	*child = (uint32_t)t->n_nodes++;
	return 0;
}

static int child_cmp(const void *a, const void *b, void *ctx)
{
	const struct frame_tree *t = ctx;
	const struct frame_tree_node *x = &t->nodes[*(const uint32_t *)a];
	const struct frame_tree_node *y = &t->nodes[*(const uint32_t *)b];
	int c =
	    strcmp(frame_names__text(&t->names, x->text), frame_names__text(&t->names, y->text));

	if (c)
		return c;
	return (x->kind > y->kind) - (x->kind < y->kind);
}

/* Relinks every sibling list in text order so outputs do not depend on sample order. */
static int tree_sort(struct frame_tree *t)
{
	uint32_t *tmp = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < t->n_nodes; i++) {
		size_t n = 0;

		for (uint32_t c = t->nodes[i].first_child; c; c = t->nodes[c].next_sibling) {
			if (array__grow(tmp, cap, n)) {
				free(tmp);
				return -ENOMEM;
			}
			tmp[n++] = c;
		}
		if (n < 2)
			continue;
		qsort_r(tmp, n, sizeof(*tmp), child_cmp, t);
		t->nodes[i].first_child = tmp[0];
		for (size_t j = 0; j < n; j++)
			t->nodes[tmp[j]].next_sibling = j + 1 < n ? tmp[j + 1] : 0;
	}
	free(tmp);
	return 0;
}

int frame_tree__build(struct frame_tree *t, const struct profile *p)
{
	char comm[64];
	uint32_t root_text, text, node;
	int err;

	memset(t, 0, sizeof(*t));
	hashmap__init(&t->children, child_equal, t);
	err = frame_names__build(&t->names, p);
	if (err)
		return err;
	err = -ENOMEM;
	t->cap_nodes = 1024;
	t->nodes = malloc(t->cap_nodes * sizeof(*t->nodes));
	if (!t->nodes || frame_names__intern(&t->names, "all", &root_text))
		goto cleanup;
	t->nodes[0] = (struct frame_tree_node){.text = root_text, .kind = FRAME_KIND_ROOT};
	t->n_nodes = 1;

	for (size_t i = 0; i < p->n_samples; i++) {
		const struct profile_sample *s = &p->samples[i];
		uint64_t count = (uint64_t)s->count;

		if (s->count <= 0)
			continue;
		/* Comm names are at most 16 bytes in Linux; longer ones are cut, which is fine. */
		frame_text__comm(s->comm, comm, sizeof(comm));
		err = frame_names__intern(&t->names, comm, &text);
		if (!err)
			err = tree_child(t, 0, text, FRAME_KIND_PROCESS, &node);
		if (err)
			goto cleanup;
		t->nodes[0].total += count;
		t->nodes[node].total += count;
		for (uint32_t l = s->n_locations; l-- > 0;) {
			uint32_t loc_id = s->location_ids[l];
			const struct profile_location *loc = profile__location(p, loc_id);

			for (uint32_t j = loc->n_lines; j-- > 0;) {
				text = frame_names__line(&t->names, loc_id, j);
				err = tree_child(t, node, text, (int32_t)loc->kind, &node);
				if (err)
					goto cleanup;
				t->nodes[node].total += count;
			}
		}
		t->nodes[node].self += count;
	}
	err = tree_sort(t);
	if (err)
		goto cleanup;
	hashmap__clear(&t->children);
	return 0;

cleanup:
	frame_tree__free(t);
	return -ENOMEM;
}

void frame_tree__free(struct frame_tree *t)
{
	if (!t)
		return;
	frame_names__free(&t->names);
	free(t->nodes);
	hashmap__clear(&t->children);
	memset(t, 0, sizeof(*t));
}
