// SPDX-License-Identifier: Apache-2.0
/*
 * The serve store (store.h). Every get-or-insert is a SELECT on the table's
 * UNIQUE index then an INSERT: ingest resolves each dictionary entry of a
 * request once (otlp_ingest.c), so these run per distinct entry, not per
 * sample. Stacks are blobs of 32-bit little-endian frame ids, leaf first,
 * with the bit set of their frame types beside them so that a frame-type
 * filter is one AND in SQL.
 */
#include "serve/store.h"

#include "util/hashmap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum stmt_id {
	S_STR_GET,
	S_STR_ADD,
	S_MAP_GET,
	S_MAP_ADD,
	S_FN_GET,
	S_FN_ADD,
	S_FT_GET,
	S_FT_ADD,
	S_FR_GET,
	S_FR_ADD,
	S_FR_TYPE,
	S_ST_GET,
	S_ST_ADD,
	S_RES_GET,
	S_RES_ADD,
	S_TH_GET,
	S_TH_ADD,
	S_PT_GET,
	S_PT_ADD,
	S_SAMPLE,
	S_ROLLUP,
	S_COUNT_,
};

static const char *const stmt_sql[S_COUNT_] = {
    [S_STR_GET] = "SELECT id FROM strings WHERE s=?1",
    [S_STR_ADD] = "INSERT INTO strings(s) VALUES(?1)",
    [S_MAP_GET] = "SELECT id FROM mappings WHERE file=?1 AND build_id=?2",
    [S_MAP_ADD] = "INSERT INTO mappings(file,build_id) VALUES(?1,?2)",
    [S_FN_GET] = "SELECT id FROM functions WHERE name=?1 AND file=?2",
    [S_FN_ADD] = "INSERT INTO functions(name,file) VALUES(?1,?2)",
    [S_FT_GET] = "SELECT id FROM ftypes WHERE name=?1",
    [S_FT_ADD] = "INSERT INTO ftypes(name) VALUES(?1)",
    [S_FR_GET] = "SELECT id FROM frames WHERE func=?1 AND line=?2 AND mapping=?3 AND type=?4",
    [S_FR_ADD] = "INSERT INTO frames(func,line,mapping,type) VALUES(?1,?2,?3,?4)",
    [S_FR_TYPE] = "SELECT type FROM frames WHERE id=?1",
    [S_ST_GET] = "SELECT id FROM stacks WHERE frames=?1",
    [S_ST_ADD] = "INSERT INTO stacks(types,frames) VALUES(?2,?1)",
    [S_RES_GET] = "SELECT id FROM resources WHERE host=?1 AND service=?2 AND container=?3 AND "
		  "pid=?4 AND comm=?5 AND exe=?6",
    [S_RES_ADD] = "INSERT INTO resources(host,service,container,pid,comm,exe) "
		  "VALUES(?1,?2,?3,?4,?5,?6)",
    [S_TH_GET] = "SELECT id FROM threads WHERE tid=?1 AND name=?2",
    [S_TH_ADD] = "INSERT INTO threads(tid,name) VALUES(?1,?2)",
    [S_PT_GET] = "SELECT id FROM ptypes WHERE name=?1",
    [S_PT_ADD] = "INSERT INTO ptypes(name) VALUES(?1)",
    [S_SAMPLE] =
	"INSERT INTO samples(ts,ptype,res,stack,thread,cpu,n) VALUES(?1,?2,?3,?4,?5,?6,?7) "
	"ON CONFLICT DO UPDATE SET n=n+excluded.n",
    [S_ROLLUP] = "INSERT INTO rollup(ts,ptype,res,stack,n) VALUES(?1,?2,?3,?4,?5) "
		 "ON CONFLICT DO UPDATE SET n=n+excluded.n",
};

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS strings(id INTEGER PRIMARY KEY, s TEXT NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS mappings(id INTEGER PRIMARY KEY, file INTEGER NOT NULL,"
    " build_id INTEGER NOT NULL, UNIQUE(file,build_id));"
    "CREATE TABLE IF NOT EXISTS functions(id INTEGER PRIMARY KEY, name INTEGER NOT NULL,"
    " file INTEGER NOT NULL, UNIQUE(name,file));"
    "CREATE TABLE IF NOT EXISTS ftypes(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS frames(id INTEGER PRIMARY KEY, func INTEGER NOT NULL,"
    " line INTEGER NOT NULL, mapping INTEGER NOT NULL, type INTEGER NOT NULL,"
    " UNIQUE(func,line,mapping,type));"
    "CREATE TABLE IF NOT EXISTS stacks(id INTEGER PRIMARY KEY, types INTEGER NOT NULL,"
    " frames BLOB NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS resources(id INTEGER PRIMARY KEY, host TEXT NOT NULL,"
    " service TEXT NOT NULL, container TEXT NOT NULL, pid INTEGER NOT NULL, comm TEXT NOT NULL,"
    " exe TEXT NOT NULL, UNIQUE(host,service,container,pid,comm,exe));"
    "CREATE TABLE IF NOT EXISTS threads(id INTEGER PRIMARY KEY, tid INTEGER NOT NULL,"
    " name TEXT NOT NULL, UNIQUE(tid,name));"
    "CREATE TABLE IF NOT EXISTS ptypes(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS samples(ts INTEGER NOT NULL, ptype INTEGER NOT NULL,"
    " res INTEGER NOT NULL, stack INTEGER NOT NULL, thread INTEGER NOT NULL,"
    " cpu INTEGER NOT NULL, n INTEGER NOT NULL,"
    " PRIMARY KEY(ts,ptype,res,stack,thread,cpu)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS rollup(ts INTEGER NOT NULL, ptype INTEGER NOT NULL,"
    " res INTEGER NOT NULL, stack INTEGER NOT NULL, n INTEGER NOT NULL,"
    " PRIMARY KEY(ts,ptype,res,stack)) WITHOUT ROWID;";

/*
 * Ids already resolved, by their key's bytes: ingest mostly sees frames,
 * stacks and resources it stored before. Cleared on rollback (an id may not
 * exist any more) and on retention (rows may be gone), and when it reaches
 * CACHE_MAX entries or CACHE_MAX_BYTES, which bounds its memory.
 */
#define CACHE_MAX	65536
#define CACHE_MAX_BYTES (8u << 20) /* keys and entries of one table's cache */
#define CACHE_MAX_KEY	4096	   /* longer keys (very deep stacks) are not cached */

struct kv {
	int64_t id;
	size_t len;
	uint8_t key[];
};

struct kv_key {
	const void *p;
	size_t len;
};

struct cache {
	struct hashmap map;
	size_t bytes;
};

enum { C_FRAME, C_STACK, C_RES, C_THREAD, C_PTYPE, C_COUNT_ };

/*
 * Counts of the transaction in progress, summed in memory and written once
 * per key at commit: a request repeats (second, stack, thread, CPU) and
 * even more its 10-minute rollup key. Keys: ts, ptype, res, stack, thread, cpu.
 */
struct acc_entry {
	int64_t k[6], n;
};

struct acc {
	struct acc_entry *v;
	size_t len, cap; /* open addressing; n == 0 marks a free slot */
};

struct store {
	struct cache caches[C_COUNT_];
	struct acc samples, rollup;
	sqlite3 *db;
	sqlite3_stmt *st[S_COUNT_];
	struct store_opts o;
	char *path;
};

static bool kv_equal(const void *entry, const void *key, void *ctx)
{
	const struct kv *e = entry;
	const struct kv_key *k = key;

	(void)ctx;
	return e->len == k->len && !memcmp(e->key, k->p, k->len);
}

static void cache_clear(struct cache *c)
{
	void *e;

	for (size_t i = 0; hashmap__next(&c->map, &i, &e);)
		free(e);
	hashmap__clear(&c->map);
	hashmap__init(&c->map, kv_equal, NULL);
	c->bytes = 0;
}

static void caches_clear(struct store *s)
{
	for (int i = 0; i < C_COUNT_; i++)
		cache_clear(&s->caches[i]);
}

static int64_t cache_find(struct cache *c, const void *key, size_t len)
{
	struct kv_key k = {key, len};
	struct kv *e = hashmap__find(&c->map, hash_bytes(key, len, 11), &k);

	return e ? e->id : 0;
}

/* Remembers id for key; a failure only costs a later lookup. */
static void cache_add(struct cache *c, const void *key, size_t len, int64_t id)
{
	struct kv *e;

	if (len > CACHE_MAX_KEY)
		return;
	if (c->map.len >= CACHE_MAX || c->bytes + sizeof(*e) + len > CACHE_MAX_BYTES)
		cache_clear(c);
	e = malloc(sizeof(*e) + len);
	if (!e)
		return;
	c->bytes += sizeof(*e) + len;
	e->id = id;
	e->len = len;
	memcpy(e->key, key, len);
	if (hashmap__insert(&c->map, hash_bytes(key, len, 11), e))
		free(e);
}

/* A cache key from fields: each string with its NUL, each number as 8 bytes. */
struct keybuf {
	uint8_t b[1024];
	size_t len;
	bool too_long;
};

static void key_str(struct keybuf *k, const char *v)
{
	size_t n = strlen(v ? v : "") + 1;

	if (k->len + n > sizeof(k->b)) {
		k->too_long = true;
		return;
	}
	memcpy(k->b + k->len, v ? v : "", n);
	k->len += n;
}

static void key_int(struct keybuf *k, int64_t v)
{
	if (k->len + 8 > sizeof(k->b)) {
		k->too_long = true;
		return;
	}
	memcpy(k->b + k->len, &v, 8);
	k->len += 8;
}

static int sql_err(struct store *s, const char *what)
{
	int code = sqlite3_errcode(s->db);

	fprintf(stderr, "serve: store: %s: %s\n", what, sqlite3_errmsg(s->db));
	if (code == SQLITE_NOMEM)
		return -ENOMEM;
	if (code == SQLITE_FULL)
		return -ENOSPC;
	if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		return -EBUSY;
	return -EIO;
}

static int exec(struct store *s, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "serve: store: %s\n", msg ? msg : "error");
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

int store__open(const char *path, const struct store_opts *o, struct store **out)
{
	struct store *s;
	int err = -EIO;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->path = strdup(path);
	if (!s->path) {
		free(s);
		return -ENOMEM;
	}
	if (o)
		s->o = *o;
	for (int i = 0; i < C_COUNT_; i++)
		hashmap__init(&s->caches[i].map, kv_equal, NULL);
	/* NOFOLLOW: the database path is ours to name, not a link someone left there. */
	if (sqlite3_open_v2(path, &s->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW |
				SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		fprintf(stderr, "serve: cannot open %s: %s\n", path,
			s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto cleanup;
	}
	sqlite3_busy_timeout(s->db, 5000);
	/*
	 * WAL: readers never block the writer. synchronous=NORMAL: a power cut
	 * may lose the last transactions but never corrupts; a killed process
	 * loses nothing committed. The cache bound keeps RSS bounded (state.md).
	 */
	if ((err = exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			   "PRAGMA cache_size=-16384; PRAGMA temp_store=MEMORY;"
			   "PRAGMA mmap_size=0;")) ||
	    (err = exec(s, schema)))
		goto cleanup;
	for (int i = 0; i < S_COUNT_; i++) {
		if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i],
				       NULL) != SQLITE_OK) {
			err = sql_err(s, stmt_sql[i]);
			goto cleanup;
		}
	}
	*out = s;
	return 0;
cleanup:
	store__close(s);
	return err;
}

void store__close(struct store *s)
{
	if (!s)
		return;
	for (int i = 0; i < S_COUNT_; i++)
		sqlite3_finalize(s->st[i]);
	if (s->db)
		sqlite3_close(s->db);
	caches_clear(s);
	for (int i = 0; i < C_COUNT_; i++)
		hashmap__clear(&s->caches[i].map);
	free(s->samples.v);
	free(s->rollup.v);
	free(s->path);
	free(s);
}

sqlite3 *store__db(struct store *s)
{
	return s->db;
}

const char *store__path(const struct store *s)
{
	return s->path;
}

int store__reader(struct store *s, sqlite3 **out)
{
	*out = NULL;
	if (sqlite3_open_v2(s->path, out, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, NULL) !=
	    SQLITE_OK) {
		sqlite3_close(*out);
		*out = NULL;
		return -EIO;
	}
	sqlite3_busy_timeout(*out, 5000);
	sqlite3_exec(*out, "PRAGMA cache_size=-16384; PRAGMA temp_store=MEMORY;", NULL, NULL, NULL);
	return 0;
}

static void acc_reset(struct acc *a)
{
	if (a->len)
		memset(a->v, 0, a->cap * sizeof(*a->v));
	a->len = 0;
}

static int acc_add(struct acc *a, const int64_t k[6], int64_t n)
{
	size_t i;

	if (2 * (a->len + 1) > a->cap) {
		struct acc g = {.cap = a->cap ? a->cap * 2 : 512};

		g.v = calloc(g.cap, sizeof(*g.v));
		if (!g.v)
			return -ENOMEM;
		for (size_t j = 0; j < a->cap; j++)
			if (a->v[j].n)
				acc_add(&g, a->v[j].k, a->v[j].n);
		free(a->v);
		*a = g;
	}
	for (i = hash_bytes(k, 6 * sizeof(int64_t), 5) & (a->cap - 1);
	     a->v[i].n && memcmp(a->v[i].k, k, 6 * sizeof(int64_t)); i = (i + 1) & (a->cap - 1))
		;
	if (!a->v[i].n) {
		memcpy(a->v[i].k, k, 6 * sizeof(int64_t));
		a->len++;
	}
	a->v[i].n += n;
	return 0;
}

static int step_done(struct store *s, sqlite3_stmt *st);

/* Writes the summed counts with their statement (ncols key columns, then n). */
static int acc_flush(struct store *s, struct acc *a, sqlite3_stmt *st, int ncols)
{
	int err = 0;

	for (size_t i = 0; i < a->cap && !err; i++) {
		if (!a->v[i].n)
			continue;
		for (int c = 0; c < ncols; c++)
			sqlite3_bind_int64(st, c + 1, a->v[i].k[c]);
		sqlite3_bind_int64(st, ncols + 1, a->v[i].n);
		err = step_done(s, st);
	}
	acc_reset(a);
	return err;
}

int store__begin(struct store *s)
{
	acc_reset(&s->samples);
	acc_reset(&s->rollup);
	return exec(s, "BEGIN IMMEDIATE");
}

int store__commit(struct store *s)
{
	int err;

	if ((err = acc_flush(s, &s->samples, s->st[S_SAMPLE], 6)) ||
	    (err = acc_flush(s, &s->rollup, s->st[S_ROLLUP], 4)))
		return err;
	return exec(s, "COMMIT");
}

void store__rollback(struct store *s)
{
	acc_reset(&s->samples);
	acc_reset(&s->rollup);
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	caches_clear(s);
}

/* Binds ?1.. from a printf-like spec: 'i' int64, 's' text (NULL = ""), 'b' blob+len. */
static void bind_v(sqlite3_stmt *st, const char *spec, va_list ap)
{
	for (int i = 1; *spec; spec++, i++) {
		if (*spec == 'i') {
			sqlite3_bind_int64(st, i, va_arg(ap, int64_t));
		} else if (*spec == 's') {
			const char *v = va_arg(ap, const char *);

			sqlite3_bind_text(st, i, v ? v : "", -1, SQLITE_STATIC);
		} else {
			const void *b = va_arg(ap, const void *);
			int len = va_arg(ap, int);

			sqlite3_bind_blob(st, i, b, len, SQLITE_STATIC);
		}
	}
}

/* SELECT id by the UNIQUE key, else INSERT: the row's id or -errno. */
static int64_t get_or_add(struct store *s, enum stmt_id get, enum stmt_id add, const char *spec,
			  ...)
{
	sqlite3_stmt *st = s->st[get];
	va_list ap;
	int64_t id = 0;
	int rc;

	va_start(ap, spec);
	bind_v(st, spec, ap);
	va_end(ap);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc == SQLITE_ROW)
		return id;
	if (rc != SQLITE_DONE)
		return sql_err(s, "lookup");
	st = s->st[add];
	va_start(ap, spec);
	bind_v(st, spec, ap);
	va_end(ap);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return sql_err(s, "insert");
	return sqlite3_last_insert_rowid(s->db);
}

static int64_t string_id(struct store *s, const char *str)
{
	return get_or_add(s, S_STR_GET, S_STR_ADD, "s", str ? str : "");
}

int64_t store__frame(struct store *s, const struct store_frame *f)
{
	int64_t name, file, map_file, build, mapping, fn, type, id;
	struct keybuf k = {.len = 0};

	key_str(&k, f->function);
	key_str(&k, f->file);
	key_int(&k, f->line);
	key_str(&k, f->mapping);
	key_str(&k, f->build_id);
	key_str(&k, f->type);
	if (!k.too_long && (id = cache_find(&s->caches[C_FRAME], k.b, k.len)))
		return id;
	name = string_id(s, f->function);
	file = string_id(s, f->file);
	map_file = string_id(s, f->mapping);
	build = string_id(s, f->build_id);
	if (name < 0 || file < 0 || map_file < 0 || build < 0)
		return -EIO;
	mapping = get_or_add(s, S_MAP_GET, S_MAP_ADD, "ii", map_file, build);
	fn = get_or_add(s, S_FN_GET, S_FN_ADD, "ii", name, file);
	type = get_or_add(s, S_FT_GET, S_FT_ADD, "s", f->type && *f->type ? f->type : "native");
	if (mapping < 0 || fn < 0 || type < 0)
		return -EIO;
	if (type > STORE_MAX_FRAME_TYPES)
		return -E2BIG;
	id = get_or_add(s, S_FR_GET, S_FR_ADD, "iiii", fn, f->line, mapping, type);
	if (id > 0 && !k.too_long)
		cache_add(&s->caches[C_FRAME], k.b, k.len, id);
	return id;
}

static int64_t frame_type(struct store *s, int64_t frame)
{
	sqlite3_stmt *st = s->st[S_FR_TYPE];
	int64_t t = -ENOENT;

	sqlite3_bind_int64(st, 1, frame);
	if (sqlite3_step(st) == SQLITE_ROW)
		t = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return t;
}

int64_t store__stack(struct store *s, const int64_t *frames, size_t n)
{
	uint8_t *blob;
	int64_t types = 0, id;

	if (n > 65536)
		return -E2BIG;
	blob = malloc(n ? n * 4 : 1);
	if (!blob)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t v = (uint32_t)frames[i];

		if (frames[i] <= 0 || frames[i] > UINT32_MAX) {
			free(blob);
			return -EINVAL;
		}
		blob[i * 4] = v & 0xff;
		blob[i * 4 + 1] = (v >> 8) & 0xff;
		blob[i * 4 + 2] = (v >> 16) & 0xff;
		blob[i * 4 + 3] = v >> 24;
	}
	if ((id = cache_find(&s->caches[C_STACK], blob, n * 4))) {
		free(blob);
		return id;
	}
	/* The type set: only needed for a new stack, but cheap next to the insert. */
	for (size_t i = 0; i < n; i++) {
		int64_t t = frame_type(s, frames[i]);

		if (t < 0) {
			free(blob);
			return -EINVAL;
		}
		types |= (int64_t)1 << t;
	}
	id = get_or_add(s, S_ST_GET, S_ST_ADD, "bi", blob, (int)(n * 4), types);
	if (id > 0)
		cache_add(&s->caches[C_STACK], blob, n * 4, id);
	free(blob);
	return id;
}

int64_t store__resource(struct store *s, const struct store_resource *r)
{
	struct keybuf k = {.len = 0};
	int64_t id;

	key_str(&k, r->host);
	key_str(&k, r->service);
	key_str(&k, r->container);
	key_int(&k, r->pid);
	key_str(&k, r->comm);
	key_str(&k, r->exe);
	if (!k.too_long && (id = cache_find(&s->caches[C_RES], k.b, k.len)))
		return id;
	id = get_or_add(s, S_RES_GET, S_RES_ADD, "sssiss", r->host, r->service, r->container,
			r->pid, r->comm, r->exe);
	if (id > 0 && !k.too_long)
		cache_add(&s->caches[C_RES], k.b, k.len, id);
	return id;
}

int64_t store__thread(struct store *s, int64_t tid, const char *name)
{
	struct keybuf k = {.len = 0};
	int64_t id;

	key_int(&k, tid);
	key_str(&k, name);
	if (!k.too_long && (id = cache_find(&s->caches[C_THREAD], k.b, k.len)))
		return id;
	id = get_or_add(s, S_TH_GET, S_TH_ADD, "is", tid, name);
	if (id > 0 && !k.too_long)
		cache_add(&s->caches[C_THREAD], k.b, k.len, id);
	return id;
}

int64_t store__ptype(struct store *s, const char *name)
{
	struct keybuf k = {.len = 0};
	int64_t id;

	key_str(&k, name);
	if (!k.too_long && (id = cache_find(&s->caches[C_PTYPE], k.b, k.len)))
		return id;
	id = get_or_add(s, S_PT_GET, S_PT_ADD, "s", name);
	if (id > 0 && !k.too_long)
		cache_add(&s->caches[C_PTYPE], k.b, k.len, id);
	return id;
}

static int step_done(struct store *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : sql_err(s, "sample");
}

int store__add(struct store *s, int64_t ts, int64_t ptype, int64_t res, int64_t stack,
	       int64_t thread, int64_t cpu, int64_t count)
{
	int64_t k[6] = {ts, ptype, res, stack, thread, cpu};
	int64_t r[6] = {ts - ts % STORE_ROLLUP_S, ptype, res, stack, 0, 0};
	int err;

	if (count <= 0 || ts < 0)
		return -EINVAL;
	/* Written at store__commit(), within the same transaction. */
	if ((err = acc_add(&s->samples, k, count)) || (err = acc_add(&s->rollup, r, count)))
		return err;
	return 0;
}

static int64_t scalar(struct store *s, const char *sql, int64_t a, int64_t b)
{
	sqlite3_stmt *st;
	int64_t v = -EIO;
	int rc;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_err(s, sql);
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	else if (rc == SQLITE_DONE)
		v = 0; /* a statement without rows (DELETE) */
	sqlite3_finalize(st);
	return v;
}

int64_t store__count(struct store *s, int64_t from, int64_t to)
{
	return scalar(s, "SELECT coalesce(sum(n),0) FROM samples WHERE ts>=?1 AND ts<?2", from, to);
}

int64_t store__rows(struct store *s, const char *table)
{
	char sql[128];

	if (strspn(table, "abcdefghijklmnopqrstuvwxyz_") != strlen(table))
		return -EINVAL;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	return scalar(s, sql, 0, 0);
}

int64_t store__bytes(struct store *s)
{
	return scalar(
		   s,
		   "SELECT (SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count "
		   "FROM pragma_freelist_count())",
		   0, 0) *
	       scalar(s, "SELECT page_size FROM pragma_page_size()", 0, 0);
}

/* Frames the remaining stacks use, into temp table live_frames. */
static int mark_live_frames(struct store *s)
{
	sqlite3_stmt *q = NULL, *ins = NULL;
	int err = 0, rc;

	if ((err = exec(s, "CREATE TEMP TABLE IF NOT EXISTS live_frames(id INTEGER PRIMARY KEY);"
			   "DELETE FROM live_frames;")))
		return err;
	if (sqlite3_prepare_v2(s->db, "SELECT frames FROM stacks", -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO live_frames VALUES(?1)", -1, &ins,
			       NULL) != SQLITE_OK) {
		err = sql_err(s, "live frames");
		goto cleanup;
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const uint8_t *b = sqlite3_column_blob(q, 0);
		int len = sqlite3_column_bytes(q, 0);

		for (int i = 0; i + 4 <= len; i += 4) {
			uint32_t v =
			    b[i] | b[i + 1] << 8 | b[i + 2] << 16 | (uint32_t)b[i + 3] << 24;

			sqlite3_bind_int64(ins, 1, v);
			if (sqlite3_step(ins) != SQLITE_DONE) {
				err = sql_err(s, "live frames");
				goto cleanup;
			}
			sqlite3_reset(ins);
		}
	}
	if (rc != SQLITE_DONE)
		err = sql_err(s, "live frames");
cleanup:
	sqlite3_finalize(q);
	sqlite3_finalize(ins);
	return err;
}

/* What no sample refers to any more, down to the strings (inside a transaction). */
static int collect_garbage(struct store *s)
{
	int err;

	if ((err = exec(s, "DELETE FROM stacks WHERE id NOT IN (SELECT stack FROM samples) "
			   "AND id NOT IN (SELECT stack FROM rollup);"
			   "DELETE FROM resources WHERE id NOT IN (SELECT res FROM samples) "
			   "AND id NOT IN (SELECT res FROM rollup);"
			   "DELETE FROM threads WHERE id NOT IN (SELECT thread FROM samples);")) ||
	    (err = mark_live_frames(s)))
		return err;
	return exec(s, "DELETE FROM frames WHERE id NOT IN (SELECT id FROM live_frames);"
		       "DELETE FROM functions WHERE id NOT IN (SELECT func FROM frames);"
		       "DELETE FROM mappings WHERE id NOT IN (SELECT mapping FROM frames);"
		       "DELETE FROM strings WHERE id NOT IN (SELECT name FROM functions) AND "
		       "id NOT IN (SELECT file FROM functions) AND id NOT IN (SELECT file FROM "
		       "mappings) AND id NOT IN (SELECT build_id FROM mappings);"
		       "DELETE FROM live_frames;");
}

int store__retain(struct store *s, int64_t now_s)
{
	int err;

	caches_clear(s); /* rows they name may go */
	if ((err = store__begin(s)))
		return err;
	if (s->o.retention_s) {
		int64_t cut = now_s - (int64_t)s->o.retention_s;

		if (scalar(s, "DELETE FROM samples WHERE ts<?1", cut, 0) == -EIO ||
		    scalar(s, "DELETE FROM rollup WHERE ts+?2<=?1", cut, STORE_ROLLUP_S) == -EIO) {
			err = -EIO;
			goto cleanup;
		}
	}
	if ((err = collect_garbage(s)) || (err = store__commit(s)))
		goto cleanup;
	/*
	 * Size: drop the oldest tenth of the time span until the pages in use
	 * fit the bound (freed pages are reused, the file does not shrink).
	 */
	for (int round = 0; s->o.max_bytes && round < 30; round++) {
		int64_t lo, hi, cut;

		exec(s, "PRAGMA wal_checkpoint(TRUNCATE)");
		if (store__bytes(s) <= (int64_t)s->o.max_bytes)
			break;
		if ((err = store__begin(s)))
			return err;
		lo = scalar(s, "SELECT coalesce(min(ts),0) FROM samples", 0, 0);
		hi = scalar(s, "SELECT coalesce(max(ts),0) FROM samples", 0, 0);
		cut = lo + (hi - lo) / 10 + 1;
		if (scalar(s, "DELETE FROM samples WHERE ts<?1", cut, 0) == -EIO ||
		    scalar(s, "DELETE FROM rollup WHERE ts+?2<=?1", cut, STORE_ROLLUP_S) == -EIO) {
			err = -EIO;
			goto cleanup;
		}
		if ((err = collect_garbage(s)) || (err = store__commit(s)))
			goto cleanup;
	}
	return 0;
cleanup:
	store__rollback(s);
	return err;
}
