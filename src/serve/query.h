/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve's JSON API over a read connection of the store (docs/serve-api.md):
 * the page uses nothing else.
 */
#ifndef OMNIPROF_SERVE_QUERY_H
#define OMNIPROF_SERVE_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/* The selection every endpoint takes (URL parameters; NULL or "" = any). */
struct query_filter {
	int64_t from, to; /* unix seconds, [from, to) */
	const char *ptype, *host, *service, *container, *comm, *exe, *thread, *ftype;
	int64_t pid; /* 0 = any */
};

/* A growable response body. */
struct qbuf {
	char *s;
	size_t len, cap;
	int err;
};

void qbuf__free(struct qbuf *b);

/* Each writes the response into out: 0, -EINVAL (bad request, reason in out), or -errno. */
int query__meta(sqlite3 *db, struct qbuf *out);
int query__flame(sqlite3 *db, const struct query_filter *f, struct qbuf *out);
int query__top(sqlite3 *db, const struct query_filter *f, struct qbuf *out);
/* by: "process", "container", "cpu" or "" (one series). */
int query__timeline(sqlite3 *db, const struct query_filter *f, const char *by, struct qbuf *out);
int query__diff(sqlite3 *db, const struct query_filter *a, const struct query_filter *b,
		struct qbuf *out);
int query__executables(sqlite3 *db, struct qbuf *out);
/* stacks.folded text: "comm;outermost;...;leaf COUNT" lines. */
int query__folded(sqlite3 *db, const struct query_filter *f, struct qbuf *out);
/* A gzip'ed pprof profile of the selection. */
int query__pprof(sqlite3 *db, const struct query_filter *f, struct qbuf *out);

#endif
