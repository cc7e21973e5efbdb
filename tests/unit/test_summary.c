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
#include "profile/profile.h"

static uint32_t add_loc(struct profile *p, enum profile_frame_kind kind, const char *inner,
			const char *outer)
{
	struct profile_line lines[2] = {
	    {profile__add_function(p, inner, inner, ""), 0},
	    {outer ? profile__add_function(p, outer, outer, "") : 0, 0}};
	uint32_t id = profile__add_location(p, 0, 0, kind, lines, outer ? 2 : 1);

	assert_int_not_equal(id, 0);
	return id;
}

/*
 * Totals: main 39, b 24, ksys_read_[k] 20, rec 15, leaf 10, a 5, helper 3.
 * Self:   ksys_read_[k] 20, leaf 10, rec 5, helper 3, b 1.
 */
static struct profile *build(void)
{
	struct profile *p = profile__new(99);
	uint32_t main_loc, a, b, rec, rec2, leaf, kern, inl;

	assert_non_null(p);
	main_loc = add_loc(p, PROFILE_FRAME_NATIVE, "main", NULL);
	a = add_loc(p, PROFILE_FRAME_NATIVE, "a", NULL);
	b = add_loc(p, PROFILE_FRAME_NATIVE, "b", NULL);
	rec = add_loc(p, PROFILE_FRAME_NATIVE, "rec", NULL);
	/* Another call site of rec: a different location, the same function. */
	rec2 = profile__add_location(
	    p, 0, 0x40, PROFILE_FRAME_NATIVE,
	    &(struct profile_line){profile__add_function(p, "rec", "rec", ""), 7}, 1);
	leaf = add_loc(p, PROFILE_FRAME_NATIVE, "leaf", NULL);
	kern = add_loc(p, PROFILE_FRAME_KERNEL, "ksys_read", NULL);
	inl = add_loc(p, PROFILE_FRAME_NATIVE, "helper", "b");

	const uint32_t s1[] = {leaf, rec, rec2, rec, main_loc};
	const uint32_t s2[] = {rec, a, main_loc};
	const uint32_t s3[] = {kern, b, main_loc};
	const uint32_t s4[] = {b, main_loc};
	const uint32_t s5[] = {inl, main_loc};
	assert_int_equal(profile__add_sample(p, s1, 5, 1, 1, "x", "x", 10), 0);
	assert_int_equal(profile__add_sample(p, s2, 3, 1, 1, "x", "x", 5), 0);
	assert_int_equal(profile__add_sample(p, s3, 3, 2, 2, "y", "y", 20), 0);
	assert_int_equal(profile__add_sample(p, s4, 2, 2, 3, "y", "y", 1), 0);
	assert_int_equal(profile__add_sample(p, s5, 2, 1, 1, "x", "x", 3), 0);
	p->stats.dropped = 4;
	p->stats.truncated = 2;
	return p;
}

static char *print_summary(const struct profile *p, int top_n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	summary__print(p, f, top_n);
	assert_int_equal(fclose(f), 0);
	assert_non_null(buf);
	return buf;
}

struct row {
	unsigned long first, second;
	double first_pct, second_pct;
	char name[64];
};

/* Parses the rows of the table whose title contains title; returns how many. */
static size_t parse_table(const char *out, const char *title, struct row *rows, size_t max)
{
	const char *s = strstr(out, title);
	size_t n = 0;

	assert_non_null(s);
	s = strchr(s, '\n') + 1; /* title */
	s = strchr(s, '\n') + 1; /* column headings */
	while (*s && *s != '\n' && n < max) {
		const char *eol = strchr(s, '\n');
		int used = 0;

		assert_non_null(eol);
		assert_int_equal(sscanf(s, "%lu %lf%% %lu %lf%% %n", &rows[n].first,
					&rows[n].first_pct, &rows[n].second, &rows[n].second_pct,
					&used),
				 4);
		assert_true(used > 0 && s + used < eol);
		snprintf(rows[n].name, sizeof(rows[n].name), "%.*s", (int)(eol - s - used),
			 s + used);
		n++;
		s = eol + 1;
	}
	return n;
}

static void test_summary_tables(void **state)
{
	struct profile *p = build();
	char *out = print_summary(p, 10);
	struct row rows[16];
	const struct {
		const char *name;
		unsigned long first, second;
	} self[] = {{"ksys_read_[k]", 20, 20},
		    {"leaf", 10, 10},
		    {"rec", 5, 15},
		    {"helper", 3, 3},
		    {"b", 1, 24}},
	  total[] = {{"main", 39, 0},  {"b", 24, 1}, {"ksys_read_[k]", 20, 20}, {"rec", 15, 5},
		     {"leaf", 10, 10}, {"a", 5, 0},  {"helper", 3, 3}};
	size_t n;

	(void)state;
	assert_non_null(strstr(out, "Samples:    39"));
	assert_non_null(strstr(out, "Processes:  2"));
	assert_non_null(strstr(out, "Dropped:    4"));
	assert_non_null(strstr(out, "Truncated:  2"));

	n = parse_table(out, "by self", rows, 16);
	assert_int_equal(n, sizeof(self) / sizeof(self[0]));
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(rows[i].name, self[i].name);
		assert_int_equal(rows[i].first, self[i].first);
		assert_int_equal(rows[i].second, self[i].second);
		assert_true(rows[i].first_pct > 100.0 * self[i].first / 39 - 0.01);
		assert_true(rows[i].first_pct < 100.0 * self[i].first / 39 + 0.01);
	}

	/* rec is on s1's stack three times but counted once: 10 + 5, not 30 + 5. */
	n = parse_table(out, "by total", rows, 16);
	assert_int_equal(n, sizeof(total) / sizeof(total[0]));
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(rows[i].name, total[i].name);
		assert_int_equal(rows[i].first, total[i].first);
		assert_int_equal(rows[i].second, total[i].second);
	}
	assert_true(rows[0].first_pct > 99.99);
	free(out);
	profile__free(p);
}

static void test_summary_top_n(void **state)
{
	struct profile *p = build();
	char *out = print_summary(p, 2), *none;
	struct row rows[16];

	(void)state;
	assert_int_equal(parse_table(out, "by self", rows, 16), 2);
	assert_string_equal(rows[1].name, "leaf");
	assert_int_equal(parse_table(out, "by total", rows, 16), 2);
	assert_string_equal(rows[1].name, "b");

	/* No tables at all when none are asked for. */
	none = print_summary(p, 0);
	assert_non_null(strstr(none, "Samples:"));
	assert_null(strstr(none, "by self"));
	free(none);
	free(out);
	profile__free(p);
}

/* The columns line up: every row of a table puts its name at the same column. */
static void test_summary_aligned(void **state)
{
	struct profile *p = build();
	char *out, *s;
	long column = -1;

	(void)state;
	/* A big count widens the numeric columns. */
	uint32_t big = add_loc(p, PROFILE_FRAME_NATIVE, "hot_function", NULL);
	assert_int_equal(profile__add_sample(p, &big, 1, 3, 3, "z", "z", 1234567), 0);
	out = print_summary(p, 10);
	s = strstr(out, "by total");
	assert_non_null(s);
	s = strchr(s, '\n') + 1;
	for (; *s && *s != '\n'; s = strchr(s, '\n') + 1) {
		const char *eol = strchr(s, '\n');
		const char *pct = s;
		long col;

		/* The name starts after the second "%  ". */
		for (int k = 0; k < 2; k++) {
			pct = strstr(pct, "%  ");
			assert_true(pct && pct < eol);
			pct += 3;
		}
		col = pct - s;
		if (column < 0)
			column = col;
		assert_int_equal(col, column);
	}
	assert_true(column > 0);
	free(out);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_summary_tables),
	    cmocka_unit_test(test_summary_top_n),
	    cmocka_unit_test(test_summary_aligned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
