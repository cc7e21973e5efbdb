// SPDX-License-Identifier: Apache-2.0
/*
 * A deep-recursing compile (issue 17): Debian's cc1plus evaluating a
 * constexpr recursion 60 calls deep, each call several frames of the
 * compiler's own recursion (about 640 user frames a sample, past the
 * default --max-frames 256), recorded with --max-frames 1024 beside `perf
 * --call-graph dwarf` on the same process. At least 99% of cc1plus's
 * samples with user frames must start at the process's root (crt1's _start,
 * or the dynamic loader's entry while it loads the compiler) with no stop
 * marker; perf's figure is printed beside (its 8 KiB stack copies cannot
 * hold such stacks). Every sample that does not is printed by shape (its
 * stop, the outermost frame reached, BPF walk or stack copy:
 * tests/lib/folded_shapes.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile_sources.h"
#include "engine/collector.h"
#include "folded_shapes.h"
#include "perf_script.h"
#include "testutil.h"

#define EXEC_DELAY  "1.5" /* the recording's start-up passes before the compile starts */
#define SECONDS	    5	  /* recorded, EXEC_DELAY included; the compile takes about 1.5 s of CPU */
#define FREQUENCY   199
#define MIN_SAMPLES 100

#define STRINGIFY(x) #x
#define TO_STRING(x) STRINGIFY(x)

struct cc_count {
	long user;   /* samples with user frames */
	long rooted; /* ... starting at the root, no stop marker */
	long frames; /* user frames of those samples */
	long deep;   /* samples deeper than 256 user frames */
};

static bool is_kernel(const char *f, size_t len)
{
	return len > 4 && !strncmp(f + len - 4, "_[k]", 4);
}

/* A process's root: crt1's _start, or the loader's entry (unnamed: no .symtab). */
static bool is_root(const char *f, size_t len)
{
	return (len == 6 && !strncmp(f, "_start", 6)) || !strncmp(f, "ld-linux", 8);
}

static struct cc_count count_folded(const char *text, const char *comm)
{
	struct cc_count c = {0};
	size_t comm_len = strlen(comm);

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n'), *count_at, *stack, *semi, *f;
		size_t len = end ? (size_t)(end - line) : strlen(line);

		count_at = memrchr(line, ' ', len);
		if (count_at && len > comm_len && !strncmp(line, comm, comm_len) &&
		    line[comm_len] == ';') {
			long count = strtol(count_at + 1, NULL, 10), n = 0;
			bool marker = false, rooted;

			stack = line + comm_len + 1;
			semi = memchr(stack, ';', (size_t)(count_at - stack));
			if (!semi)
				semi = count_at;
			for (f = stack; f < count_at;) {
				const char *fe = memchr(f, ';', (size_t)(count_at - f));
				size_t flen = (size_t)((fe ? fe : count_at) - f);

				marker |= !strncmp(f, "[unwind", 7);
				n += !is_kernel(f, flen) && strncmp(f, "[unwind", 7);
				f = fe ? fe + 1 : count_at;
			}
			if (!is_kernel(stack, (size_t)(semi - stack)) || marker) {
				rooted = !marker && is_root(stack, (size_t)(semi - stack));
				c.user += count;
				c.frames += count * n;
				c.deep += n > 256 ? count : 0;
				c.rooted += rooted ? count : 0;
			}
		}
		line = end ? end + 1 : NULL;
	}
	return c;
}

/* perf's root: crt1's _start (perf names no frame of the loader's entry). */
static bool perf_is_root(const char *f, size_t len)
{
	return len == 6 && !strncmp(f, "_start", 6);
}

static double pct(long a, long b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

static void test_cc1plus_deep(void **state)
{
	char *dir = tu_mkdtemp(), src[600], perf_data[600], rec[600], folded[700], pids[64];
	char *cc1plus = NULL, *out = NULL, *text;
	struct cc_count c;
	pid_t pid, perf, idle;
	int in[2], status, rc;
	long perf_samples;
	double perf_share, perf_depth;

	(void)state;
	assert_non_null(dir);
	assert_int_equal(tu_run(&cc1plus, "g++ -print-prog-name=cc1plus"), 0);
	cc1plus[strcspn(cc1plus, "\n")] = '\0';
	assert_int_equal(access(cc1plus, X_OK), 0);
	snprintf(src, sizeof(src), "%s/deep.cc", dir);
	assert_int_equal(tu_write_file(src, deep_compile_src), 0);
	/* An idle cc1plus (reading its stdin), recorded too: the compiler's tables are
	 * built at the recording's start-up and found loaded when the compile execs. */
	assert_int_equal(pipe(in), 0);
	idle = fork();
	assert_true(idle >= 0);
	if (idle == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(in[0], STDIN_FILENO);
		close(in[1]);
		dup2(null, STDOUT_FILENO);
		execl(cc1plus, "cc1plus", "-quiet", "-", "-o", "/dev/null", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execl("/bin/sh", "sh", "-c", "sleep " EXEC_DELAY "; exec \"$0\" \"$@\"", cc1plus,
		      "-quiet", src, "-o", "/dev/null", (char *)NULL);
		_exit(127);
	}
	snprintf(perf_data, sizeof(perf_data), "%s/perf.data", dir);
	perf = fork();
	assert_true(perf >= 0);
	if (perf == 0) {
		char pid_s[16];
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
		execlp("perf", "perf", "record", "-q", "-F", TO_STRING(FREQUENCY), "--call-graph",
		       "dwarf", "-p", pid_s, "-o", perf_data, "--", "sleep", TO_STRING(SECONDS),
		       (char *)NULL);
		_exit(127);
	}
	snprintf(pids, sizeof(pids), "%d,%d", (int)pid, (int)idle);
	snprintf(rec, sizeof(rec), "%s/rec", dir);
	rc = tu_run(&out,
		    COLLECTOR_MARK_ORIGIN_ENV
		    "=1 %s/omniprof record -v --max-frames 1024 -p %s -d %d -F %d -o %s",
		    tu_build_dir(), pids, SECONDS, FREQUENCY, rec);
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	snprintf(folded, sizeof(folded), "%s/stacks.folded", rec);
	text = rc ? NULL : tu_read_file(folded, NULL);
	waitpid(perf, &status, 0);
	kill(pid, SIGKILL);
	tu_reap(pid);
	close(in[1]);
	kill(idle, SIGKILL);
	tu_reap(idle);
	perf_share = perf_script__rooted(perf_data, NULL, perf_is_root, &perf_samples, &perf_depth);
	tu_rmtree(dir);
	free(dir);
	free(cc1plus);
	free(out);
	assert_non_null(text);
	folded_shapes__print(text, "cc1plus", is_root, "    ");
	folded_shapes__strip(text);
	c = count_folded(text, "cc1plus");
	free(text);
	printf("    cc1plus: %ld of %ld samples with user frames start at the root (%.1f%%), "
	       "%ld deeper than 256 frames, %.1f frames a sample\n",
	       c.rooted, c.user, pct(c.rooted, c.user), c.deep,
	       c.user ? (double)c.frames / (double)c.user : 0);
	printf("    perf --call-graph dwarf on the same process: %.1f%% of %ld samples end at "
	       "_start (%.1f frames a sample)\n",
	       perf_share, perf_samples, perf_depth);
	fflush(stdout);
	assert_true(c.user >= MIN_SAMPLES);
	/* Deep stacks were sampled: the test is about them. */
	assert_true(c.deep * 2 >= c.user);
	assert_true(c.rooted * 100 >= c.user * 99);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cc1plus_deep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
