// SPDX-License-Identifier: Apache-2.0
#include "export/destination.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/pyroscope.h"
#include "util/curl_api.h"
#include "util/log.h"

char *destination__otlp_url(const char *ep, enum transport_kind protocol, bool insecure)
{
	bool grpc = protocol == TRANSPORT_GRPC;
	const char *path = grpc ? OTLP_GRPC_PATH : OTLP_HTTP_PATH;
	const char *last_colon = strrchr(ep, ':');
	const char *close_bracket = strrchr(ep, ']');
	bool has_port = last_colon && (!close_bracket || last_colon > close_bracket);
	char *url;
	size_t len;

	if (strstr(ep, "://")) {
		len = strlen(ep);
		while (len && ep[len - 1] == '/')
			len--;
		return asprintf(&url, "%.*s%s", (int)len, ep, path) < 0 ? NULL : url;
	}
	return asprintf(&url, "%s://%s%s%s%s", insecure ? "http" : "https", ep, has_port ? "" : ":",
			has_port ? "" : (grpc ? OTLP_GRPC_DEFAULT_PORT : OTLP_HTTP_DEFAULT_PORT),
			path) < 0
		   ? NULL
		   : url;
}

char *destination__url(const struct destination_opts *o)
{
	size_t len = strlen(o->endpoint);

	if (o->kind == DESTINATION_OTLP) {
		if (o->exact_url && o->protocol == TRANSPORT_HTTP)
			return strdup(o->endpoint);
		return destination__otlp_url(o->endpoint, o->protocol, o->insecure);
	}
	while (len && o->endpoint[len - 1] == '/')
		len--;
	return strndup(o->endpoint, len);
}

int destination__check_url(const char *url, const char **why)
{
	const struct curl_api *cu = curl_api__get(why);
	char *scheme = NULL, *host = NULL, *port = NULL;
	int err = -EINVAL;
	CURLUcode rc;
	CURLU *u;

	if (!cu)
		return -ENOENT;
	u = cu->url();
	*why = "out of memory";
	if (!u)
		return -ENOMEM;
	if (strpbrk(url, " \t\r\n")) {
		*why = "it holds white space";
		goto cleanup;
	}
	rc = cu->url_set(u, CURLUPART_URL, url, 0);
	if (rc) {
		*why = cu->url_strerror(rc);
		goto cleanup;
	}
	if (cu->url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
	    (strcmp(scheme, "http") && strcmp(scheme, "https"))) {
		*why = "the scheme is neither http nor https";
		goto cleanup;
	}
	if (cu->url_get(u, CURLUPART_HOST, &host, 0) || !*host) {
		*why = "no host";
		goto cleanup;
	}
	rc = cu->url_get(u, CURLUPART_PORT, &port, 0);
	if (rc == CURLUE_OK && (atol(port) < 1 || atol(port) > 65535)) {
		*why = "the port is not in 1..65535";
		goto cleanup;
	}
	*why = NULL;
	err = 0;
cleanup:
	cu->free(scheme);
	cu->free(host);
	cu->free(port);
	cu->url_cleanup(u);
	return err;
}

/*
 * An OTLP receiver that kept only part of a request says so in a 2xx reply
 * (partial_success): nothing to retry, but the user should know, once per
 * distinct message (a receiver repeats it every interval).
 */
static void note_partial_success(struct destination *d)
{
	const uint8_t *reply;
	char msg[256];
	int64_t rejected;
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	size_t len;

	reply = transport__reply(d->t, &len);
	if (!reply || otlp__partial_success(reply, len, msg, sizeof(msg), &rejected) != 1)
		return;
	for (const char *p = msg; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (size_t i = 0; i < d->n_partial; i++)
		if (d->partial_seen[i] == h)
			return;
	if (d->n_partial == sizeof(d->partial_seen) / sizeof(d->partial_seen[0]))
		return;
	d->partial_seen[d->n_partial++] = h;
	pr_warn("%s: receiver accepted a request partly: %lld profiles rejected%s%s", d->name,
		(long long)rejected, msg[0] ? ": " : "", msg);
}

static int send_request(void *ctx, const struct export_request *r, char *why, size_t why_len)
{
	struct destination *d = ctx;
	int err = transport__post(d->t, r->url, r->content_type, r->body, r->len, why, why_len);

	if (!err && d->kind == DESTINATION_OTLP)
		note_partial_success(d);
	return err;
}

int destination__start(struct destination *d, const struct destination_opts *o)
{
	struct transport_opts t = {
	    .ca_file = o->ca_file,
	    .cert_file = o->cert_file,
	    .key_file = o->key_file,
	    .headers = o->headers,
	    .n_headers = o->n_headers,
	    .timeout_ms = o->timeout_ms,
	};
	struct export_queue_opts qopts = {
	    .name = d->name,
	    .max_batches = o->queue_size,
	    .backoff_min_ms = DESTINATION_BACKOFF_MIN_MS,
	    .backoff_max_ms = DESTINATION_BACKOFF_MAX_MS,
	};
	int err;

	d->kind = o->kind;
	d->url = destination__url(o);
	if (o->kind == DESTINATION_OTLP) {
		t.kind = o->protocol;
		t.insecure = o->insecure;
		t.gzip = !o->no_compression;
		snprintf(d->name, sizeof(d->name), "OTLP %s %s",
			 o->protocol == TRANSPORT_GRPC ? "gRPC" : "HTTP", o->endpoint);
	} else {
		t.kind = TRANSPORT_HTTP;
		t.basic_auth = o->basic_auth;
		if (d->url)
			snprintf(d->name, sizeof(d->name), "Pyroscope %s", d->url);
	}
	if (!d->url)
		return -ENOMEM;
	err = transport__new(&t, &d->t);
	if (!err)
		err = export_queue__start(&qopts, send_request, d, &d->q);
	if (err)
		pr_err("%s: cannot start: %s", d->name, strerror(-err));
	return err;
}

/*
 * Pyroscope: one push per profile type, the pushes of all ps in one batch
 * (one queue entry per interval). Returns the batch or NULL with errno.
 */
static struct export_batch *pyroscope_batch(const struct destination *d,
					    const struct profile *const *ps, size_t n,
					    otlp_resource_fn describe, void *ctx)
{
	struct export_batch *parts[OTLP_MAX_PROFILES] = {0}, *b = NULL;
	size_t total = 0, at = 0;

	for (size_t k = 0; k < n; k++) {
		parts[k] = pyroscope__batch(ps[k], d->url, describe, ctx);
		if (!parts[k])
			goto cleanup;
		total += parts[k]->n;
	}
	if (n == 1) {
		b = parts[0];
		parts[0] = NULL;
		goto cleanup;
	}
	b = export_batch__new(total);
	if (!b) {
		errno = ENOMEM;
		goto cleanup;
	}
	/* The requests move: their parts' batches keep none to free. */
	for (size_t k = 0; k < n; k++) {
		memcpy(&b->requests[at], parts[k]->requests,
		       parts[k]->n * sizeof(*parts[k]->requests));
		at += parts[k]->n;
		parts[k]->n = 0;
	}
cleanup:
	for (size_t k = 0; k < n; k++)
		export_batch__free(parts[k]);
	return b;
}

int destination__encode(const struct destination *d, const struct profile *const *ps, size_t n,
			otlp_resource_fn describe, void *ctx, struct export_batch **out)
{
	struct export_batch *b;
	int err;

	*out = NULL;
	if (!n || n > OTLP_MAX_PROFILES)
		return -EINVAL;
	if (d->kind == DESTINATION_PYROSCOPE) {
		errno = 0;
		b = pyroscope_batch(d, ps, n, describe, ctx);
		if (!b)
			return errno ? -errno : -ENOMEM;
		*out = b;
		return 0;
	}
	b = export_batch__new(1);
	if (!b || !(b->requests[0].url = strdup(d->url))) {
		export_batch__free(b);
		return -ENOMEM;
	}
	b->requests[0].content_type = "application/x-protobuf";
	err = otlp__encode_set(ps, n, describe, ctx, &b->requests[0].body, &b->requests[0].len);
	if (err) {
		export_batch__free(b);
		return err;
	}
	*out = b;
	return 0;
}

void destination__push(struct destination *d, struct export_batch *b)
{
	export_queue__push(d->q, b);
}

void destination__set_transfer_deadline(struct destination *d, uint64_t deadline_ns)
{
	if (d->t)
		transport__set_deadline(d->t, deadline_ns);
}

void destination__set_deadline(struct destination *d, uint64_t deadline_ns)
{
	if (d->t)
		transport__set_deadline(d->t, deadline_ns);
	if (d->q)
		export_queue__set_deadline(d->q, deadline_ns);
}

bool destination__wait(struct destination *d, uint32_t timeout_ms)
{
	return export_queue__wait(d->q, timeout_ms);
}

void destination__stop(struct destination *d, uint32_t flush_ms, bool report)
{
	struct export_queue_stats st;

	if (d->q) {
		struct timespec now;

		/* A transfer in flight ends by the same time (else libcurl's timeouts). */
		clock_gettime(CLOCK_MONOTONIC, &now);
		transport__set_deadline(d->t, (uint64_t)now.tv_sec * 1000000000ull +
						  (uint64_t)now.tv_nsec +
						  (uint64_t)flush_ms * 1000000ull);
		export_queue__stop(d->q, flush_ms, &st);
		d->q = NULL;
		if (report)
			pr_notice("%s: %llu intervals delivered, %llu retries, dropped: "
				  "%llu (queue full), %llu (rejected), %llu (at exit)",
				  d->name, (unsigned long long)st.batches_sent,
				  (unsigned long long)st.retries,
				  (unsigned long long)st.dropped_full,
				  (unsigned long long)st.dropped_rejected,
				  (unsigned long long)st.dropped_shutdown);
	}
	transport__free(d->t);
	d->t = NULL;
	free(d->url);
	d->url = NULL;
}
