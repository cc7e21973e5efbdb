// SPDX-License-Identifier: Apache-2.0
/* The log rate limit: a flood of one format gives LOG_BURST lines and one summary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/log.h"

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

static size_t count(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Runs fn with the log going to a memory buffer; returns what was written (caller frees). */
static char *capture(void (*fn)(void))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fake_now = 1000;
	log__set_output(f, fake_clock);
	fn();
	log__set_output(NULL, NULL);
	fclose(f);
	return buf;
}

static void flood(void)
{
	for (int i = 0; i < 2500; i++)
		pr_warn("cannot open /x/lib%d.so of pid %d", i, 42);
	assert_int_equal(log__suppressed_total(), 2500 - LOG_BURST);
	log__flush_suppressed();
	log__flush_suppressed(); /* nothing more to say */
}

static void test_flood_is_cut_to_burst_and_summary(void **state)
{
	char *out = capture(flood);

	(void)state;
	assert_int_equal(count(out, "warning: cannot open /x/lib"), LOG_BURST);
	assert_non_null(strstr(out, "cannot open /x/lib0.so of pid 42"));
	assert_null(strstr(out, "lib5.so"));
	assert_int_equal(count(out, "more like this suppressed"), 1);
	assert_non_null(strstr(out, "(2495 more like this suppressed: \"cannot open /x/lib%d.so"));
	free(out);
}

static void windows(void)
{
	/* 3 windows of 100 lines: each window prints LOG_BURST, the next one first says
	 * how many the previous held back. */
	for (int w = 0; w < 3; w++) {
		for (int i = 0; i < 100; i++)
			pr_err("window line %d", i);
		fake_now += LOG_WINDOW_NS;
	}
	/* Another format is limited on its own. */
	pr_err("other format");
}

static void test_windows_and_formats_are_separate(void **state)
{
	char *out = capture(windows);

	(void)state;
	assert_int_equal(count(out, "window line 0\n"), 3);
	assert_int_equal(count(out, "error: window line"), 3 * LOG_BURST);
	/* Two summaries came with the next windows' first lines; the last is still pending. */
	assert_int_equal(count(out, "(95 more like this suppressed"), 2);
	assert_int_equal(count(out, "other format"), 1);
	free(out);
}

static void quiet_levels(void)
{
	log_verbosity = 0;
	for (int i = 0; i < 100; i++)
		pr_info("hidden info %d", i);
	/* Lines the verbosity hides are not counted as suppressed. */
	assert_int_equal(log__suppressed_total(), 0);
	/* -vv: every debug line shows. */
	log_verbosity = 2;
	for (int i = 0; i < 20; i++)
		pr_debug("debug line %d", i);
	log_verbosity = 0;
	assert_int_equal(log__suppressed_total(), 0);
}

static void test_hidden_levels_not_counted(void **state)
{
	char *out = capture(quiet_levels);

	(void)state;
	assert_int_equal(count(out, "hidden info"), 0);
	assert_int_equal(count(out, "debug: debug line"), 20);
	free(out);
}

static void json_lines(void)
{
	log__set_format(LOG_FORMAT_JSON);
	pr_warn("file \"%s\" refused\tat\\%d", "/tmp/x\xff\xc3\xa9y\n", 7);
	pr_notice("started");
	for (int i = 0; i < 10; i++)
		pr_err("flood %d", i);
	log__flush_suppressed();
	log__set_format(LOG_FORMAT_PLAIN);
}

/* --log-format json: one object per line, hostile bytes escaped, valid UTF-8 kept. */
static void test_json_format(void **state)
{
	char *out = capture(json_lines), *line, *save = NULL;
	size_t n = 0;

	(void)state;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		size_t len = strlen(line);

		assert_true(len > 40);
		assert_memory_equal(line, "{\"time\":\"20", 11);
		/* "YYYY-MM-DDTHH:MM:SS.mmmZ" */
		assert_int_equal(line[19], 'T');
		assert_int_equal(line[32], 'Z');
		assert_string_equal(line + len - 2, "\"}");
		for (size_t i = 0; i < len; i++)
			assert_true((unsigned char)line[i] >= 0x20);
	}
	/* 1 warning, 1 notice, LOG_BURST errors, 1 summary */
	assert_int_equal(n, 3 + LOG_BURST);
	free(out);
	out = capture(json_lines);
	assert_non_null(
	    strstr(out, "\"level\":\"warn\",\"msg\":\"file \\\"/tmp/x\\ufffd\xc3\xa9y\\u000a\\\" "
			"refused\\u0009at\\\\7\"}\n"));
	assert_non_null(strstr(out, "\"level\":\"info\",\"msg\":\"started\"}\n"));
	assert_non_null(strstr(out, "\"level\":\"error\",\"msg\":\"flood 4\"}\n"));
	assert_non_null(
	    strstr(out, "\"msg\":\"(5 more like this suppressed: \\\"flood %d\\\")\"}"));
	free(out);
}

static void text_lines(void)
{
	log__set_format(LOG_FORMAT_TEXT);
	pr_warn("queue full");
	log_verbosity = 1;
	pr_info("interval %d", 3);
	log_verbosity = 0;
	log__set_format(LOG_FORMAT_PLAIN);
}

/* The agent's default: UTC timestamp with milliseconds, then the level's name. */
static void test_text_format(void **state)
{
	char *out = capture(text_lines);
	char *second;

	(void)state;
	assert_int_equal(strlen(out), 2 * 24 + strlen(" warn queue full\n info interval 3\n"));
	assert_memory_equal(out + 24, " warn queue full\n", 17);
	second = out + strcspn(out, "\n") + 1;
	assert_int_equal(out[23], 'Z');
	assert_int_equal(out[10], 'T');
	assert_string_equal(second + 24, " info interval 3\n");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flood_is_cut_to_burst_and_summary),
	    cmocka_unit_test(test_windows_and_formats_are_separate),
	    cmocka_unit_test(test_hidden_levels_not_counted),
	    cmocka_unit_test(test_json_format),
	    cmocka_unit_test(test_text_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
