// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "profile/trace_table.h"
#include "util/hashmap.h"

static int setup(void **state)
{
	struct profile *p = profile__new(99);

	if (!p)
		return -1;
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	profile__free(*state);
	return 0;
}

/*
 * hash_mem() keys the trace and frame tables 8 bytes at a time: every byte of
 * a key, the tail after the last whole word included, changes the hash, and
 * equal keys at different addresses hash alike.
 */
static void test_hash_mem_every_byte(void **state)
{
	unsigned char a[48], b[49];

	(void)state;
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (unsigned char)(i * 37 + 11);
	for (size_t len = 1; len <= sizeof(a); len++) {
		uint64_t h = hash_mem(a, len, 7);

		memcpy(b + 1, a, len); /* unaligned copy */
		assert_true(hash_mem(b + 1, len, 7) == h);
		assert_true(hash_mem(a, len, 8) != h);
		for (size_t i = 0; i < len; i++) {
			b[1 + i] ^= 0x01;
			assert_true(hash_mem(b + 1, len, 7) != h);
			b[1 + i] ^= 0x01;
		}
		if (len < sizeof(a))
			assert_true(hash_mem(a, len + 1, 7) != h);
	}
}

static void test_new(void **state)
{
	struct profile *p = *state;

	assert_int_equal(p->frequency_hz, 99);
	assert_int_equal(p->period_ns, 1000000000ull / 99);
	assert_int_equal(p->n_mappings, 0);
	assert_int_equal(p->n_functions, 0);
	assert_int_equal(p->n_locations, 0);
	assert_int_equal(p->n_samples, 0);
	assert_int_equal(p->stats.samples, 0);
	profile__free(NULL);
}

static void test_mappings(void **state)
{
	struct profile *p = *state;
	char file[32] = "/usr/bin/app", build_id[32] = "abcd";
	uint32_t a, b;

	a = profile__add_mapping(p, 0x1000, 0x2000, 0, file, build_id);
	assert_int_equal(a, 1);
	/* Same content through different buffers is the same mapping. */
	assert_int_equal(profile__add_mapping(p, 0x1000, 0x2000, 0, "/usr/bin/app", "abcd"), a);

	/* Every key field makes a difference. */
	b = profile__add_mapping(p, 0x1001, 0x2000, 0, file, build_id);
	assert_int_equal(b, 2);
	assert_int_equal(profile__add_mapping(p, 0x1000, 0x2001, 0, file, build_id), 3);
	assert_int_equal(profile__add_mapping(p, 0x1000, 0x2000, 8, file, build_id), 4);
	assert_int_equal(profile__add_mapping(p, 0x1000, 0x2000, 0, "/usr/bin/app2", build_id), 5);
	assert_int_equal(profile__add_mapping(p, 0x1000, 0x2000, 0, file, "abce"), 6);
	assert_int_equal(profile__add_mapping(p, 0x1000, 0x2000, 0, file, ""), 7);
	assert_int_equal(p->n_mappings, 7);

	/* The profile keeps its own copies. */
	strcpy(file, "XXXX");
	strcpy(build_id, "YYYY");
	assert_string_equal(p->mappings[a - 1].filename, "/usr/bin/app");
	assert_string_equal(p->mappings[a - 1].build_id, "abcd");
	assert_true(p->mappings[a - 1].filename != file);
	assert_int_equal(p->mappings[b - 1].start, 0x1001);
	assert_int_equal(p->mappings[b - 1].limit, 0x2000);
	assert_int_equal(profile__add_mapping(p, 0x1000, 0x2000, 0, "/usr/bin/app", "abcd"), a);
}

static void test_functions(void **state)
{
	struct profile *p = *state;
	char name[32] = "main";
	uint32_t f1, f2, f3, f4;

	f1 = profile__add_function(p, name, "main", "main.c");
	f2 = profile__add_function(p, "foo", "_Z3foov", "foo.cc");
	f3 = profile__add_function(p, "foo", "_Z3fooi", "foo.cc");
	f4 = profile__add_function(p, "foo", "_Z3foov", "");
	assert_int_equal(f1, 1);
	assert_int_equal(f2, 2);
	assert_int_equal(f3, 3);
	assert_int_equal(f4, 4);
	assert_int_equal(profile__add_function(p, "foo", "_Z3foov", "foo.cc"), f2);
	strcpy(name, "zzzz");
	assert_int_equal(profile__add_function(p, "main", "main", "main.c"), f1);
	assert_string_equal(profile__function(p, f1)->name, "main");
	assert_string_equal(profile__function(p, f2)->system_name, "_Z3foov");
	assert_string_equal(profile__function(p, f3)->filename, "foo.cc");
	/* NULL strings are treated as empty. */
	assert_int_equal(profile__add_function(p, "bar", NULL, NULL),
			 profile__add_function(p, "bar", "", ""));
	assert_int_equal(p->n_functions, 5);
}

static void test_locations(void **state)
{
	struct profile *p = *state;
	uint32_t m = profile__add_mapping(p, 0, 0x10000, 0, "/lib/libc.so.6", "");
	uint32_t fa = profile__add_function(p, "a", "a", "");
	uint32_t fb = profile__add_function(p, "b", "b", "");
	struct profile_line lines[2] = {{fa, 10}, {fb, 20}};
	uint32_t l1, l2;

	l1 = profile__add_location(p, m, 0x123, PROFILE_FRAME_NATIVE, lines, 2);
	assert_int_equal(l1, 1);
	/* Lines are copied: changing the caller's array afterwards changes nothing. */
	lines[0].line = 11;
	assert_int_equal(profile__location(p, l1)->lines[0].line, 10);
	assert_int_equal(profile__add_location(p, m, 0x123, PROFILE_FRAME_NATIVE, lines, 2), 2);
	lines[0].line = 10;
	assert_int_equal(profile__add_location(p, m, 0x123, PROFILE_FRAME_NATIVE, lines, 2), l1);

	/* Each key field: address, mapping, kind, line count, function. */
	assert_int_equal(profile__add_location(p, m, 0x124, PROFILE_FRAME_NATIVE, lines, 2), 3);
	assert_int_equal(profile__add_location(p, 0, 0x123, PROFILE_FRAME_NATIVE, lines, 2), 4);
	assert_int_equal(profile__add_location(p, m, 0x123, PROFILE_FRAME_KERNEL, lines, 2), 5);
	assert_int_equal(profile__add_location(p, m, 0x123, PROFILE_FRAME_NATIVE, lines, 1), 6);
	lines[1].function_id = fa;
	l2 = profile__add_location(p, m, 0x123, PROFILE_FRAME_NATIVE, lines, 2);
	assert_int_equal(l2, 7);
	assert_int_equal(p->n_locations, 7);

	const struct profile_location *loc = profile__location(p, l1);
	assert_int_equal(loc->mapping_id, m);
	assert_int_equal(loc->address, 0x123);
	assert_int_equal(loc->kind, PROFILE_FRAME_NATIVE);
	assert_int_equal(loc->n_lines, 2);
	assert_int_equal(loc->lines[0].function_id, fa);
	assert_int_equal(loc->lines[1].function_id, fb);
	assert_int_equal(loc->lines[1].line, 20);

	/* Ids the exporters could not resolve are refused. */
	lines[1].function_id = 99;
	assert_int_equal(profile__add_location(p, m, 0x1, PROFILE_FRAME_NATIVE, lines, 2), 0);
	assert_int_equal(profile__add_location(p, 42, 0x1, PROFILE_FRAME_NATIVE, lines, 1), 0);
	assert_int_equal(profile__add_location(p, m, 0x1, PROFILE_FRAME_NATIVE, lines, 0), 0);
	assert_int_equal(p->n_locations, 7);
}

static void test_samples(void **state)
{
	struct profile *p = *state;
	uint32_t f = profile__add_function(p, "f", "f", "");
	struct profile_line line = {f, 0};
	uint32_t loc =
	    profile__add_location(p, 0, 0xffffffff81000000ull, PROFILE_FRAME_KERNEL, &line, 1);
	uint32_t ids[3] = {loc, loc, loc};
	char comm[16] = "worker";

	assert_int_equal(profile__add_sample(p, ids, 3, 100, 100, comm, "main", 5), 0);
	ids[0] = 0xdead; /* copied, so this must not show */
	strcpy(comm, "other");
	assert_int_equal(profile__add_sample(p, ids + 1, 2, 100, 101, "worker", "w2", 2), 0);
	assert_int_equal(profile__add_sample(p, NULL, 0, 200, 200, "idle", "idle", 1), 0);
	assert_int_equal(profile__add_sample(p, ids + 1, 1, 0, 0, "swapper/0", "swapper/0", 3), 0);

	assert_int_equal(p->n_samples, 4);
	assert_int_equal(p->stats.samples, 5 + 2 + 1 + 3);
	assert_int_equal(p->stats.processes, 3); /* pids 100, 200 and 0 */
	assert_int_equal(p->samples[0].n_locations, 3);
	assert_int_equal(p->samples[0].location_ids[0], loc);
	assert_string_equal(p->samples[0].comm, "worker");
	assert_string_equal(p->samples[0].thread_name, "main");
	assert_int_equal(p->samples[0].count, 5);
	assert_int_equal(p->samples[1].tid, 101);
	assert_int_equal(p->samples[2].n_locations, 0);
	assert_int_equal(p->samples[3].pid, 0);

	/* Unknown locations and negative counts are refused without side effects. */
	ids[0] = 0xdead;
	assert_int_equal(profile__add_sample(p, ids, 1, 300, 300, "x", "x", 1), -EINVAL);
	assert_int_equal(profile__add_sample(p, ids + 1, 1, 300, 300, "x", "x", -1), -EINVAL);
	assert_int_equal(p->n_samples, 4);
	assert_int_equal(p->stats.processes, 3);
}

/* Enough entries to make every table and the string pool grow many times. */
static void test_growth(void **state)
{
	struct profile *p = *state;
	char name[64];
	uint32_t ids[3000];

	for (uint32_t i = 0; i < 3000; i++) {
		struct profile_line line;

		snprintf(name, sizeof(name), "function_%u", i);
		line.function_id = profile__add_function(p, name, name, "big.c");
		assert_int_equal(line.function_id, i + 1);
		line.line = i;
		ids[i] = profile__add_location(p, 0, i * 16, PROFILE_FRAME_NATIVE, &line, 1);
		assert_int_equal(ids[i], i + 1);
	}
	for (uint32_t i = 0; i < 20000; i++)
		assert_int_equal(
		    profile__add_sample(p, ids + i % 1000, 50, i % 777, i, "big", "big", 1), 0);
	/* Everything is still found and intact after all the reallocations. */
	for (uint32_t i = 0; i < 3000; i += 7) {
		struct profile_line line;

		snprintf(name, sizeof(name), "function_%u", i);
		line.function_id = profile__add_function(p, name, name, "big.c");
		line.line = i;
		assert_int_equal(line.function_id, i + 1);
		assert_string_equal(profile__function(p, i + 1)->name, name);
		assert_int_equal(
		    profile__add_location(p, 0, i * 16, PROFILE_FRAME_NATIVE, &line, 1), i + 1);
	}
	assert_int_equal(p->n_functions, 3000);
	assert_int_equal(p->stats.samples, 20000);
	assert_int_equal(p->stats.processes, 777);
	assert_int_equal(p->samples[19999].location_ids[49], ids[19999 % 1000 + 49]);
	assert_int_equal(p->samples[123].location_ids[0], ids[123]);
}

static bool u64_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return *(const uint64_t *)entry == *(const uint64_t *)key;
}

/* The hash map under the interning tables, including removal in colliding clusters. */
static void test_hashmap(void **state)
{
	static uint64_t keys[500];
	struct hashmap m;
	size_t iter = 0, seen = 0;
	void *entry;

	(void)state;
	hashmap__init(&m, u64_equal, NULL);
	assert_null(hashmap__find(&m, 1, &keys[0]));
	for (int i = 0; i < 500; i++) {
		keys[i] = (uint64_t)i * 1000;
		/* Only 8 distinct hashes (one of them 0): long collision chains. */
		assert_int_equal(hashmap__insert(&m, (uint64_t)i % 8, &keys[i]), 0);
	}
	assert_int_equal(m.len, 500);
	for (int i = 0; i < 500; i += 2)
		assert_ptr_equal(hashmap__remove(&m, (uint64_t)i % 8, &keys[i]), &keys[i]);
	assert_int_equal(m.len, 250);
	for (int i = 0; i < 500; i++) {
		uint64_t k = (uint64_t)i * 1000;

		if (i % 2)
			assert_ptr_equal(hashmap__find(&m, (uint64_t)i % 8, &k), &keys[i]);
		else
			assert_null(hashmap__find(&m, (uint64_t)i % 8, &k));
	}
	while (hashmap__next(&m, &iter, &entry))
		seen++;
	assert_int_equal(seen, 250);
	hashmap__clear(&m);
	hashmap__clear(NULL);
}

/*
 * A held stack copy reaches the table after its interval ended: the table keeps
 * the earliest and latest sample time so the profile's window can cover them.
 */
static void test_trace_table_times(void **state)
{
	struct {
		struct trace t;
		struct trace_frame f[1];
	} s = {0};
	struct trace_table tt;
	const uint64_t times[] = {5000, 1200, 9000, 0, 4000};

	(void)state;
	trace_table__init(&tt);
	assert_int_equal(tt.first_time_ns, 0);
	assert_int_equal(tt.last_time_ns, 0);
	s.t.pid = 7;
	s.t.n_frames = 1;
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		s.f[0].addr = 0x1000 + i % 2; /* two traces: the times span both */
		s.t.time_ns = times[i];
		assert_int_equal(trace_table__add(&tt, &s.t), 0);
	}
	/* A sample without a time (0) moves neither end. */
	assert_int_equal(tt.first_time_ns, 1200);
	assert_int_equal(tt.last_time_ns, 9000);
	assert_int_equal(tt.samples, 5);
	trace_table__clear(&tt);
	assert_int_equal(tt.first_time_ns, 0);
	assert_int_equal(tt.last_time_ns, 0);
	trace_table__clear(&tt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hash_mem_every_byte),
	    cmocka_unit_test_setup_teardown(test_new, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mappings, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_functions, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_locations, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_samples, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_growth, setup, teardown),
	    cmocka_unit_test(test_hashmap),
	    cmocka_unit_test(test_trace_table_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
