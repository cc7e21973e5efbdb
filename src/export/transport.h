/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sending export bodies over HTTP with libcurl: OTLP/HTTP (a protobuf POST),
 * gRPC (HTTP/2, h2c with --insecure or TLS; one length-prefixed message,
 * status from the grpc-status trailer) and plain POSTs (Pyroscope). One
 * transport keeps one connection open across requests. Not thread-safe: each
 * export thread owns its transport.
 */
#ifndef OMNIPROF_EXPORT_TRANSPORT_H
#define OMNIPROF_EXPORT_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum transport_kind {
	TRANSPORT_HTTP = 0, /* POST the body as it is (gzip when asked) */
	TRANSPORT_GRPC = 1, /* unary gRPC call over HTTP/2 */
};

struct transport_opts {
	enum transport_kind kind;
	bool insecure;	       /* plain text (h2c for gRPC); otherwise TLS */
	const char *ca_file;   /* trust these CAs instead of the system's */
	const char *cert_file; /* client certificate (mutual TLS) */
	const char *key_file;
	const char *const *headers; /* "Key: value" lines sent with every request */
	size_t n_headers;
	const char *basic_auth; /* "user:password", or NULL */
	bool gzip;		/* compress bodies (Content-Encoding / grpc-encoding gzip) */
	long timeout_ms;	/* whole request; 0: 10 s */
};

struct transport;

#define TRANSPORT_RESPONSE_KEEP (64u << 10)

/* 0 and *out (free with transport__free()), or -errno. */
int transport__new(const struct transport_opts *opts, struct transport **out);
void transport__free(struct transport *t); /* accepts NULL */

/*
 * POSTs body to url (for gRPC: the method's full URL). Returns 0 on success,
 * -EAGAIN when trying again later may succeed (connection refused, timeout,
 * 5xx, 429, gRPC UNAVAILABLE...), another -errno when the receiver rejected
 * the request for good (4xx, gRPC INVALID_ARGUMENT...). why gets one line
 * saying what happened (for an HTTP error, with the start of the reply's
 * body). Any 2xx is success; of the reply's body at most
 * TRANSPORT_RESPONSE_KEEP bytes are kept (for that message): a plain HTTP
 * transfer ends as soon as the body exceeds it and is judged by its status; a
 * gRPC one reads on, discarding, for the grpc-status trailer.
 */
int transport__post(struct transport *t, const char *url, const char *content_type,
		    const uint8_t *body, size_t len, char *why, size_t why_len);

/*
 * The body of the last reply (for gRPC: its one message, without the
 * prefix), pointing into t until the next post; NULL when it was cut off at
 * TRANSPORT_RESPONSE_KEEP or is not one uncompressed message. Requests carry
 * User-Agent omniprof/VERSION and, on gRPC, grpc-timeout (the time they
 * are given).
 */
const uint8_t *transport__reply(const struct transport *t, size_t *len);

/*
 * From any thread: requests end by deadline_ns (CLOCK_MONOTONIC; 0: no
 * deadline). A transfer in flight is aborted then (checked at least once a
 * second), a new one gets what time is left and none once it passed
 * (-EAGAIN, "deadline"). Used for the agent's bounded exit.
 */
void transport__set_deadline(struct transport *t, uint64_t deadline_ns);

/* gzip (RFC 1952) of data: 0 with *out (malloc'ed) and *out_len, or -errno. */
int transport__gzip(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len);

/*
 * Process-wide set-up, before any thread starts: libcurl opened (it is not
 * linked: util/curl_api.h) and initialised. 0, or -errno with *why saying
 * what failed (static text).
 */
int transport__global_init(const char **why);

#endif
