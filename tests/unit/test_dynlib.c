// SPDX-License-Identifier: Apache-2.0
/*
 * util/dynlib: a library opened at first use fills its whole table or none
 * of it, and says what is missing. zlib stands for a real library (linked
 * anyway, so opening it again maps nothing new).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "util/curl_api.h"
#include "util/debuginfod_api.h"
#include "util/dynlib.h"
#include "util/mhd_api.h"

struct zlib_api {
	__typeof__(zlibVersion) *version;
	__typeof__(crc32) *crc32;
};

static void test_loads_every_symbol(void **state)
{
	struct zlib_api z = {0};
	const struct dynlib_sym syms[] = {{"zlibVersion", &z.version}, {"crc32", &z.crc32}};
	char why[256] = "";

	(void)state;
	assert_int_equal(dynlib__load("libz.so.1", syms, 2, why, sizeof(why)), 0);
	assert_non_null(z.version);
	/* The very functions the linked name reaches. */
	assert_string_equal(z.version(), zlibVersion());
	assert_int_equal(z.crc32(0, (const Bytef *)"omniprof", 8),
			 crc32(0, (const Bytef *)"omniprof", 8));
}

static void test_missing_symbol_leaves_nothing(void **state)
{
	struct zlib_api z = {0};
	const struct dynlib_sym syms[] = {{"zlibVersion", &z.version},
					  {"omniprof_no_such_function", &z.crc32}};
	char why[256] = "";

	(void)state;
	assert_int_equal(dynlib__load("libz.so.1", syms, 2, why, sizeof(why)), -ENOENT);
	assert_null(z.version); /* resolved, then taken back: the table is all or nothing */
	assert_null(z.crc32);
	assert_non_null(strstr(why, "omniprof_no_such_function"));
}

static void test_missing_library(void **state)
{
	struct zlib_api z = {0};
	const struct dynlib_sym syms[] = {{"zlibVersion", &z.version}};
	char why[256] = "";

	(void)state;
	assert_int_equal(dynlib__load("libomniprof-absent.so.9", syms, 1, why, sizeof(why)),
			 -ENOENT);
	assert_null(z.version);
	assert_non_null(strstr(why, "libomniprof-absent.so.9"));
}

/* The tables of the three libraries resolve on a machine with the build's dependencies. */
static void test_tables_resolve(void **state)
{
	const char *why = NULL;
	const struct curl_api *cu = curl_api__get(&why);
	const struct debuginfod_api *dfd = debuginfod_api__get(&why);
	const struct mhd_api *mhd = mhd_api__get(&why);

	(void)state;
	assert_non_null(cu);
	assert_non_null(dfd);
	assert_non_null(mhd);
	assert_null(why);
	assert_non_null(cu->easy_strerror(CURLE_OK));
	/* The same table every time. */
	assert_ptr_equal(curl_api__get(NULL), cu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loads_every_symbol),
	    cmocka_unit_test(test_missing_symbol_leaves_nothing),
	    cmocka_unit_test(test_missing_library),
	    cmocka_unit_test(test_tables_resolve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
