// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end: the libraries omniprof opens only when a feature needs them
 * (util/dynlib.h) are not in a recording's address space unless it uses
 * them. A recording of a workload, with DEBUGINFOD_URLS set and
 * --no-debuginfod, maps none of libcurl, libdebuginfod, libmicrohttpd,
 * GnuTLS or libssl while it samples (its /proc/PID/maps, read mid-run); one
 * with --metrics-listen maps libmicrohttpd and serves the page through it.
 * The agent's side (libcurl mapped, profiles delivered) is in test_agent's
 * test_http. A library that is there but is not the one named (zlib under
 * libcurl's or libmicrohttpd's name, first on LD_LIBRARY_PATH) turns its
 * feature off with one error line, and no crash. Needs root and BPF.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "omniprof_run.h"
#include "testutil.h"

/* Libraries no plain recording needs: each brings its constructors and pages. */
static const char *const unused_libs[] = {
    "/libcurl.so", "/libcurl-gnutls.so", "/libdebuginfod", "/libgnutls", "/libssl.so",
};

static void assert_maps(pid_t pid, const char *lib, int want)
{
	int has = tu_maps_has(pid, lib);

	printf("    %s %smapped\n", lib, has ? "" : "not ");
	assert_int_equal(has, want);
}

/* Starts `record -p WORKLOAD -d 4 -o DIR/out EXTRA...`; returns its pid once it samples. */
static pid_t start_record(const char *dir, const char *log, pid_t wl, const char *extra1,
			  const char *extra2)
{
	char out[1100], pid_s[16];
	const char *args[] = {"-p", pid_s, "-d", "4", "-F", "99", "-o", out, extra1, extra2, NULL};
	pid_t rec;

	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(pid_s, sizeof(pid_s), "%d", wl);
	rec = tu_omniprof_start(log, "record", args);
	assert_true(rec > 0);
	if (!tu_wait_log(log, "sampling", 30000)) {
		tu_print_log("record log", log);
		fail_msg("record did not start sampling");
	}
	return rec;
}

static void wait_record(pid_t rec, const char *log)
{
	int status = tu_wait_bounded(rec, 60000, 100, NULL);

	tu_print_log("record log", log);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_record_maps_none(void **state)
{
	char *dir = tu_mkdtemp(), log[1100];
	pid_t wl, rec;

	(void)state;
	assert_non_null(dir);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	wl = tu_workload_start("fp_chain", 30);
	assert_true(wl > 0);
	/* A server named but refused: the library must not be opened for it. */
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:9", 1);
	rec = start_record(dir, log, wl, "--no-debuginfod", NULL);
	unsetenv("DEBUGINFOD_URLS");
	/* The maps are read at all: libbpf is linked. */
	assert_maps(rec, "/libbpf.so", 1);
	for (size_t i = 0; i < sizeof(unused_libs) / sizeof(unused_libs[0]); i++)
		assert_maps(rec, unused_libs[i], 0);
	assert_maps(rec, "/libmicrohttpd.so", 0);
	wait_record(rec, log);
	kill(wl, SIGKILL);
	tu_reap(wl);
	tu_rmtree(dir);
	free(dir);
}

static void test_record_metrics_maps_microhttpd(void **state)
{
	char *dir = tu_mkdtemp(), log[1100], listen[64], *page = NULL;
	int port = tu_free_port(), rc;
	pid_t wl, rec;

	(void)state;
	assert_non_null(dir);
	assert_true(port > 0);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	wl = tu_workload_start("fp_chain", 30);
	assert_true(wl > 0);
	rec = start_record(dir, log, wl, "--metrics-listen", listen);
	assert_maps(rec, "/libmicrohttpd.so", 1);
	assert_maps(rec, "/libcurl.so", 0);
	assert_maps(rec, "/libdebuginfod", 0);
	/* The page comes through the opened library (its format: test_fleet). */
	rc = tu_run(&page, "curl -sSf --max-time 5 http://%s/metrics", listen);
	assert_int_equal(rc, 0);
	assert_non_null(page);
	assert_non_null(strstr(page, "\nomniprof_"));
	free(page);
	wait_record(rec, log);
	kill(wl, SIGKILL);
	tu_reap(wl);
	tu_rmtree(dir);
	free(dir);
}

/* A folder where soname is zlib: dlopen succeeds, no symbol the table wants is there. */
static void fake_lib(const char *dir, const char *soname)
{
	char zlib[1024];

	assert_int_equal(tu_system_lib("libz.so.1", zlib, sizeof(zlib)), 0);
	TU_SH("cp '%s' '%s/%s'", zlib, dir, soname);
}

static int count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_agent_without_libcurl(void **state)
{
	char *dir = tu_mkdtemp(), *out = NULL;
	int rc;

	(void)state;
	assert_non_null(dir);
	fake_lib(dir, "libcurl.so.4");
	rc = tu_run(&out, "LD_LIBRARY_PATH=%s %s agent --otlp-endpoint http://127.0.0.1:1 2>&1",
		    dir, tu_omniprof_path());
	printf("    exit %d: %s", rc, out ? out : "(no output)\n");
	assert_int_equal(rc, 2); /* refused like any unusable option, not a crash */
	assert_non_null(out);
	assert_int_equal(count(out, "\n"), 1);
	assert_non_null(strstr(out, "cannot load libcurl"));
	assert_non_null(strstr(out, "curl_global_init"));
	free(out);
	tu_rmtree(dir);
	free(dir);
}

static void test_record_without_libmicrohttpd(void **state)
{
	char *dir = tu_mkdtemp(), *out = NULL;
	int port = tu_free_port(), rc;
	pid_t wl;

	(void)state;
	assert_non_null(dir);
	assert_true(port > 0);
	fake_lib(dir, "libmicrohttpd.so.12");
	wl = tu_workload_start("fp_chain", 30);
	assert_true(wl > 0);
	rc = tu_run(
	    &out,
	    "LD_LIBRARY_PATH=%s %s record -p %d -d 2 --metrics-listen 127.0.0.1:%d -o %s/out "
	    "2>&1",
	    dir, tu_omniprof_path(), wl, port, dir);
	printf("    exit %d: %s", rc, out ? out : "(no output)\n");
	assert_int_equal(rc, 1);
	assert_non_null(out);
	assert_int_equal(count(out, "cannot load libmicrohttpd"), 1);
	assert_non_null(strstr(out, "MHD_start_daemon"));
	free(out);
	kill(wl, SIGKILL);
	tu_reap(wl);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_record_maps_none),
	    cmocka_unit_test(test_record_metrics_maps_microhttpd),
	    cmocka_unit_test(test_agent_without_libcurl),
	    cmocka_unit_test(test_record_without_libmicrohttpd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
