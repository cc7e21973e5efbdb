// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/proc_maps.h"
#include "sampler/sampler.h"

static void test_parses_lines(void **state)
{
	const char text[] =
	    "55d4a0a00000-55d4a0a02000 r--p 00000000 fe:01 1312  /usr/bin/cat\n"
	    "55d4a0a02000-55d4a0a07000 r-xp 00002000 fe:01 1312  /usr/bin/cat\n"
	    "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
	    "7ffd1c5e0000-7ffd1c5e2000 r-xp 00000000 00:00 0                          [vdso]\n"
	    "7f1000000000-7f1000001000 r-xp 00000000 08:02 99 /tmp/a file with spaces (deleted)";
	struct proc_map *m;
	size_t n, skipped;

	(void)state;
	assert_int_equal(proc_maps__parse(text, strlen(text), &m, &n, &skipped), 0);
	assert_int_equal(n, 5);
	assert_int_equal(skipped, 0);
	assert_int_equal(m[1].start, 0x55d4a0a02000ull);
	assert_int_equal(m[1].end, 0x55d4a0a07000ull);
	assert_int_equal(m[1].offset, 0x2000);
	assert_int_equal(m[1].perms, PROC_MAP_R | PROC_MAP_X | PROC_MAP_P);
	assert_int_equal(m[1].dev_major, 0xfe);
	assert_int_equal(m[1].dev_minor, 1);
	assert_int_equal(m[1].inode, 1312);
	assert_string_equal(m[1].path, "/usr/bin/cat");
	assert_string_equal(m[2].path, "");
	assert_string_equal(m[3].path, "[vdso]");
	assert_string_equal(m[4].path, "/tmp/a file with spaces (deleted)");
	proc_maps__free(m, n);
}

static void test_skips_malformed_lines(void **state)
{
	const char text[] = "garbage\n"
			    "1000-2000 r-xp 0 00:00 0 ok\n"
			    "2000-1000 r-xp 0 00:00 0 end-before-start\n"
			    "10000000000000000-2 r-xp 0 0:0 0 too-long\n"
			    "3000-4000 r\n"
			    "\n"
			    "5000-6000 r-xp zz 00:00 0 bad-offset";
	struct proc_map *m;
	size_t n, skipped;

	(void)state;
	assert_int_equal(proc_maps__parse(text, strlen(text), &m, &n, &skipped), 0);
	assert_int_equal(n, 1);
	assert_int_equal(skipped, 5);
	assert_string_equal(m[0].path, "ok");
	proc_maps__free(m, n);
}

static void test_reads_own_maps(void **state)
{
	struct proc_map *m;
	size_t n;
	uintptr_t self = (uintptr_t)&test_reads_own_maps;
	bool found = false;

	(void)state;
	assert_int_equal(proc_maps__read(getpid(), &m, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (self >= m[i].start && self < m[i].end) {
			found = true;
			assert_true(m[i].perms & PROC_MAP_X);
		}
	assert_true(found);
	proc_maps__free(m, n);
	assert_int_equal(proc_maps__read(999999999, &m, &n), -ENOENT);
}

static void test_cpu_list(void **state)
{
	int cpus[16];

	(void)state;
	assert_int_equal(sampler__parse_cpu_list("0-3,5,7-8\n", cpus, 16), 7);
	assert_int_equal(cpus[4], 5);
	assert_int_equal(cpus[6], 8);
	/* An offline CPU leaves a hole; the max bounds the output. */
	assert_int_equal(sampler__parse_cpu_list("0,2-63", cpus, 16), 16);
	assert_int_equal(sampler__parse_cpu_list("3-1", cpus, 16), -EINVAL);
	assert_int_equal(sampler__parse_cpu_list("x", cpus, 16), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parses_lines),
	    cmocka_unit_test(test_skips_malformed_lines),
	    cmocka_unit_test(test_reads_own_maps),
	    cmocka_unit_test(test_cpu_list),
	};

	return cmocka_run_group_tests_name("proc_maps", tests, NULL, NULL);
}
