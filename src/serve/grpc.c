// SPDX-License-Identifier: Apache-2.0
/*
 * OTLP/gRPC for serve over h2c (HTTP/2 without TLS, prior knowledge), the
 * agent's default protocol, on libnghttp2's server session: a thread per
 * connection (capped), one unary call per stream. A call's message is the
 * 5-byte gRPC prefix (compressed flag, length) and the request, gzip'ed
 * when the flag says so; the reply is an empty ExportProfilesServiceResponse
 * and grpc-status in the trailers, or a trailers-only error (3 for a
 * malformed request, 16 without the token, 8 over the size limit).
 */
#include "serve/server.h"

#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/net_addr.h"

#define GRPC_PATH	"/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"
#define MAX_CONNECTIONS 64

struct grpc_server {
	struct serve_ctx *c;
	int fd;
	pthread_t thread;
	atomic_bool stop;
	atomic_int conns;
};

struct conn {
	struct grpc_server *g;
	int fd;
	nghttp2_session *s;
};

struct call {
	int32_t id;
	bool path_ok, auth_ok, too_big, busy, replied;
	uint8_t *body;
	size_t len, cap, reserved;
	int sent; /* bytes of the reply message sent */
	char status[8], message[200];
};

static ssize_t on_send(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *ud)
{
	struct conn *c = ud;
	size_t off = 0;

	(void)s;
	(void)flags;
	while (off < len) {
		ssize_t n = send(c->fd, data + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		off += (size_t)n;
	}
	return (ssize_t)len;
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct conn *c = ud;
	struct call *call;

	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	call = calloc(1, sizeof(*call));
	if (!call)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	call->id = f->hd.stream_id;
	call->auth_ok = !c->g->c->token;
	nghttp2_session_set_stream_user_data(s, f->hd.stream_id, call);
	return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		     const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct conn *c = ud;
	struct call *call = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	char v[512];

	(void)flags;
	if (!call || f->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (nlen == 5 && !memcmp(name, ":path", 5))
		call->path_ok = vlen == strlen(GRPC_PATH) && !memcmp(value, GRPC_PATH, vlen);
	if (nlen == 13 && !memcmp(name, "authorization", 13) && vlen < sizeof(v)) {
		memcpy(v, value, vlen);
		v[vlen] = '\0';
		call->auth_ok = serve__auth_ok(c->g->c, v);
	}
	return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
		   void *ud)
{
	struct conn *c = ud;
	struct call *call = nghttp2_session_get_stream_user_data(s, id);

	(void)flags;
	if (!call || call->too_big || call->busy)
		return 0;
	if (call->len + len > c->g->c->max_body + 5) {
		call->too_big = true;
		return 0;
	}
	if (!serve__reserve(c->g->c, len)) {
		call->busy = true;
		return 0;
	}
	call->reserved += len;
	if (call->len + len > call->cap) {
		size_t cap = (call->len + len) * 2;
		uint8_t *nb = realloc(call->body, cap);

		if (!nb)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		call->body = nb;
		call->cap = cap;
	}
	memcpy(call->body + call->len, data, len);
	call->len += len;
	return 0;
}

/* The reply message: an empty response, 5 bytes of prefix. */
static ssize_t read_reply(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
			  nghttp2_data_source *src, void *ud)
{
	struct call *call = src->ptr;
	const nghttp2_nv trailers[] = {
	    {(uint8_t *)"grpc-status", (uint8_t *)"0", 11, 1, NGHTTP2_NV_FLAG_NONE},
	};
	size_t n = 5 - (size_t)call->sent;

	(void)ud;
	if (n > len)
		n = len;
	memset(buf, 0, n);
	call->sent += (int)n;
	if (call->sent == 5) {
		*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		if (nghttp2_submit_trailer(s, id, trailers, 1))
			return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	return (ssize_t)n;
}

#define NV(n, v)                                                                                   \
	{                                                                                          \
		(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE     \
	}

static int reply_error(nghttp2_session *s, struct call *call, int status, const char *msg)
{
	snprintf(call->status, sizeof(call->status), "%d", status);
	/* grpc-message is percent-encoded text; keep to safe characters. */
	snprintf(call->message, sizeof(call->message), "%s", msg);
	for (char *p = call->message; *p; p++)
		if (*p < 0x20 || *p > 0x7e || *p == '%')
			*p = ' ';
	{
		const nghttp2_nv hdrs[] = {
		    NV(":status", "200"),
		    NV("content-type", "application/grpc"),
		    NV("grpc-status", call->status),
		    NV("grpc-message", call->message),
		};

		return nghttp2_submit_response(s, call->id, hdrs, 4, NULL);
	}
}

static int finish_call(struct conn *c, struct call *call)
{
	const nghttp2_nv hdrs[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
	nghttp2_data_provider prd = {.source.ptr = call, .read_callback = read_reply};
	size_t msg_len;
	char why[200];
	int err;

	call->replied = true;
	if (!call->path_ok)
		return reply_error(c->s, call, 12, "unimplemented method");
	if (!call->auth_ok)
		return reply_error(c->s, call, 16, "missing or wrong authorization token");
	if (call->too_big)
		return reply_error(c->s, call, 8, "request larger than the limit");
	if (call->busy) /* UNAVAILABLE: the agents retry it */
		return reply_error(c->s, call, 14, "too many requests in flight, retry");
	if (call->len < 5)
		return reply_error(c->s, call, 3, "no gRPC message");
	msg_len = (size_t)call->body[1] << 24 | (size_t)call->body[2] << 16 |
		  (size_t)call->body[3] << 8 | call->body[4];
	if (msg_len != call->len - 5)
		return reply_error(c->s, call, 3, "gRPC message length does not match the body");
	if (call->body[0] > 1)
		return reply_error(c->s, call, 3, "unknown compressed flag");
	why[0] = '\0';
	err = serve__ingest(c->g->c, call->body + 5, msg_len, call->body[0] == 1, why, sizeof(why));
	if (err == -E2BIG)
		return reply_error(c->s, call, 8, "inflated request larger than the limit");
	if (err == -EINVAL)
		return reply_error(c->s, call, 3, why);
	if (err)
		return reply_error(c->s, call, 14, "store failed");
	return nghttp2_submit_response(c->s, call->id, hdrs, 2, &prd);
}

static int on_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct conn *c = ud;
	struct call *call;

	if ((f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	call = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	if (!call || call->replied)
		return 0;
	return finish_call(c, call) ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t code, void *ud)
{
	struct call *call = nghttp2_session_get_stream_user_data(s, id);
	struct conn *c = ud;

	(void)code;
	if (call) {
		serve__release(c->g->c, call->reserved);
		nghttp2_session_set_stream_user_data(s, id, NULL);
		free(call->body);
		free(call);
	}
	return 0;
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 16}};
	uint8_t buf[16384];

	if (nghttp2_session_callbacks_new(&cb))
		goto cleanup;
	nghttp2_session_callbacks_set_send_callback(cb, on_send);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	if (nghttp2_session_server_new(&c->s, cb, c) ||
	    nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, iv, 1) || nghttp2_session_send(c->s))
		goto cleanup;
	while (!atomic_load(&c->g->stop) &&
	       (nghttp2_session_want_read(c->s) || nghttp2_session_want_write(c->s))) {
		struct pollfd p = {.fd = c->fd, .events = POLLIN};
		ssize_t n;
		int r = poll(&p, 1, 200);

		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0)
			continue;
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (nghttp2_session_mem_recv(c->s, buf, (size_t)n) < 0 ||
		    nghttp2_session_send(c->s))
			break;
	}
cleanup:
	nghttp2_session_del(c->s);
	nghttp2_session_callbacks_del(cb);
	close(c->fd);
	atomic_fetch_sub(&c->g->conns, 1);
	free(c);
	return NULL;
}

static void *accept_main(void *arg)
{
	struct grpc_server *g = arg;

	while (!atomic_load(&g->stop)) {
		struct pollfd p = {.fd = g->fd, .events = POLLIN};
		struct conn *c;
		pthread_t t;
		int fd;

		if (poll(&p, 1, 200) <= 0)
			continue;
		fd = accept4(g->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (atomic_load(&g->conns) >= MAX_CONNECTIONS || !(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		c->g = g;
		c->fd = fd;
		atomic_fetch_add(&g->conns, 1);
		if (pthread_create(&t, NULL, conn_main, c)) {
			atomic_fetch_sub(&g->conns, 1);
			close(fd);
			free(c);
			continue;
		}
		pthread_detach(t);
	}
	return NULL;
}

int grpc_server__start(struct serve_ctx *c, const struct sockaddr_storage *addr,
		       struct grpc_server **out)
{
	struct grpc_server *g = calloc(1, sizeof(*g));
	int one = 1, err;

	*out = NULL;
	if (!g)
		return -ENOMEM;
	g->c = c;
	g->fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (g->fd < 0 || setsockopt(g->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(g->fd, (const struct sockaddr *)addr,
		 addr->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					     : sizeof(struct sockaddr_in)) ||
	    listen(g->fd, 64)) {
		err = -errno;
		fprintf(stderr, "serve: cannot listen on gRPC port %u: %s\n", net_addr__port(addr),
			strerror(errno));
		goto cleanup;
	}
	if ((err = -pthread_create(&g->thread, NULL, accept_main, g)))
		goto cleanup;
	*out = g;
	return 0;
cleanup:
	if (g->fd >= 0)
		close(g->fd);
	free(g);
	return err;
}

void grpc_server__stop(struct grpc_server *g)
{
	if (!g)
		return;
	atomic_store(&g->stop, true);
	pthread_join(g->thread, NULL);
	/* Connection threads notice the flag within one poll period. */
	for (int i = 0; i < 50 && atomic_load(&g->conns); i++)
		usleep(50000);
	close(g->fd);
	if (!atomic_load(&g->conns))
		free(g);
}
