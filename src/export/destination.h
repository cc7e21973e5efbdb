/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One place the agent sends its profiles to (an OTLP receiver over gRPC or
 * HTTP, a Pyroscope server): its transport (transport.h), its export queue
 * and thread (export_queue.h), and the encoding of an interval's profile for
 * it (otlp.h, pyroscope.h). The sampling thread encodes and pushes; the
 * network belongs to the queue's thread.
 */
#ifndef OMNIPROF_EXPORT_DESTINATION_H
#define OMNIPROF_EXPORT_DESTINATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export/export_queue.h"
#include "export/otlp.h"
#include "export/transport.h"

struct profile;

#define OTLP_GRPC_DEFAULT_PORT "4317"
#define OTLP_HTTP_DEFAULT_PORT "4318"
#define OTLP_GRPC_PATH                                                                             \
	"/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"
#define OTLP_HTTP_PATH "/v1development/profiles"

/* Retries of a failing send back off from 0.5 to 8 s. */
#define DESTINATION_BACKOFF_MIN_MS 500
#define DESTINATION_BACKOFF_MAX_MS 8000

enum destination_kind {
	DESTINATION_OTLP,
	DESTINATION_PYROSCOPE,
};

struct destination_opts {
	enum destination_kind kind;
	/* OTLP: "HOST:PORT" (the protocol's default port when none) or a URL;
	 * Pyroscope: the server's base URL. */
	const char *endpoint;
	enum transport_kind protocol; /* OTLP: gRPC or HTTP */
	bool insecure;		      /* OTLP: plain text (http:// or h2c) */
	const char *ca_file, *cert_file, *key_file;
	const char *const *headers; /* "Key: value" */
	size_t n_headers;
	const char *basic_auth; /* Pyroscope: user:password, or NULL */
	size_t queue_size;	/* intervals kept while it is down */
	/* OTLP/HTTP: endpoint is the whole request URL, used as it is (the OTel
	 * convention for OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT); gRPC ignores it. */
	bool exact_url;
	bool no_compression; /* OTLP: bodies as they are, not gzip'ed */
	long timeout_ms;     /* one request; 0: the transport's default (10 s) */
};

struct destination {
	enum destination_kind kind;
	char name[300]; /* for messages: "OTLP gRPC host:4317", "Pyroscope http://..." */
	char *url;	/* OTLP: the full request URL; Pyroscope: the base */
	struct transport *t;
	struct export_queue *q; /* NULL: not started (or stopped) */
	/* Partial-success messages already logged (hashes; the queue thread's). */
	uint64_t partial_seen[8];
	size_t n_partial;
};

/*
 * The request URL of an OTLP call to endpoint ("HOST:PORT", "HOST" or a
 * URL). malloc'd (caller frees), or NULL on ENOMEM.
 */
char *destination__otlp_url(const char *endpoint, enum transport_kind protocol, bool insecure);

/*
 * The URL a destination would be started with: for OTLP as
 * destination__otlp_url() makes it (or endpoint itself when exact_url and
 * HTTP), for Pyroscope the endpoint. malloc'd (caller frees), or NULL on ENOMEM.
 */
char *destination__url(const struct destination_opts *o);

/*
 * Whether url is one the agent can send to: http or https, a host, a port
 * in 1..65535 when one is given, nothing libcurl's parser refuses. 0, or
 * -EINVAL with why (static text).
 */
int destination__check_url(const char *url, const char **why);

/* Starts d (zeroed) with its transport and queue thread. 0, or -errno after one
 * clear line; d is left for destination__stop() in both cases. */
int destination__start(struct destination *d, const struct destination_opts *o);

/*
 * Encodes an interval's n (1..OTLP_MAX_PROFILES) profiles for d: *out (free
 * with export_batch__free(), or hand it to destination__push()). OTLP: one
 * request holding them all (otlp__encode_set()); Pyroscope: one push per
 * profile type, in one batch. describe names each process's resource. 0 or
 * -errno.
 */
int destination__encode(const struct destination *d, const struct profile *const *ps, size_t n,
			otlp_resource_fn describe, void *ctx, struct export_batch **out);
/* Queues b for d's thread (taken: freed by the queue); never waits for the network. */
void destination__push(struct destination *d, struct export_batch *b);

/* A transfer in flight is aborted at deadline_ns (CLOCK_MONOTONIC), whatever
 * libcurl's own timeouts; each new transfer's timeouts are clipped to it. */
void destination__set_transfer_deadline(struct destination *d, uint64_t deadline_ns);
/* The same for the transfers, and the queue ends its retries at deadline_ns. */
void destination__set_deadline(struct destination *d, uint64_t deadline_ns);
/* True when d's queue is done (or d has none); else waits up to timeout_ms. */
bool destination__wait(struct destination *d, uint32_t timeout_ms);
/*
 * Sends what is queued for up to flush_ms, stops the thread and frees d's
 * parts; report: one line of what was delivered and dropped. Accepts a
 * destination never started or already stopped.
 */
void destination__stop(struct destination *d, uint32_t flush_ms, bool report);

#endif
