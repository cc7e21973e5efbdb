// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end: load the real BPF sampler, profile a workload built by the test
 * suite (tests/workloads/fp_chain.c, frame pointers), and check that the
 * whole chain main -> chain_01 -> ... -> chain_24 -> leaf appears in order in
 * the leaf's samples, in stacks.folded and in the pprof file (read back by
 * `go tool pprof`). Needs root and BPF: without them the tests fail.
 */
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

#include "testutil.h"

#define CHAIN_LEN 24

static char expected_chain[1024]; /* "main;chain_01;...;chain_24;leaf" */

static void build_expected_chain(void)
{
	size_t off = (size_t)snprintf(expected_chain, sizeof(expected_chain), "main");

	for (int i = 1; i <= CHAIN_LEN; i++)
		off += (size_t)snprintf(expected_chain + off, sizeof(expected_chain) - off,
					";chain_%02d", i);
	snprintf(expected_chain + off, sizeof(expected_chain) - off, ";leaf");
}

struct chain_count {
	long leaf;     /* samples whose stack contains the leaf function */
	long complete; /* ... and the whole chain in order above it */
};

/* A folded line's frames (between the comm and the count) contain `frame` as a whole frame. */
static bool has_frame(const char *line, size_t len, const char *frame)
{
	size_t flen = strlen(frame);

	for (const char *p = line; (p = memmem(p, len - (size_t)(p - line), frame, flen));
	     p += flen) {
		char before = p > line ? p[-1] : ';', after = p[flen];

		if (before == ';' && (after == ';' || after == ' '))
			return true;
	}
	return false;
}

static struct chain_count count_folded(const char *text, const char *comm)
{
	struct chain_count c = {0, 0};
	size_t comm_len = strlen(comm);

	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *sp = memrchr(line, ' ', len);
		long count = sp ? atol(sp + 1) : 0;

		if (len > comm_len && !strncmp(line, comm, comm_len) && line[comm_len] == ';' &&
		    has_frame(line, len, "leaf")) {
			c.leaf += count;
			const char *m = memmem(line, len, expected_chain, strlen(expected_chain));
			if (m && m[-1] == ';' &&
			    (m[strlen(expected_chain)] == ';' || m[strlen(expected_chain)] == ' '))
				c.complete += count;
		}
		line = nl ? nl + 1 : line + len;
	}
	return c;
}

/*
 * `go tool pprof -traces` prints one block per sample: a line with the count
 * and the leaf function, then one caller per line, separated by dashed lines.
 * Label lines ("comm:  fp_chain") come before the count line and are skipped.
 */
static struct chain_count count_pprof_traces(const char *text)
{
	struct chain_count c = {0, 0};
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
		if (strstr(stack, ";leaf") || !strncmp(stack, "leaf", 4)) {
			c.leaf += count;
			if (strstr(stack, expected_chain))
				c.complete += count;
		}
		block = next;
	}
	return c;
}

static char *omniprof(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/omniprof", tu_build_dir());
	return path;
}

static pid_t start_workload(int seconds)
{
	char path[512], secs[16];
	char *argv[] = {path, secs, NULL};

	snprintf(path, sizeof(path), "%s/workloads/fp_chain", tu_build_dir());
	snprintf(secs, sizeof(secs), "%d", seconds);
	return tu_spawn_ready(argv);
}

static void assert_chain_share(struct chain_count c, const char *where)
{
	double share = c.leaf ? 100.0 * (double)c.complete / (double)c.leaf : 0;

	printf("    %s: %ld of %ld leaf samples have the full 26-frame chain (%.1f%%)\n", where,
	       c.complete, c.leaf, share);
	assert_true(c.leaf >= 20);
	assert_true(c.complete * 100 >= c.leaf * 95);
}

static void test_record_pid_folded_and_pprof(void **state)
{
	char *dir = tu_mkdtemp(), *out = NULL, *text, path[1024];
	pid_t pid = start_workload(60);
	int rc;

	(void)state;
	assert_non_null(dir);
	assert_true(pid > 0);
	rc = tu_run(&out, "%s record -p %d -d 4 -F 99 -o %s", omniprof(), pid, dir);
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
	pid_t pid = start_workload(60);
	int rc;

	(void)state;
	assert_true(pid > 0);
	rc = tu_run(&out, "%s record -d 3 -F 49 -o %s", omniprof(), dir);
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
	pid_t work = start_workload(60), rec;
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
		execl(omniprof(), "omniprof", "record", "-p", pidarg, "-F", "99", "-o", dir, NULL);
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
	expect_failure("missing pid", "no such process", "%s record -d 1 -p 999999999", omniprof());
	expect_failure("unwritable output", "cannot write to output folder",
		       "%s record -d 1 -o /proc/omniprof-cannot-exist", omniprof());
	expect_failure("not root", "needs root",
		       "setpriv --reuid=65534 --regid=65534 --clear-groups %s record -d 1 -o /tmp",
		       omniprof());
	expect_failure("bad frequency", "-F", "%s record -F 0", omniprof());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clear_errors),
	    cmocka_unit_test(test_record_pid_folded_and_pprof),
	    cmocka_unit_test(test_record_whole_system),
	    cmocka_unit_test(test_sigterm_still_writes),
	};

	build_expected_chain();
	return cmocka_run_group_tests_name("e2e_record", tests, NULL, NULL);
}
