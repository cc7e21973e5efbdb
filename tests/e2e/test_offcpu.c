// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end off-CPU (record --off-cpu[=P]): tests/workloads/offcpu_waits
 * has a thread in nanosleep (sleep_outer -> sleep_middle -> sleep_inner), one
 * blocked in read() on a pipe (pipe_outer -> pipe_inner) and one waiting on a
 * futex (futex_outer -> futex_inner); tests/workloads/python/py_sleep.py a
 * Python thread in time.sleep (napper -> nap_outer -> nap_inner). Two
 * recordings, shared by the cases: P = 1 of both processes, P = 0.1 of the C
 * one. At P = 1 the sleeping thread's chain, with the kernel's schedule
 * frames under it, holds at least 90% of the recording's wall time; at
 * P = 0.1 its scaled total is within 20% of it. And `agent --off-cpu` sends
 * the waits as an OTLP profile (off_cpu, nanoseconds) beside the CPU one in
 * the same request, and as their own Pyroscope profile type, to
 * tests/e2e/otlp/receiver.js. Needs root, BPF and the
 * receivers' node modules (`make tests`).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "folded_check.h"
#include "omniprof_run.h"
#include "pprof_read.h"
#include "profile.pb-c.h"
#include "testutil.h"

#define RECORD_SECONDS 4
#define TENTH_SECONDS  8

struct recording {
	char *dir;
	char *folded;	    /* offcpu.folded */
	double window_us;   /* the off-CPU profile's duration */
	char *log;	    /* record's output */
	int64_t pprof_ns;   /* sum of offcpu.pb.gz's values */
	bool pprof_type_ok; /* its one sample type is off_cpu/nanoseconds */
	bool cpu_type_ok;   /* profile.pb.gz still samples/count, cpu/nanoseconds */
};

static struct recording full, tenth;
static pid_t waits_pid = -1, py_pid = -1;

static bool type_is(const Perftools__Profiles__Profile *p, size_t i, const char *type,
		    const char *unit)
{
	return i < p->n_sample_type && !strcmp(p->string_table[p->sample_type[i]->type], type) &&
	       !strcmp(p->string_table[p->sample_type[i]->unit], unit);
}

static int record(struct recording *r, const char *p_arg, const char *pids, int seconds)
{
	char path[1024];
	Perftools__Profiles__Profile *pp;
	int rc;

	r->dir = tu_mkdtemp();
	if (!r->dir)
		return -1;
	rc = tu_run(&r->log, "%s record -p %s -d %d --off-cpu%s -o %s -v 2>&1", tu_omniprof_path(),
		    pids, seconds, p_arg, r->dir);
	if (rc) {
		fprintf(stderr, "omniprof record failed (%d):\n%s\n", rc, r->log ? r->log : "");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/offcpu.folded", r->dir);
	r->folded = tu_read_file(path, NULL);
	snprintf(path, sizeof(path), "%s/offcpu.pb.gz", r->dir);
	pp = tu_read_pprof(path);
	if (!r->folded || !pp)
		return -1;
	r->window_us = (double)pp->duration_nanos / 1e3;
	r->pprof_type_ok = pp->n_sample_type == 1 && type_is(pp, 0, "off_cpu", "nanoseconds");
	for (size_t i = 0; i < pp->n_sample; i++)
		r->pprof_ns += pp->sample[i]->n_value ? pp->sample[i]->value[0] : 0;
	perftools__profiles__profile__free_unpacked(pp, NULL);
	snprintf(path, sizeof(path), "%s/profile.pb.gz", r->dir);
	pp = tu_read_pprof(path);
	if (!pp)
		return -1;
	r->cpu_type_ok = pp->n_sample_type == 2 && type_is(pp, 0, "samples", "count") &&
			 type_is(pp, 1, "cpu", "nanoseconds");
	perftools__profiles__profile__free_unpacked(pp, NULL);
	return 0;
}

static int setup(void **state)
{
	char python[1024], script[1024], secs[16], pids[64];
	char *py_argv[] = {python, script, secs, NULL};
	unsigned int minor;

	(void)state;
	waits_pid = tu_workload_start("offcpu_waits", 60); /* killed by teardown */
	if (tu_distro_python(python, sizeof(python), &minor)) {
		fprintf(stderr, "no python3 of Debian's python3-minimal package\n");
		return -1;
	}
	snprintf(script, sizeof(script), "tests/workloads/python/py_sleep.py");
	snprintf(secs, sizeof(secs), "60");
	py_pid = tu_spawn_ready(py_argv);
	if (waits_pid <= 0 || py_pid <= 0)
		return -1;
	snprintf(pids, sizeof(pids), "%d,%d", waits_pid, py_pid);
	if (record(&full, "", pids, RECORD_SECONDS))
		return -1;
	snprintf(pids, sizeof(pids), "%d", waits_pid);
	/* Longer: the scaled total's spread shrinks with the waits recorded (about 1/sqrt(n)). */
	return record(&tenth, "=0.1", pids, TENTH_SECONDS);
}

static void recording__free(struct recording *r)
{
	if (r->dir)
		tu_rmtree(r->dir);
	free(r->dir);
	free(r->folded);
	free(r->log);
}

static int teardown(void **state)
{
	(void)state;
	if (getenv("OFFCPU_KEEP")) {
		printf("kept %s and %s\n", full.dir, tenth.dir);
		free(full.dir);
		free(tenth.dir);
		full.dir = tenth.dir = NULL;
	}
	if (waits_pid > 0)
		tu_reap(waits_pid);
	if (py_pid > 0)
		tu_reap(py_pid);
	recording__free(&full);
	recording__free(&tenth);
	return 0;
}

/*
 * Microseconds of the folded lines whose stack holds each of the needles in
 * order (each after the one before it; a frame's text ends at ';' or ' ').
 */
static double folded_us(const char *text, const char *const *needles)
{
	double us = 0;

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n'), *value = NULL, *at = line;
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char *stack = strndup(line, len);
		bool ok = stack != NULL;

		assert_non_null(stack);
		value = strrchr(stack, ' ');
		for (size_t i = 0; ok && needles[i]; i++) {
			at = strstr(at == line ? stack : at, needles[i]);
			ok = at && (!value || at < value);
			/* A needle's closing ';' may open the next one. */
			if (ok)
				at += strlen(needles[i]) -
				      (needles[i][0] && needles[i][strlen(needles[i]) - 1] == ';');
		}
		if (ok && value)
			us += strtod(value + 1, NULL);
		free(stack);
		line = end ? end + 1 : NULL;
	}
	return us;
}

static void report(const char *what, double us, double window_us)
{
	printf("    %s: %.0f ms of %.0f ms (%.1f%%)\n", what, us / 1e3, window_us / 1e3,
	       window_us > 0 ? 100.0 * us / window_us : 0.0);
}

static void test_outputs(void **state)
{
	(void)state;
	assert_true(full.pprof_type_ok);
	assert_true(full.cpu_type_ok);
	assert_true(tenth.pprof_type_ok);
	assert_true(full.window_us > 1e6);
	/* folded (microseconds) and pprof (nanoseconds) tell the same total. */
	assert_true(folded_us(full.folded, (const char *const[]){"", NULL}) >
		    0.99 * (double)full.pprof_ns / 1e3 - 1000);
	assert_non_null(strstr(full.log, "Top off-CPU stacks"));
}

static void test_nanosleep_chain(void **state)
{
	static const char *const chain[] = {";sleeper;sleep_outer;sleep_middle;sleep_inner;",
					    ";schedule_[k]", NULL};
	double us = folded_us(full.folded, chain);

	(void)state;
	report("sleeper chain over schedule, P = 1", us, full.window_us);
	assert_true(us >= 0.9 * full.window_us);
}

static void test_scaled_total(void **state)
{
	static const char *const chain[] = {";sleeper;sleep_outer;sleep_middle;sleep_inner;", NULL};
	double us = folded_us(tenth.folded, chain);

	(void)state;
	report("sleeper chain, P = 0.1, scaled", us, tenth.window_us);
	assert_true(us >= 0.8 * tenth.window_us && us <= 1.2 * tenth.window_us);
}

static void test_pipe_and_futex(void **state)
{
	static const char *const pipe_chain[] = {";piper;pipe_outer;pipe_inner;", "read",
						 ";schedule_[k]", NULL};
	static const char *const futex_chain[] = {";futexer;futex_outer;futex_inner;", "futex_wait",
						  ";schedule_[k]", NULL};
	double pipe_us = folded_us(full.folded, pipe_chain);
	double futex_us = folded_us(full.folded, futex_chain);

	(void)state;
	report("pipe reader's chain", pipe_us, full.window_us);
	report("futex waiter's chain", futex_us, full.window_us);
	assert_true(pipe_us >= 0.5 * full.window_us);
	assert_true(futex_us >= 0.5 * full.window_us);
}

static void test_python_sleep(void **state)
{
	static const char *const chain[] = {";napper;", ";nap_outer;", ";nap_inner;",
					    ";schedule_[k]", NULL};
	double us = folded_us(full.folded, chain);

	(void)state;
	report("Python napper -> nap_outer -> nap_inner over schedule", us, full.window_us);
	assert_true(us >= 0.5 * full.window_us);
}

/* True when a line of text holds every needle. */
static bool line_with(const char *text, const char *const *needles)
{
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char *copy = strndup(line, len);
		bool all = copy != NULL;

		assert_non_null(copy);
		for (size_t i = 0; all && needles[i]; i++)
			all = strstr(copy, needles[i]) != NULL;
		free(copy);
		if (all)
			return true;
		line = end ? end + 1 : NULL;
	}
	return false;
}

/*
 * agent --off-cpu beside a CPU burner (fp_chain): each OTLP request holds the
 * interval's CPU and off-CPU profiles over one dictionary (check.js
 * --mode offcpu-set decodes them independently: indices in range, one
 * resource per process, a profile per type, the burner's chain on CPU and
 * the sleeper's off CPU in one request), Pyroscope gets the waits as their
 * own profile type.
 */
static void test_agent_exports(void **state)
{
	static const char *const otlp[] = {
	    "\"transport\":\"http\"", "\"off_cpu\"", "\"nanoseconds\"",
	    "\"sleep_inner\"",	      "\"leaf\"",    NULL};
	static const char *const pyro[] = {"\"transport\":\"pyroscope\"",
					   "[\"off_cpu\",\"nanoseconds\"]", "\"sleep_inner\"",
					   NULL};
	char *dir = tu_mkdtemp(), records[1100], log[1100], hp[16], endpoint[64], url[64];
	char pids[32], *text, *out = NULL, chain[1024];
	int port = tu_free_port(), status, rc;
	pid_t rx, agent, burner = tu_workload_start("fp_chain", 30);

	(void)state;
	assert_non_null(dir);
	assert_true(port > 0);
	assert_true(burner > 0);
	snprintf(records, sizeof(records), "%s/records.jsonl", dir);
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	snprintf(hp, sizeof(hp), "%d", port);
	snprintf(endpoint, sizeof(endpoint), "127.0.0.1:%d", port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	snprintf(pids, sizeof(pids), "%d,%d", waits_pid, burner);
	rx = tu_node_start("receiver.js", (const char *const[]){"--out", records, "--max-seconds",
								"60", "--http-port", hp, NULL});
	assert_true(rx > 0);
	agent = tu_omniprof_start(log, "agent",
				  (const char *const[]){"-p", pids, "--interval", "1",
							"--off-cpu=1", "--otlp-endpoint", endpoint,
							"--otlp-protocol", "http", "--insecure",
							"--pyroscope-url", url, NULL});
	assert_true(agent > 0);
	/* Both kinds of push, each holding the sleeper's chain (or 20 s). */
	for (uint64_t end = tu_now_ms() + 20000; tu_now_ms() < end;) {
		text = tu_read_file(records, NULL);
		if (text && line_with(text, otlp) && line_with(text, pyro)) {
			free(text);
			break;
		}
		free(text);
		usleep(200000);
	}
	kill(agent, SIGTERM);
	status = tu_wait_bounded(agent, 30000, 100, NULL);
	tu_reap(rx);
	tu_reap(burner);
	text = tu_read_file(records, NULL);
	assert_non_null(text);
	if (!line_with(text, otlp) || !line_with(text, pyro))
		tu_print_log("agent log", log);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(line_with(text, pyro));
	/* The off-CPU push has no sample rate: its values are not samples. */
	assert_false(line_with(
	    text, (const char *const[]){"[\"off_cpu\",\"nanoseconds\"]", "\"sampleRate\"", NULL}));
	free(text);
	fp_chain__names(chain, sizeof(chain));
	rc = tu_run(&out,
		    "node tests/e2e/otlp/check.js --file %s --mode offcpu-set --pid %d --chain "
		    "sleep_outer,sleep_middle,sleep_inner --cpu-pid %d --cpu-chain %s",
		    records, waits_pid, burner, chain);
	printf("    %s", out ? out : "(no output)\n");
	free(out);
	assert_int_equal(rc, 0);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_outputs),	 cmocka_unit_test(test_nanosleep_chain),
	    cmocka_unit_test(test_scaled_total), cmocka_unit_test(test_pipe_and_futex),
	    cmocka_unit_test(test_python_sleep), cmocka_unit_test(test_agent_exports),
	};

	return cmocka_run_group_tests_name("e2e_offcpu", tests, setup, teardown);
}
