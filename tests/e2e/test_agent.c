// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end: `omniprof agent` profiles a workload built by the test suite
 * (tests/workloads/fp_chain.c) with the real BPF sampler and reports to
 * receivers built on independent stacks (tests/e2e/otlp/receiver.js: a gRPC
 * server on @grpc/grpc-js, an HTTP server for OTLP/HTTP and Pyroscope
 * pushes, decoding with protobufjs from the receiver's own schema and with
 * pprof-format). tests/e2e/otlp/check.js then asserts what arrived: the
 * shared dictionary and its zero entries, resource, sample and mapping
 * attributes, per-event timestamps, the workload's whole call chain, and that
 * intervals tile time with no gap, also across a backend outage. Needs root,
 * BPF and Node.js (the Makefile installs the npm packages under BUILD/node).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "omniprof_run.h"
#include "folded_check.h"
#include "testutil.h"

#define HZ 99

static char chain_arg[512]; /* main,chain_01,...,chain_24,leaf */
static char exe_path[1024];

static int setup(void **state)
{
	(void)state;
	fp_chain__names(chain_arg, sizeof(chain_arg));
	return tu_workload_path("fp_chain", exe_path, sizeof(exe_path));
}

/* When set, the next receiver's OTLP replies are partial successes with this message. */
static const char *partial_success;
#define PARTIAL_MSG "e2e-partial: attribute foo dropped"

/* Starts receiver.js (0 = that server off); returns its pid once it listens. */
static pid_t start_receiver(const char *out, int grpc_port, int http_port, const char *tls_dir)
{
	char gp[16], hp[16], cert[1100], key[1100], client_ca[1100];
	const char *args[16];
	int n = 0;

	snprintf(gp, sizeof(gp), "%d", grpc_port);
	snprintf(hp, sizeof(hp), "%d", http_port);
	args[n++] = "--out";
	args[n++] = out;
	args[n++] = "--max-seconds";
	args[n++] = "120";
	if (grpc_port) {
		args[n++] = "--grpc-port";
		args[n++] = gp;
	}
	if (http_port) {
		args[n++] = "--http-port";
		args[n++] = hp;
	}
	if (tls_dir) {
		snprintf(cert, sizeof(cert), "%s/server.pem", tls_dir);
		snprintf(key, sizeof(key), "%s/server.key", tls_dir);
		args[n++] = "--tls-cert";
		args[n++] = cert;
		args[n++] = "--tls-key";
		args[n++] = key;
		/* Mutual TLS: calls must present a client certificate the test's CA signed. */
		snprintf(client_ca, sizeof(client_ca), "%s/ca.pem", tls_dir);
		args[n++] = "--tls-client-ca";
		args[n++] = client_ca;
	}
	if (partial_success) {
		args[n++] = "--partial-success";
		args[n++] = partial_success;
	}
	args[n] = NULL;
	return tu_node_start("receiver.js", args);
}

/* Starts `omniprof agent ARGS...` with its output in log_path; returns its pid. */
static pid_t start_agent(const char *log_path, const char *const *args)
{
	pid_t pid = tu_omniprof_start(log_path, "agent", args);

	assert_true(pid > 0);
	return pid;
}

/* SIGTERM, then wait (bounded) for a clean exit; the agent flushes on the way. */
static void stop_agent(pid_t pid, const char *log_path)
{
	int status;

	kill(pid, SIGTERM);
	status = tu_wait_bounded(pid, 30000, 100, NULL); /* 30 s at most */
	tu_print_log("agent log", log_path);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void check(const char *records, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Runs check.js on the receiver's records with the given extra arguments. */
static void check(const char *records, const char *fmt, ...)
{
	char extra[2048], *out = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(extra, sizeof(extra), fmt, ap);
	va_end(ap);
	rc =
	    tu_run(&out,
		   "NODE_PATH=%s/node/node_modules node tests/e2e/otlp/check.js --file %s --exe %s "
		   "--chain %s --frequency %d %s",
		   tu_build_dir(), records, exe_path, chain_arg, HZ, extra);
	printf("    %s", out ? out : "(no output)\n");
	free(out);
	assert_int_equal(rc, 0);
}

static int count_lines_with(const char *path, const char *needle)
{
	char *text = tu_read_file(path, NULL), *p;
	int n = 0;

	assert_non_null(text);
	for (p = text; (p = strstr(p, needle)); p++)
		n++;
	free(text);
	return n;
}

/*
 * gRPC (h2c) and Pyroscope at once, from one agent; every push must meet
 * Pyroscope's ingest rules (check.js). Besides the workload, a copy of it
 * runs from a folder whose name is not UTF-8 (a file name is any bytes): its
 * mapping's file name must not make the push invalid (Pyroscope refuses a
 * profile holding a string that is not UTF-8).
 */
static void test_grpc_and_pyroscope(void **state)
{
	char *dir = tu_mkdtemp(), records[1100], log[1100], endpoint[64], url[64];
	char odd[1200], odd_exe[1300], pid_s[16], odd_pid_s[16];
	int gport = tu_free_port(), hport = tu_free_port();
	pid_t wl, rx, agent, odd_wl;

	(void)state;
	snprintf(records, sizeof(records), "%s/records.jsonl", dir);
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	assert_true(gport > 0 && hport > 0);
	snprintf(endpoint, sizeof(endpoint), "127.0.0.1:%d", gport);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", hport);
	partial_success = PARTIAL_MSG;
	rx = start_receiver(records, gport, hport, NULL);
	partial_success = NULL;
	assert_true(rx > 0);
	wl = tu_workload_start("fp_chain", 60);
	assert_true(wl > 0);
	snprintf(odd, sizeof(odd), "%s/not-utf8-\xff\xfe-\xc3(", dir);
	snprintf(odd_exe, sizeof(odd_exe), "%s/fp_chain", odd);
	assert_int_equal(mkdir(odd, 0755), 0);
	TU_SH("cp '%s/workloads/fp_chain' '%s'", tu_build_dir(), odd_exe);
	{
		char *argv[] = {odd_exe, (char *)"60", NULL};

		odd_wl = tu_spawn_ready(argv);
		assert_true(odd_wl > 0);
	}
	snprintf(pid_s, sizeof(pid_s), "%d", wl);
	snprintf(odd_pid_s, sizeof(odd_pid_s), "%d", odd_wl);
	{
		const char *args[] = {"--interval",
				      "1",
				      "-F",
				      "99",
				      "-p",
				      pid_s,
				      "-p",
				      odd_pid_s,
				      "--otlp-endpoint",
				      endpoint,
				      "--insecure",
				      "--pyroscope-url",
				      url,
				      "--pyroscope-basic-auth",
				      "tenant:secret",
				      "-v",
				      NULL};

		agent = start_agent(log, args);
	}
	/* 4 s of sampling, however long the start took on a loaded machine. */
	assert_true(tu_wait_log(log, "agent: sampling", 30000));
	sleep(4);
	stop_agent(agent, log);
	tu_reap(wl);
	tu_reap(odd_wl);
	tu_reap(rx);

	check(records, "--mode otlp --transport grpc --pid %d --service fp_chain", wl);
	check(records, "--mode continuity --transport grpc --pid %d --min-seconds 3", wl);
	check(records, "--mode pyroscope --pid %d --service fp_chain --auth tenant:secret", wl);
	/* The gRPC replies' partial_success (behind the 5-byte prefix), said once. */
	assert_int_equal(count_lines_with(log, PARTIAL_MSG), 1);
	tu_rmtree(dir);
	free(dir);
}

/* OTLP/HTTP with an auth header and an explicit service name; the receiver keeps
 * each request partly, which the agent says once. */
static void test_http(void **state)
{
	char *dir = tu_mkdtemp(), records[1100], log[1100], endpoint[64], pid_s[16];
	int hport = tu_free_port();
	pid_t wl, rx, agent;

	(void)state;
	snprintf(records, sizeof(records), "%s/records.jsonl", dir);
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	assert_true(hport > 0);
	snprintf(endpoint, sizeof(endpoint), "127.0.0.1:%d", hport);
	partial_success = PARTIAL_MSG;
	rx = start_receiver(records, 0, hport, NULL);
	partial_success = NULL;
	assert_true(rx > 0);
	wl = tu_workload_start("fp_chain", 60);
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
				      "--header",
				      "Authorization=Bearer e2e-token",
				      "--service-name",
				      "checkout",
				      NULL};

		agent = start_agent(log, args);
	}
	assert_true(tu_wait_log(log, "agent: sampling", 30000));
	/* libcurl is opened for the exporter (util/curl_api.h); nothing else of the lazy ones. */
	assert_int_equal(tu_maps_has(agent, "/libcurl.so.4"), 1);
	assert_int_equal(tu_maps_has(agent, "/libdebuginfod"), 0);
	assert_int_equal(tu_maps_has(agent, "/libmicrohttpd.so"), 0);
	sleep(4);
	stop_agent(agent, log);
	tu_reap(wl);
	tu_reap(rx);

	check(records,
	      "--mode otlp --transport http --pid %d --service checkout "
	      "--authorization 'Bearer e2e-token'",
	      wl);
	/* Every interval's reply said it; the log says it once. */
	assert_int_equal(count_lines_with(log, PARTIAL_MSG), 1);
	tu_rmtree(dir);
	free(dir);
}

/*
 * gRPC over mutual TLS, configured the OpenTelemetry way (OTEL_EXPORTER_OTLP_
 * ENDPOINT, _CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY), against a CA
 * this test makes: the agent trusting that CA delivers; one trusting another
 * CA, at the same time, delivers nothing and says why in one line.
 */
static void test_grpc_tls(void **state)
{
	char *dir = tu_mkdtemp(), records[1100], log[1100], bad_log[1100], endpoint[64];
	char pid_s[16], path[1100], *out = NULL;
	int gport = tu_free_port(), rc;
	pid_t wl, rx, agent, bad;

	(void)state;
	rc = tu_run(&out,
		    "cd %s && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem "
		    "-days 1 -subj '/CN=omniprof test CA' && "
		    "openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other-ca.pem "
		    "-days 1 -subj '/CN=omniprof test CA' && "
		    "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
		    "-subj '/CN=localhost' && "
		    "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > ext && "
		    "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
		    "-out server.pem -days 1 -extfile ext && "
		    "openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr "
		    "-subj '/CN=omniprof agent' && "
		    "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
		    "-out client.pem -days 1",
		    dir);
	if (rc)
		print_error("openssl failed:\n%s\n", out ? out : "");
	free(out);
	assert_int_equal(rc, 0);
	snprintf(records, sizeof(records), "%s/records.jsonl", dir);
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	snprintf(bad_log, sizeof(bad_log), "%s/bad-agent.log", dir);
	assert_true(gport > 0);
	rx = start_receiver(records, gport, 0, dir);
	assert_true(rx > 0);
	wl = tu_workload_start("fp_chain", 60);
	assert_true(wl > 0);
	snprintf(pid_s, sizeof(pid_s), "%d", wl);
	snprintf(endpoint, sizeof(endpoint), "https://localhost:%d", gport);
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint, 1);
	setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", 1);
	snprintf(path, sizeof(path), "%s/client.pem", dir);
	setenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", path, 1);
	snprintf(path, sizeof(path), "%s/client.key", dir);
	setenv("OTEL_EXPORTER_OTLP_CLIENT_KEY", path, 1);
	{
		const char *args[] = {"--interval", "1", "-F", "99", "-p", pid_s, NULL};
		/* What it holds at the stop is never delivered: no need to wait for it. */
		const char *bad_args[] = {"--interval",	     "1", "-F", "99", "-p", pid_s,
					  "--flush-timeout", "1", NULL};

		/* The same CA name, another key: only the signature tells them apart. */
		snprintf(path, sizeof(path), "%s/other-ca.pem", dir);
		setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", path, 1);
		setenv("OTEL_SERVICE_NAME", "other-ca", 1);
		bad = start_agent(bad_log, bad_args);
		unsetenv("OTEL_SERVICE_NAME");
		snprintf(path, sizeof(path), "%s/ca.pem", dir);
		setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", path, 1);
		agent = start_agent(log, args);
	}
	unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	unsetenv("OTEL_EXPORTER_OTLP_PROTOCOL");
	unsetenv("OTEL_EXPORTER_OTLP_CERTIFICATE");
	unsetenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE");
	unsetenv("OTEL_EXPORTER_OTLP_CLIENT_KEY");
	assert_true(tu_wait_log(log, "agent: sampling", 30000));
	assert_true(tu_wait_log(bad_log, "export failing", 30000));
	sleep(3);
	stop_agent(bad, bad_log);
	stop_agent(agent, log);
	tu_reap(wl);
	tu_reap(rx);

	check(records, "--mode otlp --transport grpc --pid %d --service fp_chain", wl);
	/* The other CA: refused in the handshake, said once, with the file trusted. */
	assert_int_equal(count_lines_with(records, "other-ca"), 0);
	assert_int_equal(count_lines_with(bad_log, "export failing"), 1);
	snprintf(path, sizeof(path),
		 "export failing (the receiver's certificate is not trusted by the CA file "
		 "%s/other-ca.pem: SSL certificate problem",
		 dir);
	assert_int_equal(count_lines_with(bad_log, path), 1);
	assert_int_equal(count_lines_with(bad_log, "0 intervals delivered"), 1);
	tu_rmtree(dir);
	free(dir);
}

/*
 * The backend is down for the agent's first 12 s, then comes up: every
 * interval since the start still arrives (the queue holds 60), the outage is
 * logged once when it starts and once when it ends, and sampling went on.
 */
static void test_backend_down_then_back(void **state)
{
	char *dir = tu_mkdtemp(), records[1100], log[1100], endpoint[64], pid_s[16];
	int gport = tu_free_port();
	pid_t wl, rx, agent;

	(void)state;
	snprintf(records, sizeof(records), "%s/records.jsonl", dir);
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	assert_true(gport > 0);
	snprintf(endpoint, sizeof(endpoint), "127.0.0.1:%d", gport);
	wl = tu_workload_start("fp_chain", 90);
	assert_true(wl > 0);
	snprintf(pid_s, sizeof(pid_s), "%d", wl);
	{
		const char *args[] = {
		    "--interval",      "1",	 "-F",		 "99", "-p", pid_s,
		    "--otlp-endpoint", endpoint, "--queue-size", "60", NULL};

		/* Plain text as the OTel spec has it: the variable, for an endpoint without
		 * a scheme (the gRPC receiver here is h2c). */
		setenv("OTEL_EXPORTER_OTLP_INSECURE", "true", 1);
		agent = start_agent(log, args);
		unsetenv("OTEL_EXPORTER_OTLP_INSECURE");
	}
	/* 12 s: past the backoff's growth to its longest (1, 2, 4, 8 s). */
	sleep(12);
	rx = start_receiver(records, gport, 0, NULL);
	assert_true(rx > 0);
	sleep(8); /* the longest backoff is 8 s: the queue drains within it */
	stop_agent(agent, log);
	tu_reap(wl);
	tu_reap(rx);

	/* Consecutive intervals spanning at least the outage reached the receiver. */
	check(records, "--mode continuity --transport grpc --pid %d --min-seconds 12", wl);
	check(records, "--mode otlp --transport grpc --pid %d --service fp_chain", wl);
	assert_int_equal(count_lines_with(log, "export failing"), 1);
	assert_int_equal(count_lines_with(log, "export recovered"), 1);
	assert_int_equal(
	    count_lines_with(log, "dropped: 0 (queue full), 0 (rejected), 0 (at exit)"), 1);
	tu_rmtree(dir);
	free(dir);
}

/*
 * Runs wl_argv under `agent -p` (1 s intervals, 99 Hz, OTLP/gRPC to the test
 * receiver, service `service`) for `seconds`, then stops the workload and
 * checks the records with check.js, its arguments `--file RECORDS --pid PID`
 * followed by check_args; returns check.js's exit code.
 */
static int run_script_agent(char *const wl_argv[], const char *service, unsigned int seconds,
			    const char *check_args)
{
	char *dir = tu_mkdtemp(), records[1100], log[1100], endpoint[64], pid_s[16], *out = NULL;
	int gport = tu_free_port(), rc;
	pid_t wl, rx, agent;

	assert_non_null(dir);
	snprintf(records, sizeof(records), "%s/records.jsonl", dir);
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	assert_true(gport > 0);
	snprintf(endpoint, sizeof(endpoint), "127.0.0.1:%d", gport);
	rx = start_receiver(records, gport, 0, NULL);
	assert_true(rx > 0);
	wl = tu_spawn_ready(wl_argv);
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
				      "--insecure",
				      "--service-name",
				      service,
				      NULL};

		agent = start_agent(log, args);
	}
	sleep(seconds);
	stop_agent(agent, log);
	tu_reap(wl);
	tu_reap(rx);

	rc = tu_run(&out,
		    "node tests/e2e/otlp/check.js --file %s --pid %d --frequency %d --mode otlp "
		    "--transport grpc --service %s %s",
		    records, wl, HZ, service, check_args);
	printf("    %s", out ? out : "(no output)\n");
	free(out);
	tu_rmtree(dir);
	free(dir);
	return rc;
}

/*
 * A CPython process (Debian's python3 running tests/workloads/python/py_chain.py):
 * its Python functions arrive as `cpython` frames of the script, each caller
 * at the line that calls the next, between the interpreter's native frames
 * (check.js --python-script).
 */
static void test_python_frames(void **state)
{
	char python[1024], script[PATH_MAX], chain[512], check[3 * PATH_MAX];
	char *wl_argv[] = {python, script, "60", NULL};
	unsigned int minor;
	size_t off;

	(void)state;
	if (tu_distro_python(python, sizeof(python), &minor))
		fail_msg("no python3 of Debian's python3-minimal package");
	assert_non_null(realpath("tests/workloads/python/py_chain.py", script));
	off = (size_t)snprintf(chain, sizeof(chain), "<module>,main,run");
	for (int i = 1; i <= 10; i++)
		off += (size_t)snprintf(chain + off, sizeof(chain) - off, ",link_%02d", i);
	snprintf(chain + off, sizeof(chain) - off, ",rec,py_leaf");
	snprintf(check, sizeof(check), "--exe %s --chain '%s' --python-script %s", python, chain,
		 script);
	assert_int_equal(run_script_agent(wl_argv, "pyapp", 5, check), 0);
}

/*
 * A node process (the installed node running tests/workloads/v8/v8_chain.js,
 * its warm chain: TurboFan code, no flags): its JavaScript functions arrive
 * as `v8js` frames of the script, each caller at the line that calls the
 * next, the leaf in its own body, node's own frames `native`
 * (check.js --v8-script). V8 is named once node's 98 MB table is built:
 * a longer run than Python's.
 */
static void test_v8_frames(void **state)
{
	char node[PATH_MAX], script[PATH_MAX], check[3 * PATH_MAX];
	char *wl_argv[] = {node, script, "120", "warm", NULL};

	(void)state;
	assert_non_null(realpath("/usr/bin/node", node));
	assert_non_null(realpath("tests/workloads/v8/v8_chain.js", script));
	snprintf(check, sizeof(check), "--exe %s --chain main,render,layout,measure --v8-script %s",
		 node, script);
	assert_int_equal(run_script_agent(wl_argv, "nodeapp", 15, check), 0);
}

int main(void)
{
	const struct CMUnitTest all[] = {
	    cmocka_unit_test(test_grpc_and_pyroscope),
	    cmocka_unit_test(test_http),
	    cmocka_unit_test(test_grpc_tls),
	    cmocka_unit_test(test_backend_down_then_back),
	    cmocka_unit_test(test_python_frames),
	    cmocka_unit_test(test_v8_frames),
	};
	struct CMUnitTest tests[sizeof(all) / sizeof(all[0])];
	const char *only = getenv("AGENT_CASE"); /* run the tests whose name holds it */
	size_t n = 0;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!only || strstr(all[i].name, only))
			tests[n++] = all[i];
	return _cmocka_run_group_tests("tests", tests, n, setup, NULL);
}
