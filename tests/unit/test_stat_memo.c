// SPDX-License-Identifier: Apache-2.0
/*
 * Hashes computed once per unchanged file (util/stat_memo.h): a system
 * library's table id is computed once however often it is asked for; a file
 * written less than STAT_MEMO_RACY_NS ago is never remembered; a file
 * rewritten in place (same device and inode) is hashed again and gets the id
 * of its new bytes; a table cache file read back again skips its digest
 * until a byte of it changes, and then is refused. One wait of 2.1 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/elf_file.h"
#include "unwind/stack_deltas.h"
#include "unwind/table_cache.h"
#include "util/stat_memo.h"
#include "testutil.h"

/* The table id of the file at path (opened now). */
static void id_of(const char *path, uint8_t id[STACK_DELTAS_ID_LEN])
{
	struct elf_file *ef;

	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	assert_int_equal(stack_deltas__table_id(ef, id), 0);
	elf_file__close(ef);
}

/* Writes the content of src over dst in place (same inode). */
static void copy_over(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC),
	    out = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	char buf[65536];
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	assert_int_equal(ftruncate(out, 0), 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	close(out);
}

static void test_hashed_once_per_unchanged_file(void **state)
{
	uint8_t libc_id[STACK_DELTAS_ID_LEN], ld_id[STACK_DELTAS_ID_LEN], id[STACK_DELTAS_ID_LEN];
	char libc[512], ld[512], copy[600], cache_dir[600], name[40], cached[700];
	struct stack_delta_table t = {0}, back;
	struct stat_memo_stats s0, s1;
	struct table_cache *tc;
	struct elf_file *ef;
	char *dir = tu_mkdtemp();
	uint8_t byte;
	int fd;

	(void)state;
	assert_non_null(dir);
	stat_memo__reset();
	if (tu_system_lib("libc.so.6", libc, sizeof(libc)) ||
	    tu_system_lib("ld-linux-x86-64.so.2", ld, sizeof(ld)))
		fail_msg("libc or ld.so not in the dynamic linker's cache");

	/* A library unchanged for longer than the racy window: hashed once. */
	id_of(libc, libc_id);
	stat_memo__stats(&s0);
	assert_int_equal(s0.adds, 1);
	id_of(libc, id);
	id_of(libc, id);
	stat_memo__stats(&s1);
	assert_int_equal(s1.hits, s0.hits + 2);
	assert_int_equal(s1.adds, 1);
	assert_memory_equal(id, libc_id, sizeof(id));
	id_of(ld, ld_id);
	assert_memory_not_equal(ld_id, libc_id, sizeof(id));

	/* A copy written just now: computed, not remembered. */
	snprintf(copy, sizeof(copy), "%s/lib.so", dir);
	copy_over(libc, copy);
	id_of(copy, id);
	assert_memory_equal(id, libc_id, sizeof(id));
	stat_memo__stats(&s0);
	assert_int_equal(s0.adds, 2);

	/* A table cache file stored just now. */
	snprintf(cache_dir, sizeof(cache_dir), "%s/cache", dir);
	assert_int_equal(table_cache__open(cache_dir, 0, &tc), 0);
	assert_int_equal(elf_file__open(ld, -1, &ef), 0);
	assert_int_equal(stack_deltas__build(ef, &t), 0);
	elf_file__close(ef);
	assert_true(t.has_id && t.n > 100);
	assert_int_equal(table_cache__store(tc, &t), 0);
	assert_int_equal(table_cache__load(tc, t.id, &back), 0);
	stack_delta_table__free(&back);

	usleep((STAT_MEMO_RACY_NS + 100000000ull) / 1000);

	/* Now old enough: remembered once, then found. */
	id_of(copy, id);
	id_of(copy, id);
	stat_memo__stats(&s1);
	assert_int_equal(s1.adds, s0.adds + 1);
	assert_int_equal(s1.hits, s0.hits + 1);
	assert_memory_equal(id, libc_id, sizeof(id));

	/* Rewritten in place with another library's bytes: the same device and
	 * inode, never the remembered id. */
	copy_over(ld, copy);
	id_of(copy, id);
	assert_memory_equal(id, ld_id, sizeof(id));

	/* The cache file: digest checked and remembered, then skipped. */
	stat_memo__stats(&s0);
	assert_int_equal(table_cache__load(tc, t.id, &back), 0);
	assert_int_equal(back.n, t.n);
	stack_delta_table__free(&back);
	assert_int_equal(table_cache__load(tc, t.id, &back), 0);
	assert_memory_equal(back.deltas, t.deltas, t.n * sizeof(*t.deltas));
	stack_delta_table__free(&back);
	stat_memo__stats(&s1);
	assert_int_equal(s1.adds, s0.adds + 1);
	assert_int_equal(s1.hits, s0.hits + 1);

	/* One byte of a delta changed in place: checked again, refused. */
	table_cache__name(t.id, name);
	snprintf(cached, sizeof(cached), "%s/%s", cache_dir, name);
	fd = open(cached, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &byte, 1, 200), 1);
	byte ^= 0x5a;
	assert_int_equal(pwrite(fd, &byte, 1, 200), 1);
	close(fd);
	assert_int_equal(table_cache__load(tc, t.id, &back), -EBADMSG);

	table_cache__put(tc);
	stack_delta_table__free(&t);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hashed_once_per_unchanged_file),
	};

	return cmocka_run_group_tests_name("stat_memo", tests, NULL, NULL);
}
