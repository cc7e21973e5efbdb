// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end: load the real BPF sampler, profile a workload built by the test
 * suite (tests/workloads/fp_chain.c, frame pointers), and check that the
 * whole chain main -> chain_01 -> ... -> chain_24 -> leaf appears in order in
 * the leaf's samples, in stacks.folded and in the pprof file (read back by
 * `go tool pprof`). Needs root and BPF: without them the tests fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "folded_check.h"
#include "omniprof_run.h"
#include "testutil.h"

/* main -> chain_01 -> ... -> chain_24 -> leaf, as fp_chain.c calls them. */
static struct chain_spec *expected_chain;

static int build_expected_chain(void)
{
	expected_chain = chain_spec__new();
	if (!expected_chain)
		return -ENOMEM;
	return chain_spec__add_fp_chain(expected_chain);
}

static struct chain_count count_folded(const char *text, const char *comm)
{
	return chain_spec__count_folded(expected_chain, text, comm);
}

/*
 * `go tool pprof -traces` prints one block per sample: a line with the count
 * and the leaf function, then one caller per line, separated by dashed lines.
 * Label lines ("comm:  fp_chain") come before the count line and are skipped.
 */
static struct chain_count count_pprof_traces(const char *text)
{
	struct chain_count c = {0};
	const char *block = strstr(text, "-----------+");

	while (block) {
		const char *next = strstr(block + 1, "-----------+");
		const char *end = next ? next : block + strlen(block);
		char stack[8192] = "";
		long count = 0;
		size_t off = 0;
		bool first = true;
		const char *line = strchr(block, '\n');

		for (line = line ? line + 1 : end; line && line < end;) {
			const char *nl = memchr(line, '\n', (size_t)(end - line));
			size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
			char buf[512], *fn;

			snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
			fn = buf;
			while (*fn == ' ')
				fn++;
			if (first) {
				if (*fn < '0' || *fn > '9') {
					line = nl ? nl + 1 : NULL;
					continue; /* a label */
				}
				count = strtol(fn, &fn, 10);
				while (*fn == ' ')
					fn++;
				first = false;
			}
			if (*fn && off < sizeof(stack) - 1) {
				/* Callers come after the leaf: build "root;...;leaf" by prepending.
				 */
				char tmp[8192];
				snprintf(tmp, sizeof(tmp), "%s%s%s", fn, off ? ";" : "", stack);
				off = (size_t)snprintf(stack, sizeof(stack), "%s", tmp);
			}
			line = nl ? nl + 1 : NULL;
		}
		if (chain_spec__has_leaf(expected_chain, stack, strlen(stack))) {
			c.leaf += count;
			if (chain_spec__matches(expected_chain, stack, strlen(stack)))
				c.complete += count;
		}
		block = next;
	}
	return c;
}

static void assert_chain_share(struct chain_count c, const char *where)
{
	double share = c.leaf ? 100.0 * (double)c.complete / (double)c.leaf : 0;

	printf("    %s: %ld of %ld leaf samples have the full %zu-frame chain (%.1f%%)\n", where,
	       c.complete, c.leaf, chain_spec__len(expected_chain), share);
	assert_true(c.leaf >= 20);
	assert_true(c.complete * 100 >= c.leaf * 95);
}

static void test_record_pid_folded_and_pprof(void **state)
{
	char *dir = tu_mkdtemp(), *out = NULL, *text, path[1024];
	pid_t pid = tu_workload_start("fp_chain", 60);
	int rc;

	(void)state;
	assert_non_null(dir);
	assert_true(pid > 0);
	rc = tu_run(&out, "%s record -p %d -d 4 -F 99 -o %s", tu_omniprof_path(), pid, dir);
	tu_reap(pid);
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "leaf")); /* the terminal summary names the hot function */
	free(out);

	snprintf(path, sizeof(path), "%s/stacks.folded", dir);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	assert_chain_share(count_folded(text, "fp_chain"), "stacks.folded");
	free(text);

	rc = tu_run(&out,
		    "HOME=%s GOCACHE=%s/gocache go tool pprof -sample_index=samples -traces "
		    "%s/profile.pb.gz",
		    dir, dir, dir);
	if (rc)
		print_error("go tool pprof failed (%d):\n%s\n", rc, out ? out : "");
	assert_int_equal(rc, 0);
	assert_chain_share(count_pprof_traces(out), "profile.pb.gz (go tool pprof -traces)");
	free(out);

	snprintf(path, sizeof(path), "%s/flamegraph.html", dir);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	assert_non_null(strstr(text, "chain_12"));
	free(text);
	tu_rmtree(dir);
	free(dir);
}

static void test_record_whole_system(void **state)
{
	char *dir = tu_mkdtemp(), *out = NULL, *text, path[1024];
	pid_t pid = tu_workload_start("fp_chain", 60);
	int rc;

	(void)state;
	assert_true(pid > 0);
	rc = tu_run(&out, "%s record -d 3 -F 49 -o %s", tu_omniprof_path(), dir);
	tu_reap(pid);
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	assert_int_equal(rc, 0);
	free(out);
	snprintf(path, sizeof(path), "%s/stacks.folded", dir);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	assert_chain_share(count_folded(text, "fp_chain"), "whole-system stacks.folded");
	free(text);
	tu_rmtree(dir);
	free(dir);
}

static void test_sigterm_still_writes(void **state)
{
	char *dir = tu_mkdtemp(), *out = NULL, path[1024], *text;
	pid_t work = tu_workload_start("fp_chain", 60), rec;
	int status;

	(void)state;
	assert_true(work > 0);
	rec = fork();
	assert_true(rec >= 0);
	if (rec == 0) {
		char pidarg[16];
		int null = open("/dev/null", 1);

		dup2(null, 1);
		dup2(null, 2);
		snprintf(pidarg, sizeof(pidarg), "%d", work);
		execl(tu_omniprof_path(), "omniprof", "record", "-p", pidarg, "-F", "99", "-o", dir,
		      NULL);
		_exit(127);
	}
	sleep(3);
	kill(rec, SIGTERM);
	assert_int_equal(waitpid(rec, &status, 0), rec);
	tu_reap(work);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	snprintf(path, sizeof(path), "%s/stacks.folded", dir);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	assert_true(count_folded(text, "fp_chain").leaf > 0);
	free(text);
	snprintf(path, sizeof(path), "%s/profile.pb.gz", dir);
	assert_int_equal(access(path, R_OK), 0);
	free(out);
	tu_rmtree(dir);
	free(dir);
}

static void expect_failure(const char *what, const char *must_say, const char *fmt, ...)
{
	char cmd[2048], *out = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = tu_run(&out, "%s", cmd);
	printf("    %s: exit %d: %s", what, rc, out ? out : "(no output)\n");
	assert_true(rc != 0);
	assert_non_null(out);
	assert_non_null(strstr(out, must_say));
	free(out);
}

static void test_clear_errors(void **state)
{
	(void)state;
	expect_failure("missing pid", "no such process", "%s record -d 1 -p 999999999",
		       tu_omniprof_path());
	expect_failure("unwritable output", "cannot write to output folder",
		       "%s record -d 1 -o /proc/omniprof-cannot-exist", tu_omniprof_path());
	expect_failure("not root", "needs root",
		       "setpriv --reuid=65534 --regid=65534 --clear-groups %s record -d 1 -o /tmp",
		       tu_omniprof_path());
	expect_failure("bad frequency", "-F", "%s record -F 0", tu_omniprof_path());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clear_errors),
	    cmocka_unit_test(test_record_pid_folded_and_pprof),
	    cmocka_unit_test(test_record_whole_system),
	    cmocka_unit_test(test_sigterm_still_writes),
	};

	int failed;

	if (build_expected_chain()) {
		fprintf(stderr, "test_record: out of memory\n");
		return 1;
	}
	failed = cmocka_run_group_tests_name("e2e_record", tests, NULL, NULL);
	chain_spec__free(expected_chain);
	return failed;
}
