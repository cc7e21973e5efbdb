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

#define DATA_OPEN "<script type=\"application/json\" id=\"profile-data\">"

static char *write_page(const struct profile *p, const char *title, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(flamegraph__write(p, f, title), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(buf);
	return buf;
}

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

/* The page's JSON as a new string (caller frees). */
static char *extract_json(const char *page)
{
	const char *start = strstr(page, DATA_OPEN), *end;
	char *json;

	assert_non_null(start);
	start += strlen(DATA_OPEN);
	end = strstr(start, "</script>");
	assert_non_null(end);
	json = strndup(start, (size_t)(end - start));
	assert_non_null(json);
	return json;
}

static uint64_t json_u64(const char *json, const char *key)
{
	char pat[64];
	const char *s;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	s = strstr(json, pat);
	assert_non_null(s);
	return strtoull(s + strlen(pat), NULL, 10);
}

struct page_tree {
	long long *v; /* 4 per node: name, kind, total, children */
	size_t n;
	char **names;
	size_t n_names;
	char **kinds;
	size_t n_kinds;
};

/* Parses a JSON string at *s (escapes limited to what the writer emits). */
static char *parse_string(const char **s)
{
	const char *p = *s;
	char *out = malloc(strlen(p) + 1), *o = out;

	assert_non_null(out);
	assert_int_equal(*p, '"');
	for (p++; *p != '"'; p++) {
		assert_int_not_equal(*p, '\0');
		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		p++;
		if (*p == 'u') {
			unsigned cp =
			    (unsigned)strtoul((char[5]){p[1], p[2], p[3], p[4], 0}, NULL, 16);

			*o++ = cp < 0x80 ? (char)cp : '?';
			p += 4;
		} else {
			*o++ = *p == 'n' ? '\n' : *p;
		}
	}
	*o = '\0';
	*s = p + 1;
	return out;
}

static char **parse_string_array(const char *json, const char *key, size_t *n)
{
	char pat[64];
	const char *s;
	char **arr = NULL;

	snprintf(pat, sizeof(pat), "\"%s\":[", key);
	s = strstr(json, pat);
	assert_non_null(s);
	s += strlen(pat);
	*n = 0;
	while (*s != ']') {
		arr = realloc(arr, (*n + 1) * sizeof(*arr));
		assert_non_null(arr);
		arr[(*n)++] = parse_string(&s);
		if (*s == ',')
			s++;
	}
	return arr;
}

static void parse_tree(const char *json, struct page_tree *t)
{
	const char *s = strstr(json, "\"nodes\":[");
	size_t cap = 0, count = 0;

	assert_non_null(s);
	s += strlen("\"nodes\":[");
	memset(t, 0, sizeof(*t));
	while (*s != ']') {
		char *end;

		if (count == cap) {
			cap = cap ? cap * 2 : 256;
			t->v = realloc(t->v, cap * sizeof(*t->v));
			assert_non_null(t->v);
		}
		t->v[count++] = strtoll(s, &end, 10);
		assert_true(end > s);
		s = *end == ',' ? end + 1 : end;
	}
	assert_int_equal(count % 4, 0);
	t->n = count / 4;
	t->names = parse_string_array(json, "names", &t->n_names);
	t->kinds = parse_string_array(json, "kinds", &t->n_kinds);
}

static void free_tree(struct page_tree *t)
{
	for (size_t i = 0; i < t->n_names; i++)
		free(t->names[i]);
	for (size_t i = 0; i < t->n_kinds; i++)
		free(t->kinds[i]);
	free(t->names);
	free(t->kinds);
	free(t->v);
}

/*
 * Checks the subtree at node *i (pre-order) and returns its total: every node's
 * total covers its children, names and kinds are valid indices.
 */
static long long check_subtree(const struct page_tree *t, size_t *i, size_t *max_depth,
			       size_t depth)
{
	size_t node = (*i)++;
	long long total = t->v[node * 4 + 2], sum = 0;

	assert_true(node < t->n);
	assert_true(t->v[node * 4] >= 0 && (size_t)t->v[node * 4] < t->n_names);
	assert_true(t->v[node * 4 + 1] >= 0 && (size_t)t->v[node * 4 + 1] < t->n_kinds);
	assert_true(total > 0);
	if (depth > *max_depth)
		*max_depth = depth;
	for (long long c = 0; c < t->v[node * 4 + 3]; c++)
		sum += check_subtree(t, i, max_depth, depth + 1);
	assert_true(sum <= total);
	return total;
}

/* Index of the child of node (pre-order index) called name, or -1. */
static long find_child(const struct page_tree *t, size_t node, const char *name)
{
	size_t i = node + 1;

	for (long long c = 0; c < t->v[node * 4 + 3]; c++) {
		size_t depth = 0, skip = i;

		if (!strcmp(t->names[t->v[i * 4]], name))
			return (long)i;
		/* Skip child i's subtree. */
		check_subtree(t, &skip, &depth, 0);
		i = skip;
	}
	return -1;
}

static uint32_t add_loc(struct profile *p, enum profile_frame_kind kind, const char *inner,
			const char *outer)
{
	struct profile_line lines[2] = {
	    {profile__add_function(p, inner, inner, ""), 0},
	    {outer ? profile__add_function(p, outer, outer, "") : 0, 0}};

	return profile__add_location(p, 0, (uintptr_t)inner, kind, lines, outer ? 2 : 1);
}

static void test_page_small(void **state)
{
	struct profile *p = profile__new(49);
	uint32_t main_loc, inl, kern, trunc, evil;
	struct page_tree t;
	size_t len, i = 0, depth = 0;
	char *page, *json;
	long n;

	(void)state;
	assert_non_null(p);
	main_loc = add_loc(p, PROFILE_FRAME_NATIVE, "main", NULL);
	inl = add_loc(p, PROFILE_FRAME_NATIVE, "helper", "work");
	kern = add_loc(p, PROFILE_FRAME_KERNEL, "ksys_read", NULL);
	trunc = add_loc(p, PROFILE_FRAME_ERROR, "truncated", NULL);
	evil = add_loc(p, PROFILE_FRAME_NATIVE, "x</script><script>alert(1)//", NULL);
	assert_true(main_loc && inl && kern && trunc && evil);

	const uint32_t s1[] = {kern, inl, main_loc};
	const uint32_t s2[] = {inl, trunc};
	const uint32_t s3[] = {evil, main_loc};
	assert_int_equal(profile__add_sample(p, s1, 3, 1, 1, "app", "app", 6), 0);
	assert_int_equal(profile__add_sample(p, s1, 3, 1, 2, "app", "app", 4), 0);
	assert_int_equal(profile__add_sample(p, s2, 2, 2, 2, "other", "other", 3), 0);
	assert_int_equal(profile__add_sample(p, s3, 2, 1, 1, "app", "app", 1), 0);
	p->stats.dropped = 7;

	page = write_page(p, "My <profile> & \"title\"", &len);
	assert_int_equal(strlen(page), len);
	assert_true(strncmp(page, "<!DOCTYPE html>", 15) == 0);
	assert_non_null(strstr(page, "</html>"));
	/* Self-contained: nothing fetched from anywhere. */
	assert_null(strstr(page, "http://"));
	assert_null(strstr(page, "https://"));
	assert_null(strstr(page, "<link"));
	assert_null(strstr(page, "<script src"));
	assert_null(strstr(page, "@import"));
	assert_null(strstr(page, "@@OMNIPROF"));
	/* Only the page's own two script elements end; hostile names cannot close one. */
	assert_int_equal(count_str(page, "</script>"), 2);

	json = extract_json(page);
	assert_null(strstr(json, "</"));
	assert_non_null(strstr(json, "\\u003c/script\\u003e"));
	assert_int_equal(json_u64(json, "total"), p->stats.samples);
	assert_int_equal(json_u64(json, "samples"), 14);
	assert_int_equal(json_u64(json, "dropped"), 7);
	assert_int_equal(json_u64(json, "frequencyHz"), 49);

	parse_tree(json, &t);
	assert_string_equal(t.names[t.v[0]], "all");
	assert_string_equal(t.kinds[t.v[1]], "root");
	assert_int_equal(check_subtree(&t, &i, &depth, 0), (long long)p->stats.samples);
	assert_int_equal(i, t.n);   /* the children counts describe exactly the array */
	assert_int_equal(depth, 5); /* all, app, main, work, helper, ksys_read_[k] */

	/* all → app → main → work → helper → ksys_read_[k], the two threads merged. */
	n = find_child(&t, 0, "app");
	assert_true(n > 0);
	assert_string_equal(t.kinds[t.v[n * 4 + 1]], "process");
	assert_int_equal(t.v[n * 4 + 2], 11);
	n = find_child(&t, (size_t)n, "main");
	assert_true(n > 0);
	n = find_child(&t, (size_t)n, "work");
	assert_true(n > 0);
	assert_int_equal(t.v[n * 4 + 2], 10);
	n = find_child(&t, (size_t)n, "helper");
	assert_true(n > 0);
	n = find_child(&t, (size_t)n, "ksys_read_[k]");
	assert_true(n > 0);
	assert_string_equal(t.kinds[t.v[n * 4 + 1]], "kernel");
	assert_int_equal(t.v[n * 4 + 2], 10);
	assert_int_equal(t.v[n * 4 + 3], 0);

	n = find_child(&t, 0, "other");
	assert_true(n > 0);
	n = find_child(&t, (size_t)n, "[truncated]");
	assert_true(n > 0);
	assert_string_equal(t.kinds[t.v[n * 4 + 1]], "error");
	assert_int_equal(t.v[n * 4 + 2], 3);

	/* The title travels as (escaped) JSON. */
	const char *title = strstr(json, "\"title\":");
	assert_non_null(title);
	title += strlen("\"title\":");
	char *decoded = parse_string(&title);
	assert_string_equal(decoded, "My <profile> & \"title\"");
	free(decoded);

	free_tree(&t);
	free(json);
	free(page);
	profile__free(p);
}

/* 100k samples over 5 processes x 10 x 10 x 10 distinct paths = 5,556 nodes. */
static void test_page_large(void **state)
{
	struct profile *p = profile__new(99);
	uint32_t locs[3][10];
	struct page_tree t;
	size_t len, i = 0, depth = 0;
	char *page, *json, name[64];

	(void)state;
	assert_non_null(p);
	for (int level = 0; level < 3; level++) {
		for (int k = 0; k < 10; k++) {
			snprintf(name, sizeof(name), "ns::level%d::function_number_%d", level, k);
			locs[level][k] = add_loc(p, PROFILE_FRAME_NATIVE, name, NULL);
			assert_int_not_equal(locs[level][k], 0);
		}
	}
	for (uint32_t s = 0; s < 100000; s++) {
		uint32_t stack[3] = {locs[2][(s / 500) % 10], locs[1][(s / 50) % 10],
				     locs[0][(s / 5) % 10]};
		char comm[16];

		snprintf(comm, sizeof(comm), "proc%u", s % 5);
		assert_int_equal(profile__add_sample(p, stack, 3, s % 5, s % 7, comm, comm, 1), 0);
	}

	page = write_page(p, "large", &len);
	json = extract_json(page);
	parse_tree(json, &t);
	assert_int_equal(t.n, 1 + 5 + 50 + 500 + 5000);
	assert_int_equal(check_subtree(&t, &i, &depth, 0), 100000);
	assert_int_equal(json_u64(json, "total"), 100000);
	assert_int_equal(t.n_names, 1 + 5 + 30);
	/* Compact: well under 100 bytes per node all included (template too). */
	assert_true(len < 5556 * 100);
	assert_true(strlen(json) < 5556 * 20);

	free_tree(&t);
	free(json);
	free(page);
	profile__free(p);
}

static void test_page_empty(void **state)
{
	struct profile *p = profile__new(99);
	struct page_tree t;
	size_t len;
	char *page, *json;

	(void)state;
	page = write_page(p, NULL, &len);
	json = extract_json(page);
	parse_tree(json, &t);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.v[2], 0);
	assert_non_null(strstr(json, "\"title\":\"omniprof\""));
	free_tree(&t);
	free(json);
	free(page);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_page_small),
	    cmocka_unit_test(test_page_large),
	    cmocka_unit_test(test_page_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
