// SPDX-License-Identifier: Apache-2.0
/*
 * The JSON API's queries (query.h). Every selection is one SQL aggregation
 * of (stack, count) over the samples, read from the 10-minute rollup for the
 * whole buckets of the range when no thread filter needs the per-second
 * rows; stacks and frames are then decoded in C with per-query caches, since
 * a selection has far fewer distinct stacks than samples.
 */
#include "serve/query.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/transport.h"
#include "profile.pb-c.h"
#include "serve/store.h"
#include "util/hashmap.h"

#define MAX_DEPTH   1024 /* frames kept per stack, root side (the project's budget) */
#define TOP_LIMIT   2000
#define PRUNE_SHARE 20000 /* tree nodes under 1/20000 of the total are left out */
/* Nodes of one query's tree (~100 bytes each with its index): a bound on its memory. */
#define MAX_NODES (1u << 20)

/* ---- output -------------------------------------------------------------- */

void qbuf__free(struct qbuf *b)
{
	if (!b)
		return;
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

static void qb_add(struct qbuf *b, const char *s, size_t n)
{
	if (b->err)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *ns;

		while (cap < b->len + n + 1)
			cap *= 2;
		ns = realloc(b->s, cap);
		if (!ns) {
			b->err = -ENOMEM;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void qb_puts(struct qbuf *b, const char *s)
{
	qb_add(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void qb_printf(struct qbuf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n >= 0)
		qb_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* A JSON string; bytes that are not valid for JSON text are escaped. */
static void qb_json(struct qbuf *b, const char *s)
{
	const char *run = s;

	qb_add(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x7f)
			continue;
		if (c >= 0x80)
			continue; /* UTF-8 passes; the page decodes leniently */
		qb_add(b, run, (size_t)(s - run));
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};

			qb_add(b, e, 2);
		} else {
			qb_printf(b, "\\u%04x", c);
		}
		run = s + 1;
	}
	qb_add(b, run, (size_t)(s - run));
	qb_add(b, "\"", 1);
}

static int bad_request(struct qbuf *out, const char *why)
{
	out->len = 0;
	qb_puts(out, why);
	return -EINVAL;
}

/* ---- selections ----------------------------------------------------------- */

static bool set(const char *s)
{
	return s && *s;
}

/* The WHERE conditions of a filter after the time bounds (named parameters). */
static void filter_sql(const struct query_filter *f, struct qbuf *w, bool per_second)
{
	if (set(f->ptype))
		qb_puts(w, " AND ptype IN (SELECT id FROM ptypes WHERE name=:ptype)");
	if (set(f->host) || set(f->service) || set(f->container) || set(f->comm) || set(f->exe) ||
	    f->pid) {
		qb_puts(w, " AND res IN (SELECT id FROM resources WHERE 1");
		if (set(f->host))
			qb_puts(w, " AND host=:host");
		if (set(f->service))
			qb_puts(w, " AND service=:service");
		if (set(f->container))
			qb_puts(w, " AND container=:container");
		if (set(f->comm))
			qb_puts(w, " AND comm=:comm");
		if (set(f->exe))
			qb_puts(w, " AND exe=:exe");
		if (f->pid)
			qb_puts(w, " AND pid=:pid");
		qb_puts(w, ")");
	}
	if (set(f->thread) && per_second)
		qb_puts(w, " AND thread IN (SELECT id FROM threads WHERE name=:thread OR "
			   "CAST(tid AS TEXT)=:thread)");
	if (set(f->ftype))
		qb_puts(w, " AND stack IN (SELECT id FROM stacks WHERE types & (SELECT "
			   "coalesce(sum(1<<id),0) FROM ftypes WHERE name=:ftype))");
}

static void bind_text(sqlite3_stmt *st, const char *name, const char *v)
{
	int i = sqlite3_bind_parameter_index(st, name);

	if (i)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

static void bind_int(sqlite3_stmt *st, const char *name, int64_t v)
{
	int i = sqlite3_bind_parameter_index(st, name);

	if (i)
		sqlite3_bind_int64(st, i, v);
}

static void bind_filter(sqlite3_stmt *st, const struct query_filter *f)
{
	int64_t lo = (f->from + STORE_ROLLUP_S - 1) / STORE_ROLLUP_S * STORE_ROLLUP_S;
	int64_t hi = f->to / STORE_ROLLUP_S * STORE_ROLLUP_S;

	bind_int(st, ":from", f->from);
	bind_int(st, ":to", f->to);
	bind_int(st, ":lo", lo);
	bind_int(st, ":hi", hi);
	bind_text(st, ":ptype", f->ptype);
	bind_text(st, ":host", f->host);
	bind_text(st, ":service", f->service);
	bind_text(st, ":container", f->container);
	bind_text(st, ":comm", f->comm);
	bind_text(st, ":exe", f->exe);
	bind_int(st, ":pid", f->pid);
	bind_text(st, ":thread", f->thread);
	bind_text(st, ":ftype", f->ftype);
}

/*
 * The rows (res, stack, n) of the selection as a FROM source: the rollup
 * for the whole 10-minute buckets inside the range, unless a thread filter
 * needs the per-second rows.
 */
static void source_sql(const struct query_filter *f, struct qbuf *q)
{
	struct qbuf w = {0};
	int64_t lo = (f->from + STORE_ROLLUP_S - 1) / STORE_ROLLUP_S * STORE_ROLLUP_S;
	int64_t hi = f->to / STORE_ROLLUP_S * STORE_ROLLUP_S;

	filter_sql(f, &w, true);
	if (set(f->thread) || hi <= lo) {
		qb_puts(q, "(SELECT res, stack, n FROM samples WHERE ts>=:from AND ts<:to");
		qb_puts(q, w.s ? w.s : "");
		qb_puts(q, ")");
	} else {
		qb_puts(q, "(SELECT res, stack, n FROM samples WHERE ts>=:from AND ts<:lo");
		qb_puts(q, w.s ? w.s : "");
		qb_puts(q, " UNION ALL SELECT res, stack, n FROM rollup WHERE ts>=:lo AND ts<:hi");
		qb_puts(q, w.s ? w.s : "");
		qb_puts(q, " UNION ALL SELECT res, stack, n FROM samples WHERE ts>=:hi AND ts<:to");
		qb_puts(q, w.s ? w.s : "");
		qb_puts(q, ")");
	}
	if (w.err)
		q->err = w.err;
	qbuf__free(&w);
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
		fprintf(stderr, "serve: query: %s\n", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

/* ---- stacks and frames ---------------------------------------------------- */

struct frame_info {
	int64_t id, func, type_id, line;
	char *name, *file, *mapping, *build_id, *type;
};

struct frame_cache {
	sqlite3_stmt *frame_q, *stack_q;
	struct hashmap frames; /* id -> struct frame_info */
	uint32_t *ids;	       /* the last decoded stack, leaf first */
	size_t n_ids, cap_ids;
};

static bool frame_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct frame_info *)entry)->id == *(const int64_t *)key;
}

static int cache_init(sqlite3 *db, struct frame_cache *c)
{
	memset(c, 0, sizeof(*c));
	hashmap__init(&c->frames, frame_equal, NULL);
	if (prepare(db,
		    "SELECT f.func, f.type, f.line, sn.s, sf.s, sm.s, sb.s, t.name FROM frames f "
		    "JOIN functions fn ON fn.id=f.func JOIN strings sn ON sn.id=fn.name "
		    "JOIN strings sf ON sf.id=fn.file JOIN mappings m ON m.id=f.mapping "
		    "JOIN strings sm ON sm.id=m.file JOIN strings sb ON sb.id=m.build_id "
		    "JOIN ftypes t ON t.id=f.type WHERE f.id=?1",
		    &c->frame_q) ||
	    prepare(db, "SELECT frames FROM stacks WHERE id=?1", &c->stack_q))
		return -EIO;
	return 0;
}

static void cache_free(struct frame_cache *c)
{
	void *e;

	for (size_t i = 0; hashmap__next(&c->frames, &i, &e);) {
		struct frame_info *fi = e;

		free(fi->name);
		free(fi->file);
		free(fi->mapping);
		free(fi->build_id);
		free(fi->type);
		free(fi);
	}
	hashmap__clear(&c->frames);
	sqlite3_finalize(c->frame_q);
	sqlite3_finalize(c->stack_q);
	free(c->ids);
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return strdup(t ? (const char *)t : "");
}

/* The frame's details (owned by the cache), or NULL when missing or out of memory. */
static const struct frame_info *frame_get(struct frame_cache *c, int64_t id)
{
	uint64_t h = hash_u64((uint64_t)id);
	struct frame_info *fi = hashmap__find(&c->frames, h, &id);

	if (fi)
		return fi;
	sqlite3_bind_int64(c->frame_q, 1, id);
	if (sqlite3_step(c->frame_q) == SQLITE_ROW && (fi = calloc(1, sizeof(*fi)))) {
		fi->id = id;
		fi->func = sqlite3_column_int64(c->frame_q, 0);
		fi->type_id = sqlite3_column_int64(c->frame_q, 1);
		fi->line = sqlite3_column_int64(c->frame_q, 2);
		fi->name = col_dup(c->frame_q, 3);
		fi->file = col_dup(c->frame_q, 4);
		fi->mapping = col_dup(c->frame_q, 5);
		fi->build_id = col_dup(c->frame_q, 6);
		fi->type = col_dup(c->frame_q, 7);
		if (!fi->name || !fi->file || !fi->mapping || !fi->build_id || !fi->type ||
		    hashmap__insert(&c->frames, h, fi)) {
			free(fi->name);
			free(fi->file);
			free(fi->mapping);
			free(fi->build_id);
			free(fi->type);
			free(fi);
			fi = NULL;
		}
	}
	sqlite3_reset(c->frame_q);
	return fi;
}

/* Decodes stack id into c->ids (leaf first). 0 or -errno. */
static int stack_get(struct frame_cache *c, int64_t id)
{
	const uint8_t *b;
	int len, err = -ENOENT;

	c->n_ids = 0;
	sqlite3_bind_int64(c->stack_q, 1, id);
	if (sqlite3_step(c->stack_q) == SQLITE_ROW) {
		b = sqlite3_column_blob(c->stack_q, 0);
		len = sqlite3_column_bytes(c->stack_q, 0);
		err = 0;
		if ((size_t)len / 4 > c->cap_ids) {
			uint32_t *n = realloc(c->ids, (size_t)len / 4 * sizeof(*n));

			if (!n) {
				err = -ENOMEM;
				goto cleanup;
			}
			c->ids = n;
			c->cap_ids = (size_t)len / 4;
		}
		for (int i = 0; i + 4 <= len; i += 4)
			c->ids[c->n_ids++] =
			    b[i] | b[i + 1] << 8 | b[i + 2] << 16 | (uint32_t)b[i + 3] << 24;
	}
cleanup:
	sqlite3_reset(c->stack_q);
	return err;
}

/* ---- the frame tree -------------------------------------------------------- */

struct node {
	int64_t func, type; /* the key under the parent */
	uint32_t parent, first_child, next;
	const struct frame_info *fi;
	int64_t total[2], self[2];
};

struct tree {
	struct node *v;
	size_t n, cap;
	struct hashmap index; /* (parent, func, type) -> node index + 1 */
};

struct node_key {
	uint32_t parent;
	int64_t func, type;
};

static bool node_equal(const void *entry, const void *key, void *ctx)
{
	const struct tree *t = ctx;
	const struct node *n = &t->v[(uintptr_t)entry - 1];
	const struct node_key *k = key;

	return n->parent == k->parent && n->func == k->func && n->type == k->type;
}

static int tree_init(struct tree *t)
{
	memset(t, 0, sizeof(*t));
	hashmap__init(&t->index, node_equal, t);
	t->v = calloc(64, sizeof(*t->v));
	if (!t->v)
		return -ENOMEM;
	t->cap = 64;
	t->n = 1; /* the root */
	t->v[0].parent = UINT32_MAX;
	return 0;
}

static void tree_free(struct tree *t)
{
	hashmap__clear(&t->index);
	free(t->v);
}

static uint64_t node_hash(const struct node_key *k)
{
	return hash_bytes(k, sizeof(*k), 7);
}

static int64_t tree_child(struct tree *t, uint32_t parent, const struct frame_info *fi)
{
	struct node_key k;
	uintptr_t e;
	uint64_t h;

	memset(&k, 0, sizeof(k));
	k.parent = parent;
	k.func = fi->func;
	k.type = fi->type_id;
	h = node_hash(&k);
	e = (uintptr_t)hashmap__find(&t->index, h, &k);
	if (e)
		return (int64_t)(e - 1);
	if (t->n >= MAX_NODES)
		return -E2BIG;
	if (t->n == t->cap) {
		struct node *nv = realloc(t->v, t->cap * 2 * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		t->v = nv;
		t->cap *= 2;
	}
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->v[t->n].func = fi->func;
	t->v[t->n].type = fi->type_id;
	t->v[t->n].parent = parent;
	t->v[t->n].fi = fi;
	t->v[t->n].next = t->v[parent].first_child;
	t->v[parent].first_child = (uint32_t)t->n;
	if (hashmap__insert(&t->index, h, (void *)(uintptr_t)(t->n + 1)))
		return -ENOMEM;
	return (int64_t)t->n++;
}

/* Adds count samples of the decoded stack (c->ids) on side 0 or 1. */
static int tree_add(struct tree *t, struct frame_cache *c, int side, int64_t count)
{
	uint32_t node = 0;
	size_t n = c->n_ids;

	t->v[0].total[side] += count;
	/* Root side first; a stack deeper than the budget keeps its root-most frames. */
	for (size_t i = n; i-- > 0 && n - i <= MAX_DEPTH;) {
		const struct frame_info *fi = frame_get(c, c->ids[i]);
		int64_t ch;

		if (!fi)
			return -ENOMEM;
		ch = tree_child(t, node, fi);
		if (ch < 0)
			return (int)ch;
		node = (uint32_t)ch;
		t->v[node].total[side] += count;
	}
	t->v[node].self[side] += count;
	return 0;
}

static void node_json(const struct tree *t, uint32_t i, bool two, int64_t min, struct qbuf *out,
		      int depth)
{
	const struct node *n = &t->v[i];
	bool first = true;

	qb_puts(out, "{\"n\":");
	if (n->fi) {
		qb_json(out, n->fi->name);
		qb_puts(out, ",\"t\":");
		qb_json(out, n->fi->type);
		qb_puts(out, ",\"f\":");
		qb_json(out, n->fi->file);
		qb_printf(out, ",\"l\":%" PRId64 ",\"m\":", n->fi->line);
		qb_json(out, n->fi->mapping);
		qb_puts(out, ",\"b\":");
		qb_json(out, n->fi->build_id);
	} else {
		qb_puts(out, "\"all\"");
	}
	qb_printf(out, ",\"v\":%" PRId64 ",\"s\":%" PRId64, n->total[1], n->self[1]);
	if (two)
		qb_printf(out, ",\"a\":%" PRId64 ",\"as\":%" PRId64, n->total[0], n->self[0]);
	qb_puts(out, ",\"c\":[");
	for (uint32_t c = n->first_child; c && depth < MAX_DEPTH + 2; c = t->v[c].next) {
		if (t->v[c].total[0] + t->v[c].total[1] < min)
			continue;
		if (!first)
			qb_puts(out, ",");
		first = false;
		node_json(t, c, two, min, out, depth + 1);
	}
	qb_puts(out, "]}");
}

/* Runs the selection's (stack, count) aggregation into the tree's side. */
/* Counts per stack id, summed in C: cheaper than SQLite's GROUP BY sorter over many rows. */
struct stack_sum {
	int64_t *id, *n;
	size_t len, cap; /* open addressing, cap a power of two; id 0 = empty */
};

static int sum_add(struct stack_sum *m, int64_t id, int64_t n)
{
	size_t i;

	if (2 * (m->len + 1) > m->cap) {
		struct stack_sum g = {.cap = m->cap ? m->cap * 2 : 1024};

		g.id = calloc(g.cap, sizeof(*g.id));
		g.n = calloc(g.cap, sizeof(*g.n));
		if (!g.id || !g.n) {
			free(g.id);
			free(g.n);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->cap; j++)
			if (m->id[j])
				sum_add(&g, m->id[j], m->n[j]);
		free(m->id);
		free(m->n);
		*m = g;
	}
	for (i = hash_u64((uint64_t)id) & (m->cap - 1); m->id[i] && m->id[i] != id;
	     i = (i + 1) & (m->cap - 1))
		;
	if (!m->id[i]) {
		m->id[i] = id;
		m->len++;
	}
	m->n[i] += n;
	return 0;
}

static int select_into_tree(sqlite3 *db, const struct query_filter *f, struct tree *t,
			    struct frame_cache *c, int side)
{
	struct stack_sum sums = {0};
	struct qbuf q = {0};
	sqlite3_stmt *st = NULL;
	int err, rc;

	qb_puts(&q, "SELECT stack, n FROM ");
	source_sql(f, &q);
	if (q.err) {
		err = q.err;
		goto cleanup;
	}
	if ((err = prepare(db, q.s, &st)))
		goto cleanup;
	bind_filter(st, f);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((err =
			 sum_add(&sums, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1))))
			goto cleanup;
	if (rc != SQLITE_DONE) {
		err = -EIO;
		goto cleanup;
	}
	for (size_t i = 0; i < sums.cap; i++) {
		if (!sums.id[i])
			continue;
		if ((err = stack_get(c, sums.id[i])) == -ENOENT)
			continue; /* retention took it meanwhile */
		if (err || (err = tree_add(t, c, side, sums.n[i])))
			goto cleanup;
	}
	err = 0;
cleanup:
	free(sums.id);
	free(sums.n);
	sqlite3_finalize(st);
	qbuf__free(&q);
	return err;
}

static int check_filter(const struct query_filter *f, struct qbuf *out)
{
	if (f->to <= f->from)
		return bad_request(out, "from must be before to (unix seconds)");
	return 0;
}

int query__flame(sqlite3 *db, const struct query_filter *f, struct qbuf *out)
{
	struct frame_cache c;
	struct tree t;
	int err;

	if ((err = check_filter(f, out)))
		return err;
	if ((err = tree_init(&t)))
		return err;
	if ((err = cache_init(db, &c)) || (err = select_into_tree(db, f, &t, &c, 1)))
		goto cleanup;
	qb_printf(out, "{\"total\":%" PRId64 ",\"tree\":", t.v[0].total[1]);
	node_json(&t, 0, false, t.v[0].total[1] / PRUNE_SHARE + 1, out, 0);
	qb_puts(out, "}");
	err = out->err;
cleanup:
	cache_free(&c);
	tree_free(&t);
	return err;
}

/* ---- per-function totals ---------------------------------------------------- */

struct fn_row {
	const struct frame_info *fi;
	int64_t self[2], total[2];
	uint32_t seen; /* the tree walk's visit mark */
};

struct fn_table {
	struct fn_row *v;
	size_t n, cap;
	struct hashmap index; /* (func, type) -> row index + 1 */
};

static bool fn_equal(const void *entry, const void *key, void *ctx)
{
	const struct fn_table *ft = ctx;
	const struct fn_row *r = &ft->v[(uintptr_t)entry - 1];
	const struct frame_info *k = key;

	return r->fi->func == k->func && r->fi->type_id == k->type_id;
}

static struct fn_row *fn_get(struct fn_table *ft, const struct frame_info *fi)
{
	uint64_t h = hash_u64((uint64_t)fi->func * 131 + (uint64_t)fi->type_id);
	uintptr_t e = (uintptr_t)hashmap__find(&ft->index, h, fi);

	if (e)
		return &ft->v[e - 1];
	if (ft->n == ft->cap) {
		size_t cap = ft->cap ? ft->cap * 2 : 256;
		struct fn_row *nv = realloc(ft->v, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		ft->v = nv;
		ft->cap = cap;
	}
	memset(&ft->v[ft->n], 0, sizeof(ft->v[ft->n]));
	ft->v[ft->n].fi = fi;
	if (hashmap__insert(&ft->index, h, (void *)(uintptr_t)(ft->n + 1)))
		return NULL;
	return &ft->v[ft->n++];
}

/* Self and total per function from the tree (total counts a recursive function once). */
static int fn_from_tree(const struct tree *t, struct fn_table *ft)
{
	uint32_t *stack = NULL;
	size_t depth = 0;
	int err = 0;

	hashmap__init(&ft->index, fn_equal, ft);
	/* Walk in index order: a node's ancestors come before it. Mark per path with
	 * the node's index so "already counted on this path" is one check up the chain. */
	for (size_t i = 1; i < t->n; i++) {
		const struct node *n = &t->v[i];
		struct fn_row *r = fn_get(ft, n->fi);
		bool on_path = false;

		if (!r) {
			err = -ENOMEM;
			break;
		}
		for (uint32_t p = n->parent; p && p != UINT32_MAX; p = t->v[p].parent)
			if (t->v[p].func == n->func && t->v[p].type == n->type) {
				on_path = true;
				break;
			}
		for (int s = 0; s < 2; s++) {
			r->self[s] += n->self[s];
			if (!on_path)
				r->total[s] += n->total[s];
		}
	}
	free(stack);
	(void)depth;
	return err;
}

static int cmp_self(const void *a, const void *b)
{
	const struct fn_row *x = a, *y = b;
	int64_t dx = x->self[1] + x->self[0], dy = y->self[1] + y->self[0];

	return dx < dy ? 1 : dx > dy ? -1 : 0;
}

static void fn_json(const struct fn_table *ft, bool two, struct qbuf *out)
{
	qb_puts(out, "[");
	for (size_t i = 0; i < ft->n && i < TOP_LIMIT; i++) {
		const struct fn_row *r = &ft->v[i];

		if (i)
			qb_puts(out, ",");
		qb_puts(out, "{\"name\":");
		qb_json(out, r->fi->name);
		qb_puts(out, ",\"type\":");
		qb_json(out, r->fi->type);
		qb_puts(out, ",\"file\":");
		qb_json(out, r->fi->file);
		qb_printf(out, ",\"self\":%" PRId64 ",\"total\":%" PRId64, r->self[1], r->total[1]);
		if (two)
			qb_printf(out, ",\"a_self\":%" PRId64 ",\"a_total\":%" PRId64, r->self[0],
				  r->total[0]);
		qb_puts(out, "}");
	}
	qb_puts(out, "]");
}

int query__top(sqlite3 *db, const struct query_filter *f, struct qbuf *out)
{
	struct fn_table ft = {0};
	struct frame_cache c;
	struct tree t;
	int err;

	if ((err = check_filter(f, out)))
		return err;
	if ((err = tree_init(&t)))
		return err;
	if ((err = cache_init(db, &c)) || (err = select_into_tree(db, f, &t, &c, 1)) ||
	    (err = fn_from_tree(&t, &ft)))
		goto cleanup;
	qsort(ft.v, ft.n, sizeof(*ft.v), cmp_self);
	qb_printf(out, "{\"total\":%" PRId64 ",\"functions\":", t.v[0].total[1]);
	fn_json(&ft, false, out);
	qb_puts(out, "}");
	err = out->err;
cleanup:
	hashmap__clear(&ft.index);
	free(ft.v);
	cache_free(&c);
	tree_free(&t);
	return err;
}

int query__diff(sqlite3 *db, const struct query_filter *a, const struct query_filter *b,
		struct qbuf *out)
{
	struct fn_table ft = {0};
	struct frame_cache c;
	struct tree t;
	int err;

	if ((err = check_filter(a, out)) || (err = check_filter(b, out)))
		return err;
	if ((err = tree_init(&t)))
		return err;
	if ((err = cache_init(db, &c)) || (err = select_into_tree(db, a, &t, &c, 0)) ||
	    (err = select_into_tree(db, b, &t, &c, 1)) || (err = fn_from_tree(&t, &ft)))
		goto cleanup;
	qsort(ft.v, ft.n, sizeof(*ft.v), cmp_self);
	qb_printf(out,
		  "{\"a_total\":%" PRId64 ",\"b_total\":%" PRId64 ",\"tree\":", t.v[0].total[0],
		  t.v[0].total[1]);
	node_json(&t, 0, true, (t.v[0].total[0] + t.v[0].total[1]) / PRUNE_SHARE + 1, out, 0);
	qb_puts(out, ",\"functions\":");
	fn_json(&ft, true, out);
	qb_puts(out, "}");
	err = out->err;
cleanup:
	hashmap__clear(&ft.index);
	free(ft.v);
	cache_free(&c);
	tree_free(&t);
	return err;
}

/* ---- timeline, meta, executables ------------------------------------------------ */

struct tl_row {
	int64_t bucket, n;
	const char *key; /* owned by the key table */
};

static int tl_cmp(const void *a, const void *b)
{
	const struct tl_row *x = a, *y = b;

	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	return strcmp(x->key, y->key);
}

/*
 * Samples per step and key. Rows are summed in C over (step, resource or
 * CPU): SQLite's GROUP BY would sort every row of the range; the key's text
 * (process, container) is then looked up once per distinct resource.
 */
int query__timeline(sqlite3 *db, const struct query_filter *f, const char *by, struct qbuf *out)
{
	struct qbuf q = {0}, w = {0};
	struct stack_sum sums = {0};
	struct tl_row *rows = NULL;
	sqlite3_stmt *st = NULL, *kq = NULL;
	int64_t step, span = f->to - f->from, n_buckets;
	char **texts = NULL;
	int64_t *text_ids = NULL;
	size_t n_rows = 0, n_texts = 0;
	enum { BY_NONE, BY_RES, BY_CPU } mode;
	const char *key_sql = NULL;
	bool rollup;
	int err, rc;

	if ((err = check_filter(f, out)))
		return err;
	/* About 300 points whatever the range. */
	step = span / 300 + 1;
	if (!by)
		by = "";
	if (!strcmp(by, "process")) {
		mode = BY_RES;
		key_sql = "SELECT comm||' ('||pid||')' FROM resources WHERE id=?1";
	} else if (!strcmp(by, "container")) {
		mode = BY_RES;
		key_sql = "SELECT container FROM resources WHERE id=?1";
	} else if (!strcmp(by, "cpu")) {
		mode = BY_CPU;
	} else if (!*by) {
		mode = BY_NONE;
	} else {
		return bad_request(out, "by: process, container or cpu");
	}
	/*
	 * From 6 hours on, 10-minute points from the rollup (36 or more) rather
	 * than a scan of every second of the range; CPU and thread need the seconds.
	 */
	rollup = span >= 6 * 3600 && mode != BY_CPU && !set(f->thread);
	if (rollup)
		step = (step + STORE_ROLLUP_S - 1) / STORE_ROLLUP_S * STORE_ROLLUP_S;
	n_buckets = span / step + 2;
	filter_sql(f, &w, !rollup);
	qb_printf(&q, "SELECT ts, res, %s, n FROM %s WHERE ts>=:from AND ts<:to",
		  rollup ? "-1" : "cpu", rollup ? "rollup" : "samples");
	qb_puts(&q, w.s ? w.s : "");
	if ((err = q.err) || (err = prepare(db, q.s, &st)) ||
	    (key_sql && (err = prepare(db, key_sql, &kq))))
		goto cleanup;
	bind_filter(st, f);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t bucket = (sqlite3_column_int64(st, 0) - f->from) / step;
		int64_t k = mode == BY_RES   ? sqlite3_column_int64(st, 1)
			    : mode == BY_CPU ? sqlite3_column_int64(st, 2) + 2
					     : 1;

		/* Ids of the sum map must be non-zero: key and bucket packed, both bounded. */
		if (bucket < 0 || bucket >= n_buckets || k <= 0 || k >= ((int64_t)1 << 40))
			continue;
		if ((err = sum_add(&sums, bucket << 40 | k, sqlite3_column_int64(st, 3))))
			goto cleanup;
	}
	if (rc != SQLITE_DONE) {
		err = -EIO;
		goto cleanup;
	}
	rows = calloc(sums.len + 1, sizeof(*rows));
	texts = calloc(sums.len + 1, sizeof(*texts));
	text_ids = calloc(sums.len + 1, sizeof(*text_ids));
	err = -ENOMEM;
	if (!rows || !texts || !text_ids)
		goto cleanup;
	for (size_t i = 0; i < sums.cap; i++) {
		int64_t k, bucket;
		char buf[32];
		size_t t;

		if (!sums.id[i])
			continue;
		k = sums.id[i] & (((int64_t)1 << 40) - 1);
		bucket = sums.id[i] >> 40;
		for (t = 0; t < n_texts && text_ids[t] != k; t++)
			;
		if (t == n_texts) {
			const unsigned char *v = NULL;

			buf[0] = '\0';
			if (mode == BY_CPU)
				snprintf(buf, sizeof(buf), "%" PRId64, k - 2);
			if (kq) {
				sqlite3_bind_int64(kq, 1, k);
				if (sqlite3_step(kq) == SQLITE_ROW)
					v = sqlite3_column_text(kq, 0);
			}
			texts[t] = strdup(v ? (const char *)v : buf);
			if (kq)
				sqlite3_reset(kq);
			if (!texts[t])
				goto cleanup;
			text_ids[t] = k;
			n_texts++;
		}
		rows[n_rows].bucket = f->from + bucket * step;
		rows[n_rows].key = texts[t];
		rows[n_rows++].n = sums.n[i];
	}
	qsort(rows, n_rows, sizeof(*rows), tl_cmp);
	qb_printf(out, "{\"step\":%" PRId64 ",\"rows\":[", step);
	for (size_t i = 0, printed = 0; i < n_rows; i++) {
		int64_t n = rows[i].n;

		/* Resources sharing a key (a container's processes) are one row. */
		while (i + 1 < n_rows && rows[i + 1].bucket == rows[i].bucket &&
		       !strcmp(rows[i + 1].key, rows[i].key))
			n += rows[++i].n;
		qb_printf(out, "%s[%" PRId64 ",", printed++ ? "," : "", rows[i].bucket);
		qb_json(out, rows[i].key);
		qb_printf(out, ",%" PRId64 "]", n);
	}
	qb_puts(out, "]}");
	err = out->err;
cleanup:
	for (size_t i = 0; i < n_texts; i++)
		free(texts[i]);
	free(texts);
	free(text_ids);
	free(rows);
	free(sums.id);
	free(sums.n);
	sqlite3_finalize(st);
	sqlite3_finalize(kq);
	qbuf__free(&q);
	qbuf__free(&w);
	return err;
}

static int json_list(sqlite3 *db, const char *sql, struct qbuf *out)
{
	sqlite3_stmt *st;
	int rc, i = 0;

	if (prepare(db, sql, &st))
		return -EIO;
	qb_puts(out, "[");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(st, 0);

		if (i++)
			qb_puts(out, ",");
		qb_json(out, v ? (const char *)v : "");
	}
	qb_puts(out, "]");
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int query__meta(sqlite3 *db, struct qbuf *out)
{
	static const struct {
		const char *key, *sql;
	} lists[] = {
	    {"ptypes", "SELECT name FROM ptypes ORDER BY name"},
	    {"hosts", "SELECT DISTINCT host FROM resources ORDER BY 1"},
	    {"services", "SELECT DISTINCT service FROM resources ORDER BY 1"},
	    {"containers",
	     "SELECT DISTINCT container FROM resources WHERE container<>'' ORDER BY 1"},
	    {"comms", "SELECT DISTINCT comm FROM resources ORDER BY 1"},
	    {"exes", "SELECT DISTINCT exe FROM resources WHERE exe<>'' ORDER BY 1"},
	    {"ftypes", "SELECT name FROM ftypes ORDER BY name"},
	};
	sqlite3_stmt *st;
	int err = 0;

	qb_puts(out, "{");
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]) && !err; i++) {
		qb_printf(out, "\"%s\":", lists[i].key);
		err = json_list(db, lists[i].sql, out);
		qb_puts(out, ",");
	}
	if (err ||
	    (err = prepare(db, "SELECT min(ts), max(ts), coalesce(sum(n),0) FROM samples", &st)))
		return err;
	if (sqlite3_step(st) == SQLITE_ROW)
		qb_printf(
		    out, "\"first\":%" PRId64 ",\"last\":%" PRId64 ",\"samples\":%" PRId64 "}",
		    (int64_t)sqlite3_column_int64(st, 0), (int64_t)sqlite3_column_int64(st, 1),
		    (int64_t)sqlite3_column_int64(st, 2));
	else
		err = -EIO;
	sqlite3_finalize(st);
	return err ? err : out->err;
}

int query__executables(sqlite3 *db, struct qbuf *out)
{
	sqlite3_stmt *st;
	int rc, i = 0;

	/* Symbols found: some frame of the file has a name that is not "file+0x..". */
	if (prepare(db,
		    "SELECT sm.s, sb.s, count(f.id), "
		    " sum(CASE WHEN instr(sn.s,'+0x')=0 THEN 1 ELSE 0 END) "
		    "FROM mappings m JOIN strings sm ON sm.id=m.file JOIN strings sb ON "
		    "sb.id=m.build_id JOIN frames f ON f.mapping=m.id JOIN functions fn ON "
		    "fn.id=f.func JOIN strings sn ON sn.id=fn.name WHERE sm.s<>'' "
		    "GROUP BY m.id ORDER BY sm.s",
		    &st))
		return -EIO;
	qb_puts(out, "{\"executables\":[");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		qb_puts(out, i++ ? ",{\"file\":" : "{\"file\":");
		qb_json(out, (const char *)sqlite3_column_text(st, 0));
		qb_puts(out, ",\"build_id\":");
		qb_json(out, (const char *)sqlite3_column_text(st, 1));
		qb_printf(out, ",\"frames\":%" PRId64 ",\"symbolized\":%" PRId64 "}",
			  (int64_t)sqlite3_column_int64(st, 2),
			  (int64_t)sqlite3_column_int64(st, 3));
	}
	qb_puts(out, "]}");
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? out->err : -EIO;
}

/* ---- folded and pprof ------------------------------------------------------------ */

/* Calls fn for every (res, stack, count) of the selection. */
static int each_res_stack(sqlite3 *db, const struct query_filter *f,
			  int (*fn)(void *ctx, sqlite3_stmt *row), void *ctx)
{
	struct qbuf q = {0};
	sqlite3_stmt *st = NULL;
	int err, rc;

	qb_puts(&q, "SELECT (SELECT comm FROM resources WHERE id=res), stack, sum(n) FROM ");
	source_sql(f, &q);
	qb_puts(&q, " GROUP BY res, stack");
	if ((err = q.err) || (err = prepare(db, q.s, &st)))
		goto cleanup;
	bind_filter(st, f);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((err = fn(ctx, st)))
			goto cleanup;
	err = rc == SQLITE_DONE ? 0 : -EIO;
cleanup:
	sqlite3_finalize(st);
	qbuf__free(&q);
	return err;
}

struct folded_ctx {
	struct frame_cache c;
	struct qbuf *out;
};

/* Folded frames must not carry the separators. */
static void folded_text(struct qbuf *out, const char *s)
{
	for (; *s; s++) {
		char ch = *s == ';' ? ':' : (*s == ' ' || *s == '\n' || *s == '\r') ? '_' : *s;

		qb_add(out, &ch, 1);
	}
}

static int folded_row(void *ctx, sqlite3_stmt *row)
{
	struct folded_ctx *fc = ctx;
	const unsigned char *comm = sqlite3_column_text(row, 0);
	int err = stack_get(&fc->c, (int64_t)sqlite3_column_int64(row, 1));

	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	folded_text(fc->out, comm && *comm ? (const char *)comm : "unknown");
	for (size_t i = fc->c.n_ids; i-- > 0;) {
		const struct frame_info *fi = frame_get(&fc->c, fc->c.ids[i]);

		if (!fi)
			return -ENOMEM;
		qb_add(fc->out, ";", 1);
		folded_text(fc->out, fi->name);
	}
	qb_printf(fc->out, " %" PRId64 "\n", (int64_t)sqlite3_column_int64(row, 2));
	return fc->out->err;
}

int query__folded(sqlite3 *db, const struct query_filter *f, struct qbuf *out)
{
	struct folded_ctx fc = {.out = out};
	int err;

	if ((err = check_filter(f, out)))
		return err;
	if (!(err = cache_init(db, &fc.c)))
		err = each_res_stack(db, f, folded_row, &fc);
	cache_free(&fc.c);
	return err;
}

/* pprof: one location and function per stored frame, one sample per (process, stack). */
struct pprof_ctx {
	struct frame_cache c;
	Perftools__Profiles__Profile p;
	struct hashmap strs; /* string -> index + 1 */
	char **str_v;
	size_t n_str, cap_str;
	uint64_t *frame_ids; /* frames used, in location order */
	size_t n_frames, cap_frames;
	struct hashmap used; /* frame id -> location index + 1 */
	Perftools__Profiles__Sample **samples;
	size_t n_samples, cap_samples;
	int err;
};

static bool str_equal(const void *entry, const void *key, void *ctx)
{
	const struct pprof_ctx *pc = ctx;

	return !strcmp(pc->str_v[(uintptr_t)entry - 1], key);
}

static int64_t pp_str(struct pprof_ctx *pc, const char *s)
{
	uint64_t h = hash_str(s, 3);
	uintptr_t e = (uintptr_t)hashmap__find(&pc->strs, h, s);
	char *d;

	if (e)
		return (int64_t)e - 1;
	if (pc->n_str == pc->cap_str) {
		size_t cap = pc->cap_str ? pc->cap_str * 2 : 256;
		char **nv = realloc(pc->str_v, cap * sizeof(*nv));

		if (!nv)
			goto nomem;
		pc->str_v = nv;
		pc->cap_str = cap;
	}
	d = strdup(s);
	if (!d)
		goto nomem;
	pc->str_v[pc->n_str] = d;
	if (hashmap__insert(&pc->strs, h, (void *)(uintptr_t)(pc->n_str + 1)))
		goto nomem;
	return (int64_t)pc->n_str++;
nomem:
	pc->err = -ENOMEM;
	return 0;
}

static bool used_equal(const void *entry, const void *key, void *ctx)
{
	const struct pprof_ctx *pc = ctx;

	return pc->frame_ids[(uintptr_t)entry - 1] == *(const uint64_t *)key;
}

static uint64_t pp_location(struct pprof_ctx *pc, uint64_t frame)
{
	uint64_t h = hash_u64(frame);
	uintptr_t e = (uintptr_t)hashmap__find(&pc->used, h, &frame);

	if (e)
		return e;
	if (pc->n_frames == pc->cap_frames) {
		size_t cap = pc->cap_frames ? pc->cap_frames * 2 : 256;
		uint64_t *nv = realloc(pc->frame_ids, cap * sizeof(*nv));

		if (!nv) {
			pc->err = -ENOMEM;
			return 1;
		}
		pc->frame_ids = nv;
		pc->cap_frames = cap;
	}
	pc->frame_ids[pc->n_frames] = frame;
	if (hashmap__insert(&pc->used, h, (void *)(uintptr_t)(pc->n_frames + 1)))
		pc->err = -ENOMEM;
	return ++pc->n_frames;
}

static int pprof_row(void *ctx, sqlite3_stmt *row)
{
	struct pprof_ctx *pc = ctx;
	Perftools__Profiles__Sample *s;
	int err = stack_get(&pc->c, (int64_t)sqlite3_column_int64(row, 1));

	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	if (pc->n_samples == pc->cap_samples) {
		size_t cap = pc->cap_samples ? pc->cap_samples * 2 : 256;
		void *nv = realloc(pc->samples, cap * sizeof(*pc->samples));

		if (!nv)
			return -ENOMEM;
		pc->samples = nv;
		pc->cap_samples = cap;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	perftools__profiles__sample__init(s);
	pc->samples[pc->n_samples++] = s;
	s->location_id = calloc(pc->c.n_ids ? pc->c.n_ids : 1, sizeof(uint64_t));
	s->value = calloc(1, sizeof(int64_t));
	if (!s->location_id || !s->value)
		return -ENOMEM;
	s->n_location_id = pc->c.n_ids;
	for (size_t i = 0; i < pc->c.n_ids; i++)
		s->location_id[i] = pp_location(pc, pc->c.ids[i]);
	s->value[0] = sqlite3_column_int64(row, 2);
	s->n_value = 1;
	return pc->err;
}

int query__pprof(sqlite3 *db, const struct query_filter *f, struct qbuf *out)
{
	struct pprof_ctx pc = {0};
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *vtp = &vt;
	Perftools__Profiles__Location *locs = NULL, **loc_ptrs = NULL;
	Perftools__Profiles__Function *fns = NULL, **fn_ptrs = NULL;
	Perftools__Profiles__Line *lines = NULL, **line_ptrs = NULL;
	uint8_t *packed = NULL, *z = NULL;
	size_t size, zlen;
	int err;

	if ((err = check_filter(f, out)))
		return err;
	perftools__profiles__profile__init(&pc.p);
	hashmap__init(&pc.strs, str_equal, &pc);
	hashmap__init(&pc.used, used_equal, &pc);
	pp_str(&pc, "");
	vt.type = pp_str(&pc, "samples");
	vt.unit = pp_str(&pc, "count");
	if ((err = cache_init(db, &pc.c)) || (err = each_res_stack(db, f, pprof_row, &pc)))
		goto cleanup;
	locs = calloc(pc.n_frames + 1, sizeof(*locs));
	loc_ptrs = calloc(pc.n_frames + 1, sizeof(*loc_ptrs));
	fns = calloc(pc.n_frames + 1, sizeof(*fns));
	fn_ptrs = calloc(pc.n_frames + 1, sizeof(*fn_ptrs));
	lines = calloc(pc.n_frames + 1, sizeof(*lines));
	line_ptrs = calloc(pc.n_frames + 1, sizeof(*line_ptrs));
	err = -ENOMEM;
	if (!locs || !loc_ptrs || !fns || !fn_ptrs || !lines || !line_ptrs)
		goto cleanup;
	/* One function per location keeps the ids simple; pprof merges by name. */
	for (size_t i = 0; i < pc.n_frames; i++) {
		const struct frame_info *fi = frame_get(&pc.c, (int64_t)pc.frame_ids[i]);

		if (!fi)
			goto cleanup;
		perftools__profiles__function__init(&fns[i]);
		fns[i].id = i + 1;
		fns[i].name = pp_str(&pc, fi->name);
		fns[i].system_name = fns[i].name;
		fns[i].filename = pp_str(&pc, fi->file);
		fn_ptrs[i] = &fns[i];
		perftools__profiles__line__init(&lines[i]);
		lines[i].function_id = i + 1;
		lines[i].line = fi->line;
		line_ptrs[i] = &lines[i];
		perftools__profiles__location__init(&locs[i]);
		locs[i].id = i + 1;
		locs[i].line = &line_ptrs[i];
		locs[i].n_line = 1;
		loc_ptrs[i] = &locs[i];
	}
	if ((err = pc.err))
		goto cleanup;
	pc.p.sample_type = &vtp;
	pc.p.n_sample_type = 1;
	pc.p.sample = pc.samples;
	pc.p.n_sample = pc.n_samples;
	pc.p.location = loc_ptrs;
	pc.p.n_location = pc.n_frames;
	pc.p.function = fn_ptrs;
	pc.p.n_function = pc.n_frames;
	pc.p.string_table = pc.str_v;
	pc.p.n_string_table = pc.n_str;
	/* Unbounded selections (no from/to) get no time rather than an overflowed one. */
	if (f->from > 0 && f->to < (int64_t)1 << 33) {
		pc.p.time_nanos = f->from * 1000000000;
		pc.p.duration_nanos = (f->to - f->from) * 1000000000;
	}
	size = perftools__profiles__profile__get_packed_size(&pc.p);
	packed = malloc(size ? size : 1);
	err = -ENOMEM;
	if (!packed)
		goto cleanup;
	perftools__profiles__profile__pack(&pc.p, packed);
	if ((err = transport__gzip(packed, size, &z, &zlen)))
		goto cleanup;
	qb_add(out, (const char *)z, zlen);
	err = out->err;
cleanup:
	for (size_t i = 0; i < pc.n_samples; i++) {
		free(pc.samples[i]->location_id);
		free(pc.samples[i]->value);
		free(pc.samples[i]);
	}
	free(pc.samples);
	for (size_t i = 0; i < pc.n_str; i++)
		free(pc.str_v[i]);
	free(pc.str_v);
	free(pc.frame_ids);
	hashmap__clear(&pc.strs);
	hashmap__clear(&pc.used);
	cache_free(&pc.c);
	free(locs);
	free(loc_ptrs);
	free(fns);
	free(fn_ptrs);
	free(lines);
	free(line_ptrs);
	free(packed);
	free(z);
	return err;
}
