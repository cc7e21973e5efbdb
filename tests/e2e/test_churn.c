// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end: a continuous session (as `omniprof agent` runs it, real BPF)
 * while many short-lived processes come and go, each from its own copy of a
 * program (a file of its own) and some running Python. After each profile
 * the tables must have let go of them: no entry for an exited child, no
 * file only children mapped beyond the few kept open, no Python code object
 * of an exited child, and an interval's traces within their bound. And
 * each child, when forgotten, still carries the path its exec event (the
 * kernel's) gave, which names it once /proc/PID/exe is gone. Counts, not
 * timing. Needs root and BPF: without them the test fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/session.h"
#include "proc/file_cache.h"
#include "interp/interp.h"
#include "profile/profile.h"
#include "testutil.h"

#define COPIES	     40	  /* distinct files, one process each */
#define ROUNDS	     2	  /* each copy runs this often */
#define CHILD_MS     "40" /* very_short's lifetime */
#define PY_CHILDREN  4
#define KEPT_UNUSED  4		 /* files no process maps kept open (session opts) */
#define TRACE_BYTES  (16u << 10) /* a small bound, to see it hold */
#define FREQUENCY    499
#define MAX_CHILDREN (COPIES * ROUNDS + PY_CHILDREN)

static volatile sig_atomic_t never_stop;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Feeds the session while child runs, then reaps it. */
static void run_until_exit(struct session *ss, pid_t child)
{
	int status;

	while (waitpid(child, &status, WNOHANG) == 0)
		assert_int_equal(session__run(ss, now_ns() + 10 * 1000000ull, &never_stop), 0);
}

/* Files in the cache whose path starts with dir. */
static size_t files_under(const struct file_cache *fc, const char *dir)
{
	size_t n = 0, len = strlen(dir);

	for (uint32_t slot = 1; slot <= fc->n_files; slot++) {
		const struct cached_file *f = file_cache__at(fc, slot);

		if (f && !strncmp(f->path, dir, len))
			n++;
	}
	return n;
}

static size_t python_codes_of(const struct interp *in, const pid_t *pids, size_t n)
{
	size_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += interp__held(in, (uint32_t)pids[i]);
	return total;
}

static void take_and_free(struct session *ss)
{
	struct profile *p = NULL;

	assert_int_equal(session__take_profile(ss, &p), 0);
	profile__free(p);
}

/* The exec paths of the children the table forgot, by pid. */
struct forgotten {
	const pid_t *children; /* the children started so far */
	const size_t *n_children;
	pid_t pids[MAX_CHILDREN * 2];
	char paths[MAX_CHILDREN * 2][96];
	size_t n;
};

static void on_forget(void *ctx, const struct process *p)
{
	struct forgotten *f = ctx;
	bool child = false;

	/* The rest of the system comes and goes too: only the children count. */
	for (size_t i = 0; i < *f->n_children && !child; i++)
		child = f->children[i] == (pid_t)p->pid;
	if (child && f->n < sizeof(f->pids) / sizeof(f->pids[0])) {
		f->pids[f->n] = (pid_t)p->pid;
		snprintf(f->paths[f->n++], sizeof(f->paths[0]), "%s",
			 p->exec_path ? p->exec_path : "(none)");
	}
}

static const char *forgotten_path(const struct forgotten *f, pid_t pid)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->pids[i] == pid)
			return f->paths[i];
	return "(not forgotten)";
}

static void test_churn_stays_bounded(void **state)
{
	struct session_opts o = {
	    .frequency_hz = FREQUENCY,
	    .kernel_stacks = true,
	    .keep_events = true,
	    .max_timestamps = 1u << 20,
	    .bounded = true,
	    .max_trace_bytes = TRACE_BYTES,
	    .files_kept_unused = KEPT_UNUSED,
	};
	struct session *ss = calloc(1, sizeof(*ss));
	pid_t children[MAX_CHILDREN], py_children[PY_CHILDREN];
	size_t n_children = 0, n_py = 0, codes_seen = 0;
	char *dir = tu_mkdtemp(), src[4096], copy[4200];
	uint64_t max_trace_bytes = 0;
	static struct forgotten forgotten;
	struct process_listener fl = {.forget = on_forget, .ctx = &forgotten};

	forgotten.children = children;
	forgotten.n_children = &n_children;

	(void)state;
	assert_non_null(ss);
	assert_non_null(dir);
	snprintf(src, sizeof(src), "%s/workloads/very_short", tu_build_dir());
	for (int i = 0; i < COPIES; i++) {
		snprintf(copy, sizeof(copy), "%s/churn_%02d", dir, i);
		assert_int_equal(tu_run(NULL, "cp '%s' '%s'", src, copy), 0);
	}
	assert_int_equal(session__start(ss, &o), 0);
	assert_int_equal(process_table__add_listener(&ss->c.procs, &fl), 0);

	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < COPIES; i++) {
			char *argv[] = {copy, (char *)CHILD_MS, NULL};

			snprintf(copy, sizeof(copy), "%s/churn_%02d", dir, i);
			children[n_children] = spawn(argv);
			assert_true(children[n_children] > 0);
			run_until_exit(ss, children[n_children++]);
		}
		if (max_trace_bytes < ss->c.traces.bytes)
			max_trace_bytes = ss->c.traces.bytes;
		take_and_free(ss);
	}
	for (int i = 0; i < PY_CHILDREN; i++) {
		char *argv[] = {(char *)"/usr/bin/python3", (char *)"-c",
				(char *)"import time\n"
					"def spin(end):\n"
					"    while time.monotonic() < end: pass\n"
					"spin(time.monotonic() + 0.3)\n",
				NULL};

		py_children[n_py] = spawn(argv);
		assert_true(py_children[n_py] > 0);
		children[n_children++] = py_children[n_py];
		run_until_exit(ss, py_children[n_py++]);
	}
	/* Before the profile: the Python children's code objects were read... */
	codes_seen = python_codes_of(ss->interp, py_children, n_py);
	if (max_trace_bytes < ss->c.traces.bytes)
		max_trace_bytes = ss->c.traces.bytes;
	take_and_free(ss);
	/* ... one more interval (exit events of the last child handled before it ends). */
	take_and_free(ss);

	print_message("churn: %zu children; tables: %zu processes, %zu files, %zu code objects; "
		      "forgotten %llu processes, %llu files; traces dropped %llu; python codes "
		      "of children before the profile: %zu\n",
		      n_children, ss->tables.processes, ss->tables.files,
		      ss->tables.runtime_objects, (unsigned long long)ss->tables.processes_purged,
		      (unsigned long long)ss->tables.files_evicted,
		      (unsigned long long)ss->tables.traces_dropped, codes_seen);
	/* No exited child is remembered. */
	for (size_t i = 0; i < n_children; i++)
		assert_null(process_table__find(&ss->c.procs, (uint32_t)children[i]));
	assert_true(ss->tables.processes_purged >= n_children);
	assert_int_equal(ss->tables.processes, ss->c.procs.by_pid.len);
	/* Every child was named by its exec event's path (the kernel's, not /proc's). */
	for (size_t i = 0; i < n_children; i++) {
		char want[4200];

		if (i < (size_t)COPIES * ROUNDS)
			snprintf(want, sizeof(want), "%s/churn_%02zu", dir, i % COPIES);
		else
			snprintf(want, sizeof(want), "/usr/bin/python3");
		assert_string_equal(forgotten_path(&forgotten, children[i]), want);
	}
	/* Of the 40 files only children mapped, at most the kept ones are open. */
	assert_true(files_under(&ss->c.files, dir) <= KEPT_UNUSED);
	assert_true(ss->tables.files_evicted >= COPIES - KEPT_UNUSED);
	assert_true(ss->c.files.n_unused <= KEPT_UNUSED);
	/* Python: the children were named while they ran, and nothing of them is left. */
	assert_true(codes_seen > 0);
	assert_int_equal(python_codes_of(ss->interp, py_children, n_py), 0);
	/* Each interval's traces stayed within their bound; what did not fit was counted. */
	assert_true(max_trace_bytes <= TRACE_BYTES);
	assert_true(ss->tables.traces_dropped > 0);
	/* The events were attached stopped: no sample came before the clock was set. */
	assert_int_equal(ss->c.stats.before_start, 0);

	session__clear(ss);
	free(ss);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_churn_stays_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
