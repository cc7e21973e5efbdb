// SPDX-License-Identifier: Apache-2.0
/* The file hash (htlhash) against an independent computation with coreutils and perl;
 * the table id (a hash of the CFI) and the whole-image hash. */
#include <errno.h>
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

#include "elf/elf_file.h"
#include "elf/file_id.h"
#include "unwind/stack_deltas.h"
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

/* Flips one byte of section name of the ELF file path, in place (python3). */
static void flip_section_byte(const char *path, const char *name)
{
	assert_int_equal(
	    tu_run(NULL,
		   "python3 -c \"import struct,sys\n"
		   "b=bytearray(open(sys.argv[1],'rb').read())\n"
		   "o,=struct.unpack_from('<Q',b,0x28)\n"
		   "e,n,x=struct.unpack_from('<HHH',b,0x3a)\n"
		   "sh=lambda i: struct.unpack_from('<IIQQQQIIQQ',b,o+i*e)\n"
		   "st=sh(x)[4]\n"
		   "for i in range(n):\n"
		   "  h=sh(i)\n"
		   "  if bytes(b[st+h[0]:b.index(0,st+h[0])])==sys.argv[2].encode():\n"
		   "    b[h[4]+h[5]//2]^=0x55; open(sys.argv[1],'wb').write(b); sys.exit(0)\n"
		   "sys.exit(1)\" '%s' '%s'",
		   path, name),
	    0);
}

static uint64_t table_id_of(const char *path)
{
	uint8_t id[STACK_DELTAS_ID_LEN];
	struct elf_file *ef;
	uint64_t v;

	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	assert_int_equal(stack_deltas__table_id(ef, id), 0);
	v = file_id__from_htlhash(id);
	elf_file__close(ef);
	return v;
}

/*
 * The table id follows the CFI, not the file: a byte changed outside the
 * CFI (.comment) keeps it, a byte changed in the middle of .eh_frame (where
 * the htlhash does not look) changes it.
 */
static void test_table_id_follows_cfi(void **state)
{
	char *dir = tu_mkdtemp(), lib[512], same[600], other[600];
	uint8_t h_lib[FILE_ID_HTLHASH_LEN], h_other[FILE_ID_HTLHASH_LEN];
	uint64_t id;
	int fd;

	(void)state;
	assert_non_null(dir);
	snprintf(lib, sizeof(lib), "%s/workloads/lib/late_lib.so", tu_build_dir());
	snprintf(same, sizeof(same), "%s/same.so", dir);
	snprintf(other, sizeof(other), "%s/other.so", dir);
	assert_int_equal(tu_run(NULL, "cp %s %s && cp %s %s", lib, same, lib, other), 0);
	flip_section_byte(same, ".comment");
	flip_section_byte(other, ".eh_frame");
	id = table_id_of(lib);
	assert_true(id != 0);
	assert_true(table_id_of(same) == id);
	assert_true(table_id_of(other) != id);
	/* ... while the htlhash of the altered copy is the library's. */
	fd = open(lib, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(file_id__htlhash(fd, (uint64_t)lseek(fd, 0, SEEK_END), h_lib), 0);
	close(fd);
	fd = open(other, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(file_id__htlhash(fd, (uint64_t)lseek(fd, 0, SEEK_END), h_other), 0);
	close(fd);
	assert_memory_equal(h_lib, h_other, FILE_ID_HTLHASH_LEN);
	tu_rmtree(dir);
	free(dir);
}

/* The whole-image hash sees every byte. */
static void test_content_hash(void **state)
{
	char *dir = tu_mkdtemp(), path[512];
	uint8_t a[FILE_ID_HTLHASH_LEN], b[FILE_ID_HTLHASH_LEN];
	int fd;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/img", dir);
	assert_int_equal(tu_run(NULL, "head -c 20000 /dev/zero > %s", path), 0);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(file_id__content_hash(fd, 20000, a), 0);
	assert_int_equal(pwrite(fd, "x", 1, 10000), 1);
	assert_int_equal(file_id__content_hash(fd, 20000, b), 0);
	assert_memory_not_equal(a, b, FILE_ID_HTLHASH_LEN);
	assert_int_equal(file_id__content_hash(fd, FILE_ID_CONTENT_MAX + 1ull, b), -EFBIG);
	close(fd);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_htlhash_matches_coreutils),
	    cmocka_unit_test(test_htlhash_short_read_is_an_error),
	    cmocka_unit_test(test_table_id_follows_cfi),
	    cmocka_unit_test(test_content_hash),
	};

	return cmocka_run_group_tests_name("file_id", tests, NULL, NULL);
}
