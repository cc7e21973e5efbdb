// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end: load the real BPF sampler, profile a workload built by the test
 * suite (tests/workloads/fp_chain.c, frame pointers), and check that the
 * whole chain main -> chain_01 -> ... -> chain_24 -> leaf appears in order in
 * the leaf's samples, in stacks.folded and in the pprof file (read back by
 * `go tool pprof`). Each recording runs until fp_chain has had the CPU its
 * samples need (a fixed -d gave a starved fp_chain on a loaded host too few),
 * bounded: a host too loaded to give it that CPU in time fails the test,
 * saying so. Needs root and BPF: without them the tests fail.
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

/*
 * At least 20 leaf samples, 95% of them with the whole chain, and at least half the samples
 * fp_chain's CPU time while sampled makes at the frequency (`expected`): fewer would be samples
 * lost on the way (at load 12-22: 0.88-1.01 of it).
 */
static void assert_chain_share(struct chain_count c, const char *where, double expected)
{
	double share = c.leaf ? 100.0 * (double)c.complete / (double)c.leaf : 0;

	printf("    %s: %ld of %ld leaf samples have the full %zu-frame chain (%.1f%%); fp_chain's "
	       "CPU makes %.0f\n",
	       where, c.complete, c.leaf, chain_spec__len(expected_chain), share, expected);
	assert_true(c.leaf >= 20);
	assert_true(c.complete * 100 >= c.leaf * 95);
	assert_true((double)c.leaf * 2 >= expected);
}

/*
 * The most a recording waits for fp_chain's CPU: 3-4 s of it took 12-25 s of sampling at load
 * 7-11 on 2 CPUs, 83-112 s at load 20-22 (fp_chain had 3-4% of a CPU); past this the host is
 * too loaded for the test to say anything.
 */
#define RECORD_LIMIT_MS 180000
/* fp_chain's life (seconds) for those recordings: past the longest (start-up, the limit, the
 * writing); record_for_cpu ends it sooner. */
#define FP_CHAIN_LIFE 300

/*
 * Runs `omniprof record ARGS -o DIR` (args NULL-terminated, no -d; its output in dir/record.log)
 * until the workload pid has used cpu_s seconds of CPU since sampling began, then stops it
 * with sig (SIGINT, as Ctrl-C does, or SIGTERM) and waits for it to write its files. A fixed -d
 * records a workload for a wall-clock time: at load 12-17 on 2 CPUs fp_chain ran 1/7-1/9 of it and
 * whole-system's 3 s at 49 Hz held 16-19 leaf samples (all complete), fewer than the 20 the
 * test needs. Waiting on the workload's CPU gives the same samples at any load: on an idle host
 * as long as the -d it replaces. The workload is ended (tu_reap) once the recording stops, or
 * before the test fails: when omniprof does not start, the CPU does not come within
 * RECORD_LIMIT_MS or omniprof fails. *log_text (may be NULL) gets the log (caller frees); the
 * return value is the CPU seconds the workload used while sampled.
 */
static double record_for_cpu(pid_t pid, double cpu_s, const char *dir, const char *const *args,
			     int sig, char **log_text)
{
	const char *argv[TU_MAX_ARGS + 1];
	char log[1024];
	double used = -1;
	uint64_t start;
	bool enough;
	size_t n = 0;
	pid_t rec;
	int status;

	while (args[n] && n < TU_MAX_ARGS - 2)
		argv[n] = args[n], n++;
	argv[n++] = "-o";
	argv[n++] = dir;
	argv[n] = NULL;
	snprintf(log, sizeof(log), "%s/record.log", dir);
	rec = tu_omniprof_start(log, "record", argv);
	if (rec <= 0)
		tu_reap(pid);
	assert_true(rec > 0);
	if (!tu_wait_log(log, "sampling", 60000)) {
		tu_reap(rec);
		tu_reap(pid);
		tu_print_log("record", log);
		fail_msg("omniprof did not start sampling within 60 s");
	}
	start = tu_now_ms();
	enough = tu_wait_cpu(pid, cpu_s, RECORD_LIMIT_MS, &used);
	printf("    fp_chain used %.2f s of CPU in %.1f s of sampling (%.0f%% of a CPU)\n", used,
	       (double)(tu_now_ms() - start) / 1000.0,
	       100.0 * used * 1000.0 / (double)(tu_now_ms() - start + 1));
	kill(rec, sig);
	status = tu_wait_bounded(rec, 120000, 20, NULL);
	tu_reap(pid);
	if (!enough || !WIFEXITED(status) || WEXITSTATUS(status))
		tu_print_log("record", log);
	if (!enough)
		fail_msg(
		    "fp_chain had %.2f s of CPU in %d s of sampling (-1: it could not be read), "
		    "%.2f s needed: the host is too loaded for this test",
		    used, RECORD_LIMIT_MS / 1000, cpu_s);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	if (log_text)
		*log_text = tu_read_file(log, NULL);
	return used;
}

static void test_record_pid_folded_and_pprof(void **state)
{
	char *dir = tu_mkdtemp(), *out = NULL, *text, path[1024];
	pid_t pid = tu_workload_start("fp_chain", FP_CHAIN_LIFE);
	char pid_arg[16];
	const char *args[] = {"-p", pid_arg, "-F", "99", NULL};
	double expected;
	int rc;

	(void)state;
	assert_non_null(dir);
	assert_true(pid > 0);
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)pid);
	/* 4 s of fp_chain's CPU: what -d 4 recorded on an idle host. */
	expected = 99 * record_for_cpu(pid, 4.0, dir, args, SIGINT, &out);
	assert_non_null(out);
	assert_non_null(strstr(out, "leaf")); /* the terminal summary names the hot function */
	free(out);

	snprintf(path, sizeof(path), "%s/stacks.folded", dir);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	assert_chain_share(count_folded(text, "fp_chain"), "stacks.folded", expected);
	free(text);

	rc = tu_run(&out,
		    "HOME=%s GOCACHE=%s/gocache go tool pprof -sample_index=samples -traces "
		    "%s/profile.pb.gz",
		    dir, dir, dir);
	if (rc)
		print_error("go tool pprof failed (%d):\n%s\n", rc, out ? out : "");
	assert_int_equal(rc, 0);
	assert_chain_share(count_pprof_traces(out), "profile.pb.gz (go tool pprof -traces)",
			   expected);
	free(out);

	snprintf(path, sizeof(path), "%s/flamegraph.html", dir);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	assert_non_null(strstr(text, "chain_12"));
	free(text);
	tu_rmtree(dir);
	free(dir);
}

/*
 * The whole system recorded: other tests' fp_chain may run too, so this one runs under a comm
 * of its own (fp_chain through a symbolic link named for this test's pid, the name the kernel
 * takes as its comm) and only its samples are counted.
 */
static void test_record_whole_system(void **state)
{
	char *dir = tu_mkdtemp(), *text, path[1024], link[1100], comm[16], target[512], life[16];
	char *argv[] = {link, life, NULL};
	const char *args[] = {"-F", "49", NULL};
	double expected;
	pid_t pid;

	(void)state;
	assert_non_null(dir);
	snprintf(comm, sizeof(comm), "fpc-%d", (int)getpid());
	snprintf(link, sizeof(link), "%s/%s", dir, comm);
	snprintf(life, sizeof(life), "%d", FP_CHAIN_LIFE);
	assert_int_equal(tu_workload_path("fp_chain", target, sizeof(target)), 0);
	assert_int_equal(symlink(target, link), 0);
	pid = tu_spawn_ready(argv);
	assert_true(pid > 0);
	/* 3 s of fp_chain's CPU: what -d 3 recorded on an idle host. */
	expected = 49 * record_for_cpu(pid, 3.0, dir, args, SIGINT, NULL);
	snprintf(path, sizeof(path), "%s/stacks.folded", dir);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	assert_chain_share(count_folded(text, comm), "whole-system stacks.folded", expected);
	free(text);
	tu_rmtree(dir);
	free(dir);
}

/*
 * SIGTERM during a recording without -d: the files are still written. It is sent once fp_chain
 * has had 2 s of CPU while sampled (a sleep of 3 s did that on an idle host; at load 20 the
 * signal came before sampling started, or fp_chain had not run since).
 */
static void test_sigterm_still_writes(void **state)
{
	char *dir = tu_mkdtemp(), path[1024], *text, pid_arg[16];
	pid_t work = tu_workload_start("fp_chain", FP_CHAIN_LIFE);
	const char *args[] = {"-p", pid_arg, "-F", "99", NULL};

	(void)state;
	assert_non_null(dir);
	assert_true(work > 0);
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)work);
	record_for_cpu(work, 2.0, dir, args, SIGTERM, NULL);
	snprintf(path, sizeof(path), "%s/stacks.folded", dir);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	assert_true(count_folded(text, "fp_chain").leaf > 0);
	free(text);
	snprintf(path, sizeof(path), "%s/profile.pb.gz", dir);
	assert_int_equal(access(path, R_OK), 0);
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
