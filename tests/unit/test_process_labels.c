// SPDX-License-Identifier: Apache-2.0
/*
 * The names a continuous exporter gives a process (service.name,
 * process.executable.name): a process with an executable name longer than
 * comm's 15 characters, gone before its interval is exported, is still named
 * by that executable when it was noted while it lived (as the process
 * table's listener does when its maps are first read); one gone before
 * even that is named by the path its exec event carried, once the process
 * table forgets it (the collector's handling of that event, then the
 * table's purge); one nothing could read is "unknown_service:COMM", as
 * OpenTelemetry says it. Real processes.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/collector.h"
#include "proc/process_labels.h"
#include "proc/process_table.h"

#define LONG_NAME "omniprof_long_executable_name"

struct child {
	char dir[64];
	char exe[128];
	pid_t pid;
};

/* Starts a copy of sleep under LONG_NAME; waits until it has exec'ed. */
static void child_start(struct child *c)
{
	char cmd[256], path[64], comm[32] = "";

	strcpy(c->dir, "/tmp/omniprof_test_labels.XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	snprintf(c->exe, sizeof(c->exe), "%s/%s", c->dir, LONG_NAME);
	snprintf(cmd, sizeof(cmd), "cp \"$(command -v sleep)\" '%s'", c->exe);
	assert_int_equal(system(cmd), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (!c->pid) {
		execl(c->exe, LONG_NAME, "30", (char *)NULL);
		_exit(127);
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", c->pid);
	for (int i = 0; i < 500 && strncmp(comm, LONG_NAME, 15); i++) {
		FILE *f = fopen(path, "r");

		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			fclose(f);
		}
		usleep(10000);
	}
	assert_int_equal(strncmp(comm, LONG_NAME, 15), 0);
}

static void child_end(struct child *c)
{
	char cmd[128];

	kill(c->pid, SIGKILL);
	assert_int_equal(waitpid(c->pid, NULL, 0), c->pid);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", c->dir);
	assert_int_equal(system(cmd), 0);
}

static void test_noted_process_keeps_its_executable_name(void **state)
{
	struct label_cache lc;
	struct child c;
	const struct process_labels *l;
	char comm[16];

	(void)state;
	label_cache__init(&lc, NULL);
	child_start(&c);
	label_cache__note(&lc, (uint32_t)c.pid);
	child_end(&c); /* gone before the interval's export */

	snprintf(comm, sizeof(comm), "%.15s", LONG_NAME);
	l = label_cache__get(&lc, (uint32_t)c.pid, comm);
	assert_non_null(l);
	assert_string_equal(l->exe_name, LONG_NAME);
	assert_string_equal(l->service, LONG_NAME);
	assert_string_equal(l->exe_path, c.exe);
	label_cache__clear(&lc);
}

/* A pid that existed and is gone (reaped). */
static pid_t gone_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* The exec then the exit of pid, as the BPF program reports them. */
static void exec_and_exit(struct collector *c, pid_t pid, const char *path)
{
	struct op_exec_event x = {.proc = {.hdr = {.type = OP_EVENT_EXEC, .pid = (uint32_t)pid},
					   .tid = (uint32_t)pid,
					   .ktime_ns = 1}};
	struct op_proc_event e = {.hdr = {.type = OP_EVENT_EXIT, .pid = (uint32_t)pid},
				  .tid = (uint32_t)pid,
				  .ktime_ns = 2};

	snprintf(x.proc.comm, sizeof(x.proc.comm), "%.15s", LONG_NAME);
	snprintf(x.path, sizeof(x.path), "%s", path);
	assert_int_equal(collector__handle(c, &x, sizeof(x)), 0);
	assert_int_equal(collector__handle(c, &e, sizeof(e)), 0);
}

static void test_gone_process_is_named_by_its_exec_path(void **state)
{
	struct collector c;
	struct label_cache lc;
	const struct process_labels *l;
	pid_t named = gone_pid(), relative = gone_pid();
	char comm[16];

	(void)state;
	snprintf(comm, sizeof(comm), "%.15s", LONG_NAME);
	assert_int_equal(collector__init(&c), 0);
	label_cache__init(&lc, NULL);
	assert_int_equal(label_cache__listen(&lc, &c.procs), 0);
	exec_and_exit(&c, named, "/opt/app/bin/" LONG_NAME);
	/* A relative path names no file: not used. */
	exec_and_exit(&c, relative, "./" LONG_NAME);
	/* The interval ends: the exited processes are forgotten, then their samples named. */
	assert_int_equal(process_table__purge(&c.procs, false), 2);

	l = label_cache__get(&lc, (uint32_t)named, comm);
	assert_non_null(l);
	assert_string_equal(l->exe_path, "/opt/app/bin/" LONG_NAME);
	assert_string_equal(l->exe_name, LONG_NAME);
	assert_string_equal(l->service, LONG_NAME);
	assert_string_equal(l->container_id, "");
	l = label_cache__get(&lc, (uint32_t)relative, comm);
	assert_non_null(l);
	assert_string_equal(l->exe_path, "");
	assert_string_equal(l->service, "unknown_service:omniprof_long_e");
	collector__clear(&c);
	label_cache__clear(&lc);
}

static void test_unknown_process_is_unknown_service(void **state)
{
	struct label_cache lc;
	struct child c;
	const struct process_labels *l;

	(void)state;
	label_cache__init(&lc, NULL);
	child_start(&c);
	child_end(&c); /* never noted: nothing to read any more */
	l = label_cache__get(&lc, (uint32_t)c.pid, "kworker/0:1H");
	assert_non_null(l);
	assert_string_equal(l->service, "unknown_service:kworker/0:1H");
	assert_string_equal(l->exe_name, "kworker/0:1H");
	label_cache__clear(&lc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_noted_process_keeps_its_executable_name),
	    cmocka_unit_test(test_gone_process_is_named_by_its_exec_path),
	    cmocka_unit_test(test_unknown_process_is_unknown_service),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
