// SPDX-License-Identifier: Apache-2.0
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "export/exporters.h"
#include "export/frame_text.h"
#include "profile/profile.h"

struct fixture {
	uint32_t main, work_inl, work2, work3, compute, weird, k_sys_read, k_syscall, trunc;
};

static uint32_t add_loc(struct profile *p, uint32_t mapping, uint64_t addr,
			enum profile_frame_kind kind, const char *fn1, const char *fn2)
{
	struct profile_line lines[2];
	uint32_t n = 1, id;

	lines[0].function_id = profile__add_function(p, fn1, fn1, "");
	lines[0].line = 1;
	if (fn2) {
		lines[1].function_id = profile__add_function(p, fn2, fn2, "");
		lines[1].line = 2;
		n = 2;
	}
	id = profile__add_location(p, mapping, addr, kind, lines, n);
	assert_int_not_equal(id, 0);
	return id;
}

static void add(struct profile *p, const uint32_t *ids, uint32_t n, uint32_t tid, const char *comm,
		int64_t count)
{
	assert_int_equal(profile__add_sample(p, ids, n, 10, tid, comm, comm, count), 0);
}

/*
 * Samples (stacks leaf first), in the given order or reversed, so the test can
 * check that the output does not depend on insertion order.
 */
static struct profile *build(bool reverse)
{
	struct profile *p = profile__new(100);
	struct fixture x;
	uint32_t m;

	assert_non_null(p);
	m = profile__add_mapping(p, 0x1000, 0x9000, 0, "/usr/bin/app", "");
	x.main = add_loc(p, m, 0x1100, PROFILE_FRAME_NATIVE, "main", NULL);
	/* inlined_helper was inlined into work: innermost line first. */
	x.work_inl = add_loc(p, m, 0x1200, PROFILE_FRAME_NATIVE, "inlined_helper", "work");
	x.work2 = add_loc(p, m, 0x1210, PROFILE_FRAME_NATIVE, "work", NULL);
	x.work3 = add_loc(p, m, 0x1220, PROFILE_FRAME_NATIVE, "work", NULL);
	x.compute = add_loc(p, m, 0x1300, PROFILE_FRAME_NATIVE, "compute", NULL);
	x.weird = add_loc(p, m, 0x1400, PROFILE_FRAME_NATIVE, "operator;weird\nname", NULL);
	x.k_sys_read =
	    add_loc(p, 0, 0xffffffff81001000ull, PROFILE_FRAME_KERNEL, "ksys_read", NULL);
	x.k_syscall =
	    add_loc(p, 0, 0xffffffff81002000ull, PROFILE_FRAME_KERNEL, "do_syscall_64", NULL);
	x.trunc = add_loc(p, 0, 0, PROFILE_FRAME_ERROR, "truncated", NULL);

	const uint32_t s1[] = {x.compute, x.work_inl, x.main};
	const uint32_t s2[] = {x.k_sys_read, x.k_syscall, x.main};
	const uint32_t s3[] = {x.weird, x.main};
	const uint32_t s4[] = {x.compute, x.trunc};
	const uint32_t s5[] = {x.work2, x.main};
	const uint32_t s6[] = {x.work3, x.main};
	const uint32_t s7[] = {x.main};

	for (int step = 0; step < 9; step++) {
		switch (reverse ? 8 - step : step) {
		case 0:
			add(p, s1, 3, 10, "my app", 3);
			break;
		case 1:
			add(p, s1, 3, 11, "my app", 4); /* another thread: merged */
			break;
		case 2:
			add(p, s2, 3, 10, "my app", 2);
			break;
		case 3:
			add(p, s3, 2, 10, "my app", 1);
			break;
		case 4:
			add(p, s4, 2, 20, "other", 5);
			break;
		case 5:
			add(p, s5, 2, 12, "my app", 1); /* two addresses in work: merged */
			break;
		case 6:
			add(p, s6, 2, 10, "my app", 2);
			break;
		case 7:
			add(p, NULL, 0, 30, "idle", 4);
			add(p, s7, 1, 10, "my;app", 6); /* a comm needs escaping too */
			break;
		case 8:
			add(p, s1, 3, 10, "my app", 0); /* nothing to show */
			break;
		}
	}
	return p;
}

static char *write_folded(const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(folded__write(p, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(buf);
	return buf;
}

struct expect {
	const char *frames[8]; /* comm first, then root to leaf */
	long count;
	int seen;
};

static void test_folded_lines(void **state)
{
	struct expect want[] = {
	    {{"my app", "main", "work", "inlined_helper", "compute"}, 7, 0},
	    {{"my app", "main", "do_syscall_64_[k]", "ksys_read_[k]"}, 2, 0},
	    {{"my app", "main", "operator:weird name"}, 1, 0},
	    {{"other", "[truncated]", "compute"}, 5, 0},
	    {{"my app", "main", "work"}, 3, 0},
	    {{"idle"}, 4, 0},
	    {{"my:app", "main"}, 6, 0},
	};
	const size_t n_want = sizeof(want) / sizeof(want[0]);
	struct profile *p = build(false);
	char *out = write_folded(p);
	char *save = NULL;
	size_t lines = 0;

	(void)state;
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *space = strrchr(line, ' ');
		char *frames[16], *fsave = NULL;
		size_t n = 0;
		long count;
		bool matched = false;

		lines++;
		assert_non_null(space);
		*space = '\0';
		count = strtol(space + 1, NULL, 10);
		for (char *fr = strtok_r(line, ";", &fsave); fr; fr = strtok_r(NULL, ";", &fsave)) {
			assert_true(n < 16);
			frames[n++] = fr;
		}
		for (size_t w = 0; w < n_want && !matched; w++) {
			size_t k = 0;

			while (k < n && want[w].frames[k] && !strcmp(want[w].frames[k], frames[k]))
				k++;
			if (k == n && !want[w].frames[k]) {
				assert_int_equal(count, want[w].count);
				want[w].seen++;
				matched = true;
			}
		}
		if (!matched)
			fail_msg("unexpected line: %s %ld", line, count);
	}
	assert_int_equal(lines, n_want);
	for (size_t w = 0; w < n_want; w++)
		assert_int_equal(want[w].seen, 1);
	free(out);
	profile__free(p);
}

/* The same samples added in another order give byte-identical output. */
static void test_folded_deterministic(void **state)
{
	struct profile *a = build(false), *b = build(true);
	char *out_a = write_folded(a), *out_b = write_folded(b), *again = write_folded(a);

	(void)state;
	assert_string_equal(out_a, out_b);
	assert_string_equal(out_a, again);
	free(out_a);
	free(out_b);
	free(again);
	profile__free(a);
	profile__free(b);
}

static void test_folded_empty(void **state)
{
	struct profile *p = profile__new(100);
	char *out;

	(void)state;
	assert_non_null(p);
	out = write_folded(p);
	assert_string_equal(out, "");
	free(out);
	profile__free(p);
}

/* The frame text rules the other exporters share. */
static void test_frame_text(void **state)
{
	struct profile *p = profile__new(100);
	uint32_t m = profile__add_mapping(p, 0, 0x1000, 0, "/usr/lib/libfoo.so.1", "");
	uint32_t anon = profile__add_function(p, "", "", "");
	uint32_t err = profile__add_function(p, "[unknown]", "", "");
	struct profile_line l1 = {anon, 0}, l2 = {err, 0};
	char buf[64], small[8];
	size_t len;

	(void)state;
	len = frame_text__format(
	    p,
	    profile__location(p, profile__add_location(p, m, 0xabc, PROFILE_FRAME_NATIVE, &l1, 1)),
	    0, buf, sizeof(buf));
	assert_string_equal(buf, "libfoo.so.1+0xabc");
	assert_int_equal(len, strlen(buf));
	frame_text__format(
	    p,
	    profile__location(
		p, profile__add_location(p, 0, 0xffff0000, PROFILE_FRAME_KERNEL, &l1, 1)),
	    0, buf, sizeof(buf));
	assert_string_equal(buf, "0xffff0000_[k]");
	/* An error name that is already bracketed is not bracketed twice. */
	frame_text__format(
	    p, profile__location(p, profile__add_location(p, 0, 0, PROFILE_FRAME_ERROR, &l2, 1)), 0,
	    buf, sizeof(buf));
	assert_string_equal(buf, "[unknown]");
	/* Truncation works like snprintf. */
	len = frame_text__format(p, profile__location(p, 1), 0, small, sizeof(small));
	assert_int_equal(len, strlen("libfoo.so.1+0xabc"));
	assert_string_equal(small, "libfoo.");
	frame_text__comm("", buf, sizeof(buf));
	assert_string_equal(buf, "[unknown]");
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_folded_lines),
	    cmocka_unit_test(test_folded_deterministic),
	    cmocka_unit_test(test_folded_empty),
	    cmocka_unit_test(test_frame_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
