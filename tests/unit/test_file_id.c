// SPDX-License-Identifier: Apache-2.0
/* The file hash (htlhash) against an independent computation with coreutils and perl. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/file_id.h"
#include "testutil.h"

static void check_size(size_t size)
{
	char *dir = tu_mkdtemp(), path[512], *expected = NULL, hex[33];
	uint8_t hash[FILE_ID_HTLHASH_LEN];
	FILE *f;
	int fd;

	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/data", dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	for (size_t i = 0; i < size; i++)
		fputc((int)((i * 2654435761u) >> 13) & 0xff, f);
	fclose(f);

	assert_int_equal(
	    tu_run(&expected,
		   "{ head -c 4096 '%s'; tail -c 4096 '%s'; perl -e 'print pack(\"Q>\", %zu)'; }"
		   " | sha256sum | cut -c1-32",
		   path, path, size),
	    0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(file_id__htlhash(fd, size, hash), 0);
	close(fd);
	file_id__hex(hash, hex);
	assert_memory_equal(hex, expected, 32);
	assert_true(file_id__from_htlhash(hash) != 0);
	free(expected);
	tu_rmtree(dir);
	free(dir);
}

static void test_htlhash_matches_coreutils(void **state)
{
	(void)state;
	check_size(1);
	check_size(100);
	check_size(4096);
	check_size(5000); /* head and tail overlap */
	check_size(100000);
}

static void test_htlhash_short_read_is_an_error(void **state)
{
	uint8_t hash[FILE_ID_HTLHASH_LEN];
	int fd = open("/dev/null", O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	/* A file that claims more bytes than it has (truncated under us). */
	assert_true(file_id__htlhash(fd, 10000, hash) < 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_htlhash_matches_coreutils),
	    cmocka_unit_test(test_htlhash_short_read_is_an_error),
	};

	return cmocka_run_group_tests_name("file_id", tests, NULL, NULL);
}
