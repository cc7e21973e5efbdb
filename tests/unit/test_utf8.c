// SPDX-License-Identifier: Apache-2.0
/*
 * UTF-8 checking and repair (util/utf8.c): valid text passes as it is; each
 * byte that starts no valid sequence (a stray continuation, a truncated
 * sequence, an overlong form, a surrogate, above U+10FFFF) becomes U+FFFD.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "util/utf8.h"

static void test_valid_text(void **state)
{
	static const char *const ok[] = {
	    "", "fp_chain", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x94\xa5", "\xf4\x8f\xbf\xbf"};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char *c = utf8__sanitize(ok[i]);

		assert_true(utf8__valid(ok[i]));
		assert_non_null(c);
		assert_string_equal(c, ok[i]);
		free(c);
	}
}

static void test_invalid_bytes_become_replacement(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"/tmp/not-utf8-\xff\xfe-\xc3(/fp_chain",
	     "/tmp/not-utf8-\xef\xbf\xbd\xef\xbf\xbd-\xef\xbf\xbd(/fp_chain"},
	    {"\x80", "\xef\xbf\xbd"},				      /* stray continuation */
	    {"a\xe2\x82", "a\xef\xbf\xbd\xef\xbf\xbd"},		      /* truncated at the end */
	    {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},		      /* overlong '/' */
	    {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* surrogate */
	    {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *c = utf8__sanitize(cases[i].in);

		assert_false(utf8__valid(cases[i].in));
		assert_non_null(c);
		assert_string_equal(c, cases[i].out);
		assert_true(utf8__valid(c));
		free(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid_text),
	    cmocka_unit_test(test_invalid_bytes_become_replacement),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
