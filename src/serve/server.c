// SPDX-License-Identifier: Apache-2.0
/*
 * The HTTP side of serve (server.h) on libmicrohttpd, a thread per
 * connection with a connection cap: OTLP/HTTP ingest, the JSON API
 * (query.c) and the embedded page (ui.html, linked by ui_html.S).
 *
 * Auth: with a token, every /api/ and ingest request must carry
 * "Authorization: Bearer TOKEN" (the page sends what it was given in its
 * URL fragment); the page itself holds no data and is served to anyone.
 */
#include "serve/server.h"

#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "serve/ingest.h"
#include "serve/query.h"
#include "serve/store.h"
#include "util/mhd_api.h"
#include "util/net_addr.h"

extern const char serve_ui_html_start[], serve_ui_html_end[];

/* libmicrohttpd, opened by http_server__start() before its daemon's threads. */
static const struct mhd_api *mhd;

/*
 * Read connections kept between requests: each keeps its page cache warm
 * (a fresh connection reads every page again). At most POOL_MAX idle ones;
 * a request finding none opens its own.
 */
#define POOL_MAX 4

struct http_server {
	struct MHD_Daemon *d;
	struct serve_ctx *c;
	pthread_mutex_t pool_lock;
	sqlite3 *pool[POOL_MAX];
	int n_pool;
	sem_t queries; /* SERVE_MAX_QUERIES slots: bounds the readers' caches and trees */
};

static int reader_get(struct http_server *h, sqlite3 **db)
{
	pthread_mutex_lock(&h->pool_lock);
	*db = h->n_pool ? h->pool[--h->n_pool] : NULL;
	pthread_mutex_unlock(&h->pool_lock);
	return *db ? 0 : store__reader(h->c->store, db);
}

static void reader_put(struct http_server *h, sqlite3 *db)
{
	pthread_mutex_lock(&h->pool_lock);
	if (h->n_pool < POOL_MAX) {
		h->pool[h->n_pool++] = db;
		db = NULL;
	}
	pthread_mutex_unlock(&h->pool_lock);
	sqlite3_close(db);
}

struct request {
	uint8_t *body;
	size_t len, cap, reserved;
	bool too_big, busy;
};

bool serve__auth_ok(const struct serve_ctx *c, const char *authorization)
{
	size_t lt, la;
	unsigned char diff = 0;

	if (!c->token)
		return true;
	if (!authorization || strncmp(authorization, "Bearer ", 7))
		return false;
	authorization += 7;
	lt = strlen(c->token);
	la = strlen(authorization);
	/* Constant time over the token's length: no early exit on the first difference. */
	for (size_t i = 0; i < lt; i++)
		diff |= (unsigned char)c->token[i] ^ (unsigned char)(i < la ? authorization[i] : 0);
	return !diff && la == lt;
}

int serve__gunzip(const uint8_t *in, size_t len, size_t max, uint8_t **out, size_t *out_len)
{
	z_stream z = {0};
	uint8_t *buf = NULL;
	size_t cap = len * 4 + 4096;
	int rc, err;

	*out = NULL;
	*out_len = 0;
	if (cap > max)
		cap = max;
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	buf = malloc(cap);
	err = -ENOMEM;
	if (!buf)
		goto cleanup;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	for (;;) {
		z.next_out = buf + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		rc = inflate(&z, Z_NO_FLUSH);
		if (rc == Z_STREAM_END)
			break;
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			err = -EINVAL;
			goto cleanup;
		}
		if (z.avail_out == 0) {
			uint8_t *nb;

			if (cap >= max) {
				err = -E2BIG;
				goto cleanup;
			}
			cap = cap * 2 > max ? max : cap * 2;
			nb = realloc(buf, cap);
			if (!nb)
				goto cleanup;
			buf = nb;
		} else if (rc == Z_BUF_ERROR || z.avail_in == 0) {
			err = -EINVAL; /* truncated */
			goto cleanup;
		}
	}
	*out = buf;
	*out_len = z.total_out;
	buf = NULL;
	err = 0;
cleanup:
	inflateEnd(&z);
	free(buf);
	return err;
}

int serve__gzip(const void *in, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream z = {0};
	uint8_t *buf;
	size_t cap;
	int rc;

	*out = NULL;
	*out_len = 0;
	/* Level 1: the answers are JSON with long repeated names, where speed costs little ratio.
	 */
	if (deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, (uLong)len);
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		*out_len = 0;
		return -EIO;
	}
	*out = buf;
	return 0;
}

bool serve__accepts_gzip(const char *accept_encoding)
{
	const char *p = accept_encoding;

	/* "gzip" as a whole token, not refused by "q=0". */
	while (p && (p = strcasestr(p, "gzip"))) {
		const char *e = p + 4;

		if ((p == accept_encoding || p[-1] == ' ' || p[-1] == ',') &&
		    (*e == '\0' || *e == ',' || *e == ' ' || *e == ';')) {
			while (*e == ' ')
				e++;
			if (*e != ';')
				return true;
			e++;
			while (*e == ' ')
				e++;
			return strncmp(e, "q=", 2) || strtod(e + 2, NULL) > 0;
		}
		p = e;
	}
	return false;
}

bool serve__reserve(struct serve_ctx *c, size_t n)
{
	size_t cur = __atomic_load_n(&c->buffered, __ATOMIC_RELAXED);

	do {
		if (cur + n > SERVE_MAX_BUFFERED)
			return false;
	} while (!__atomic_compare_exchange_n(&c->buffered, &cur, cur + n, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

void serve__release(struct serve_ctx *c, size_t n)
{
	__atomic_fetch_sub(&c->buffered, n, __ATOMIC_RELAXED);
}

int serve__ingest(struct serve_ctx *c, const uint8_t *buf, size_t len, bool gzip, char *why,
		  size_t why_len)
{
	uint8_t *plain = NULL;
	size_t plain_len = 0;
	int64_t n = 0;
	int err;

	pthread_mutex_lock(&c->lock);
	if (gzip) {
		err = serve__gunzip(buf, len, SERVE_MAX_INFLATE, &plain, &plain_len);
		if (err == -EINVAL)
			snprintf(why, why_len, "bad gzip data");
		if (err)
			goto out;
		buf = plain;
		len = plain_len;
	}
	err = otlp_ingest(c->store, buf, len, why, why_len, &n);
	free(plain);
out:
	c->requests++;
	if (err)
		c->rejected++;
	else
		c->ingested += n;
	pthread_mutex_unlock(&c->lock);
	return err;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
			     const void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = mhd->create_response_from_buffer(len, (void *)body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	mhd->add_response_header(r, "Content-Type", type);
	mhd->add_response_header(r, "Cache-Control", "no-store");
	mhd->add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (!strncmp(type, "text/html", 9))
		mhd->add_response_header(r, "Content-Security-Policy",
					 "default-src 'self'; script-src 'unsafe-inline'; "
					 "style-src 'unsafe-inline'; img-src 'self' data:");
	ret = mhd->queue_response(conn, status, r);
	mhd->destroy_response(r);
	return ret;
}

/* Answers this large and up go gzip'ed to clients that take it (an hour's flame is MBs). */
#define GZIP_FROM 1024

static enum MHD_Result reply_gzip(struct MHD_Connection *conn, const char *type, struct qbuf *out)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	uint8_t *z;
	size_t zlen;

	if (serve__gzip(out->s, out->len, &z, &zlen))
		return reply(conn, 200, type, out->s, out->len, MHD_RESPMEM_MUST_COPY);
	r = mhd->create_response_from_buffer(zlen, z, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(z);
		return MHD_NO;
	}
	mhd->add_response_header(r, "Content-Type", type);
	mhd->add_response_header(r, "Content-Encoding", "gzip");
	mhd->add_response_header(r, "Vary", "Accept-Encoding");
	mhd->add_response_header(r, "Cache-Control", "no-store");
	mhd->add_response_header(r, "X-Content-Type-Options", "nosniff");
	ret = mhd->queue_response(conn, 200, r);
	mhd->destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
	return reply(conn, status, "text/plain; charset=utf-8", text, strlen(text),
		     MHD_RESPMEM_MUST_COPY);
}

static int64_t arg_int(struct MHD_Connection *conn, const char *key, int64_t dflt)
{
	const char *v = mhd->lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
	char *end;
	long long x;

	if (!v || !*v)
		return dflt;
	x = strtoll(v, &end, 10);
	return *end ? dflt : x;
}

/* The filter from the URL; prefix "b_" reads the diff's second selection (defaulting to the first).
 */
static void filter_from_args(struct MHD_Connection *conn, const char *prefix,
			     const struct query_filter *base, struct query_filter *f)
{
	static const char *const keys[] = {"ptype", "host", "service", "container",
					   "comm",  "exe",  "thread",  "ftype"};
	const char **fields[] = {&f->ptype, &f->host, &f->service, &f->container,
				 &f->comm,  &f->exe,  &f->thread,  &f->ftype};
	char key[32];

	if (base)
		*f = *base;
	else
		memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v;

		snprintf(key, sizeof(key), "%s%s", prefix, keys[i]);
		v = mhd->lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
		if (v)
			*fields[i] = v;
	}
	snprintf(key, sizeof(key), "%sfrom", prefix);
	f->from = arg_int(conn, key, base ? base->from : 0);
	snprintf(key, sizeof(key), "%sto", prefix);
	f->to = arg_int(conn, key, base ? base->to : INT64_MAX / 2);
	snprintf(key, sizeof(key), "%spid", prefix);
	f->pid = arg_int(conn, key, base ? base->pid : 0);
}

static enum MHD_Result api(struct http_server *h, struct MHD_Connection *conn, const char *url)
{
	struct query_filter f, fb;
	struct qbuf out = {0};
	sqlite3 *db = NULL;
	const char *type = "application/json";
	enum MHD_Result ret;
	int err;

	filter_from_args(conn, "", NULL, &f);
	while (sem_wait(&h->queries) && errno == EINTR)
		;
	if (reader_get(h, &db)) {
		sem_post(&h->queries);
		return reply_text(conn, 503, "store unavailable\n");
	}
	if (!strcmp(url, "/api/meta")) {
		err = query__meta(db, &out);
	} else if (!strcmp(url, "/api/flame")) {
		err = query__flame(db, &f, &out);
	} else if (!strcmp(url, "/api/top")) {
		err = query__top(db, &f, &out);
	} else if (!strcmp(url, "/api/timeline")) {
		err = query__timeline(
		    db, &f, mhd->lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "by"), &out);
	} else if (!strcmp(url, "/api/diff")) {
		filter_from_args(conn, "b_", &f, &fb);
		err = query__diff(db, &f, &fb, &out);
	} else if (!strcmp(url, "/api/executables")) {
		err = query__executables(db, &out);
	} else if (!strcmp(url, "/api/folded")) {
		type = "text/plain; charset=utf-8";
		err = query__folded(db, &f, &out);
	} else if (!strcmp(url, "/api/pprof")) {
		type = "application/octet-stream";
		err = query__pprof(db, &f, &out);
	} else {
		reader_put(h, db);
		sem_post(&h->queries);
		return reply_text(conn, 404, "no such endpoint\n");
	}
	reader_put(h, db);
	sem_post(&h->queries);
	if (err == -E2BIG)
		ret = reply_text(conn, 413, "selection too large for one answer: narrow it\n");
	else if (err == -EINVAL)
		ret = reply_text(conn, 400, out.s ? out.s : "bad request");
	else if (err)
		ret = reply_text(conn, 500, "query failed\n");
	else if (!strcmp(url, "/api/pprof")) {
		struct MHD_Response *r =
		    mhd->create_response_from_buffer(out.len, out.s, MHD_RESPMEM_MUST_COPY);

		if (!r) {
			qbuf__free(&out);
			return MHD_NO;
		}
		mhd->add_response_header(r, "Content-Type", type);
		mhd->add_response_header(r, "Content-Disposition",
					 "attachment; filename=\"profile.pb.gz\"");
		ret = mhd->queue_response(conn, 200, r);
		mhd->destroy_response(r);
	} else if (out.len >= GZIP_FROM && serve__accepts_gzip(mhd->lookup_connection_value(
					       conn, MHD_HEADER_KIND, "Accept-Encoding"))) {
		ret = reply_gzip(conn, type, &out);
	} else {
		ret = reply(conn, 200, type, out.s ? out.s : "", out.len, MHD_RESPMEM_MUST_COPY);
	}
	qbuf__free(&out);
	return ret;
}

static enum MHD_Result ingest(struct http_server *h, struct MHD_Connection *conn,
			      struct request *rq)
{
	const char *enc = mhd->lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Encoding");
	bool gzip = enc && !strcasecmp(enc, "gzip");
	char why[256], msg[300];
	int err;

	if (rq->too_big)
		return reply_text(conn, 413, "request larger than the limit\n");
	if (rq->busy) /* the agents retry a 503 */
		return reply_text(conn, 503, "too many requests in flight, retry\n");
	if (!gzip && enc && *enc && strcasecmp(enc, "identity"))
		return reply_text(conn, 415, "Content-Encoding: gzip or none\n");
	why[0] = '\0';
	err = serve__ingest(h->c, rq->body, rq->len, gzip, why, sizeof(why));
	if (err == -E2BIG)
		return reply_text(conn, 413, "inflated request larger than the limit\n");
	if (err == -EINVAL) {
		snprintf(msg, sizeof(msg), "malformed OTLP profiles: %s\n", why);
		return reply_text(conn, 400, msg);
	}
	if (err)
		return reply_text(conn, 503, "store failed\n");
	/* An empty ExportProfilesServiceResponse. */
	return reply(conn, 200, "application/x-protobuf", "", 0, MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct http_server *h = cls;
	struct request *rq = *con_cls;
	bool post = !strcmp(method, "POST");

	(void)version;
	if (!rq) {
		const char *cl;

		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		cl = mhd->lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
		if (cl && strtoull(cl, NULL, 10) > h->c->max_body)
			rq->too_big = true;
		return MHD_YES;
	}
	if (post && *upload_size) {
		if (!rq->too_big && !rq->busy && rq->len + *upload_size <= h->c->max_body &&
		    !serve__reserve(h->c, *upload_size)) {
			rq->busy = true;
		} else if (!rq->too_big && !rq->busy && rq->len + *upload_size <= h->c->max_body) {
			rq->reserved += *upload_size;
			if (rq->len + *upload_size > rq->cap) {
				size_t cap = (rq->len + *upload_size) * 2;
				uint8_t *nb;

				if (cap > h->c->max_body)
					cap = h->c->max_body;
				nb = realloc(rq->body, cap);
				if (!nb)
					return MHD_NO;
				rq->body = nb;
				rq->cap = cap;
			}
			memcpy(rq->body + rq->len, upload, *upload_size);
			rq->len += *upload_size;
		} else if (!rq->busy) {
			rq->too_big = true;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (!strcmp(url, "/") || !strcmp(url, "/index.html")) {
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			return reply_text(conn, 405, "GET only\n");
		return reply(conn, 200, "text/html; charset=utf-8", serve_ui_html_start,
			     (size_t)(serve_ui_html_end - serve_ui_html_start),
			     MHD_RESPMEM_PERSISTENT);
	}
	if (!strcmp(url, "/favicon.ico")) /* browsers ask; no data, no auth */
		return reply(conn, 204, "image/x-icon", "", 0, MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/healthz"))
		return reply_text(conn, 200, "ok\n");
	if (!serve__auth_ok(h->c,
			    mhd->lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization")))
		return reply_text(conn, 401, "missing or wrong Authorization: Bearer token\n");
	if (!strcmp(url, "/v1development/profiles")) {
		if (!post)
			return reply_text(conn, 405, "POST only\n");
		return ingest(h, conn, rq);
	}
	if (!strncmp(url, "/api/", 5)) {
		if (strcmp(method, "GET"))
			return reply_text(conn, 405, "GET only\n");
		return api(h, conn, url);
	}
	return reply_text(conn, 404, "not found\n");
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct request *rq = *con_cls;

	(void)conn;
	(void)toe;
	if (rq) {
		serve__release(((struct http_server *)cls)->c, rq->reserved);
		free(rq->body);
		free(rq);
		*con_cls = NULL;
	}
}

int http_server__start(struct serve_ctx *c, const struct sockaddr_storage *addr,
		       struct http_server **out)
{
	struct http_server *h;
	const char *why;

	*out = NULL;
	mhd = mhd_api__get(&why);
	if (!mhd) {
		fprintf(stderr, "serve: %s\n", why);
		return -ENOENT;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->c = c;
	pthread_mutex_init(&h->pool_lock, NULL);
	sem_init(&h->queries, 0, SERVE_MAX_QUERIES);
	/* A thread per connection, capped: queries take a CPU each anyway. */
	h->d = mhd->start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG |
		(addr->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
	    0, NULL, NULL, handle, h, MHD_OPTION_SOCK_ADDR, addr, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)60, MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_NOTIFY_COMPLETED,
	    completed, h, MHD_OPTION_END);
	if (!h->d) {
		fprintf(stderr, "serve: cannot listen on port %u: %s\n", net_addr__port(addr),
			strerror(errno ? errno : EADDRINUSE));
		free(h);
		return -EADDRINUSE;
	}
	*out = h;
	return 0;
}

void http_server__stop(struct http_server *h)
{
	if (!h)
		return;
	mhd->stop_daemon(h->d);
	for (int i = 0; i < h->n_pool; i++)
		sqlite3_close(h->pool[i]);
	pthread_mutex_destroy(&h->pool_lock);
	sem_destroy(&h->queries);
	free(h);
}
