// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end: the run-time limits and lifecycle of `record` and `agent`
 * (issue 13): -F above the cap is refused before anything is loaded; a CPU
 * taken offline and brought back is sampled again; SIGHUP stops like
 * SIGTERM (outputs written, queues flushed); --flush-timeout bounds the exit
 * even when the receiver never answers, and a second signal cuts it short; a
 * 200 with a 512 MiB body is one delivery. Receivers: tests/e2e/otlp/
 * (receiver.js, misbehaving.js). Needs root, BPF and Node.js.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "folded_check.h"
#include "omniprof_run.h"
#include "testutil.h"

static struct chain_spec *chain; /* fp_chain's main -> chain_01 .. chain_24 -> leaf */
static char chain_arg[512];	 /* the same, comma-separated, for check.js */
static char exe_path[1024];	 /* absolute path of build/workloads/fp_chain */

static int setup(void **state)
{
	(void)state;
	chain = chain_spec__new();
	if (!chain || chain_spec__add_fp_chain(chain))
		return -1;
	fp_chain__names(chain_arg, sizeof(chain_arg));
	return tu_workload_path("fp_chain", exe_path, sizeof(exe_path));
}

static int teardown(void **state)
{
	(void)state;
	chain_spec__free(chain);
	return 0;
}

static pid_t start_workload(const char *path, int seconds)
{
	char secs[16];
	char *argv[] = {(char *)path, secs, NULL};

	snprintf(secs, sizeof(secs), "%d", seconds);
	return tu_spawn_ready(argv);
}

/* The session is up once the first line about sampling was printed. */
static void wait_sampling(const char *log_path)
{
	/* 30 s: slow under the other tests' load */
	if (!tu_wait_log(log_path, "sampling", 30000))
		fail_msg("omniprof did not start sampling within 30 s");
}

/*
 * -F above the cap (omniprof's 1000 Hz, or the kernel's lower
 * perf_event_max_sample_rate), 0, negative or not a number: one line, exit
 * status 2, and not one bpf(2) or perf_event_open(2) call (strace says so).
 */
static void test_frequency_refused_before_loading(void **state)
{
	static const char *const bad[] = {"100000", "1001", "0", "-5", "abc", "99x"};
	static const char *const subs[] = {"record", "agent"};
	char *dir = tu_mkdtemp(), *out = NULL, trace[1100], *text;

	(void)state;
	snprintf(trace, sizeof(trace), "%s/strace.txt", dir);
	for (size_t s = 0; s < 2; s++) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			int rc =
			    tu_run(&out,
				   /* LeakSanitizer cannot run under ptrace (sanitizer builds) */
				   "ASAN_OPTIONS=detect_leaks=0 "
				   "strace -f -qq -e trace=bpf,perf_event_open -o %s "
				   "%s/omniprof %s -F %s -d 1 -o %s/out "
				   "--otlp-endpoint 127.0.0.1:1 2>&1",
				   trace, tu_build_dir(), subs[s], bad[i], dir);

			printf("    %s -F %s: exit %d: %s", subs[s], bad[i], rc, out);
			/* The agent takes no -d: use only what it parses before -F fails. */
			assert_int_equal(rc, 2);
			assert_non_null(strstr(out, "-F"));
			assert_null(strstr(out, "sampling"));
			text = tu_read_file(trace, NULL);
			assert_non_null(text);
			assert_null(strstr(text, "bpf("));
			assert_null(strstr(text, "perf_event_open("));
			free(text);
			if (!strcmp(bad[i], "100000") || !strcmp(bad[i], "1001"))
				assert_non_null(strstr(out, "above the maximum"));
			free(out);
			out = NULL;
		}
	}
	/* Nothing was created either: the output folder is prepared after parsing. */
	{
		char path[1100];
		struct stat st;

		snprintf(path, sizeof(path), "%s/out", dir);
		assert_int_equal(stat(path, &st), -1);
	}
	tu_rmtree(dir);
	free(dir);
}

static void set_cpu1_online(int on)
{
	int fd = open("/sys/devices/system/cpu/cpu1/online", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, on ? "1" : "0", 1) != 1)
			print_error("cannot set cpu1 online=%d: %s\n", on, strerror(errno));
		close(fd);
	}
}

static int cpu1_online(void)
{
	int fd = open("/sys/devices/system/cpu/cpu1/online", O_RDONLY | O_CLOEXEC);
	char c = 0;

	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == '1' ? 1 : c == '0' ? 0 : -1;
}

/* The hotplug test's cleanup: cpu1 comes back online whatever happened. */
static int hotplug_teardown(void **state)
{
	(void)state;
	for (int i = 0; i < 50 && cpu1_online() == 0; i++) {
		set_cpu1_online(1);
		usleep(100 * 1000);
	}
	return 0;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The agent samples a workload pinned to cpu1; cpu1 goes offline for 3 s
 * (the kernel moves the workload to cpu0) and comes back; the workload is
 * pinned to cpu1 again. Its events stamped after that can only come from
 * cpu1's perf event: they arrive (cpu.logical_number 1 in OTLP) only if the
 * agent opened a new one when the CPU came back.
 */
static void test_cpu_hotplug(void **state)
{
	char *dir = tu_mkdtemp(), log[1100], records[1100], endpoint[64], pid_s[16], port_s[16];
	char *out = NULL;
	int port = tu_free_port(), status, rc;
	uint64_t pinned_ns;
	pid_t agent, wl, rx;

	(void)state;
	assert_int_equal(cpu1_online(), 1); /* a 2-CPU machine whose cpu1 can go offline */
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	snprintf(records, sizeof(records), "%s/records.jsonl", dir);
	assert_true(port > 0);
	snprintf(endpoint, sizeof(endpoint), "127.0.0.1:%d", port);
	snprintf(port_s, sizeof(port_s), "%d", port);
	{
		const char *args[] = {"--out", records, "--http-port", port_s, NULL};

		rx = tu_node_start("receiver.js", args);
	}
	assert_true(rx > 0);
	{
		char *argv[] = {"/usr/bin/taskset", "-c", "1", exe_path, "60", NULL};

		wl = tu_spawn_ready(argv); /* taskset execs the workload: same pid */
	}
	assert_true(wl > 0);
	snprintf(pid_s, sizeof(pid_s), "%d", wl);
	{
		const char *args[] = {"--interval",
				      "1",
				      "-F",
				      "99",
				      "-p",
				      pid_s,
				      "--otlp-endpoint",
				      endpoint,
				      "--otlp-protocol",
				      "http",
				      "--insecure",
				      "-v",
				      NULL};

		agent = tu_omniprof_start(log, "agent", args);
	}
	assert_true(agent > 0);
	wait_sampling(log);
	sleep(1);
	set_cpu1_online(0);
	assert_int_equal(cpu1_online(), 0);
	sleep(3);
	set_cpu1_online(1);
	assert_int_equal(cpu1_online(), 1);
	sleep(2); /* the sampler looks once a second */
	rc = tu_run(&out, "taskset -p -c 1 %d", wl);
	printf("    %s", out ? out : "");
	free(out);
	out = NULL;
	assert_int_equal(rc, 0);
	pinned_ns = wall_ns();
	sleep(3);
	kill(agent, SIGTERM);
	status = tu_wait_bounded(agent, 30000, 20, NULL);
	tu_reap(wl);
	tu_reap(rx);
	tu_print_log("log", log);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* ~99 Hz for 3 s; a loaded machine gives fewer, none means cpu1 is not sampled. */
	rc = tu_run(&out,
		    "node tests/e2e/otlp/check.js --file %s --mode cpu-after --transport http "
		    "--pid %d --cpu 1 --after-ns %llu --min-events 30",
		    records, wl, (unsigned long long)pinned_ns);
	printf("    %s", out ? out : "(no output)\n");
	free(out);
	assert_int_equal(rc, 0);
	/* "went offline", or "was offline meanwhile" when the loop was busy throughout. */
	assert_true(tu_log_has(log, "cpu 1 went offline") ||
		    tu_log_has(log, "cpu 1 was offline meanwhile"));
	assert_true(tu_log_has(log, "cpu 1 is online: sampled again"));
	tu_rmtree(dir);
	free(dir);
}

/*
 * record until SIGHUP: exits 0 and writes what it sampled. The signal goes once fp_chain has
 * had 3 s of CPU while sampled (what a sleep of 3 s gave it on an idle host; a starved
 * fp_chain on a loaded host had a fraction of the samples), within 180 s.
 */
static void test_record_sighup(void **state)
{
	char *dir = tu_mkdtemp(), log[1100], out_dir[1100], path[1200], pid_s[16], *folded;
	struct chain_count cc;
	double used = -1;
	bool enough;
	pid_t rec, wl;
	int status;

	(void)state;
	snprintf(log, sizeof(log), "%s/record.log", dir);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	wl = start_workload(exe_path, 300);
	assert_true(wl > 0);
	snprintf(pid_s, sizeof(pid_s), "%d", wl);
	{
		const char *args[] = {"-F", "99", "-p", pid_s, "-o", out_dir, NULL};

		rec = tu_omniprof_start(log, "record", args);
	}
	assert_true(rec > 0);
	if (!tu_wait_log(log, "sampling", 30000)) {
		tu_reap(rec);
		tu_reap(wl); /* it would spin for its 300 s */
		fail_msg("omniprof did not start sampling within 30 s");
	}
	enough = tu_wait_cpu(wl, 3.0, 180000, &used);
	kill(rec, SIGHUP);
	status = tu_wait_bounded(rec, 60000, 20, NULL);
	tu_reap(wl);
	tu_print_log("log", log);
	printf("    fp_chain used %.2f s of CPU while sampled\n", used);
	if (!enough)
		fail_msg("fp_chain had %.2f s of CPU in 180 s, 3 s needed: the host is too loaded "
			 "for this test",
			 used);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	snprintf(path, sizeof(path), "%s/stacks.folded", out_dir);
	folded = tu_read_file(path, NULL);
	assert_non_null(folded);
	cc = chain_spec__count_folded(chain, folded, "fp_chain");
	printf("    fp_chain: %ld leaf samples, %ld complete\n", cc.leaf, cc.complete);
	assert_true(cc.complete >= 30);
	free(folded);
	tu_rmtree(dir);
	free(dir);
}

/*
 * Starts fp_chain and `omniprof agent` profiling it at -F freq, sending
 * OTLP/HTTP to 127.0.0.1:port every interval seconds (with --flush-timeout
 * flush_s unless NULL), output in log; returns the agent's pid once it
 * samples. *wl: the workload's pid. The caller reaps both.
 */
static pid_t start_http_agent(const char *log, int port, const char *interval, const char *freq,
			      const char *flush_s, pid_t *wl)
{
	char endpoint[64], pid_s[16];
	const char *args[] = {"--interval",
			      interval,
			      "-F",
			      freq,
			      "-p",
			      pid_s,
			      "--otlp-endpoint",
			      endpoint,
			      "--otlp-protocol",
			      "http",
			      "--insecure",
			      flush_s ? "--flush-timeout" : NULL,
			      flush_s,
			      NULL};
	pid_t agent;

	*wl = start_workload(exe_path, 60);
	assert_true(*wl > 0);
	snprintf(pid_s, sizeof(pid_s), "%d", *wl);
	snprintf(endpoint, sizeof(endpoint), "127.0.0.1:%d", port);
	agent = tu_omniprof_start(log, "agent", args);
	assert_true(agent > 0);
	wait_sampling(log);
	return agent;
}

/* agent until SIGHUP: exits 0 and flushes; the receiver got the intervals. */
static void test_agent_sighup(void **state)
{
	char *dir = tu_mkdtemp(), log[1100], records[1100], port_s[16];
	char *out = NULL;
	int port = tu_free_port(), status, rc;
	pid_t agent, wl, rx;

	(void)state;
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	snprintf(records, sizeof(records), "%s/records.jsonl", dir);
	assert_true(port > 0);
	snprintf(port_s, sizeof(port_s), "%d", port);
	{
		const char *args[] = {"--out", records, "--http-port", port_s, NULL};

		rx = tu_node_start("receiver.js", args);
	}
	assert_true(rx > 0);
	/* One long interval: what arrives was sent by the exit flush. */
	agent = start_http_agent(log, port, "60", "99", NULL, &wl);
	sleep(3);
	kill(agent, SIGHUP);
	status = tu_wait_bounded(agent, 30000, 20, NULL);
	tu_reap(wl);
	tu_reap(rx);
	tu_print_log("log", log);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(tu_log_has(log, "1 intervals delivered"));
	rc = tu_run(&out,
		    "node tests/e2e/otlp/check.js --file %s --exe %s --chain %s --frequency 99 "
		    "--mode otlp --transport http --pid %d --service fp_chain",
		    records, exe_path, chain_arg, wl);
	printf("    %s", out ? out : "(no output)\n");
	free(out);
	assert_int_equal(rc, 0);
	tu_rmtree(dir);
	free(dir);
}

/* An agent sending to a receiver that accepts connections and never answers. */
static pid_t start_agent_black_hole(const char *log, const char *flush_s, pid_t *rx, pid_t *wl)
{
	char port_s[16];
	int port = tu_free_port();
	pid_t agent;

	assert_true(port > 0);
	snprintf(port_s, sizeof(port_s), "%d", port);
	{
		const char *args[] = {"--mode", "blackhole", "--port", port_s, NULL};

		*rx = tu_node_start("misbehaving.js", args);
	}
	assert_true(*rx > 0);
	agent = start_http_agent(log, port, "1", "49", flush_s, wl);
	sleep(3); /* intervals queue up behind the first transfer, which hangs */
	return agent;
}

/* --flush-timeout 1 with a transfer hanging: the agent is gone within 4 s of SIGTERM. */
static void test_flush_timeout_bounds_exit(void **state)
{
	char *dir = tu_mkdtemp(), log[1100];
	uint64_t t0, took;
	pid_t agent, rx, wl;
	int status;

	(void)state;
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	agent = start_agent_black_hole(log, "1", &rx, &wl);
	t0 = tu_now_ms();
	kill(agent, SIGTERM);
	status = tu_wait_bounded(agent, 30000, 20, NULL);
	took = tu_now_ms() - t0;
	tu_reap(rx);
	tu_reap(wl);
	tu_print_log("log", log);
	printf("    exit took %llu ms after SIGTERM (--flush-timeout 1)\n",
	       (unsigned long long)took);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(took < 4000);
	assert_true(tu_log_has(log, "not delivered at exit"));
	tu_rmtree(dir);
	free(dir);
}

/* --flush-timeout 60 and a hanging transfer: a second SIGTERM ends the exit at once. */
static void test_second_signal_cuts_flush(void **state)
{
	char *dir = tu_mkdtemp(), log[1100];
	uint64_t t0, took;
	pid_t agent, rx, wl;
	int status;

	(void)state;
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	agent = start_agent_black_hole(log, "60", &rx, &wl);
	kill(agent, SIGTERM);
	sleep(1);
	/* Still flushing: the first signal alone would wait up to 60 s. */
	assert_int_equal(waitpid(agent, &status, WNOHANG), 0);
	t0 = tu_now_ms();
	kill(agent, SIGTERM);
	status = tu_wait_bounded(agent, 30000, 20, NULL);
	took = tu_now_ms() - t0;
	tu_reap(rx);
	tu_reap(wl);
	tu_print_log("log", log);
	printf("    exit took %llu ms after the second SIGTERM\n", (unsigned long long)took);
	assert_true(WIFEXITED(status));
	assert_true(took < 3000);
	assert_true(tu_log_has(log, "cutting the exit flush short"));
	assert_true(tu_log_has(log, "not delivered at exit"));
	tu_rmtree(dir);
	free(dir);
}

static int count_lines(const char *path, const char *prefix)
{
	char *text = tu_read_file(path, NULL), *p;
	int n = 0;

	if (!text)
		return -1;
	for (p = text; (p = strstr(p, prefix)); p++)
		n++;
	free(text);
	return n;
}

/*
 * Every request is answered 200 with a 512 MiB body: each interval is
 * delivered once (no resend, no retry), and the agent's memory stays bounded.
 */
static void test_big_reply_is_success(void **state)
{
	char *dir = tu_mkdtemp(), log[1100], reqs[1100], port_s[16];
	char line[128];
	int port = tu_free_port(), status, requests;
	struct rusage ru;
	pid_t agent, rx, wl;

	(void)state;
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	snprintf(reqs, sizeof(reqs), "%s/requests.txt", dir);
	assert_true(port > 0);
	snprintf(port_s, sizeof(port_s), "%d", port);
	{
		const char *args[] = {"--mode", "bigreply", "--port", port_s, "--out",
				      reqs,	"--mb",	    "512",    NULL};

		rx = tu_node_start("misbehaving.js", args);
	}
	assert_true(rx > 0);
	agent = start_http_agent(log, port, "1", "99", NULL, &wl);
	sleep(5);
	kill(agent, SIGTERM);
	status = tu_wait_bounded(agent, 30000, 20, &ru);
	tu_reap(wl);
	tu_reap(rx);
	tu_print_log("log", log);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	requests = count_lines(reqs, "request ");
	printf("    %d requests received, agent max RSS %ld KiB\n", requests, ru.ru_maxrss);
	assert_true(requests >= 3);
	snprintf(line, sizeof(line),
		 ": %d intervals delivered, 0 retries, dropped: 0 (queue full), 0", requests);
	assert_true(tu_log_has(log, line));
	assert_false(tu_log_has(log, "export failing"));
	/* The body is never held: far below the 512 MiB it would take (with room for a
	 * sanitizer build's shadow memory). */
	assert_true(ru.ru_maxrss < 200 * 1024);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frequency_refused_before_loading),
	    cmocka_unit_test_teardown(test_cpu_hotplug, hotplug_teardown),
	    cmocka_unit_test(test_record_sighup),
	    cmocka_unit_test(test_agent_sighup),
	    cmocka_unit_test(test_flush_timeout_bounds_exit),
	    cmocka_unit_test(test_second_signal_cuts_flush),
	    cmocka_unit_test(test_big_reply_is_success),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
