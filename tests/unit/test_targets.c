// SPDX-License-Identifier: Apache-2.0
/* Which processes are targets (src/engine/targets.c) and when kallsyms is hidden
 * (src/cli/checks.c): the rules, without BPF; and, on real BPF maps, that taking
 * a pid out of the filter bumps the generation the sampler's CPUs check. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/bpf.h>

#include "cli/cli.h"
#include "engine/targets.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_comm_and_container(void **state)
{
	struct targets t;
	struct targets_opts o = {.comm = "^(nginx|php-fpm)", .container = "0123"};

	(void)state;
	assert_int_equal(targets__init(&t, &o), 0);
	assert_true(targets__by_process(&t));
	assert_true(targets__report_all_execs(&t));
	/* A fork keeps its name and container: followed, checked again at its exec. */
	assert_true(targets__follow_children(&t));
	/* Every filter given must pass. */
	assert_true(targets__match(&t, 10, "nginx", ID, true));
	assert_true(targets__match(&t, 10, "php-fpm8.2", ID, true));
	assert_false(targets__match(&t, 10, "bash", ID, true));
	assert_false(targets__match(&t, 10, "nginx", "", true));
	assert_false(targets__match(&t, 10, "nginx", "f123", true));
	assert_false(targets__match(&t, 10, "xnginx", ID, true));
	targets__clear(&t);
	targets__clear(&t); /* twice: nothing left to free */
}

static void test_pids(void **state)
{
	static const uint32_t pids[] = {7, 9};
	struct targets t;
	struct targets_opts o = {.pids = pids, .n_pids = 2, .comm = "^a"};

	(void)state;
	assert_int_equal(targets__init(&t, &o), 0);
	/* -p names processes, not their children. */
	assert_false(targets__follow_children(&t));
	assert_true(targets__match(&t, 7, "abc", "", false));
	assert_false(targets__match(&t, 8, "abc", "", true));
	assert_false(targets__match(&t, 9, "bcd", "", true));
	targets__clear(&t);
}

static void test_command_tree(void **state)
{
	static const uint32_t pids[] = {100};
	struct targets t;
	struct targets_opts o = {.pids = pids, .n_pids = 1, .follow_children = true};

	(void)state;
	assert_int_equal(targets__init(&t, &o), 0);
	assert_true(targets__follow_children(&t));
	assert_false(targets__report_all_execs(&t));
	/* The tree decides (what descends from the command), not the pid list. */
	assert_true(targets__match(&t, 123, "make", "", true));
	assert_false(targets__match(&t, 100, "make", "", false));
	targets__clear(&t);
}

static void test_nothing(void **state)
{
	struct targets t;
	struct targets_opts o = {0};

	(void)state;
	assert_int_equal(targets__init(&t, &o), 0);
	assert_false(targets__by_process(&t));
	assert_false(targets__report_all_execs(&t));
	assert_false(targets__follow_children(&t));
	assert_true(targets__match(&t, 1, "init", "", false));
	targets__clear(&t);
}

static void test_bad_regex(void **state)
{
	struct targets t;
	struct targets_opts o = {.comm = "a("};

	(void)state;
	assert_int_equal(targets__init(&t, &o), -EINVAL);
	targets__clear(&t);
}

/* The kernel's kallsyms_show_value(), as checks.c reads it. */
static void test_kernel_symbols_hidden(void **state)
{
	(void)state;
	assert_false(cli__kernel_symbols_hidden(false, 0, 1));
	assert_true(cli__kernel_symbols_hidden(false, 0, -1)); /* paranoid unreadable */
	assert_true(cli__kernel_symbols_hidden(false, 0, 2));
	assert_false(cli__kernel_symbols_hidden(true, 0, 2));
	assert_true(cli__kernel_symbols_hidden(false, 1, 0));
	assert_false(cli__kernel_symbols_hidden(true, 1, 3));
	assert_true(cli__kernel_symbols_hidden(true, 2, 0));
}

static uint64_t generation(int fd)
{
	uint32_t zero = 0;
	uint64_t gen = ~0ull;

	assert_int_equal(bpf_map_lookup_elem(fd, &zero, &gen), 0);
	return gen;
}

/* The sampler remembers a pid found in pid_filter until pid_filter_gen changes
 * (bpf/sampler.bpf.c pid_wanted_cached): every delete must change it, nothing
 * else need. */
static void test_delete_bumps_generation(void **state)
{
	struct targets t;
	struct targets_opts o = {.comm = "^omniprof-none$"};
	uint32_t pid = 4000000, other = 4000001;
	uint8_t one = 1;
	int map = bpf_map_create(BPF_MAP_TYPE_HASH, "test_filter", 4, 1, 16, NULL);
	int gen = bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_filter_gen", 4, 8, 1, NULL);

	(void)state;
	/* Real maps: fails loudly without BPF (root). */
	assert_true(map >= 0);
	assert_true(gen >= 0);
	assert_int_equal(targets__init(&t, &o), 0);
	assert_true(targets__attach(&t, map, gen, NULL) >= 0);
	assert_int_equal(generation(gen), 0);
	/* In the map as a fork puts it (the sampler's on_fork): no bump needed. */
	assert_int_equal(bpf_map_update_elem(map, &pid, &one, BPF_ANY), 0);
	/* An exec to a name that does not match takes it out: a bump. */
	assert_false(targets__on_exec(&t, pid, "bash"));
	assert_true(bpf_map_lookup_elem(map, &pid, &one) < 0);
	assert_int_equal(generation(gen), 1);
	/* A pid that was not in the map: nothing deleted, no bump. */
	targets__on_exit(&t, other);
	assert_int_equal(generation(gen), 1);
	assert_int_equal(bpf_map_update_elem(map, &other, &one, BPF_ANY), 0);
	targets__on_exit(&t, other);
	assert_int_equal(generation(gen), 2);
	targets__clear(&t);
	close(map);
	close(gen);
}

/* A generation that cannot be read is not written (here: a generation map
 * without key 0): writing 0 would be a missed bump, or set it back to a value
 * the sampler's CPUs may meet again. */
static void test_unread_generation_not_written(void **state)
{
	struct targets t;
	struct targets_opts o = {.comm = "^omniprof-none$"};
	uint32_t pid = 4000000, zero = 0;
	uint64_t got;
	uint8_t one = 1;
	int map = bpf_map_create(BPF_MAP_TYPE_HASH, "test_filter", 4, 1, 16, NULL);
	int gen = bpf_map_create(BPF_MAP_TYPE_HASH, "test_filter_gen", 4, 8, 1, NULL);

	(void)state;
	/* Real maps: fails loudly without BPF (root). */
	assert_true(map >= 0);
	assert_true(gen >= 0);
	assert_int_equal(targets__init(&t, &o), 0);
	assert_true(targets__attach(&t, map, gen, NULL) >= 0);
	assert_int_equal(bpf_map_update_elem(map, &pid, &one, BPF_ANY), 0);
	targets__on_exit(&t, pid);
	assert_true(bpf_map_lookup_elem(map, &pid, &one) < 0);
	assert_true(bpf_map_lookup_elem(gen, &zero, &got) < 0);
	targets__clear(&t);
	close(map);
	close(gen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_comm_and_container),
	    cmocka_unit_test(test_pids),
	    cmocka_unit_test(test_command_tree),
	    cmocka_unit_test(test_nothing),
	    cmocka_unit_test(test_bad_regex),
	    cmocka_unit_test(test_kernel_symbols_hidden),
	    cmocka_unit_test(test_delete_bumps_generation),
	    cmocka_unit_test(test_unread_generation_not_written),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
