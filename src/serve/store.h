/* SPDX-License-Identifier: Apache-2.0 */
/*
 * omniprof serve's store: one SQLite database in WAL mode. Strings,
 * mappings, functions, frames (a function at a line, of a frame type, in a
 * mapping) and stacks are deduplicated; samples are counted per second and
 * per (profile type, resource, stack, thread, CPU), and again per 10 minutes
 * without thread and CPU (the rollup long ranges read). Retention deletes by
 * age and by size, then whatever no sample refers to any more.
 *
 * One writer at a time: the caller serialises store calls (serve holds one
 * mutex around the store); readers use their own connection (store__reader).
 */
#ifndef OMNIPROF_SERVE_STORE_H
#define OMNIPROF_SERVE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#define STORE_ROLLUP_S	      600 /* the rollup's bucket */
#define STORE_MAX_FRAME_TYPES 62

struct store;

struct store_opts {
	uint64_t retention_s; /* 0: keep by age forever */
	uint64_t max_bytes;   /* 0: no size bound */
};

/* The resource a sample came from (OTLP resource attributes); NULL = "". */
struct store_resource {
	const char *host, *service, *container, *comm, *exe;
	int64_t pid;
};

/* One frame of a stack. */
struct store_frame {
	const char *function, *file;
	int64_t line;
	const char *mapping, *build_id; /* the mapped file, its build id */
	const char *type;		/* profile.frame.type: native, kernel, python, ... */
};

/* Opens (creating) the database at path. 0 and *out (free with store__close), or -errno. */
int store__open(const char *path, const struct store_opts *o, struct store **out);
void store__close(struct store *s);

/* A transaction around one request: nothing of a rolled-back request stays. */
int store__begin(struct store *s);
int store__commit(struct store *s);
void store__rollback(struct store *s);

/* Ids of deduplicated rows, > 0, or -errno. */
int64_t store__frame(struct store *s, const struct store_frame *f);
/* frames: leaf first. */
int64_t store__stack(struct store *s, const int64_t *frames, size_t n);
int64_t store__resource(struct store *s, const struct store_resource *r);
int64_t store__thread(struct store *s, int64_t tid, const char *name);
int64_t store__ptype(struct store *s, const char *name);

/* Adds count samples at second ts, summed in memory and written by store__commit(). 0 or -errno. */
int store__add(struct store *s, int64_t ts, int64_t ptype, int64_t res, int64_t stack,
	       int64_t thread, int64_t cpu, int64_t count);

/*
 * Retention at time now_s: samples older than the retention, then the oldest
 * until the database is under max_bytes, then unreferenced stacks, frames,
 * functions, mappings and strings. 0 or -errno.
 */
int store__retain(struct store *s, int64_t now_s);

/* Samples stored (sum of counts) in [from, to), for tests. -errno on failure. */
int64_t store__count(struct store *s, int64_t from, int64_t to);
/* Row counts of a table by name (tests): -errno on failure. */
int64_t store__rows(struct store *s, const char *table);
/* Bytes the database file takes (pages in use). */
int64_t store__bytes(struct store *s);

/* The writer's connection (owned by the store). */
sqlite3 *store__db(struct store *s);
/* A read-only connection to the same database: the caller closes it with sqlite3_close. */
int store__reader(struct store *s, sqlite3 **out);
const char *store__path(const struct store *s);

#endif
