// SPDX-License-Identifier: Apache-2.0
#include "export/metrics_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/log.h"
#include "util/mhd_api.h"
#include "util/net_addr.h"

/* A scraper is one or two clients; more at once are refused, not queued. */
#define MAX_CONNECTIONS	  8
#define CONN_TIMEOUT_S	  5
#define CONTENT_TYPE_TEXT "text/plain; version=0.0.4; charset=utf-8"

/* libmicrohttpd, opened by the first metrics_server__start(), before its daemon's threads. */
static const struct mhd_api *mhd;

struct metrics_server {
	struct MHD_Daemon *daemon;
	pthread_mutex_t lock;
	char *page; /* the last published text, owned */
	size_t len;
};

int metrics_server__check_address(const char *listen, const char **why)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	return net_addr__parse(listen, false, &ss, &sl, why);
}

/* Resident memory of this process in bytes (/proc/self/statm), 0 when unreadable. */
static unsigned long long rss_bytes(void)
{
	unsigned long long size, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * (unsigned long long)sysconf(_SC_PAGESIZE);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len)
{
	struct MHD_Response *r = mhd->create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	mhd->add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE_TEXT);
	ret = mhd->queue_response(conn, status, r);
	mhd->destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct metrics_server *m = cls;
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	(void)version;
	(void)upload_data;
	if (*upload_data_size)
		return MHD_NO; /* nothing is uploaded here */
	if (!*con_cls) {
		*con_cls = m; /* the headers: answer when called again */
		return MHD_YES;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("GET only\n"), 9);
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, strdup("see /metrics\n"), 13);
	f = open_memstream(&body, &len);
	if (!f)
		return MHD_NO;
	pthread_mutex_lock(&m->lock);
	if (m->page)
		fwrite(m->page, 1, m->len, f);
	pthread_mutex_unlock(&m->lock);
	fprintf(f,
		"# HELP process_resident_memory_bytes Resident memory of the agent.\n"
		"# TYPE process_resident_memory_bytes gauge\n"
		"process_resident_memory_bytes %llu\n",
		rss_bytes());
	if (fclose(f)) {
		free(body);
		return MHD_NO;
	}
	return reply(conn, MHD_HTTP_OK, body, len);
}

int metrics_server__start(const char *listen, struct metrics_server **out)
{
	struct metrics_server *m;
	struct sockaddr_storage ss;
	socklen_t sl;
	const char *why;
	int err;

	*out = NULL;
	err = net_addr__parse(listen, false, &ss, &sl, &why);
	if (err) {
		pr_err("--metrics-listen: '%s': %s", listen, why);
		return err;
	}
	mhd = mhd_api__get(&why);
	if (!mhd) {
		pr_err("--metrics-listen: %s", why);
		return -ENOENT;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->daemon = mhd->start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
					  (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				      0, NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR,
				      (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
				      (unsigned int)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
				      (unsigned int)CONN_TIMEOUT_S, MHD_OPTION_END);
	if (!m->daemon) {
		err = errno ? -errno : -EIO;
		pr_err("--metrics-listen: cannot listen on %s: %s", listen, strerror(-err));
		metrics_server__free(m);
		return err;
	}
	*out = m;
	return 0;
}

int metrics_server__publish(struct metrics_server *m, const char *text, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	pthread_mutex_lock(&m->lock);
	free(m->page);
	m->page = copy;
	m->len = len;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

void metrics_server__free(struct metrics_server *m)
{
	if (!m)
		return;
	if (m->daemon)
		mhd->stop_daemon(m->daemon);
	pthread_mutex_destroy(&m->lock);
	free(m->page);
	free(m);
}
