// SPDX-License-Identifier: Apache-2.0
/* -F parsing (src/cli/checks.c): the cap and what is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cli/cli.h"
#include "util/read_file.h"

static void test_accepts_up_to_the_max(void **state)
{
	uint32_t hz = 0;

	(void)state;
	assert_int_equal(cli__parse_frequency_max("1", 1000, "test", &hz), 0);
	assert_int_equal(hz, 1);
	assert_int_equal(cli__parse_frequency_max("99", 1000, "test", &hz), 0);
	assert_int_equal(hz, 99);
	assert_int_equal(cli__parse_frequency_max("1000", 1000, "test", &hz), 0);
	assert_int_equal(hz, 1000);
}

static void test_refuses_above_the_max(void **state)
{
	uint32_t hz = 7;

	(void)state;
	assert_int_equal(cli__parse_frequency_max("1001", 1000, "test", &hz), -ERANGE);
	assert_int_equal(cli__parse_frequency_max("100000", 1000, "test", &hz), -ERANGE);
	assert_int_equal(cli__parse_frequency_max("500", 250, "kernel", &hz), -ERANGE);
	/* Beyond long: strtol saturates and says ERANGE; still refused. */
	assert_int_equal(cli__parse_frequency_max("99999999999999999999999", 1000, "test", &hz),
			 -EINVAL);
	assert_int_equal(hz, 7); /* untouched on error */
}

static void test_refuses_garbage(void **state)
{
	static const char *const bad[] = {"0", "-1", "-1000", "", "abc", "10x", "1.5", " ", "0x10"};
	uint32_t hz = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(cli__parse_frequency_max(bad[i], 1000, "test", &hz), -EINVAL);
	assert_int_equal(hz, 7);
}

/* The real parser: the lower of omniprof's cap and the kernel's, read here too. */
static void test_real_limit(void **state)
{
	char *text = NULL, buf[32];
	size_t len;
	long kmax = CLI_MAX_FREQUENCY_HZ;
	uint32_t hz = 0, limit;

	(void)state;
	if (!read_file("/proc/sys/kernel/perf_event_max_sample_rate", &text, &len)) {
		kmax = strtol(text, NULL, 10);
		free(text);
	}
	limit = kmax > 0 && kmax < CLI_MAX_FREQUENCY_HZ ? (uint32_t)kmax : CLI_MAX_FREQUENCY_HZ;
	snprintf(buf, sizeof(buf), "%u", limit);
	assert_int_equal(cli__parse_frequency(buf, &hz), 0);
	assert_int_equal(hz, limit);
	snprintf(buf, sizeof(buf), "%u", limit + 1);
	assert_int_equal(cli__parse_frequency(buf, &hz), -ERANGE);
	assert_int_equal(cli__parse_frequency("100000", &hz), -ERANGE);
	assert_int_equal(cli__parse_frequency("0", &hz), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_accepts_up_to_the_max),
	    cmocka_unit_test(test_refuses_above_the_max),
	    cmocka_unit_test(test_refuses_garbage),
	    cmocka_unit_test(test_real_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
