// SPDX-License-Identifier: Apache-2.0
/*
 * libcurl underneath. gRPC is plain HTTP/2 to libcurl: the request body is
 * the message behind a 5-byte prefix (compressed flag, big-endian length),
 * headers say content-type application/grpc and te: trailers, and the call's
 * outcome is the grpc-status trailer (or header, for a trailers-only reply),
 * which libcurl hands to the header callback like any other header line.
 */
#include "export/transport.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <zlib.h>

#include "util/clock.h"
#include "util/curl_api.h"
#include "util/version.h"

#define DEFAULT_TIMEOUT_MS 10000
#define CONNECT_TIMEOUT_MS 5000

/* gRPC status codes worth retrying (the others mean the request itself is wrong). */
#define GRPC_CANCELLED		2 /* UNKNOWN; retried: often a proxy hiccup */
#define GRPC_DEADLINE_EXCEEDED	4
#define GRPC_RESOURCE_EXHAUSTED 8
#define GRPC_ABORTED		10
#define GRPC_UNAVAILABLE	14

struct transport {
	struct transport_opts opts;
	const struct curl_api *cu; /* libcurl, opened by transport__global_init() */
	CURL *curl;
	struct curl_slist *headers; /* the caller's, plus the protocol's */
	/* The current response. */
	int grpc_status; /* -1: none seen */
	char grpc_message[160];
	size_t response_len;  /* bytes received */
	bool response_capped; /* more than TRANSPORT_RESPONSE_KEEP arrived */
	char response[TRANSPORT_RESPONSE_KEEP];
	_Atomic uint64_t deadline_ns; /* set from another thread; 0: none */
};

void transport__set_deadline(struct transport *t, uint64_t deadline_ns)
{
	atomic_store(&t->deadline_ns, deadline_ns);
}

/* libcurl calls this at least once a second during a transfer: non-zero aborts it. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct transport *t = ctx;
	uint64_t deadline = atomic_load(&t->deadline_ns);

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return deadline && clock__now_ns() >= deadline;
}

int transport__global_init(const char **why)
{
	const struct curl_api *cu = curl_api__get(why);

	if (!cu)
		return -ENOENT;
	*why = "curl_global_init failed";
	/*
	 * libcurl's OpenSSL would be first to initialise OpenSSL, and with an
	 * exit-time cleanup: the file worker may still hash when the process
	 * exits (engine/session.c says why that crashes). Nothing to clean anyway.
	 */
	OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
	return cu->global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -EIO;
}

int transport__gzip(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream zs = {0};
	uLong bound;
	uint8_t *buf;
	int ret;

	*out = NULL;
	*out_len = 0;
	if (len > UINT32_MAX)
		return -E2BIG;
	/* 15 + 16: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, (uLong)len) + 32;
	buf = malloc(bound);
	if (!buf) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)data; /* zlib does not write through it */
	zs.avail_in = (uInt)len;
	zs.next_out = buf;
	zs.avail_out = (uInt)bound;
	ret = deflate(&zs, Z_FINISH);
	if (ret != Z_STREAM_END) {
		deflateEnd(&zs);
		free(buf);
		return -EIO;
	}
	*out_len = zs.total_out;
	deflateEnd(&zs);
	*out = buf;
	return 0;
}

/*
 * The reply's body only serves error messages (OTLP's partial-success
 * details are not acted on): keep its start, never all of it. A plain HTTP
 * reply is cut off past the cap (the status is known by then); a gRPC one is
 * read on and dropped, since its status comes in the trailers after it.
 */
static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct transport *t = ctx;
	size_t len = size * n, keep = 0;

	if (t->response_len < sizeof(t->response)) {
		keep = sizeof(t->response) - t->response_len;
		if (keep > len)
			keep = len;
		memcpy(t->response + t->response_len, data, keep);
	}
	t->response_len += len;
	if (keep == len)
		return len;
	t->response_capped = true;
	return t->opts.kind == TRANSPORT_GRPC ? len : 0;
}

/* The start of the kept body as one printable line (for error messages). */
static void body_excerpt(const struct transport *t, char *out, size_t out_len)
{
	size_t n = 0,
	       kept = t->response_len < sizeof(t->response) ? t->response_len : sizeof(t->response);

	for (size_t i = 0; i < kept && n + 1 < out_len && n < 120; i++) {
		unsigned char c = (unsigned char)t->response[i];

		out[n++] = c >= 0x20 && c < 0x7f ? (char)c : ' ';
	}
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}

static size_t on_header(char *line, size_t size, size_t n, void *ctx)
{
	struct transport *t = ctx;
	size_t len = size * n;

	if (len > 12 && !strncasecmp(line, "grpc-status:", 12)) {
		t->grpc_status = atoi(line + 12);
	} else if (len > 13 && !strncasecmp(line, "grpc-message:", 13)) {
		const char *v = line + 13;
		size_t vlen = len - 13;

		while (vlen && (*v == ' ' || *v == '\t'))
			v++, vlen--;
		while (vlen && isspace((unsigned char)v[vlen - 1]))
			vlen--;
		snprintf(t->grpc_message, sizeof(t->grpc_message), "%.*s", (int)vlen, v);
	}
	return len;
}

int transport__new(const struct transport_opts *opts, struct transport **out)
{
	struct transport *t = calloc(1, sizeof(*t));
	struct curl_slist *h;
	int err = -ENOMEM;

	if (!t)
		return -ENOMEM;
	t->opts = *opts;
	t->cu = curl_api__get(NULL);
	if (!t->cu) {
		err = -ENOENT;
		goto cleanup;
	}
	t->curl = t->cu->easy_init();
	if (!t->curl)
		goto cleanup;
	for (size_t i = 0; i < opts->n_headers; i++) {
		h = t->cu->slist_append(t->headers, opts->headers[i]);
		if (!h)
			goto cleanup;
		t->headers = h;
	}
	/* No "Expect: 100-continue" round trip before each body. */
	h = t->cu->slist_append(t->headers, "Expect:");
	if (!h)
		goto cleanup;
	t->headers = h;
	if (opts->kind == TRANSPORT_GRPC) {
		/* User-Agent: omniprof/VERSION, set per request for every protocol. */
		static const char *const grpc[] = {"te: trailers", "grpc-accept-encoding: gzip"};

		for (size_t i = 0; i < sizeof(grpc) / sizeof(grpc[0]); i++) {
			h = t->cu->slist_append(t->headers, grpc[i]);
			if (!h)
				goto cleanup;
			t->headers = h;
		}
		if (opts->gzip) {
			h = t->cu->slist_append(t->headers, "grpc-encoding: gzip");
			if (!h)
				goto cleanup;
			t->headers = h;
		}
	} else if (opts->gzip) {
		h = t->cu->slist_append(t->headers, "Content-Encoding: gzip");
		if (!h)
			goto cleanup;
		t->headers = h;
	}
	*out = t;
	return 0;
cleanup:
	transport__free(t);
	return err;
}

void transport__free(struct transport *t)
{
	if (!t)
		return;
	if (t->curl)
		t->cu->easy_cleanup(t->curl);
	if (t->headers)
		t->cu->slist_free_all(t->headers);
	free(t);
}

static bool grpc_retryable(int status)
{
	return status == GRPC_CANCELLED || status == GRPC_DEADLINE_EXCEEDED ||
	       status == GRPC_RESOURCE_EXHAUSTED || status == GRPC_ABORTED ||
	       status == GRPC_UNAVAILABLE;
}

/* The body as sent: gzip'ed when asked; for gRPC, behind the 5-byte message prefix. */
static int frame_body(const struct transport *t, const uint8_t *body, size_t len, uint8_t **out,
		      size_t *out_len)
{
	uint8_t *z = NULL, *buf;
	size_t zlen = len;
	const uint8_t *payload = body;
	size_t prefix = t->opts.kind == TRANSPORT_GRPC ? 5 : 0;
	int err;

	if (t->opts.gzip) {
		err = transport__gzip(body, len, &z, &zlen);
		if (err)
			return err;
		payload = z;
	}
	if (zlen > UINT32_MAX - prefix) {
		free(z);
		return -E2BIG;
	}
	buf = malloc(zlen + prefix ? zlen + prefix : 1);
	if (!buf) {
		free(z);
		return -ENOMEM;
	}
	if (prefix) {
		buf[0] = t->opts.gzip ? 1 : 0;
		buf[1] = (uint8_t)(zlen >> 24);
		buf[2] = (uint8_t)(zlen >> 16);
		buf[3] = (uint8_t)(zlen >> 8);
		buf[4] = (uint8_t)zlen;
	}
	memcpy(buf + prefix, payload, zlen);
	free(z);
	*out = buf;
	*out_len = zlen + prefix;
	return 0;
}

const uint8_t *transport__reply(const struct transport *t, size_t *len)
{
	const uint8_t *r = (const uint8_t *)t->response;
	size_t n = t->response_len;

	*len = 0;
	if (t->response_capped)
		return NULL;
	if (t->opts.kind != TRANSPORT_GRPC) {
		*len = n;
		return r;
	}
	/* One length-prefixed message; a compressed one is not read (none was asked for). */
	if (n < 5 || r[0] != 0 ||
	    ((size_t)r[1] << 24 | (size_t)r[2] << 16 | (size_t)r[3] << 8 | r[4]) != n - 5)
		return NULL;
	*len = n - 5;
	return r + 5;
}

int transport__post(struct transport *t, const char *url, const char *content_type,
		    const uint8_t *body, size_t len, char *why, size_t why_len)
{
	char ctype[128], errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL, *h;
	uint8_t *framed = NULL;
	size_t framed_len;
	long status = 0, timeout_ms, connect_ms;
	uint64_t deadline;
	CURLcode rc;
	const struct curl_api *cu = t->cu;
	CURL *c = t->curl;
	int err;

	why[0] = '\0';
	err = frame_body(t, body, len, &framed, &framed_len);
	if (err) {
		snprintf(why, why_len, "cannot encode the request: %s", strerror(-err));
		return err;
	}
	/* Content-Type is per request: copy the shared headers behind it. */
	snprintf(ctype, sizeof(ctype), "Content-Type: %s",
		 t->opts.kind == TRANSPORT_GRPC ? "application/grpc" : content_type);
	headers = cu->slist_append(NULL, ctype);
	timeout_ms = t->opts.timeout_ms > 0 ? t->opts.timeout_ms : (long)DEFAULT_TIMEOUT_MS;
	deadline = atomic_load(&t->deadline_ns);
	if (deadline) {
		uint64_t now = clock__now_ns();
		long left_ms = now >= deadline ? 0 : (long)((deadline - now) / 1000000);

		if (left_ms < timeout_ms)
			timeout_ms = left_ms;
	}
	if (headers && t->opts.kind == TRANSPORT_GRPC) {
		char grpc_timeout[48];

		/* The server may stop working on a call we gave up on (gRPC's deadline). */
		/* At most 8 digits (the gRPC spec's TimeoutValue). */
		snprintf(grpc_timeout, sizeof(grpc_timeout), "grpc-timeout: %ldm",
			 timeout_ms <= 0	 ? 1
			 : timeout_ms > 99999999 ? 99999999
						 : timeout_ms);
		h = cu->slist_append(headers, grpc_timeout);
		if (!h)
			cu->slist_free_all(headers);
		headers = h;
	}
	for (struct curl_slist *s = t->headers; headers && s; s = s->next) {
		h = cu->slist_append(headers, s->data);
		if (!h) {
			cu->slist_free_all(headers);
			headers = NULL;
		}
		headers = h;
	}
	if (!headers) {
		free(framed);
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}

	t->grpc_status = -1;
	t->grpc_message[0] = '\0';
	t->response_len = 0;
	t->response_capped = false;
	connect_ms = CONNECT_TIMEOUT_MS;
	if (deadline) {
		uint64_t now = clock__now_ns();
		long left_ms = now >= deadline ? 0 : (long)((deadline - now) / 1000000);

		if (left_ms <= 0) {
			cu->slist_free_all(headers);
			free(framed);
			snprintf(why, why_len, "exit deadline reached");
			return -EAGAIN;
		}
		if (left_ms < timeout_ms)
			timeout_ms = left_ms;
		if (left_ms < connect_ms)
			connect_ms = left_ms;
	}
	cu->easy_reset(c);
	cu->easy_setopt(c, CURLOPT_URL, url);
	cu->easy_setopt(c, CURLOPT_USERAGENT, "omniprof/" OMNIPROF_VERSION);
	cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	cu->easy_setopt(c, CURLOPT_POST, 1L);
	cu->easy_setopt(c, CURLOPT_POSTFIELDS, framed);
	cu->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)framed_len);
	cu->easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	cu->easy_setopt(c, CURLOPT_WRITEDATA, t);
	cu->easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	cu->easy_setopt(c, CURLOPT_HEADERDATA, t);
	cu->easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	cu->easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	/* The deadline can come forward during the transfer (a stop, a second signal). */
	cu->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	cu->easy_setopt(c, CURLOPT_XFERINFODATA, t);
	cu->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	cu->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (t->opts.kind == TRANSPORT_GRPC) {
		cu->easy_setopt(c, CURLOPT_HTTP_VERSION,
				t->opts.insecure ? (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
						 : (long)CURL_HTTP_VERSION_2TLS);
		/*
		 * A fresh connection per call: Debian 12's libcurl (7.88) sends nothing
		 * for a second request on a reused HTTP/2 connection (seen with the
		 * curl tool too), and one connect per interval costs nothing.
		 */
		cu->easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
	}
	if (t->opts.ca_file)
		cu->easy_setopt(c, CURLOPT_CAINFO, t->opts.ca_file);
	if (t->opts.cert_file)
		cu->easy_setopt(c, CURLOPT_SSLCERT, t->opts.cert_file);
	if (t->opts.key_file)
		cu->easy_setopt(c, CURLOPT_SSLKEY, t->opts.key_file);
	if (t->opts.basic_auth) {
		cu->easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		cu->easy_setopt(c, CURLOPT_USERPWD, t->opts.basic_auth);
	}

	rc = cu->easy_perform(c);
	cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	/* The handle keeps pointers to these until the next reset. */
	cu->easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	cu->easy_setopt(c, CURLOPT_POSTFIELDS, NULL);
	cu->slist_free_all(headers);
	free(framed);

	/* A body cut off at the cap still has its status: judge by that. */
	if (rc == CURLE_WRITE_ERROR && t->response_capped && status > 0)
		rc = CURLE_OK;
	if (rc != CURLE_OK) {
		if (rc == CURLE_ABORTED_BY_CALLBACK)
			snprintf(why, why_len, "exit deadline reached during the transfer");
		else if (rc == CURLE_PEER_FAILED_VERIFICATION)
			/* Say which CAs were trusted: the usual mistake is the wrong file. */
			snprintf(why, why_len,
				 "the receiver's certificate is not trusted by %s%s: %s",
				 t->opts.ca_file ? "the CA file " : "the system's CAs",
				 t->opts.ca_file ? t->opts.ca_file : "",
				 errbuf[0] ? errbuf : cu->easy_strerror(rc));
		else
			snprintf(why, why_len, "%s%s", errbuf[0] ? errbuf : cu->easy_strerror(rc),
				 !t->opts.cert_file && strstr(errbuf, "certificate required")
				     ? " (the receiver wants a client certificate and key)"
				     : "");
		return -EAGAIN;
	}
	if (status < 200 || status > 299) {
		char excerpt[128];

		body_excerpt(t, excerpt, sizeof(excerpt));
		snprintf(why, why_len, "HTTP status %ld%s%s", status, excerpt[0] ? ": " : "",
			 excerpt);
		if (status == 408 || status == 429 || status >= 500)
			return -EAGAIN;
		return -EPROTO;
	}
	if (t->opts.kind == TRANSPORT_GRPC) {
		if (t->grpc_status < 0) {
			snprintf(why, why_len, "no grpc-status in the reply");
			return -EAGAIN;
		}
		if (t->grpc_status) {
			snprintf(why, why_len, "grpc-status %d%s%s", t->grpc_status,
				 t->grpc_message[0] ? ": " : "", t->grpc_message);
			return grpc_retryable(t->grpc_status) ? -EAGAIN : -EPROTO;
		}
	}
	return 0;
}
