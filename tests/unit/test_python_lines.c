// SPDX-License-Identifier: Apache-2.0
/*
 * Python line tables (src/interp/python/python_lines.c): hand-built tables
 * of each format, then real ones: every interpreter found (Debian's
 * python3, pyenv's CPython 3 versions) compiles a function
 * with long jumps in lines and in bytecode, prints its line table and the
 * line `dis` gives each instruction, and each must match. The interpreters are
 * found through tests/lib (dpkg, pyenv), and missing ones fail the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "interp/python/python_layout.h"
#include "interp/python/python_lines.h"
#include "testutil.h"

#define NOT_STARTED 0xffffffffu

static void test_lnotab(void **state)
{
	/* (byte delta, line delta) from (0, 10): bytes 0-5 line 10, 6-13 line 11,
	 * 14-269 line 13 ((255, 0) (1, 0) spell a 256-byte step), 270-273 line 143
	 * ((0, 127) (0, 3): a 130-line step), then 140. */
	const uint8_t t[] = {6, 1, 8, 2, 255, 0, 1, 0, 0, 127, 0, 3, 4, (uint8_t)-3};

	(void)state;
	assert_int_equal(python_lines__find(PYTHON_LNOTAB, t, sizeof(t), 10, 0), 10);
	assert_int_equal(python_lines__find(PYTHON_LNOTAB, t, sizeof(t), 10, 5), 10);
	assert_int_equal(python_lines__find(PYTHON_LNOTAB, t, sizeof(t), 10, 6), 11);
	assert_int_equal(python_lines__find(PYTHON_LNOTAB, t, sizeof(t), 10, 14), 13);
	assert_int_equal(python_lines__find(PYTHON_LNOTAB, t, sizeof(t), 10, 269), 13);
	assert_int_equal(python_lines__find(PYTHON_LNOTAB, t, sizeof(t), 10, 270), 143);
	assert_int_equal(python_lines__find(PYTHON_LNOTAB, t, sizeof(t), 10, 274), 140);
	assert_int_equal(python_lines__find(PYTHON_LNOTAB, t, sizeof(t), 10, NOT_STARTED), 10);
}

static void test_linetable_310(void **state)
{
	/* Ranges in bytes: [0,4) 10, [4,10) 11, [10,12) no line, [12,16) 13. */
	const uint8_t t[] = {4, 0, 6, 1, 2, (uint8_t)-128, 4, 2};

	(void)state;
	/* The offset is f_lasti: code units (2 bytes). */
	assert_int_equal(python_lines__find(PYTHON_LINETABLE_310, t, sizeof(t), 10, 0), 10);
	assert_int_equal(python_lines__find(PYTHON_LINETABLE_310, t, sizeof(t), 10, 2), 11);
	assert_int_equal(python_lines__find(PYTHON_LINETABLE_310, t, sizeof(t), 10, 4), 11);
	assert_int_equal(python_lines__find(PYTHON_LINETABLE_310, t, sizeof(t), 10, 5), 10);
	assert_int_equal(python_lines__find(PYTHON_LINETABLE_310, t, sizeof(t), 10, 6), 13);
	assert_int_equal(python_lines__find(PYTHON_LINETABLE_310, t, sizeof(t), 10, 8), 10);
}

static void test_locations(void **state)
{
	const uint8_t t[] = {
	    0x80 | 13 << 3 | 1,
	    2, /* no columns, line +1, 2 units: 0-1 line 11 */
	    0x80 | 0 << 3 | 2,
	    5, /* short form, same line, 3 units: 2-4 line 11 */
	    0x80 | 11 << 3 | 0,
	    4,
	    9,			/* one line, +1, 1 unit: 5 line 12 */
	    0x80 | 15 << 3 | 0, /* no location, 1 unit: 6 */
	    0x80 | 14 << 3 | 1,
	    0x42,
	    0x02, /* long: line +(2 | 2 << 6) / 2 = +65, 2 units */
	    1,
	    2,
	    3, /* end line delta, column + 1, end column + 1 */
	    0x80 | 13 << 3 | 0,
	    0x05, /* no columns, line -2, 1 unit: 9 line 75 */
	};

	(void)state;
	assert_int_equal(python_lines__find(PYTHON_LOCATIONS_311, t, sizeof(t), 10, 0), 11);
	assert_int_equal(python_lines__find(PYTHON_LOCATIONS_311, t, sizeof(t), 10, 1), 11);
	assert_int_equal(python_lines__find(PYTHON_LOCATIONS_311, t, sizeof(t), 10, 4), 11);
	assert_int_equal(python_lines__find(PYTHON_LOCATIONS_311, t, sizeof(t), 10, 5), 12);
	assert_int_equal(python_lines__find(PYTHON_LOCATIONS_311, t, sizeof(t), 10, 6), 10);
	assert_int_equal(python_lines__find(PYTHON_LOCATIONS_311, t, sizeof(t), 10, 7), 77);
	assert_int_equal(python_lines__find(PYTHON_LOCATIONS_311, t, sizeof(t), 10, 9), 75);
	/* Past the end, or a table that does not parse: the first line. */
	assert_int_equal(python_lines__find(PYTHON_LOCATIONS_311, t, sizeof(t), 10, 10), 10);
	assert_int_equal(python_lines__find(PYTHON_LOCATIONS_311, t, 3, 10, 4), 10);
}

/* ---- against the interpreters' own tables -------------------------------------- */

/*
 * Prints "FIRSTLINE HEX" then "OFFSET LINE" per instruction of f, OFFSET in
 * the units the walker sends (bytes before 3.10, code units after).
 */
static const char probe[] =
    "import dis, sys\n"
    "v = sys.version_info\n"
    "src = 'def f(n):\\n    t = 0\\n' + '    # pad\\n' * 200 + "
    "'    for i in range(n):\\n        t += (i * 3 + 1) % 7\\n' + "
    "'    x = [' + ', '.join('i + %d' % k for k in range(150)) + ']\\n' + "
    "'    if t > 3:\\n        t -= 1\\n' + '\\n' * 300 + '    return (t,\\n        x)\\n'\n"
    "ns = {}\n"
    "exec(compile(src, 'p.py', 'exec'), ns)\n"
    "c = ns['f'].__code__\n"
    "tab = c.co_linetable if v >= (3, 10) else c.co_lnotab\n"
    "print(c.co_firstlineno, tab.hex())\n"
    "line = None\n"
    "for ins in dis.get_instructions(c):\n"
    "    if v >= (3, 11):\n"
    "        l = ins.positions.lineno\n"
    "    else:\n"
    "        if ins.starts_line is not None:\n"
    "            line = ins.starts_line\n"
    "        l = line\n"
    "    print(ins.offset // 2 if v >= (3, 10) else ins.offset, -1 if l is None else l)\n";

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Runs the probe with python (major.minor) and checks every instruction. */
static void check_interpreter(const char *python, unsigned int minor)
{
	const struct python_layout *l = python_layout__find(3, minor);
	char *out = NULL, *p, *nl;
	uint8_t *table;
	size_t n = 0, checked = 0;
	long first;
	FILE *f;
	char path[] = "/tmp/omniprof-probe-XXXXXX";
	int fd = mkstemp(path), rc;

	assert_non_null(l);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(probe, f);
	fclose(f);
	rc = tu_run(&out, "%s %s", python, path);
	unlink(path);
	assert_int_equal(rc, 0);
	assert_non_null(out);
	first = strtol(out, &p, 10);
	p++;
	nl = strchr(p, '\n');
	assert_non_null(nl);
	table = malloc((size_t)(nl - p) / 2 + 1);
	assert_non_null(table);
	for (; p + 1 < nl; p += 2)
		table[n++] = (uint8_t)(hexval(p[0]) << 4 | hexval(p[1]));
	for (p = nl + 1; *p; p = nl + 1) {
		long offset = strtol(p, &p, 10), line = strtol(p, &p, 10);

		nl = strchr(p, '\n');
		if (line >= 0) {
			int64_t got =
			    python_lines__find(l->line_table, table, n, first, (uint32_t)offset);

			if (got != line)
				fail_msg("%s: offset %ld: line %lld, dis says %ld", python, offset,
					 (long long)got, line);
			checked++;
		}
		if (!nl)
			break;
	}
	printf("    %s (3.%u): %zu instructions, %zu-byte table\n", python, minor, checked, n);
	assert_true(checked > 100);
	free(table);
	free(out);
}

static void test_debian_python(void **state)
{
	char python[1024];
	unsigned int minor = 0;

	(void)state;
	if (tu_distro_python(python, sizeof(python), &minor))
		fail_msg("no python3 of Debian's python3-minimal package (scripts/install-deps.sh "
			 "installs it)");
	check_interpreter(python, minor);
}

/*
 * Every pyenv CPython 3 the walker has a layout for; the versions the suite
 * requires (3.6-3.13: every layout) must all be there.
 */
static void test_pyenv_pythons(void **state)
{
	static char versions[32][64];
	char root[512], python[1024], missing[128];
	size_t n = tu_pyenv_versions(versions, 32, root, sizeof(root)), checked = 0;
	int n_missing = tu_pyenv_missing(missing, sizeof(missing));
	const char *opt_out = getenv("OMNIPROF_NO_PYENV");

	(void)state;
	if (n_missing)
		fail_msg("pyenv (root %s) has no CPython %s: the Python tests need 3.%d to 3.%d",
			 root, missing, TU_PYENV_FIRST_MINOR, TU_PYENV_LAST_MINOR);
	/* The required list covers every version the walker supports. */
	for (unsigned int minor = 0; minor < 64; minor++)
		if (python_layout__find(3, minor) &&
		    (minor < TU_PYENV_FIRST_MINOR || minor > TU_PYENV_LAST_MINOR))
			fail_msg("3.%u has a layout but tests/lib does not require it", minor);
	for (size_t i = 0; i < n; i++) {
		unsigned int minor = 0;

		sscanf(versions[i], "3.%u", &minor);
		if (!python_layout__find(3, minor)) {
			printf("    %s: no layout in the walker, not checked\n", versions[i]);
			continue;
		}
		snprintf(python, sizeof(python), "%.500s/versions/%.60s/bin/python3", root,
			 versions[i]);
		check_interpreter(python, minor);
		checked++;
	}
	if (!opt_out || strcmp(opt_out, "1"))
		assert_true(checked >= TU_PYENV_LAST_MINOR - TU_PYENV_FIRST_MINOR + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lnotab),	  cmocka_unit_test(test_linetable_310),
	    cmocka_unit_test(test_locations),	  cmocka_unit_test(test_debian_python),
	    cmocka_unit_test(test_pyenv_pythons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
