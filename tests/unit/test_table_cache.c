// SPDX-License-Identifier: Apache-2.0
/*
 * The disk cache of built tables (unwind/table_cache.c): a table read back is
 * the table stored; corrupt, foreign, truncated, symlinked, hard-linked or
 * another user's cache files are refused (and removed, the symlink's target
 * untouched); a folder open to others or a symlink is refused; writes replace
 * a symlink rather than follow it; the folder stays under its bound.
 * Read back in leaf form (table_cache__load_leaves), a table is its deltas'
 * addresses less the first and their rules through local indexes numbered in
 * order of first use, the last leaf padded; the files refused by the one
 * reader are refused by the other.
 * Tables are real: the system libc's and ld.so's, built by stack_deltas__build().
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
#include "unwind/delta_pages.h"
#include "unwind/stack_deltas.h"
#include "unwind/table_cache.h"
#include "testutil.h"

static struct {
	char *dir; /* a temporary folder; the cache is dir/cache */
	char cache[512];
	struct stack_delta_table libc, ld;
} fx;

static void build(const char *soname, struct stack_delta_table *t)
{
	char path[512];
	struct elf_file *ef;

	if (tu_system_lib(soname, path, sizeof(path)))
		fail_msg("%s is not in the dynamic linker's cache", soname);
	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	uint8_t id[STACK_DELTAS_ID_LEN];

	assert_int_equal(stack_deltas__build(ef, t), 0);
	assert_true(t->has_id);
	assert_true(t->n > 100);
	/* The id looked up before a build (sections read from the file in chunks)
	 * is the one the build computes from libelf's copies. */
	assert_int_equal(stack_deltas__table_id(ef, id), 0);
	assert_memory_equal(id, t->id, STACK_DELTAS_ID_LEN);
	elf_file__close(ef);
}

static int setup(void **state)
{
	(void)state;
	fx.dir = tu_mkdtemp();
	if (!fx.dir)
		return -1;
	snprintf(fx.cache, sizeof(fx.cache), "%s/cache", fx.dir);
	build("libc.so.6", &fx.libc);
	build("ld-linux-x86-64.so.2", &fx.ld);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	stack_delta_table__free(&fx.libc);
	stack_delta_table__free(&fx.ld);
	tu_rmtree(fx.dir);
	free(fx.dir);
	return 0;
}

static void path_of(const uint8_t *id, char *buf, size_t len)
{
	char name[40];

	table_cache__name(id, name);
	snprintf(buf, len, "%s/%s", fx.cache, name);
}

static void assert_same(const struct stack_delta_table *a, const struct stack_delta_table *b)
{
	assert_int_equal(a->n, b->n);
	assert_memory_equal(a->deltas, b->deltas, a->n * sizeof(*a->deltas));
	assert_memory_equal(a->id, b->id, STACK_DELTAS_ID_LEN);
	assert_true(b->has_id);
	assert_int_equal(a->stats.fdes, b->stats.fdes);
	assert_int_equal(a->stats.cies, b->stats.cies);
}

static struct table_cache *fresh_cache(uint64_t max_bytes)
{
	struct table_cache *tc;
	struct stat st;

	tu_rmtree(fx.cache);
	assert_int_equal(table_cache__open(fx.cache, max_bytes, &tc), 0);
	assert_int_equal(stat(fx.cache, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	return tc;
}

/* Stored, read back equal; an id never stored is a miss. */
static void test_round_trip(void **state)
{
	struct table_cache *tc = fresh_cache(0);
	struct stack_delta_table t;
	struct table_cache_stats st;
	uint8_t other[STACK_DELTAS_ID_LEN];

	(void)state;
	assert_int_equal(table_cache__load(tc, fx.libc.id, &t), -ENOENT);
	assert_int_equal(table_cache__store(tc, &fx.libc), 0);
	assert_int_equal(table_cache__load(tc, fx.libc.id, &t), 0);
	assert_same(&fx.libc, &t);
	stack_delta_table__free(&t);
	/* Again from a new handle (a new run). */
	table_cache__put(tc);
	assert_int_equal(table_cache__open(fx.cache, 0, &tc), 0);
	assert_int_equal(table_cache__load(tc, fx.libc.id, &t), 0);
	assert_same(&fx.libc, &t);
	stack_delta_table__free(&t);
	memcpy(other, fx.libc.id, sizeof(other));
	other[0] ^= 1;
	assert_int_equal(table_cache__load(tc, other, &t), -ENOENT);
	table_cache__stats(tc, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.refused, 0);
	table_cache__put(tc);
}

/* t read back in leaf form is t: see the file's comment. */
static void assert_leaves_are(const struct stack_delta_table *t, const struct delta_leaves *l,
			      const struct stack_delta_stats *stats)
{
	uint32_t next_new = 0;

	assert_int_equal(l->n, t->n);
	assert_int_equal(l->base, t->deltas[0].addr);
	assert_false(l->too_wide);
	assert_false(l->rules_full);
	assert_int_equal(stats->fdes, t->stats.fdes);
	assert_int_equal(stats->cies, t->stats.cies);
	assert_int_equal(stats->bad_entries, t->stats.bad_entries);
	for (size_t i = 0; i < t->n; i++) {
		const struct op_delta_page *page = &l->pages[i / OP_PAGE_DELTAS];
		uint16_t r = page->rule[i % OP_PAGE_DELTAS];

		assert_int_equal(page->addr[i % OP_PAGE_DELTAS], t->deltas[i].addr - l->base);
		assert_true(r < l->n_rules);
		assert_memory_equal(&l->rules[r], &t->deltas[i].rule, sizeof(l->rules[r]));
		/* Numbered in order of first use. */
		assert_true(r <= next_new);
		if (r == next_new)
			next_new++;
	}
	assert_int_equal(next_new, l->n_rules);
	for (size_t s = t->n % OP_PAGE_DELTAS; s && s < OP_PAGE_DELTAS; s++) {
		assert_int_equal(l->pages[t->n / OP_PAGE_DELTAS].addr[s], OP_DELTA_PAD);
		assert_int_equal(l->pages[t->n / OP_PAGE_DELTAS].rule[s], 0);
	}
}

/* Stored, read back in leaf form; a miss and the stats as for the deltas' reader. */
static void test_leaves_round_trip(void **state)
{
	struct table_cache *tc = fresh_cache(0);
	struct stack_delta_stats stats;
	struct table_cache_stats st;
	struct delta_leaves l;

	(void)state;
	assert_int_equal(table_cache__load_leaves(tc, fx.ld.id, &l, &stats), -ENOENT);
	assert_int_equal(table_cache__store(tc, &fx.libc), 0);
	assert_int_equal(table_cache__store(tc, &fx.ld), 0);
	/* The bytes reserved for it cover its leaves. */
	assert_true(table_cache__load_leaves_bytes(tc, fx.libc.id) >=
		    delta_leaves__bytes(fx.libc.n));
	for (int pass = 0; pass < 2; pass++) { /* checked, then read again unchecked */
		assert_int_equal(table_cache__load_leaves(tc, fx.libc.id, &l, &stats), 0);
		assert_leaves_are(&fx.libc, &l, &stats);
		delta_leaves__free(&l);
		assert_int_equal(table_cache__load_leaves(tc, fx.ld.id, &l, &stats), 0);
		assert_leaves_are(&fx.ld, &l, &stats);
		delta_leaves__free(&l);
	}
	table_cache__stats(tc, &st);
	assert_int_equal(st.hits, 4);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.refused, 0);
	table_cache__put(tc);
}

/* Rewrites the byte at off of path (from its end when off < 0). */
static void flip_byte(const char *path, long off)
{
	int fd = open(path, O_RDWR);
	struct stat st;
	uint8_t b;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	if (off < 0)
		off += st.st_size;
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static void assert_refused(struct table_cache *tc, const uint8_t *id, const char *path)
{
	struct stack_delta_table t;
	struct stat st;

	assert_int_equal(table_cache__load(tc, id, &t), -EBADMSG);
	assert_null(t.deltas);
	/* Removed, so the next build writes a good one. */
	assert_int_equal(lstat(path, &st), -1);
	assert_int_equal(errno, ENOENT);
}

/*
 * The file at path refused by both readers: a copy of it is put back after
 * the leaf reader removed it, for the deltas' reader (two refusals counted).
 */
static void assert_refused_both(struct table_cache *tc, const uint8_t *id, const char *path)
{
	struct stack_delta_stats stats;
	struct delta_leaves l;
	char copy[700];
	struct stat st;

	snprintf(copy, sizeof(copy), "%s.copy", fx.dir);
	assert_int_equal(tu_run(NULL, "cp '%s' '%s'", path, copy), 0);
	assert_int_equal(table_cache__load_leaves(tc, id, &l, &stats), -EBADMSG);
	assert_null(l.pages);
	assert_null(l.rules);
	assert_int_equal(lstat(path, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(rename(copy, path), 0);
	assert_refused(tc, id, path);
}

static void test_corrupt_refused(void **state)
{
	struct table_cache *tc = fresh_cache(0);
	struct table_cache_stats st;
	char path[600];

	(void)state;
	path_of(fx.libc.id, path, sizeof(path));
	/* A delta's byte, a header field (stats), the last byte; then truncations. */
	long offsets[] = {104 + 16 * 50 + 3, 40, -1};

	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		assert_int_equal(table_cache__store(tc, &fx.libc), 0);
		flip_byte(path, offsets[i]);
		assert_refused_both(tc, fx.libc.id, path);
	}
	assert_int_equal(table_cache__store(tc, &fx.libc), 0);
	assert_int_equal(truncate(path, 104 + 16 * 7), 0);
	assert_refused_both(tc, fx.libc.id, path);
	/* An empty file and one shorter than its header. */
	assert_int_equal(tu_run(NULL, ": > '%s'", path), 0);
	assert_refused_both(tc, fx.libc.id, path);
	table_cache__stats(tc, &st);
	assert_int_equal(st.refused, 10);
	assert_int_equal(st.hits, 0);
	table_cache__put(tc);
}

/*
 * Deltas out of order under a good digest (written by store, which trusts its
 * table) are refused: inside the first block read and across the boundary of
 * two (the file is read and checked 8192 deltas at a time).
 */
static void test_unsorted_refused(void **state)
{
	struct table_cache *tc = fresh_cache(0);
	struct stack_delta_table bad = fx.libc, t;
	size_t swaps[] = {10, 8191};
	char path[600];

	(void)state;
	assert_true(fx.libc.n > 8193);
	bad.deltas = malloc(bad.n * sizeof(*bad.deltas));
	assert_non_null(bad.deltas);
	path_of(fx.libc.id, path, sizeof(path));
	for (size_t i = 0; i < sizeof(swaps) / sizeof(swaps[0]); i++) {
		size_t at = swaps[i];
		uint64_t addr;

		memcpy(bad.deltas, fx.libc.deltas, bad.n * sizeof(*bad.deltas));
		addr = bad.deltas[at].addr;
		bad.deltas[at].addr = bad.deltas[at + 1].addr;
		bad.deltas[at + 1].addr = addr;
		assert_int_equal(table_cache__store(tc, &bad), 0);
		assert_refused_both(tc, fx.libc.id, path);
	}
	free(bad.deltas);
	/* The same table in order is read back whole, every block. */
	assert_int_equal(table_cache__store(tc, &fx.libc), 0);
	assert_int_equal(table_cache__load(tc, fx.libc.id, &t), 0);
	assert_same(&fx.libc, &t);
	stack_delta_table__free(&t);
	table_cache__put(tc);
}

/* A valid table under another table's name: its header names another id. */
static void test_foreign_refused(void **state)
{
	struct table_cache *tc = fresh_cache(0);
	char from[600], to[600];

	(void)state;
	assert_int_equal(table_cache__store(tc, &fx.ld), 0);
	path_of(fx.ld.id, from, sizeof(from));
	path_of(fx.libc.id, to, sizeof(to));
	assert_int_equal(rename(from, to), 0);
	assert_refused(tc, fx.libc.id, to);

	/* Another user's file, and one writable by others, even with good bytes. */
	assert_int_equal(table_cache__store(tc, &fx.libc), 0);
	assert_int_equal(chown(to, 65534, 65534), 0);
	assert_refused(tc, fx.libc.id, to);
	assert_int_equal(table_cache__store(tc, &fx.libc), 0);
	assert_int_equal(chmod(to, 0666), 0);
	assert_refused(tc, fx.libc.id, to);
	table_cache__put(tc);
}

static void test_links_refused(void **state)
{
	struct table_cache *tc = fresh_cache(0);
	struct stack_delta_table t;
	char path[600], target[600], link2[600];
	struct stat st;

	(void)state;
	path_of(fx.libc.id, path, sizeof(path));
	/* A symlink to a perfectly good table outside: refused, the target kept. */
	snprintf(target, sizeof(target), "%s/outside.tbl", fx.dir);
	assert_int_equal(table_cache__store(tc, &fx.libc), 0);
	assert_int_equal(rename(path, target), 0);
	assert_int_equal(symlink(target, path), 0);
	assert_refused(tc, fx.libc.id, path);
	assert_int_equal(stat(target, &st), 0);

	/* A hard link (someone else may hold the other name). */
	assert_int_equal(table_cache__store(tc, &fx.libc), 0);
	snprintf(link2, sizeof(link2), "%s/second-name", fx.dir);
	assert_int_equal(link(path, link2), 0);
	assert_refused(tc, fx.libc.id, path);

	/* Storing where a symlink points elsewhere replaces the link, not the target. */
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(table_cache__store(tc, &fx.ld), 0); /* another name */
	assert_int_equal(truncate(target, 0), 0);
	assert_int_equal(table_cache__store(tc, &fx.libc), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(table_cache__load(tc, fx.libc.id, &t), 0);
	assert_same(&fx.libc, &t);
	stack_delta_table__free(&t);
	table_cache__put(tc);
}

static void test_folder_refused(void **state)
{
	struct table_cache *tc = fresh_cache(0);
	char link_dir[600];

	(void)state;
	table_cache__put(tc);
	assert_int_equal(chmod(fx.cache, 0755), 0);
	assert_int_equal(table_cache__open(fx.cache, 0, &tc), -EPERM);
	assert_int_equal(chmod(fx.cache, 0700), 0);
	assert_int_equal(chown(fx.cache, 65534, 65534), 0);
	assert_int_equal(table_cache__open(fx.cache, 0, &tc), -EPERM);
	assert_int_equal(chown(fx.cache, 0, 0), 0);
	snprintf(link_dir, sizeof(link_dir), "%s/link", fx.dir);
	assert_int_equal(symlink(fx.cache, link_dir), 0);
	assert_int_equal(table_cache__open(link_dir, 0, &tc), -ELOOP);
	assert_null(tc);
}

/* The folder stays under its bound: the least recently used table goes. */
static void test_bound(void **state)
{
	uint64_t libc_bytes = 104 + fx.libc.n * sizeof(struct stack_delta);
	uint64_t ld_bytes = 104 + fx.ld.n * sizeof(struct stack_delta);
	struct table_cache *tc = fresh_cache(libc_bytes + ld_bytes / 2);
	struct stack_delta_table t;
	struct table_cache_stats st;

	(void)state;
	assert_int_equal(table_cache__store(tc, &fx.ld), 0);
	sleep(1); /* mtimes apart on any file system */
	assert_int_equal(table_cache__store(tc, &fx.libc), 0);
	assert_int_equal(table_cache__load(tc, fx.ld.id, &t), -ENOENT);
	assert_int_equal(table_cache__load(tc, fx.libc.id, &t), 0);
	stack_delta_table__free(&t);
	table_cache__stats(tc, &st);
	assert_int_equal(st.evicted, 1);
	table_cache__put(tc);
	/* A table larger than the whole bound is not written. */
	tc = fresh_cache(ld_bytes);
	assert_int_equal(table_cache__store(tc, &fx.libc), -EFBIG);
	table_cache__put(tc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),	     cmocka_unit_test(test_corrupt_refused),
	    cmocka_unit_test(test_foreign_refused),  cmocka_unit_test(test_links_refused),
	    cmocka_unit_test(test_folder_refused),   cmocka_unit_test(test_bound),
	    cmocka_unit_test(test_unsorted_refused), cmocka_unit_test(test_leaves_round_trip),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
