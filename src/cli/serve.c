// SPDX-License-Identifier: Apache-2.0
/*
 * `omniprof serve`: the store, OTLP receivers (HTTP and gRPC) and the web
 * page in one process (src/serve/). Safe defaults: loopback only, and a
 * non-loopback address needs --auth-token-file.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "serve/ingest.h"
#include "serve/server.h"
#include "serve/store.h"
#include "util/net_addr.h"
#include "util/read_file.h"

#define DEFAULT_LISTEN	    "127.0.0.1:7070"
#define DEFAULT_GRPC_PORT_S "4317"
#define DEFAULT_DB	    "omniprof-serve.db"
#define RETAIN_EVERY_S	    60

static volatile sig_atomic_t serve_stop;

static void on_signal(int sig)
{
	(void)sig;
	serve_stop = 1;
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: omniprof serve [--listen HOST:PORT] [--grpc-listen HOST:PORT] [--db FILE]\n"
	    "                      [--retention HOURS] [--max-db-mb MB] [--auth-token-file F]\n"
	    "       omniprof serve --import DIR|FILE.pb.gz [--db FILE]\n"
	    "\n"
	    "Receives OTLP profiles from agents and shows them in a browser.\n"
	    "  --listen HOST:PORT      page, JSON API and OTLP/HTTP (POST "
	    "/v1development/profiles)\n"
	    "                          (default " DEFAULT_LISTEN ")\n"
	    "  --grpc-listen HOST:PORT OTLP/gRPC, h2c (default the --listen host, "
	    "port " DEFAULT_GRPC_PORT_S ")\n"
	    "  --db FILE               SQLite database (default ./" DEFAULT_DB ")\n"
	    "  --retention HOURS       delete samples older than this (default 24; 0 keeps them)\n"
	    "  --max-db-mb MB          delete the oldest samples above this size (default 2048)\n"
	    "  --auth-token-file F     require \"Authorization: Bearer <token in F>\"; needed for\n"
	    "                          an address other than loopback\n"
	    "  --import PATH           load record's profile.pb.gz (a file or folders of them), "
	    "exit\n");
}

/* "HOST:PORT" (IPv4, localhost or [IPv6]). 0 or -EINVAL after one line. */
static int parse_addr(const char *what, const char *arg, struct sockaddr_storage *ss)
{
	const char *why;
	socklen_t sl;

	if (!net_addr__parse(arg, true, ss, &sl, &why))
		return 0;
	fprintf(stderr, "serve: %s: '%s': %s\n", what, arg, why);
	return -EINVAL;
}

/* The token: the file's first line, at least 16 characters. NULL after one line. */
static char *read_token(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	int err = read_file(path, &buf, &len);

	if (err) {
		fprintf(stderr, "serve: --auth-token-file %s: %s\n", path, strerror(-err));
		return NULL;
	}
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strlen(buf) < 16) {
		fprintf(stderr,
			"serve: --auth-token-file %s: the token needs 16 characters or more\n",
			path);
		free(buf);
		return NULL;
	}
	return buf;
}

int cmd_serve(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"listen", required_argument, NULL, 'l'},
	    {"grpc-listen", required_argument, NULL, 'g'},
	    {"db", required_argument, NULL, 'd'},
	    {"retention", required_argument, NULL, 'r'},
	    {"max-db-mb", required_argument, NULL, 'm'},
	    {"auth-token-file", required_argument, NULL, 'a'},
	    {"import", required_argument, NULL, 'i'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *listen = DEFAULT_LISTEN, *grpc_listen = NULL, *db = DEFAULT_DB;
	const char *token_file = NULL, *import = NULL;
	struct store_opts so = {.retention_s = 24 * 3600, .max_bytes = 2048ull << 20};
	struct sockaddr_storage http_addr, grpc_addr;
	struct serve_ctx ctx = {.max_body = SERVE_MAX_BODY};
	struct http_server *http = NULL;
	struct grpc_server *grpc = NULL;
	struct store *st = NULL;
	char *token = NULL, *end;
	int c, ret = 1;
	time_t last_retain = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen = optarg;
			break;
		case 'g':
			grpc_listen = optarg;
			break;
		case 'd':
			db = optarg;
			break;
		case 'r': {
			double h = strtod(optarg, &end);

			if (*end || h < 0 || h > 24 * 365 * 10) {
				fprintf(stderr, "serve: --retention: '%s' is not HOURS\n", optarg);
				return 2;
			}
			so.retention_s = (uint64_t)(h * 3600);
			break;
		}
		case 'm': {
			unsigned long long mb = strtoull(optarg, &end, 10);

			if (*end || !mb || mb > (1ull << 24)) {
				fprintf(stderr, "serve: --max-db-mb: '%s' is not MB\n", optarg);
				return 2;
			}
			so.max_bytes = mb << 20;
			break;
		}
		case 'a':
			token_file = optarg;
			break;
		case 'i':
			import = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "serve: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!import) {
		char grpc_default[80];

		if (parse_addr("--listen", listen, &http_addr))
			return 2;
		if (!grpc_listen) {
			/* --listen's host, as written ([v6] brackets included), on the gRPC port.
			 */
			snprintf(grpc_default, sizeof(grpc_default), "%.*s:" DEFAULT_GRPC_PORT_S,
				 (int)(strrchr(listen, ':') - listen), listen);
			grpc_listen = grpc_default;
		}
		if (parse_addr("--grpc-listen", grpc_listen, &grpc_addr))
			return 2;
		if ((!net_addr__is_loopback(&http_addr) || !net_addr__is_loopback(&grpc_addr)) &&
		    !token_file) {
			fprintf(stderr, "serve: refusing to listen beyond loopback without "
					"--auth-token-file\n");
			return 2;
		}
		if (token_file && !(token = read_token(token_file)))
			return 2;
	}
	if (store__open(db, &so, &st))
		goto cleanup;
	if (import) {
		int64_t n = 0;

		ret = serve_import(st, import, &n) ? 1 : 0;
		if (!ret)
			printf("serve: %lld samples imported into %s\n", (long long)n, db);
		goto cleanup;
	}
	ctx.store = st;
	ctx.token = token;
	pthread_mutex_init(&ctx.lock, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (http_server__start(&ctx, &http_addr, &http) ||
	    grpc_server__start(&ctx, &grpc_addr, &grpc))
		goto cleanup;
	printf("serve: http://%s/ (OTLP/HTTP POST /v1development/profiles), OTLP/gRPC on %s, "
	       "database %s\n",
	       listen, grpc_listen, db);
	fflush(stdout);
	while (!serve_stop) {
		time_t now = time(NULL);

		if (now - last_retain >= RETAIN_EVERY_S) {
			pthread_mutex_lock(&ctx.lock);
			store__retain(st, now);
			pthread_mutex_unlock(&ctx.lock);
			last_retain = now;
		}
		usleep(200000);
	}
	ret = 0;
	printf("serve: stopping (%lld samples in %lld requests, %lld refused)\n",
	       (long long)ctx.ingested, (long long)ctx.requests, (long long)ctx.rejected);
cleanup:
	http_server__stop(http);
	grpc_server__stop(grpc);
	store__close(st);
	free(token);
	return ret;
}
