/* SPDX-License-Identifier: Apache-2.0 */
/*
 * omniprof serve's network side: OTLP/HTTP, the JSON API and the page on one
 * HTTP port (server.c), OTLP/gRPC over h2c on another (grpc.c). Both write
 * through serve_ctx's store under its mutex; API reads open their own
 * read-only connections (WAL: they never block ingest).
 */
#ifndef OMNIPROF_SERVE_SERVER_H
#define OMNIPROF_SERVE_SERVER_H

#include <netinet/in.h>
#include <sys/socket.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;

#define SERVE_MAX_BODY	   (16u << 20)	/* a request as sent (gzip'ed or not) */
#define SERVE_MAX_INFLATE  (64u << 20)	/* a gzip'ed request once inflated */
#define SERVE_MAX_BUFFERED (128u << 20) /* bodies of all requests in flight together */
#define SERVE_MAX_QUERIES  4		/* API queries running at once (the others wait) */

struct serve_ctx {
	struct store *store;
	pthread_mutex_t lock; /* around every store write */
	const char *token;    /* NULL: no auth */
	size_t max_body;
	int64_t ingested; /* samples, under lock */
	int64_t requests, rejected;
	size_t buffered; /* bytes of request bodies held, atomic */
};

/* Compares the request's credential with the token in constant time. */
bool serve__auth_ok(const struct serve_ctx *c, const char *authorization);
/*
 * Inflates (when gzip) and stores one request under the lock, so at most one
 * inflated body exists at a time. 0; -EINVAL (reason in why); -E2BIG when it
 * inflates past SERVE_MAX_INFLATE; another -errno when the store failed.
 */
int serve__ingest(struct serve_ctx *c, const uint8_t *buf, size_t len, bool gzip, char *why,
		  size_t why_len);
/* Takes n bytes of the in-flight body budget (SERVE_MAX_BUFFERED): false when it is spent. */
bool serve__reserve(struct serve_ctx *c, size_t n);
void serve__release(struct serve_ctx *c, size_t n);
/* Inflates a gzip body up to max bytes. 0 and *out (caller frees), -EINVAL or -E2BIG. */
int serve__gunzip(const uint8_t *in, size_t len, size_t max, uint8_t **out, size_t *out_len);

/* Gzips len bytes: 0 and *out (caller frees), or -errno. */
int serve__gzip(const void *in, size_t len, uint8_t **out, size_t *out_len);
/* Whether an Accept-Encoding header value takes gzip (NULL: no). */
bool serve__accepts_gzip(const char *accept_encoding);

struct http_server;
/* Starts the HTTP server on addr. 0 and *out, or -errno after one line. */
int http_server__start(struct serve_ctx *c, const struct sockaddr_storage *addr,
		       struct http_server **out);
void http_server__stop(struct http_server *h);

struct grpc_server;
int grpc_server__start(struct serve_ctx *c, const struct sockaddr_storage *addr,
		       struct grpc_server **out);
void grpc_server__stop(struct grpc_server *g);

#endif
