// SPDX-License-Identifier: Apache-2.0
/*
 * omniprof serve's store under a fleet's hour: 10 hosts x 2 CPUs at 20 Hz
 * for one hour (about 1.44 M samples), sent as the agent does (an OTLP
 * request per host every 5 s, encoded by the agent's own encoder), then the
 * queries the page makes over the whole hour.
 *
 *   make build/bench/serve_bench
 *   build/bench/serve_bench DB [SECONDS]     (SECONDS of data, default 3600)
 *   build/bench/serve_bench DB SECONDS FROM  (queries only, on a DB made before)
 *
 * Prints "ingest", "flame", "top", "flame-host", "timeline" and "db" lines
 * (bench/run.py reads them). Only otlp_ingest() is timed for ingest, not the
 * encoding; queries run on a read connection as the server's do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "export/otlp.h"
#include "profile/profile.h"
#include "serve/ingest.h"
#include "serve/query.h"
#include "serve/store.h"

#include "bench_clock.h"

#define HOSTS	   10
#define CPUS	   2
#define HZ	   20
#define INTERVAL_S 5
#define KINDS	   8  /* programs per host */
#define FUNCS	   60 /* functions per program */
#define STACKS	   150
#define RUNS	   20

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Stack j of program k: function indices, leaf first; the same on every host. */
static uint8_t stack_fn[KINDS][STACKS][32];
static uint8_t stack_len[KINDS][STACKS];

static void make_stacks(void)
{
	for (int k = 0; k < KINDS; k++)
		for (int j = 0; j < STACKS; j++) {
			int depth = 8 + (int)(next() % 20);

			stack_len[k][j] = (uint8_t)depth;
			/* Outermost frames shared (main, a dispatcher), then a random path. */
			stack_fn[k][j][depth - 1] = 0;
			stack_fn[k][j][depth - 2] = 1 + j % 3;
			for (int d = depth - 3; d >= 0; d--)
				stack_fn[k][j][d] = (uint8_t)(4 + next() % (FUNCS - 4));
		}
}

static char host_names[HOSTS][16];
static int current_host;

static int describe(void *ctx, uint32_t pid, const char *comm, struct otlp_resource *out)
{
	static char exe[64];

	(void)ctx;
	snprintf(exe, sizeof(exe), "/usr/bin/%s", comm);
	out->service_name = comm;
	out->host_name = host_names[current_host];
	out->executable_name = comm;
	out->executable_path = exe;
	out->container_id = pid % 2 ? "c0ffee" : "";
	return 0;
}

/* One host's interval as the agent would send it. *buf is malloc'ed. */
static int make_request(int host, int64_t t0, uint8_t **buf, size_t *len, int64_t *n)
{
	struct profile *p = profile__new(HZ);
	uint32_t locs[KINDS][FUNCS];
	char name[64], comm[KINDS][16];
	int err;

	if (!p)
		return -ENOMEM;
	p->time_ns = (uint64_t)t0 * 1000000000ull;
	p->duration_ns = INTERVAL_S * 1000000000ull;
	p->has_events = true;
	for (int k = 0; k < KINDS; k++) {
		uint32_t map;

		snprintf(comm[k], sizeof(comm[k]), "svc%d", k);
		snprintf(name, sizeof(name), "/usr/bin/svc%d", k);
		map = profile__add_file_mapping(p, 0x400000, 0x800000, 0, name, "0123abcd", NULL,
						NULL);
		for (int f = 0; f < FUNCS; f++) {
			uint32_t fn;

			snprintf(name, sizeof(name), f ? "svc%d::fn_%02d" : "main", k, f);
			fn = profile__add_function(p, name, name, "src/svc.c");
			locs[k][f] = profile__add_location(p, map, 0x401000 + (uint64_t)f * 64,
							   PROFILE_FRAME_NATIVE,
							   &(struct profile_line){fn, 10 + f}, 1);
		}
	}
	*n = 0;
	for (int cpu = 0; cpu < CPUS; cpu++)
		for (int i = 0; i < HZ * INTERVAL_S; i++) {
			/* Skewed: a few programs and stacks take most samples. */
			int k = (int)(next() % KINDS * (next() % KINDS) / KINDS);
			int j = (int)(next() % STACKS * (next() % STACKS) / STACKS);
			uint32_t ids[32];
			uint64_t ts =
			    (uint64_t)t0 * 1000000000ull + (uint64_t)i * (1000000000ull / HZ);

			for (int d = 0; d < stack_len[k][j]; d++)
				ids[d] = locs[k][stack_fn[k][j][d]];
			if ((err = profile__add_sample(p, ids, stack_len[k][j], 1000 + k,
						       1000 + k + (uint32_t)(next() % 4), comm[k],
						       "worker", 1)) ||
			    (err = profile__set_sample_events(p, (uint32_t)cpu, &ts, 1)))
				goto cleanup;
			(*n)++;
		}
	current_host = host;
	err = otlp__encode(p, describe, NULL, buf, len);
cleanup:
	profile__free(p);
	return err;
}

static void time_query(sqlite3 *db, const char *label,
		       int (*fn)(sqlite3 *, const struct query_filter *, struct qbuf *),
		       const struct query_filter *f)
{
	double t[RUNS], c[RUNS];
	size_t bytes = 0;

	for (int i = 0; i < RUNS; i++) {
		struct qbuf out = {0};
		double t0 = now_ms(), c0 = bench__thread_ms();

		if (fn(db, f, &out)) {
			fprintf(stderr, "%s failed\n", label);
			exit(1);
		}
		t[i] = now_ms() - t0;
		c[i] = bench__thread_ms() - c0;
		bytes = out.len;
		qbuf__free(&out);
	}
	qsort(t, RUNS, sizeof(t[0]), bench__cmp_double);
	qsort(c, RUNS, sizeof(c[0]), bench__cmp_double);
	printf(
	    "%s: p50 %.1f ms, p95 %.1f ms, max %.1f ms over %d runs, %zu bytes; cpu p50 %.1f ms, "
	    "p95 %.1f ms\n",
	    label, t[RUNS / 2], t[(RUNS * 95 + 99) / 100 - 1], t[RUNS - 1], RUNS, bytes,
	    c[RUNS / 2], c[(RUNS * 95 + 99) / 100 - 1]);
}

int main(int argc, char **argv)
{
	struct store_opts o = {0};
	struct store *s;
	int64_t seconds = argc > 2 ? atoll(argv[2]) : 3600, total = 0, start;
	double ingest_ms = 0, ingest_cpu = 0;
	struct rusage ru;
	sqlite3 *db;
	char why[256];

	if (argc < 2) {
		fprintf(stderr, "usage: serve_bench DB [SECONDS]\n");
		return 2;
	}
	if (argc > 3) {
		start = atoll(argv[3]);
		if (store__open(argv[1], &o, &s))
			return 1;
		goto queries;
	}
	unlink(argv[1]);
	if (store__open(argv[1], &o, &s))
		return 1;
	for (int h = 0; h < HOSTS; h++)
		snprintf(host_names[h], sizeof(host_names[h]), "host-%02d", h);
	make_stacks();
	/* Recent data, so that serve's default retention keeps it when run on this DB. */
	start = time(NULL) - seconds;
	start -= start % INTERVAL_S;
	for (int64_t t = start; t < start + seconds; t += INTERVAL_S)
		for (int h = 0; h < HOSTS; h++) {
			uint8_t *buf;
			size_t len;
			int64_t n, stored;
			double t0, c0;

			if (make_request(h, t, &buf, &len, &n))
				return 1;
			t0 = now_ms();
			c0 = bench__thread_ms();
			if (otlp_ingest(s, buf, len, why, sizeof(why), &stored) || stored != n) {
				fprintf(stderr, "ingest failed: %s\n", why);
				return 1;
			}
			ingest_ms += now_ms() - t0;
			ingest_cpu += bench__thread_ms() - c0;
			total += n;
			free(buf);
		}
	printf("ingest: %lld samples in %.1f s: %.0f samples/s; cpu %.1f s: %.0f samples/cpu-s\n",
	       (long long)total, ingest_ms / 1000, total / (ingest_ms / 1000), ingest_cpu / 1000,
	       total / (ingest_cpu / 1000));
queries:
	if (store__reader(s, &db))
		return 1;
	{
		struct query_filter all = {.from = start, .to = start + seconds};
		struct query_filter host = all;
		struct qbuf tl = {0};
		double t0;

		host.host = "host-03";
		time_query(db, "flame", query__flame, &all);
		time_query(db, "top", query__top, &all);
		time_query(db, "flame-host", query__flame, &host);
		t0 = now_ms();
		if (query__timeline(db, &all, "process", &tl))
			return 1;
		printf("timeline: %.1f ms (one run, by process)\n", now_ms() - t0);
		qbuf__free(&tl);
		printf("range: %lld %lld\n", (long long)start, (long long)(start + seconds));
	}
	sqlite3_close(db);
	store__close(s);
	if (store__open(argv[1], &o, &s))
		return 1;
	printf("db: %lld bytes in use, %.1f bytes/sample\n", (long long)store__bytes(s),
	       (double)store__bytes(s) / (double)total);
	store__close(s);
	getrusage(RUSAGE_SELF, &ru);
	printf("bench rss: %ld KiB (generator included)\n", ru.ru_maxrss);
	return 0;
}
