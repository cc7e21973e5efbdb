// SPDX-License-Identifier: Apache-2.0
/*
 * The table manager against real BPF maps (root): a table loaded for libc
 * gives, read back from the maps, the rule the in-memory table has at every
 * address probed (what stacks unwound in user space rely on); a released
 * table stays loaded for the next process and is reused, not rebuilt; past
 * the budget the oldest unused table is unloaded. LPM entries: each pid
 * holds at most its budget, a range past it is refused whole (none of its
 * entries stay), others still get theirs, and the greediest pid is named; a
 * range known to be new is written in one batch with the same result, and a
 * process published again holds exactly its new ranges' entries.
 * A loaded table's pages (the deltas laid out in their own bytes) are
 * byte for byte delta_pages__build()'s tree of them, at one, two and three
 * levels.
 * A table read back from the cache (in leaf form, its rules local until the
 * load) leaves the maps as the table built and loaded does: the same pages,
 * table info and rule array, bit for bit, for tables loaded one after
 * another (their rules shared).
 * A build job that could not open its file leaves the table unknown (built
 * again through the next source) UNWIND_BUILD_REOPEN_TRIES - 1 times, then
 * it is remembered as failed.
 * Every change to the trie or table_info bumps the sampler's generation.
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
#include <unistd.h>

#include <bpf/bpf.h>
#include <cmocka.h>

#include "elf/elf_file.h"
#include "elf/file_id.h"
#include "unwind/stack_deltas.h"
#include "testutil.h"
#include "unwind/delta_pages.h"
#include "unwind/lpm_ranges.h"
#include "unwind/table_cache.h"
#include "unwind/unwind_maps.h"

/* The system's libc, found through the dynamic linker's cache. */
static const char *libc_path(void)
{
	static char path[512];

	if (!path[0] && tu_system_lib("libc.so.6", path, sizeof(path)))
		fail_msg("libc.so.6 is not in the dynamic linker's cache (ldconfig -p)");
	return path;
}
#define LIBC libc_path()

struct fixture {
	int fds[5]; /* mappings, tables, info, rules, inner template */
	struct unwind_maps um;
};

/* The maps of bpf/sampler.bpf.c, made by hand. Fails the test when BPF is missing. */
static void maps_create(struct fixture *fx)
{
	LIBBPF_OPTS(bpf_map_create_opts, lpm, .map_flags = BPF_F_NO_PREALLOC);
	LIBBPF_OPTS(bpf_map_create_opts, outer);
	LIBBPF_OPTS(bpf_map_create_opts, inner, .map_flags = BPF_F_INNER_MAP);

	fx->fds[0] = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "t_map", sizeof(struct op_mapping_key),
				    sizeof(struct op_mapping_value), 1024, &lpm);
	fx->fds[4] = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_inner", 4, sizeof(struct op_delta_page),
				    1, &inner);
	assert_true(fx->fds[0] >= 0 && fx->fds[4] >= 0);
	outer.inner_map_fd = fx->fds[4];
	fx->fds[1] = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "t_tables", 4, 4,
				    OP_MAX_DELTA_CHUNKS, &outer);
	fx->fds[2] = bpf_map_create(BPF_MAP_TYPE_HASH, "t_info", 8, sizeof(struct op_table_info),
				    1024, NULL);
	fx->fds[3] = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_rules", 4, sizeof(struct op_unwind_rule),
				    1 << 16, NULL);
	assert_true(fx->fds[1] >= 0 && fx->fds[2] >= 0 && fx->fds[3] >= 0);
	unwind_maps__init(&fx->um, fx->fds[0], fx->fds[1], fx->fds[2], fx->fds[3], 1 << 16);
}

static void maps_destroy(struct fixture *fx)
{
	unwind_maps__clear(&fx->um);
	for (int i = 0; i < 5; i++)
		close(fx->fds[i]);
}

/* The id the file cache gives ef's table: a table is loaded only under it. */
static uint64_t table_id_of(const struct elf_file *ef)
{
	uint8_t id[STACK_DELTAS_ID_LEN];

	assert_int_equal(stack_deltas__table_id(ef, id), 0);
	return file_id__from_htlhash(id);
}

static void test_rules_read_back_and_reuse(void **state)
{
	struct stack_delta_table t = {0};
	struct elf_file *libc = NULL, *other = NULL;
	struct op_table_info info;
	struct fixture fx;
	uint64_t id, other_id;
	char path[512];

	(void)state;
	maps_create(&fx);
	assert_int_equal(elf_file__open(LIBC, -1, &libc), 0);
	id = table_id_of(libc);
	assert_int_equal(stack_deltas__build(libc, &t), 0);
	assert_int_equal(unwind_maps__acquire(&fx.um, id, libc), 0);
	/* What the process table charges a process for it (its page share). */
	{
		uint32_t pages = 0;

		assert_true(unwind_maps__table_loaded(&fx.um, id, &pages));
		assert_int_equal(pages, fx.um.stats.pages_loaded);
		assert_false(unwind_maps__table_loaded(&fx.um, id ^ 1, &pages));
		assert_int_equal(pages, 0);
	}
	assert_int_equal(fx.um.stats.tables_loaded, 1);

	/* Every 97th delta, at its start and just before the next: the same rule. */
	for (size_t i = 0; i + 1 < t.n; i += 97) {
		uint64_t probes[] = {t.deltas[i].addr, t.deltas[i + 1].addr - 1};

		for (int k = 0; k < 2; k++) {
			struct op_unwind_rule r;

			assert_int_equal(unwind_maps__lookup_rule(&fx.um, id, probes[k], &r), 0);
			assert_memory_equal(&r, &t.deltas[i].rule, sizeof(r));
		}
	}
	/* Before the table: no rule. Not loaded: -ENOENT. */
	{
		struct op_unwind_rule r;

		assert_int_equal(unwind_maps__lookup_rule(&fx.um, id, t.deltas[0].addr - 1, &r), 0);
		assert_int_equal(r.cmd, OP_RULE_INVALID);
		assert_int_equal(unwind_maps__lookup_rule(&fx.um, id ^ 1, 0x1000, &r), -ENOENT);
	}

	/* Released: kept loaded, then reused without a rebuild. */
	unwind_maps__release(&fx.um, id);
	assert_int_equal(fx.um.stats.deltas_unused, fx.um.stats.deltas_loaded);
	assert_int_equal(bpf_map_lookup_elem(fx.fds[2], &id, &info), 0);
	assert_int_equal(unwind_maps__acquire(&fx.um, id, libc), 0);
	assert_int_equal(fx.um.stats.tables_loaded, 1);
	assert_int_equal(fx.um.stats.cache_hits, 1);
	assert_int_equal(fx.um.stats.deltas_unused, 0);

	/* With no budget, a released table is unloaded at once. */
	snprintf(path, sizeof(path), "%s/workloads/nofp_gcc", tu_build_dir());
	assert_int_equal(elf_file__open(path, -1, &other), 0);
	other_id = table_id_of(other);
	unwind_maps__release(&fx.um, id); /* libc unused, kept */
	fx.um.unused_budget = 0;
	assert_int_equal(unwind_maps__acquire(&fx.um, other_id, other), 0);
	unwind_maps__release(&fx.um, other_id);
	assert_int_equal(fx.um.stats.tables_unloaded, 2);
	assert_int_equal(fx.um.stats.deltas_loaded, 0);
	assert_int_equal(bpf_map_lookup_elem(fx.fds[2], &id, &info), -ENOENT);

	stack_delta_table__free(&t);
	elf_file__close(libc);
	elf_file__close(other);
	maps_destroy(&fx);
}

/* Entries really in the trie (walked with get_next_key). */
static uint32_t trie_entries(int fd)
{
	struct op_mapping_key key, next;
	uint32_t n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

/* Odd page-aligned ranges split into many prefixes: [start + 4K, start + 1M - 4K). */
static int add_odd_range(struct unwind_maps *um, uint32_t pid, uint64_t i)
{
	uint64_t base = 0x7f0000000000ull + i * (1ull << 20);

	return unwind_maps__add_range(um, pid, base + 0x1000, base + (1ull << 20) - 0x1000, 42, 0);
}

static void test_lpm_budget(void **state)
{
	struct fixture fx;
	uint32_t entries, before;
	uint64_t i;
	int err = 0;

	(void)state;
	maps_create(&fx);
	unwind_maps__set_capacity(&fx.um, 1024);
	assert_int_equal(fx.um.pid_budget, 64); /* 1024 / 32 = 32, raised to the minimum */
	for (i = 0; i < 100 && !err; i++)
		err = add_odd_range(&fx.um, 100, i);
	assert_int_equal(err, -EDQUOT);
	assert_int_equal(fx.um.stats.refused_pid_budget, 1);
	/* The refused range left nothing: the count is what the trie holds. */
	assert_true(unwind_maps__pid_entries(&fx.um, 100) <= 64);
	assert_int_equal(trie_entries(fx.fds[0]), unwind_maps__pid_entries(&fx.um, 100));
	assert_int_equal(fx.um.stats.mapping_entries, trie_entries(fx.fds[0]));
	/* Writing a range already there again costs nothing and is not refused. */
	before = unwind_maps__pid_entries(&fx.um, 100);
	assert_int_equal(add_odd_range(&fx.um, 100, 0), 0);
	assert_int_equal(unwind_maps__pid_entries(&fx.um, 100), before);
	/* Another pid has its own budget. */
	assert_int_equal(add_odd_range(&fx.um, 200, 0), 0);
	assert_int_equal(unwind_maps__greediest_pid(&fx.um, &entries), 100);
	assert_int_equal(entries, before);
	/* Removing a pid's ranges gives its entries back. */
	for (uint64_t j = 0; j < i; j++) {
		uint64_t base = 0x7f0000000000ull + j * (1ull << 20);

		unwind_maps__remove_range(&fx.um, 100, base + 0x1000, base + (1ull << 20) - 0x1000);
	}
	assert_int_equal(unwind_maps__pid_entries(&fx.um, 100), 0);
	assert_int_equal(unwind_maps__greediest_pid(&fx.um, &entries), 200);
	assert_int_equal(fx.um.stats.mapping_entries, trie_entries(fx.fds[0]));
	/* Many pids together reach the high-water mark (7/8 of 1024). */
	assert_false(unwind_maps__over_high_water(&fx.um));
	for (uint32_t pid = 300; pid < 330 && !unwind_maps__over_high_water(&fx.um); pid++)
		for (uint64_t j = 0; j < 100; j++)
			if (add_odd_range(&fx.um, pid, j))
				break;
	assert_true(unwind_maps__over_high_water(&fx.um));
	assert_int_equal(fx.um.stats.mapping_entries, trie_entries(fx.fds[0]));
	maps_destroy(&fx);
}

/* The value the trie gives for addr of pid (a full-length key), or -errno. */
static int trie_value(int fd, uint32_t pid, uint64_t addr, struct op_mapping_value *v)
{
	struct op_mapping_key key = {
	    .prefixlen = 96, .pid = pid, .addr_be = __builtin_bswap64(addr)};

	return bpf_map_lookup_elem(fd, &key, v) ? -errno : 0;
}

/*
 * A range known to be new goes in as one batch: the same entries and values
 * as block by block, counted the same; past the pid's budget it is refused
 * whole; when the trie fills during the batch none of the range's entries
 * stay; removed (in batches too), the counts go back to what the trie holds.
 */
static void test_lpm_new_range_batch(void **state)
{
	const uint64_t base = 0x7f0000000000ull, size = 1ull << 20;
	struct op_mapping_value a, b;
	struct fixture fx;
	uint32_t n, pid;
	uint64_t j;
	int err = 0;

	(void)state;
	maps_create(&fx);
	unwind_maps__set_capacity(&fx.um, 1024); /* 64 entries a pid */
	assert_int_equal(
	    unwind_maps__add_range(&fx.um, 100, base + 0x1000, base + size - 0x1000, 42, 7), 0);
	n = unwind_maps__pid_entries(&fx.um, 100);
	assert_true(n > 8);
	assert_int_equal(
	    unwind_maps__add_new_range(&fx.um, 200, base + 0x1000, base + size - 0x1000, 42, 7), 0);
	assert_false(fx.um.lpm_no_batch); /* this kernel took the batch */
	assert_int_equal(unwind_maps__pid_entries(&fx.um, 200), n);
	assert_int_equal(trie_entries(fx.fds[0]), 2 * n);
	assert_int_equal(fx.um.stats.mapping_entries, 2 * n);
	for (uint64_t addr = base + 0x1000; addr < base + size - 0x1000; addr += 0x7000) {
		assert_int_equal(trie_value(fx.fds[0], 100, addr, &a), 0);
		assert_int_equal(trie_value(fx.fds[0], 200, addr, &b), 0);
		assert_memory_equal(&a, &b, sizeof(a));
		assert_int_equal(b.table_id, 42);
		assert_int_equal(b.bias, 7);
	}
	assert_int_equal(trie_value(fx.fds[0], 200, base + size - 0x1000, &b), -ENOENT);
	assert_int_equal(trie_value(fx.fds[0], 200, base, &b), -ENOENT);

	/* Past the budget: refused whole, the count still what the trie holds. */
	for (j = 1; j < 100 && !err; j++)
		err = unwind_maps__add_new_range(&fx.um, 200, base + j * size + 0x1000,
						 base + (j + 1) * size - 0x1000, 42, 0);
	assert_int_equal(err, -EDQUOT);
	assert_true(unwind_maps__pid_entries(&fx.um, 200) <= 64);
	assert_int_equal(fx.um.stats.mapping_entries, trie_entries(fx.fds[0]));
	for (uint64_t k = 0; k < j; k++)
		unwind_maps__remove_range(&fx.um, 200, base + k * size + 0x1000,
					  base + (k + 1) * size - 0x1000);
	assert_int_equal(unwind_maps__pid_entries(&fx.um, 200), 0);
	assert_int_equal(unwind_maps__pid_entries(&fx.um, 100), n);
	assert_int_equal(fx.um.stats.mapping_entries, trie_entries(fx.fds[0]));

	/* The trie (1024 entries) fills during a batch: none of that range's entries stay. */
	unwind_maps__set_capacity(&fx.um, 1u << 20);
	err = 0;
	for (pid = 300; pid < 400 && !err; pid++)
		for (j = 0; j < 20 && !err; j++)
			err = unwind_maps__add_new_range(&fx.um, pid, base + j * size + 0x1000,
							 base + (j + 1) * size - 0x1000, 42, 0);
	assert_true(err == -ENOSPC || err == -E2BIG);
	assert_true(fx.um.stats.refused_map_full >= 1);
	assert_int_equal(fx.um.stats.mapping_entries, trie_entries(fx.fds[0]));
	assert_true(trie_entries(fx.fds[0]) < 1024);
	maps_destroy(&fx);
}

static bool no_owner(void *ctx, uint32_t pid, struct lpm_ranges *ranges, bool **evicted)
{
	(void)ctx;
	(void)pid;
	(void)ranges;
	(void)evicted;
	return false;
}

/* Every 0x3000th address of each range of r gives its value for pid; out of them, the
 * pid's marker. */
static void check_published(int fd, uint32_t pid, const struct lpm_range *r, size_t n, uint64_t lo,
			    uint64_t hi)
{
	struct op_mapping_value v;

	for (uint64_t addr = lo; addr < hi; addr += 0x3000) {
		size_t i = 0;

		while (i < n && !(addr >= r[i].start && addr < r[i].end))
			i++;
		if (i == n) {
			/* Only the pid's marker (no table, no range). */
			assert_int_equal(trie_value(fd, pid, addr, &v), 0);
			assert_int_equal(v.table_id, 0);
			assert_int_equal(v.end, 0);
			continue;
		}
		assert_int_equal(trie_value(fd, pid, addr, &v), 0);
		assert_int_equal(v.table_id, r[i].range_id);
		assert_int_equal(v.start, r[i].start);
		assert_int_equal(v.end, r[i].end);
		assert_int_equal(v.bias, r[i].bias);
	}
}

/*
 * A process published again (its maps re-read): ranges unchanged since the
 * last publish are not written again, new ones go in as batches, changed and
 * gone ones are replaced and withdrawn; the trie then holds exactly the new
 * list's entries and the counts are what it holds.
 */
static void test_lpm_publish_again(void **state)
{
	const uint64_t b = 0x7f0000000000ull;
	struct lpm_range r1[] = {
	    {b + 0x1000, b + 0x25000, 0, 11, 0},
	    {b + 0x40000, b + 0x93000, 0, 12, 0x1000},
	    {b + 0x100000, b + 0x171000, 0, 13, 0},
	};
	/* The first unchanged, the second's table changed, the third gone, one new. */
	struct lpm_range r2[] = {
	    {b + 0x1000, b + 0x25000, 0, 11, 0},
	    {b + 0x40000, b + 0x93000, 0, 22, 0x1000},
	    {b + 0x200000, b + 0x20b000, 0, 14, 0},
	};
	/* The first grown (overlapping its old self), the rest unchanged. */
	struct lpm_range r3[] = {
	    {b + 0x1000, b + 0x3a000, 0, 11, 0},
	    {b + 0x40000, b + 0x93000, 0, 22, 0x1000},
	    {b + 0x200000, b + 0x20b000, 0, 14, 0},
	};
	struct lpm_ranges o = {0}, n1 = {r1, 3, sizeof(r1[0])}, n2 = {r2, 3, sizeof(r2[0])},
			  n3 = {r3, 3, sizeof(r3[0])};
	struct lpm_owner owner = {.find = no_owner};
	struct lpm_range copy[3];
	struct lpm_ranges c = {copy, 3, sizeof(copy[0])};
	bool evicted = false;
	struct fixture fx;

	(void)state;
	maps_create(&fx);
	lpm_ranges__publish(&fx.um, 500, &n1, &o, &evicted, &owner);
	check_published(fx.fds[0], 500, r1, 3, b, b + 0x300000);
	assert_int_equal(fx.um.stats.mapping_entries, trie_entries(fx.fds[0]) - 1); /* + marker */
	assert_int_equal(unwind_maps__pid_entries(&fx.um, 500), fx.um.stats.mapping_entries);

	/* The same list again: nothing changes. */
	memcpy(copy, r1, sizeof(copy));
	lpm_ranges__publish(&fx.um, 500, &c, &n1, &evicted, &owner);
	check_published(fx.fds[0], 500, r1, 3, b, b + 0x300000);
	assert_int_equal(fx.um.stats.mapping_entries, trie_entries(fx.fds[0]) - 1);

	lpm_ranges__publish(&fx.um, 500, &n2, &n1, &evicted, &owner);
	check_published(fx.fds[0], 500, r2, 3, b, b + 0x300000);
	assert_int_equal(fx.um.stats.mapping_entries, trie_entries(fx.fds[0]) - 1);
	assert_int_equal(unwind_maps__pid_entries(&fx.um, 500), fx.um.stats.mapping_entries);

	lpm_ranges__publish(&fx.um, 500, &n3, &n2, &evicted, &owner);
	check_published(fx.fds[0], 500, r3, 3, b, b + 0x300000);
	assert_int_equal(fx.um.stats.mapping_entries, trie_entries(fx.fds[0]) - 1);
	assert_int_equal(unwind_maps__pid_entries(&fx.um, 500), fx.um.stats.mapping_entries);

	lpm_ranges__unpublish(&fx.um, 500, &n3);
	assert_int_equal(trie_entries(fx.fds[0]), 0);
	assert_int_equal(fx.um.stats.mapping_entries, 0);
	assert_false(evicted);
	maps_destroy(&fx);
}

/*
 * A table is loaded only under the id of the bytes it was built from: an id
 * computed before the file was rewritten (or any other id) is refused, so a
 * file's owner cannot swap its CFI between the hash and the build.
 */
static void test_table_only_under_its_own_id(void **state)
{
	struct elf_file *libc = NULL;
	struct fixture fx;
	uint64_t id;

	(void)state;
	maps_create(&fx);
	assert_int_equal(elf_file__open(LIBC, -1, &libc), 0);
	id = table_id_of(libc);
	assert_int_equal(unwind_maps__acquire(&fx.um, id ^ 0x5a, libc), -ESTALE);
	unwind_maps__release(&fx.um, id ^ 0x5a);
	assert_int_equal(fx.um.stats.tables_changed, 1);
	assert_int_equal(fx.um.stats.tables_loaded, 0);
	assert_int_equal(unwind_maps__acquire(&fx.um, id, libc), 0);
	assert_int_equal(fx.um.stats.tables_loaded, 1);
	unwind_maps__release(&fx.um, id);
	elf_file__close(libc);
	maps_destroy(&fx);
}

/* table_source.open: the process the file was to be opened through is gone. */
static int open_gone(void *ctx)
{
	(void)ctx;
	return -ENOENT;
}

static int open_path(void *ctx)
{
	int fd = open(ctx, O_RDONLY | O_CLOEXEC);

	return fd >= 0 ? fd : -errno;
}

/* Posts a build of id from path through open_fn and runs it here, as the worker would. */
static void build_once(struct unwind_maps *um, uint64_t id, const char *path, uint64_t size,
		       int (*open_fn)(void *ctx))
{
	struct table_source src = {
	    .path = strdup(path), .size = size, .open = open_fn, .ctx = (void *)path};
	struct table_build_job *j;

	assert_non_null(src.path);
	j = unwind_maps__build_job(um, id, &src);
	assert_non_null(j);
	assert_int_equal(unwind_maps__table_state(um, id), UNWIND_TABLE_BUILDING);
	j->job.run(&j->job);
	unwind_maps__finish_build(um, j, false);
	j->job.free(&j->job);
}

static void test_build_reopened_when_file_gone(void **state)
{
	struct elf_file *libc = NULL;
	struct fixture fx;
	uint32_t pages;
	uint64_t id;

	(void)state;
	maps_create(&fx);
	assert_int_equal(elf_file__open(LIBC, -1, &libc), 0);
	id = table_id_of(libc);
	/* Not opened: unknown again (no failure remembered), then built through a source that
	 * opens. */
	build_once(&fx.um, id, LIBC, libc->size, open_gone);
	assert_int_equal(unwind_maps__table_state(&fx.um, id), UNWIND_TABLE_UNKNOWN);
	assert_int_equal(fx.um.stats.builds_reopened, 1);
	assert_int_equal(fx.um.stats.tables_failed, 0);
	build_once(&fx.um, id, LIBC, libc->size, open_path);
	assert_int_equal(unwind_maps__table_state(&fx.um, id), UNWIND_TABLE_READY);
	assert_true(unwind_maps__table_loaded(&fx.um, id, &pages) && pages > 0);
	assert_int_equal(unwind_maps__acquire(&fx.um, id, NULL), 0);
	unwind_maps__release(&fx.um, id);
	/* Never opened: retried a bounded number of times, then a failure (frame pointers). */
	for (int i = 0; i < UNWIND_BUILD_REOPEN_TRIES; i++) {
		assert_int_not_equal(unwind_maps__table_state(&fx.um, id ^ 1), UNWIND_TABLE_READY);
		build_once(&fx.um, id ^ 1, LIBC, libc->size, open_gone);
	}
	assert_int_equal(unwind_maps__table_state(&fx.um, id ^ 1), UNWIND_TABLE_READY);
	assert_false(unwind_maps__table_loaded(&fx.um, id ^ 1, &pages));
	assert_int_equal(fx.um.stats.builds_reopened, 1 + UNWIND_BUILD_REOPEN_TRIES - 1);
	assert_int_equal(fx.um.stats.tables_failed, 1);
	elf_file__close(libc);
	maps_destroy(&fx);
}

/*
 * path's table as loaded (its deltas laid out as the pages' last level in
 * their own bytes, load_built) is, page for page and byte for byte, the tree
 * delta_pages__build() makes of the same deltas with the rule indexes the
 * load gave them; and each index names the delta's rule in the rule map.
 */
static void check_pages_as_built(const char *path, uint32_t want_levels)
{
	struct stack_delta_table t = {0};
	const struct op_table_info *info;
	struct op_table_info expect_info = {0};
	struct op_delta_page *got, *expect;
	struct elf_file *ef = NULL;
	uint32_t inner_id, n_pages, levels, leaves, upper;
	uint32_t *addr;
	uint16_t *rule;
	struct fixture fx;
	uint64_t id;
	int chunk_fd;

	maps_create(&fx);
	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	id = table_id_of(ef);
	assert_int_equal(stack_deltas__build(ef, &t), 0);
	assert_int_equal(unwind_maps__acquire(&fx.um, id, ef), 0);
	info = unwind_maps__table_info(&fx.um, id);
	assert_non_null(info);
	n_pages = delta_pages__count(t.n, &levels);
	assert_int_equal(levels, want_levels);
	assert_int_equal(info->n_levels, levels);
	leaves = (uint32_t)((t.n + OP_PAGE_DELTAS - 1) / OP_PAGE_DELTAS);
	upper = n_pages - leaves;
	assert_int_equal(bpf_map_lookup_elem(fx.fds[1], &info->chunk, &inner_id), 0);
	chunk_fd = bpf_map_get_fd_by_id(inner_id);
	assert_true(chunk_fd >= 0);
	got = calloc(n_pages, sizeof(*got));
	expect = calloc(n_pages, sizeof(*expect));
	addr = calloc(t.n, sizeof(*addr));
	rule = calloc(t.n, sizeof(*rule));
	assert_true(got && expect && addr && rule);
	for (uint32_t p = 0; p < n_pages; p++) {
		uint32_t key = info->level_first[0] + p;

		assert_int_equal(bpf_map_lookup_elem(chunk_fd, &key, &got[p]), 0);
	}
	for (size_t i = 0; i < t.n; i++) {
		struct op_unwind_rule r;
		uint32_t index;

		addr[i] = (uint32_t)(t.deltas[i].addr - info->base);
		rule[i] = got[upper + i / OP_PAGE_DELTAS].rule[i % OP_PAGE_DELTAS];
		index = rule[i];
		assert_int_equal(bpf_map_lookup_elem(fx.fds[3], &index, &r), 0);
		assert_memory_equal(&r, &t.deltas[i].rule, sizeof(r));
	}
	assert_int_equal(
	    delta_pages__build(addr, rule, t.n, info->level_first[0], expect, &expect_info), 0);
	assert_memory_equal(got, expect, (size_t)n_pages * sizeof(*got));
	assert_memory_equal(expect_info.level_first, info->level_first, sizeof(info->level_first));
	assert_int_equal(expect_info.n_levels, info->n_levels);
	free(rule);
	free(addr);
	free(expect);
	free(got);
	close(chunk_fd);
	unwind_maps__release(&fx.um, id);
	stack_delta_table__free(&t);
	elf_file__close(ef);
	maps_destroy(&fx);
}

/* gcc's cc1 into path (len bytes): a large stripped binary, the compiler loop's. */
static void cc1_path(char *path, size_t len)
{
	FILE *f = popen("gcc -print-prog-name=cc1", "r");

	assert_non_null(f);
	if (!fgets(path, (int)len, f))
		path[0] = 0;
	pclose(f);
	path[strcspn(path, "\n")] = 0;
	if (access(path, R_OK))
		fail_msg("gcc's cc1 (%s) is not readable", path);
}

/* One page smaller than its deltas' bytes (libdl's 20 deltas, 320 bytes: the
 * buffer grows first), two levels (libc), three (cc1, 478k deltas). */
static void test_pages_as_built(void **state)
{
	char path[512], cc1[512] = "";

	(void)state;
	cc1_path(cc1, sizeof(cc1));
	if (tu_system_lib("libdl.so.2", path, sizeof(path)))
		fail_msg("libdl.so.2 is not in the dynamic linker's cache (ldconfig -p)");
	check_pages_as_built(path, 1);
	check_pages_as_built(LIBC, 2);
	check_pages_as_built(cc1, 3);
}

/* The pages, table info and rules of the maps after loading paths[] in order. */
struct maps_image {
	struct op_table_info info[3];
	struct op_delta_page *pages[3];
	uint32_t n_pages[3];
	struct op_unwind_rule *rules;
	uint64_t n_rules;
};

static void load_all(struct table_cache *tc, const char *const paths[3], struct maps_image *img,
		     uint64_t *cache_reads)
{
	struct fixture fx;

	maps_create(&fx);
	unwind_maps__set_table_cache(&fx.um, tc);
	for (int k = 0; k < 3; k++) {
		const struct op_table_info *info;
		struct elf_file *ef = NULL;
		uint32_t inner_id;
		uint64_t id;
		int chunk_fd;

		assert_int_equal(elf_file__open(paths[k], -1, &ef), 0);
		id = table_id_of(ef);
		build_once(&fx.um, id, paths[k], ef->size, open_path);
		assert_int_equal(unwind_maps__acquire(&fx.um, id, NULL), 0);
		info = unwind_maps__table_info(&fx.um, id);
		assert_non_null(info);
		img->info[k] = *info;
		assert_true(unwind_maps__table_loaded(&fx.um, id, &img->n_pages[k]));
		assert_true(img->n_pages[k] > 0);
		img->pages[k] = calloc(img->n_pages[k], sizeof(struct op_delta_page));
		assert_non_null(img->pages[k]);
		assert_int_equal(bpf_map_lookup_elem(fx.fds[1], &info->chunk, &inner_id), 0);
		chunk_fd = bpf_map_get_fd_by_id(inner_id);
		assert_true(chunk_fd >= 0);
		for (uint32_t p = 0; p < img->n_pages[k]; p++) {
			uint32_t key = info->level_first[0] + p;

			assert_int_equal(bpf_map_lookup_elem(chunk_fd, &key, &img->pages[k][p]), 0);
		}
		close(chunk_fd);
		elf_file__close(ef);
	}
	img->n_rules = fx.um.stats.rules;
	img->rules = calloc(img->n_rules, sizeof(*img->rules));
	assert_non_null(img->rules);
	for (uint32_t i = 0; i < img->n_rules; i++)
		assert_int_equal(bpf_map_lookup_elem(fx.fds[3], &i, &img->rules[i]), 0);
	*cache_reads = fx.um.stats.cache_reads;
	maps_destroy(&fx);
}

static void test_cached_pages_as_built(void **state)
{
	char cc1[512] = "", libdl[512], dir[600];
	const char *paths[3] = {libdl, LIBC, cc1};
	struct maps_image built = {0}, cached = {0};
	struct table_cache *tc;
	uint64_t reads;
	char *tmp;

	(void)state;
	cc1_path(cc1, sizeof(cc1));
	if (tu_system_lib("libdl.so.2", libdl, sizeof(libdl)))
		fail_msg("libdl.so.2 is not in the dynamic linker's cache (ldconfig -p)");
	tmp = tu_mkdtemp();
	assert_non_null(tmp);
	snprintf(dir, sizeof(dir), "%s/cache", tmp);
	assert_int_equal(table_cache__open(dir, 0, &tc), 0);
	/* Built (and stored), then the same files read back: one, two, three levels. */
	load_all(tc, paths, &built, &reads);
	assert_int_equal(reads, 0);
	load_all(tc, paths, &cached, &reads);
	assert_int_equal(reads, 3);
	assert_int_equal(cached.n_rules, built.n_rules);
	assert_memory_equal(cached.rules, built.rules, built.n_rules * sizeof(*built.rules));
	for (int k = 0; k < 3; k++) {
		assert_memory_equal(&cached.info[k], &built.info[k], sizeof(built.info[k]));
		assert_int_equal(cached.n_pages[k], built.n_pages[k]);
		assert_memory_equal(cached.pages[k], built.pages[k],
				    (size_t)built.n_pages[k] * sizeof(struct op_delta_page));
		free(cached.pages[k]);
		free(built.pages[k]);
	}
	free(cached.rules);
	free(built.rules);
	table_cache__put(tc);
	tu_rmtree(tmp);
	free(tmp);
}

/*
 * Every change the BPF walks' kept mappings could depend on bumps the
 * generation (bpf/sampler.bpf.c walk_scratch__reset): a range written or
 * removed, a pid's marker written or removed, a table unloaded.
 */
static void test_generation_bumped(void **state)
{
	struct elf_file *ef = NULL;
	struct op_table_info info;
	struct fixture fx;
	uint64_t gen = 0, before, id;
	char path[512];

	(void)state;
	maps_create(&fx);
	unwind_maps__set_generation(&fx.um, &gen);
	before = gen;
	assert_int_equal(add_odd_range(&fx.um, 7, 0), 0);
	assert_true(gen > before);
	before = gen;
	assert_int_equal(unwind_maps__add_range(&fx.um, 7, 0x7f0000000000ull + 0x1000,
						0x7f0000000000ull + (1ull << 20) - 0x1000, 43, 0),
			 0); /* the same range rewritten */
	assert_true(gen > before);
	before = gen;
	assert_int_equal(
	    unwind_maps__add_new_range(&fx.um, 7, 0x7e0000000000ull, 0x7e0000010000ull, 42, 0), 0);
	assert_true(gen > before);
	before = gen;
	assert_int_equal(unwind_maps__add_pid(&fx.um, 7, 0), 0);
	assert_true(gen > before);
	before = gen;
	unwind_maps__remove_range(&fx.um, 7, 0x7e0000000000ull, 0x7e0000010000ull);
	assert_true(gen > before);
	before = gen;
	unwind_maps__remove_pid(&fx.um, 7);
	assert_true(gen > before);

	/* A table unloaded (no budget for unused ones): bumped, its info gone. */
	snprintf(path, sizeof(path), "%s/workloads/nofp_gcc", tu_build_dir());
	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	id = table_id_of(ef);
	fx.um.unused_budget = 0;
	assert_int_equal(unwind_maps__acquire(&fx.um, id, ef), 0);
	before = gen;
	unwind_maps__release(&fx.um, id);
	assert_int_equal(fx.um.stats.tables_unloaded, 1);
	assert_true(gen > before);
	assert_int_equal(bpf_map_lookup_elem(fx.fds[2], &id, &info), -ENOENT);

	elf_file__close(ef);
	maps_destroy(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rules_read_back_and_reuse),
	    cmocka_unit_test(test_pages_as_built),
	    cmocka_unit_test(test_cached_pages_as_built),
	    cmocka_unit_test(test_lpm_budget),
	    cmocka_unit_test(test_lpm_new_range_batch),
	    cmocka_unit_test(test_lpm_publish_again),
	    cmocka_unit_test(test_table_only_under_its_own_id),
	    cmocka_unit_test(test_build_reopened_when_file_gone),
	    cmocka_unit_test(test_generation_bumped),
	};

	return cmocka_run_group_tests_name("unwind_maps", tests, NULL, NULL);
}
