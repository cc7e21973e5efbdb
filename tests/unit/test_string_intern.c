// SPDX-License-Identifier: Apache-2.0
/* The string interner: dense indices in first-seen order, one per distinct string. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/string_intern.h"

/* Borrowed strings: the same text (another buffer) gets the same index; order kept. */
static void test_dedup_and_order(void **state)
{
	struct string_intern t;
	char again[] = "main";

	(void)state;
	assert_int_equal(string_intern__init(&t, 0), 0);
	assert_int_equal(string_intern__add(&t, "main"), 0);
	assert_int_equal(string_intern__add(&t, "libc.so.6"), 1);
	assert_int_equal(string_intern__add(&t, again), 0);
	assert_int_equal(string_intern__add(&t, "mai"), 2);
	assert_int_equal(string_intern__add(&t, ""), 3); /* an ordinary string here */
	assert_int_equal(string_intern__add(&t, ""), 3);
	assert_int_equal(string_intern__add(&t, NULL), -EINVAL);
	assert_int_equal(string_intern__count(&t), 4);
	/* Borrowed: the stored pointer is the first caller's. */
	assert_string_equal(string_intern__at(&t, 0), "main");
	assert_ptr_not_equal(string_intern__at(&t, 0), again);
	assert_string_equal(string_intern__strings(&t)[1], "libc.so.6");
	assert_string_equal(string_intern__at(&t, 2), "mai");
	string_intern__free(&t);
	string_intern__free(NULL);
}

/* pprof's and OTLP's tables: "" (and NULL) is index 0 from the start. */
static void test_empty_zero(void **state)
{
	struct string_intern t;

	(void)state;
	assert_int_equal(string_intern__init(&t, STRING_INTERN_EMPTY_ZERO), 0);
	assert_int_equal(string_intern__count(&t), 1);
	assert_string_equal(string_intern__at(&t, 0), "");
	assert_int_equal(string_intern__add(&t, NULL), 0);
	assert_int_equal(string_intern__add(&t, ""), 0);
	assert_int_equal(string_intern__add(&t, "samples"), 1);
	assert_int_equal(string_intern__add(&t, "count"), 2);
	assert_int_equal(string_intern__add(&t, "samples"), 1);
	assert_int_equal(string_intern__count(&t), 3);
	/* Borrowed strings may not be length-bounded. */
	assert_int_equal(string_intern__add_len(&t, "samples", 3), -EINVAL);
	string_intern__free(&t);
}

/* Copies: the caller's buffer can change; texts of a length match their NUL-terminated twin. */
static void test_copy_and_len(void **state)
{
	struct string_intern t;
	char buf[32];
	const char *first;

	(void)state;
	assert_int_equal(string_intern__init(&t, STRING_INTERN_COPY), 0);
	strcpy(buf, "ext4");
	assert_int_equal(string_intern__add(&t, buf), 0);
	first = string_intern__at(&t, 0);
	strcpy(buf, "xfs");
	assert_string_equal(first, "ext4");
	assert_int_equal(string_intern__add(&t, buf), 1);
	/* "[ext4]" minus its brackets: the same text as "ext4". */
	assert_int_equal(string_intern__add_len(&t, "[ext4]" + 1, 4), 0);
	assert_int_equal(string_intern__add_len(&t, "ext4_extra", 4), 0);
	/* A prefix and an extension of a stored string are strings of their own. */
	assert_int_equal(string_intern__add_len(&t, "ext4", 3), 2);
	assert_string_equal(string_intern__at(&t, 2), "ext");
	assert_int_equal(string_intern__add(&t, "ext44"), 3);
	/* A NUL within len ends the text. */
	assert_int_equal(string_intern__add_len(&t, "xfs\0junk", 8), 1);
	assert_int_equal(string_intern__count(&t), 4);
	/* The pointer handed out first still holds its text after growth. */
	for (int i = 0; i < 1000; i++) {
		snprintf(buf, sizeof(buf), "module%d", i);
		assert_int_equal(string_intern__add(&t, buf), 4 + i);
	}
	assert_ptr_equal(string_intern__at(&t, 0), first);
	assert_string_equal(first, "ext4");
	assert_string_equal(string_intern__at(&t, 4 + 999), "module999");
	snprintf(buf, sizeof(buf), "module%d", 500);
	assert_int_equal(string_intern__add(&t, buf), 504);
	string_intern__free(&t);
}

/* Many distinct strings: each keeps its index through the index's growth. */
static void test_many(void **state)
{
	enum { N = 20000 };
	struct string_intern t;
	char buf[32];

	(void)state;
	assert_int_equal(string_intern__init(&t, STRING_INTERN_COPY | STRING_INTERN_EMPTY_ZERO), 0);
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "fn_%d", i);
		assert_int_equal(string_intern__add(&t, buf), 1 + i);
	}
	for (int i = N - 1; i >= 0; i--) {
		snprintf(buf, sizeof(buf), "fn_%d", i);
		assert_int_equal(string_intern__add(&t, buf), 1 + i);
		assert_string_equal(string_intern__at(&t, 1 + (size_t)i), buf);
	}
	assert_int_equal(string_intern__count(&t), N + 1);
	string_intern__free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dedup_and_order),
	    cmocka_unit_test(test_empty_zero),
	    cmocka_unit_test(test_copy_and_len),
	    cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
