// SPDX-License-Identifier: Apache-2.0
/*
 * serve's store, ingest and queries on a real SQLite file: requests made by
 * the agent's own OTLP encoder; deduplication, the rollup agreeing with the
 * per-second rows, filters (frame type in the timeline too), retention by
 * age and size down to unreferenced strings, malformed requests changing
 * nothing, a kill -9 during ingest leaving a database that opens cleanly
 * with whole requests only, and --import of record's pprof keeping frame types.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "export/exporters.h"
#include "export/otlp.h"
#include "otlp_profiles_service.pb-c.h"
#include "profile/profile.h"
#include "serve/ingest.h"
#include "serve/query.h"
#include "serve/server.h"
#include "serve/store.h"
#include "testutil.h"

#define T0 1700000000LL /* a 10-minute boundary: 1700000000 % 600 == 200, see below */

static int describe(void *ctx, uint32_t pid, const char *comm, struct otlp_resource *out)
{
	(void)ctx;
	(void)comm;
	out->service_name = pid == 1 ? "svc-a" : "svc-b";
	out->host_name = "host-1";
	out->executable_name = pid == 1 ? "app" : "other";
	out->executable_path = pid == 1 ? "/usr/bin/app" : "/usr/bin/other";
	out->container_id = "";
	return 0;
}

/*
 * An OTLP request as the agent sends it: count events at second ts of the
 * stack leaf <- main (native, in /usr/bin/app), with a kernel frame on top
 * when kernel, from pid (1 or 2), thread 7 "worker". *buf is malloc'ed.
 */
static void make_request(int64_t ts, const char *leaf, uint32_t count, uint32_t pid, bool kernel,
			 uint8_t **buf, size_t *len)
{
	struct profile *p = profile__new(20);
	uint32_t map, kmap, f_main, f_leaf, f_k, locs[3], n = 0;
	uint64_t *times = calloc(count, sizeof(*times));

	assert_non_null(p);
	assert_non_null(times);
	p->time_ns = (uint64_t)ts * 1000000000ull;
	p->duration_ns = 1000000000ull;
	p->has_events = true;
	map = profile__add_file_mapping(p, 0x1000, 0x9000, 0, "/usr/bin/app", "b1d", NULL, NULL);
	kmap = profile__add_mapping(p, 0, UINT64_MAX, 0, "[kernel.kallsyms]", "");
	f_main = profile__add_function(p, "main", "main", "app.c");
	f_leaf = profile__add_function(p, leaf, leaf, "app.c");
	f_k = profile__add_function(p, "do_syscall_64", "do_syscall_64", "");
	if (kernel)
		locs[n++] =
		    profile__add_location(p, kmap, 0xffffffff81000000ull, PROFILE_FRAME_KERNEL,
					  &(struct profile_line){f_k, 0}, 1);
	locs[n++] = profile__add_location(p, map, 0x1200, PROFILE_FRAME_NATIVE,
					  &(struct profile_line){f_leaf, 12}, 1);
	locs[n++] = profile__add_location(p, map, 0x1100, PROFILE_FRAME_NATIVE,
					  &(struct profile_line){f_main, 3}, 1);
	for (uint32_t i = 0; i < count; i++)
		times[i] = (uint64_t)ts * 1000000000ull + i * (1000000000ull / (count + 1));
	assert_int_equal(
	    profile__add_sample(p, locs, n, pid, 7, pid == 1 ? "app" : "other", "worker", count),
	    0);
	assert_int_equal(profile__set_sample_events(p, 1, times, count), 0);
	assert_int_equal(otlp__encode(p, describe, NULL, buf, len), 0);
	free(times);
	profile__free(p);
}

static void ingest(struct store *s, int64_t ts, const char *leaf, uint32_t count, uint32_t pid,
		   bool kernel)
{
	uint8_t *buf;
	size_t len;
	char why[200];
	int64_t n;

	make_request(ts, leaf, count, pid, kernel, &buf, &len);
	assert_int_equal(otlp_ingest(s, buf, len, why, sizeof(why), &n), 0);
	assert_int_equal(n, count);
	free(buf);
}

struct fixture {
	char *dir;
	char path[1100];
	struct store *s;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct store_opts o = {0};

	assert_non_null(f);
	f->dir = tu_mkdtemp();
	snprintf(f->path, sizeof(f->path), "%s/serve.db", f->dir);
	assert_int_equal(store__open(f->path, &o, &f->s), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	store__close(f->s);
	tu_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static char *run_query(struct store *s,
		       int (*fn)(sqlite3 *, const struct query_filter *, struct qbuf *),
		       const struct query_filter *qf)
{
	struct qbuf out = {0};
	sqlite3 *db;

	assert_int_equal(store__reader(s, &db), 0);
	assert_int_equal(fn(db, qf, &out), 0);
	sqlite3_close(db);
	return out.s ? out.s : strdup("");
}

static int64_t json_int(const char *json, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(json, k);
	assert_non_null(p);
	return atoll(p + strlen(k));
}

/* Same stacks in many requests: one row each; samples add up per second. */
static void test_dedup_and_queries(void **state)
{
	struct fixture *f = *state;
	struct query_filter qf = {.from = T0, .to = T0 + 100};
	int64_t stacks, frames, strings;
	char *out;

	ingest(f->s, T0, "leaf_a", 5, 1, false);
	stacks = store__rows(f->s, "stacks");
	frames = store__rows(f->s, "frames");
	strings = store__rows(f->s, "strings");
	for (int i = 0; i < 10; i++)
		ingest(f->s, T0 + i, "leaf_a", 5, 1, false);
	assert_int_equal(store__rows(f->s, "stacks"), stacks);
	assert_int_equal(store__rows(f->s, "frames"), frames);
	assert_int_equal(store__rows(f->s, "strings"), strings);
	assert_int_equal(store__rows(f->s, "samples"), 10); /* T0 twice: one row */
	ingest(f->s, T0 + 20, "leaf_b", 3, 2, true);
	assert_int_equal(store__count(f->s, T0, T0 + 100), 58);

	out = run_query(f->s, query__folded, &qf);
	if (!strstr(out, "app;main;leaf_a 55\n") ||
	    !strstr(out, "other;main;leaf_b;do_syscall_64 3\n"))
		fail_msg("folded:\n%s", out);
	free(out);

	out = run_query(f->s, query__flame, &qf);
	assert_int_equal(json_int(out, "total"), 58);
	assert_non_null(strstr(out, "\"n\":\"leaf_a\",\"t\":\"native\",\"f\":\"app.c\",\"l\":12,"
				    "\"m\":\"/usr/bin/app\",\"b\":\"b1d\",\"v\":55,\"s\":55"));
	free(out);

	out = run_query(f->s, query__top, &qf);
	assert_non_null(strstr(out, "\"functions\":[{\"name\":\"leaf_a\""));
	free(out);

	/* Filters: a resource attribute, then the frame type (timeline included). */
	qf.service = "svc-b";
	out = run_query(f->s, query__flame, &qf);
	assert_int_equal(json_int(out, "total"), 3);
	free(out);
	qf.service = NULL;
	qf.ftype = "kernel";
	out = run_query(f->s, query__flame, &qf);
	assert_int_equal(json_int(out, "total"), 3);
	free(out);
	{
		struct qbuf tb = {0};
		sqlite3 *db;

		assert_int_equal(store__reader(f->s, &db), 0);
		assert_int_equal(query__timeline(db, &qf, "process", &tb), 0);
		sqlite3_close(db);
		if (!strstr(tb.s, "\"rows\":[[1700000020,\"other (2)\",3]]"))
			fail_msg("timeline with the kernel frame-type filter: %s", tb.s);
		qbuf__free(&tb);
	}
	/* Thread filter (per-second rows only) and pid. */
	qf.ftype = NULL;
	qf.thread = "worker";
	qf.pid = 1;
	out = run_query(f->s, query__flame, &qf);
	assert_int_equal(json_int(out, "total"), 55);
	free(out);
}

/* Over whole 10-minute buckets the rollup answers; it must agree with the seconds. */
static void test_rollup_agrees(void **state)
{
	struct fixture *f = *state;
	struct query_filter all = {.from = T0 - 200, .to = T0 + 3400};
	struct query_filter per_second = all;
	char *a, *b;

	for (int i = 0; i < 60; i++)
		ingest(f->s, T0 - 200 + i * 59, i % 3 ? "leaf_a" : "leaf_b", 2 + i % 4, 1 + i % 2,
		       i % 5 == 0);
	per_second.thread = "7"; /* every sample: but forces the per-second rows */
	a = run_query(f->s, query__flame, &all);
	b = run_query(f->s, query__flame, &per_second);
	assert_string_equal(a, b);
	assert_int_equal(json_int(a, "total"), store__count(f->s, T0 - 200, T0 + 3400));
	free(a);
	free(b);
}

static void test_malformed_changes_nothing(void **state)
{
	struct fixture *f = *state;
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest *req;
	uint8_t *buf, *bad;
	size_t len, bad_len;
	char why[200];
	int64_t n, strings, samples;

	ingest(f->s, T0, "leaf_a", 4, 1, false);
	strings = store__rows(f->s, "strings");
	samples = store__count(f->s, 0, INT64_MAX);

	make_request(T0 + 1, "leaf_new", 4, 1, true, &buf, &len);
	/* Truncated. */
	assert_int_equal(otlp_ingest(f->s, buf, len - 3, why, sizeof(why), &n), -EINVAL);
	assert_non_null(strstr(why, "decoding failed"));
	/* Well-formed protobuf, an index out of range in the last sample. */
	req =
	    opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	assert_non_null(req);
	req->resource_profiles[0]->scope_profiles[0]->profiles[0]->samples[0]->stack_index = 999;
	bad_len = protobuf_c_message_get_packed_size(&req->base);
	bad = malloc(bad_len);
	assert_non_null(bad);
	protobuf_c_message_pack(&req->base, bad);
	assert_int_equal(otlp_ingest(f->s, bad, bad_len, why, sizeof(why), &n), -EINVAL);
	assert_non_null(strstr(why, "stack index 999 out of range"));
	/* A location pointing past the function table. */
	req->resource_profiles[0]->scope_profiles[0]->profiles[0]->samples[0]->stack_index = 1;
	req->dictionary->location_table[1]->lines[0]->function_index = 77;
	free(bad);
	bad_len = protobuf_c_message_get_packed_size(&req->base);
	bad = malloc(bad_len);
	assert_non_null(bad);
	protobuf_c_message_pack(&req->base, bad);
	assert_int_equal(otlp_ingest(f->s, bad, bad_len, why, sizeof(why), &n), -EINVAL);
	assert_non_null(strstr(why, "function index out of range"));
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
	    req, NULL);

	assert_int_equal(store__rows(f->s, "strings"), strings);
	assert_int_equal(store__count(f->s, 0, INT64_MAX), samples);
	free(buf);
	free(bad);
}

/* Age, then size; what only old samples used goes too, down to the strings. */
static void test_retention(void **state)
{
	struct fixture *f = *state;
	struct store_opts o = {.retention_s = 3600};
	int64_t now = T0 + 7200 - T0 % 600;
	struct store *s;
	sqlite3 *db;
	sqlite3_stmt *st;

	store__close(f->s);
	assert_int_equal(store__open(f->path, &o, &s), 0);
	f->s = s;
	ingest(s, now - 3 * 3600, "old_only", 5, 2, true);
	ingest(s, now - 60, "leaf_a", 5, 1, false);
	assert_int_equal(store__retain(s, now), 0);
	assert_int_equal(store__count(s, 0, INT64_MAX), 5);
	assert_int_equal(store__rows(s, "rollup"), 1);
	assert_int_equal(store__rows(s, "stacks"), 1);
	assert_int_equal(store__rows(s, "resources"), 1);
	assert_int_equal(store__rows(s, "frames"), 2); /* main, leaf_a */
	assert_int_equal(store__rows(s, "functions"), 2);
	assert_int_equal(store__rows(s, "mappings"), 1);
	assert_int_equal(store__reader(s, &db), 0);
	assert_int_equal(sqlite3_prepare_v2(db,
					    "SELECT count(*) FROM strings WHERE s IN ('old_only', "
					    "'do_syscall_64', '[kernel.kallsyms]')",
					    -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), 0);
	sqlite3_finalize(st);
	sqlite3_close(db);

	/* Size: a bound below what 2 hours of distinct stacks take keeps only the newest. */
	store__close(s);
	o.retention_s = 0;
	o.max_bytes = 256 * 1024;
	assert_int_equal(store__open(f->path, &o, &s), 0);
	f->s = s;
	for (int i = 0; i < 2000; i++) {
		char leaf[32];

		snprintf(leaf, sizeof(leaf), "fn_%d", i);
		ingest(s, now + i * 4, leaf, 3, 1, false);
	}
	assert_true(store__bytes(s) > 256 * 1024);
	assert_int_equal(store__retain(s, now + 8000), 0);
	assert_true(store__bytes(s) <= 256 * 1024);
	assert_true(store__count(s, now + 7900, now + 8000) > 0);   /* the newest stay */
	assert_int_equal(store__count(s, now - 100, now + 100), 0); /* the oldest went */
}

/* kill -9 in the middle of ingest: the database opens, whole requests only. */
static void test_kill9_during_ingest(void **state)
{
	struct fixture *f = *state;
	struct store *s;
	pid_t child;
	int64_t n;

	store__close(f->s);
	f->s = NULL;
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		struct store *cs;

		if (store__open(f->path, NULL, &cs))
			_exit(1);
		for (int i = 0;; i++)
			ingest(cs, T0 + i, i % 2 ? "leaf_a" : "leaf_b", 7, 1, i % 3 == 0);
	}
	usleep(400000);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(store__open(f->path, NULL, &s), 0);
	f->s = s;
	n = store__count(s, 0, INT64_MAX);
	assert_true(n > 0);
	assert_int_equal(n % 7, 0);
	{
		sqlite3 *db;
		sqlite3_stmt *st;

		assert_int_equal(store__reader(s, &db), 0);
		assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL),
				 SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	ingest(s, T0 + 100000, "after", 2, 1, false);
	assert_int_equal(store__count(s, 0, INT64_MAX), n + 2);
}

/* record's pprof into the store: stacks and frame types come back. */
static void test_import_pprof(void **state)
{
	struct fixture *f = *state;
	struct profile *p = profile__new(20);
	struct query_filter qf = {.from = 0, .to = INT64_MAX / 2};
	uint32_t map, kmap, f_main, f_leaf, f_k, f_py, locs[4];
	char path[1200], *out;
	int64_t n;

	assert_non_null(p);
	p->time_ns = (uint64_t)T0 * 1000000000ull;
	map = profile__add_file_mapping(p, 0x1000, 0x9000, 0, "/usr/bin/app", "b1d", NULL, NULL);
	kmap = profile__add_mapping(p, 0, UINT64_MAX, 0, "[kernel.kallsyms]", "");
	f_main = profile__add_function(p, "main", "main", "app.c");
	f_leaf = profile__add_function(p, "leaf_a", "leaf_a", "app.c");
	f_k = profile__add_function(p, "do_syscall_64", "do_syscall_64", "");
	f_py = profile__add_function(p, "handler", "handler", "/srv/app.py");
	locs[0] = profile__add_location(p, kmap, 0xffffffff81000000ull, PROFILE_FRAME_KERNEL,
					&(struct profile_line){f_k, 0}, 1);
	locs[1] = profile__add_location(p, map, 0x1200, PROFILE_FRAME_NATIVE,
					&(struct profile_line){f_leaf, 12}, 1);
	locs[2] = profile__add_location(p, 0, 0x10, PROFILE_FRAME_PYTHON,
					&(struct profile_line){f_py, 40}, 1);
	locs[3] = profile__add_location(p, map, 0x1100, PROFILE_FRAME_NATIVE,
					&(struct profile_line){f_main, 3}, 1);
	assert_int_equal(profile__add_sample(p, locs, 4, 9, 9, "app", "app", 11), 0);
	snprintf(path, sizeof(path), "%s/profile.pb.gz", f->dir);
	assert_int_equal(pprof__write(p, path), 0);
	profile__free(p);

	assert_int_equal(serve_import(f->s, f->dir, &n), 0);
	assert_int_equal(n, 11);
	out = run_query(f->s, query__folded, &qf);
	assert_string_equal(out, "app;main;handler;leaf_a;do_syscall_64 11\n");
	free(out);
	qf.ftype = "kernel";
	out = run_query(f->s, query__top, &qf);
	assert_non_null(strstr(out, "{\"name\":\"do_syscall_64\",\"type\":\"kernel\""));
	assert_non_null(strstr(out, "{\"name\":\"handler\",\"type\":\"cpython\""));
	free(out);
}

/* Large answers go gzip'ed to clients that take it: they inflate to the same bytes. */
static void test_gzip_answers(void **state)
{
	static const struct {
		const char *header;
		bool takes;
	} enc[] = {
	    {"gzip", true},
	    {"gzip, deflate, br, zstd", true},
	    {"deflate, gzip;q=0.5", true},
	    {"br,gzip", true},
	    {"GZIP", true},
	    {"identity", false},
	    {"gzip;q=0", false},
	    {"gzip; q=0.000", false},
	    {"x-gzip-not", false},
	    {"", false},
	};
	size_t len = 1 << 20, zlen, plain_len;
	uint8_t *in = malloc(len), *z = NULL, *plain = NULL;
	static const char text[] = "{\"name\":\"fp_chain_leaf\",\"v\":";

	(void)state;
	assert_non_null(in);
	for (size_t i = 0; i < len; i++) /* JSON-like: repetitive, not constant */
		in[i] = (uint8_t)(text[i % (sizeof(text) - 1)] ^ (i % 977 == 0));
	assert_int_equal(serve__gzip(in, len, &z, &zlen), 0);
	assert_true(zlen > 0 && zlen < len / 4);
	assert_int_equal(serve__gunzip(z, zlen, len, &plain, &plain_len), 0);
	assert_int_equal(plain_len, len);
	assert_memory_equal(plain, in, len);
	for (size_t i = 0; i < sizeof(enc) / sizeof(enc[0]); i++)
		assert_int_equal(serve__accepts_gzip(enc[i].header), enc[i].takes);
	assert_false(serve__accepts_gzip(NULL));
	free(in);
	free(z);
	free(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_dedup_and_queries, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rollup_agrees, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_malformed_changes_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_retention, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_kill9_during_ingest, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_import_pprof, setup, teardown),
	    cmocka_unit_test(test_gzip_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
