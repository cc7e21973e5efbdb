// SPDX-License-Identifier: Apache-2.0
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "symbol/frame_memo.h"

static void set_frame(struct sym_frame *f, const char *name, const char *file, int64_t line,
		      int inlined)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->system_name, sizeof(f->system_name), "_Z%s", name);
	f->file = file;
	f->line = line;
	f->inlined = inlined;
}

/* What goes in comes out: names, files (or none), lines, the inline chain. */
static void test_round_trip(void **state)
{
	struct frame_memo m;
	struct sym_frame in[2], out[4];
	char file[] = "/src/kern.h";

	(void)state;
	frame_memo__init(&m, 0);
	set_frame(&in[0], "kern::mix<unsigned long>", file, 42, 1);
	set_frame(&in[1], "hot_loop", NULL, 0, 0);
	assert_int_equal(frame_memo__get(&m, 7, 0x1234, out, 4), -1);
	assert_int_equal(frame_memo__put(&m, 7, 0x1234, in, 2), 0);
	/* The caller's strings may go away: the memo holds its own. */
	memset(file, 'x', sizeof(file) - 1);
	memset(out, 0, sizeof(out));
	assert_int_equal(frame_memo__get(&m, 7, 0x1234, out, 4), 2);
	assert_string_equal(out[0].name, "kern::mix<unsigned long>");
	assert_string_equal(out[0].system_name, "_Zkern::mix<unsigned long>");
	assert_string_equal(out[0].file, "/src/kern.h");
	assert_int_equal(out[0].line, 42);
	assert_int_equal(out[0].inlined, 1);
	assert_string_equal(out[1].name, "hot_loop");
	assert_null(out[1].file);
	assert_int_equal(out[1].inlined, 0);
	/* Other file, other address: not remembered. */
	assert_int_equal(frame_memo__get(&m, 8, 0x1234, out, 4), -1);
	assert_int_equal(frame_memo__get(&m, 7, 0x1235, out, 4), -1);
	/* At most max frames are copied. */
	assert_int_equal(frame_memo__get(&m, 7, 0x1234, out, 1), 1);
	/* An address nothing names is remembered as such. */
	assert_int_equal(frame_memo__put(&m, 7, 0x9999, NULL, 0), 0);
	assert_int_equal(frame_memo__get(&m, 7, 0x9999, out, 4), 0);
	assert_int_equal(m.stats.hits, 3);
	assert_int_equal(m.stats.misses, 3);
	frame_memo__clear(&m);
	assert_int_equal(frame_memo__get(&m, 7, 0x1234, out, 4), -1);
	frame_memo__clear(NULL);
}

/* Names that fill their arrays, terminated or not, come back whole and terminated. */
static void test_longest_names(void **state)
{
	struct frame_memo m;
	struct sym_frame in, out;

	(void)state;
	frame_memo__init(&m, 0);
	memset(&in, 0, sizeof(in));
	memset(in.name, 'a', sizeof(in.name)); /* no NUL at all */
	memset(in.system_name, 'b', sizeof(in.system_name) - 1);
	assert_int_equal(frame_memo__put(&m, 1, 1, &in, 1), 0);
	memset(&out, 0xff, sizeof(out));
	assert_int_equal(frame_memo__get(&m, 1, 1, &out, 1), 1);
	assert_int_equal(strlen(out.name), SYM_NAME_MAX - 1);
	assert_int_equal(strlen(out.system_name), SYM_NAME_MAX - 1);
	frame_memo__clear(&m);
}

/* The bound holds: past it, everything is forgotten and learned again. */
static void test_bound(void **state)
{
	struct frame_memo m;
	struct sym_frame in, out;

	(void)state;
	frame_memo__init(&m, 4096);
	set_frame(&in, "function_with_a_name", "/src/file.c", 1, 0);
	for (uint64_t a = 0; a < 1000; a++) {
		assert_int_equal(frame_memo__put(&m, 3, a, &in, 1), 0);
		assert_true(m.bytes <= m.limit);
	}
	assert_true(m.stats.resets > 0);
	assert_int_equal(frame_memo__get(&m, 3, 0, &out, 1), -1);
	assert_int_equal(frame_memo__get(&m, 3, 999, &out, 1), 1);
	frame_memo__clear(&m);
}

/* Forgetting a file forgets its addresses only. */
static void test_forget_file(void **state)
{
	struct frame_memo m;
	struct sym_frame in, out;
	size_t bytes_one_file;

	(void)state;
	frame_memo__init(&m, 0);
	set_frame(&in, "f", NULL, 0, 0);
	for (uint64_t a = 0; a < 300; a++)
		assert_int_equal(frame_memo__put(&m, 1, a, &in, 1), 0);
	bytes_one_file = m.bytes;
	for (uint64_t a = 0; a < 300; a++)
		assert_int_equal(frame_memo__put(&m, 2, a, &in, 1), 0);
	frame_memo__forget_file(&m, 1);
	assert_int_equal(m.bytes, bytes_one_file);
	for (uint64_t a = 0; a < 300; a++) {
		assert_int_equal(frame_memo__get(&m, 1, a, &out, 1), -1);
		assert_int_equal(frame_memo__get(&m, 2, a, &out, 1), 1);
	}
	frame_memo__clear(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_longest_names),
	    cmocka_unit_test(test_bound),
	    cmocka_unit_test(test_forget_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
