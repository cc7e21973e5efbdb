// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end: what the people who run the agent on a fleet rely on.
 *
 * One short agent run (real BPF, tests/workloads/fp_chain.c, the Node.js
 * receiver of test_agent) configured the way a deployment does it: a
 * --config file, the OpenTelemetry SDK's OTEL_* variables over it, a flag
 * over both. What arrives proves each precedence (endpoint, protocol,
 * header, service name, resource attributes, frequency); the agent's own
 * metrics are scraped during the run and parsed with the Prometheus
 * client's parser; its log is --log-format json, every line parsed.
 * Then malformed endpoints (flag, file, environment) stop the start with
 * exit 2 and one line, before anything is loaded.
 *
 * And the packaging: `make install PREFIX= DESTDIR=` into a temporary
 * folder, the installed binary runs, its man page renders without groff
 * warnings and documents every option --help lists, bash completion
 * completes options from the installed binary, the systemd unit passes
 * `systemd-analyze verify` and its offline security review, and the
 * Kubernetes DaemonSet's structure holds, with memory limits checked
 * against the RSS this run measured.
 */
#include <errno.h>
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
#include "folded_check.h"
#include "testutil.h"

#define HZ     99
#define PYTHON "/usr/bin/python3" /* Debian's, with python3-prometheus-client and -yaml */

static char chain_arg[512];
static char exe_path[1024];
static double measured_footprint; /* RSS + BPF maps, bytes, from the metrics scrape; 0: none */

static int setup(void **state)
{
	(void)state;
	fp_chain__names(chain_arg, sizeof(chain_arg));
	return tu_workload_path("fp_chain", exe_path, sizeof(exe_path));
}

static const char *const otel_vars[] = {
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION",
};

static void clear_otel_env(void)
{
	for (size_t i = 0; i < sizeof(otel_vars) / sizeof(otel_vars[0]); i++)
		unsetenv(otel_vars[i]);
}

static void run_check(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs a checker command line; prints its output, fails the test unless it exits 0. */
static void run_check(const char *fmt, ...)
{
	char cmd[4096], *out = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = tu_run(&out, "%s", cmd);
	printf("    %s", out ? out : "(no output)\n");
	if (out && strstr(out, "footprint_bytes "))
		measured_footprint = strtod(strstr(out, "footprint_bytes ") + 16, NULL);
	free(out);
	assert_int_equal(rc, 0);
}

/* The file < environment < command line run, metrics scraped, JSON log. */
static void test_settings_metrics_json_log(void **state)
{
	char *dir = tu_mkdtemp(), records[1100], log[1100], conf[1100], scrape[1100];
	char url[128], text[2048], pid_s[16];
	int hport = tu_free_port(), mport = tu_free_port(), status;
	pid_t wl, rx, agent;

	(void)state;
	assert_true(hport > 0 && mport > 0);
	snprintf(records, sizeof(records), "%s/records.jsonl", dir);
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	snprintf(conf, sizeof(conf), "%s/agent.conf", dir);
	snprintf(scrape, sizeof(scrape), "%s/metrics.txt", dir);
	{
		char gp[16] = "0", hp[16];
		const char *args[] = {"--out", records, "--max-seconds", "60", "--http-port",
				      hp,      NULL};

		(void)gp;
		snprintf(hp, sizeof(hp), "%d", hport);
		rx = tu_node_start("receiver.js", args);
		assert_true(rx > 0);
	}
	wl = tu_workload_start("fp_chain", 30);
	assert_true(wl > 0);
	snprintf(pid_s, sizeof(pid_s), "%d", wl);

	/* The file: everything a deployment would put there; much of it overridden below. */
	snprintf(text, sizeof(text),
		 "# omniprof agent, as a fleet deploys it\n"
		 "interval = 1\n"
		 "frequency = 50\n"
		 "otlp-endpoint = http://127.0.0.1:1\n"
		 "otlp-protocol = grpc\n"
		 "service-name = from-file\n"
		 "header = Authorization=Bearer file-token\n"
		 "resource-attributes = deployment.environment.name=from-file,region=eu\n"
		 "metrics-listen = 127.0.0.1:%d\n"
		 "log-format = json\n"
		 "verbose = 1\n"
		 "flush-timeout = 5\n",
		 mport);
	assert_int_equal(tu_write_file(conf, text), 0);
	/* The environment beats the file: the profiles endpoint is used as it is (the path
	 * the receiver serves; a second path appended would be refused), the profiles
	 * protocol beats the generic one, the generic endpoint loses to the specific one. */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1development/profiles", hport);
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:2", 1);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", url, 1);
	setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", 1);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", "http/protobuf", 1);
	setenv("OTEL_EXPORTER_OTLP_HEADERS", " Authorization = Bearer%20env-token ", 1);
	setenv("OTEL_SERVICE_NAME", "from-env", 1);
	setenv("OTEL_RESOURCE_ATTRIBUTES",
	       "deployment.environment.name=e2e,service.name=loses-to-OTEL_SERVICE_NAME,"
	       "team=prof%2Cfleet",
	       1);
	setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "5000", 1);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION", "none", 1);
	{
		/* The command line beats both: -F. */
		const char *args[] = {"--config", conf, "-F", "99", "-p", pid_s, NULL};

		agent = tu_omniprof_start(log, "agent", args);
		assert_true(agent > 0);
	}
	clear_otel_env();
	if (!tu_wait_log(log, "agent: sampling", 30000)) {
		tu_print_log("agent log", log);
		fail_msg("the agent did not start");
	}
	/* Scrape once the page shows an interval delivered (the page is rendered at each
	 * interval's end, so under load that may take a few intervals). */
	TU_SH("for i in $(seq 40); do sleep 0.5; curl -sSf --max-time 5 -o %s "
	      "http://127.0.0.1:%d/metrics && grep -q "
	      "'^omniprof_export_sent_total{destination=\"otlp\"} [1-9]' %s && exit 0; done; "
	      "cat %s; exit 1",
	      scrape, mport, scrape, scrape);
	TU_SH("test \"$(curl -s -o /dev/null -w '%%{http_code}' http://127.0.0.1:%d/other)\" = 404",
	      mport);
	kill(agent, SIGTERM);
	status = tu_wait_bounded(agent, 20000, 100, NULL);
	tu_print_log("agent log", log);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	tu_reap(wl);
	tu_reap(rx);

	run_check("node tests/e2e/otlp/check.js --file %s --mode otlp --transport http --pid %d "
		  "--exe %s --chain %s --frequency %d --service from-env "
		  "--authorization 'Bearer env-token' "
		  "--resource-attrs '{\"deployment.environment.name\":\"e2e\","
		  "\"region\":\"eu\",\"team\":\"prof,fleet\"}'",
		  records, wl, exe_path, chain_arg, HZ);
	/* OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION=none: the bodies came as they are. */
	TU_SH("grep -q '\"content-encoding\":\"gzip\"' %s; test $? = 1", records);
	run_check(PYTHON " tests/e2e/fleet_check.py metrics %s", scrape);
	run_check(PYTHON " tests/e2e/fleet_check.py jsonlog %s", log);
	tu_rmtree(dir);
	free(dir);
}

/*
 * record takes the same --config file (every long option, -d as duration)
 * and serves the same self-metrics while it runs: scraped during a short
 * recording configured only by the file, judged by the Prometheus parser.
 */
static void test_record_config_metrics(void **state)
{
	char *dir = tu_mkdtemp(), conf[1100], log[1100], scrape[1100], text[2048];
	int mport = tu_free_port(), status;
	pid_t wl, rec;

	(void)state;
	assert_true(mport > 0);
	snprintf(conf, sizeof(conf), "%s/record.conf", dir);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	snprintf(scrape, sizeof(scrape), "%s/metrics.txt", dir);
	wl = tu_workload_start("fp_chain", 30);
	assert_true(wl > 0);
	snprintf(text, sizeof(text),
		 "# a recording, configured by its file alone\n"
		 "duration = 4\n"
		 "frequency = %d\n"
		 "pid = %d\n"
		 "output = %s/rec\n"
		 "metrics-listen = 127.0.0.1:%d\n",
		 HZ, (int)wl, dir, mport);
	assert_int_equal(tu_write_file(conf, text), 0);
	{
		const char *args[] = {"--config", conf, NULL};

		rec = tu_omniprof_start(log, "record", args);
		assert_true(rec > 0);
	}
	/* The page is rendered every second while sampling: scrape once it counts samples. */
	TU_SH("for i in $(seq 60); do sleep 0.25; curl -sSf --max-time 5 -o %s "
	      "http://127.0.0.1:%d/metrics 2>/dev/null && grep -q '^omniprof_samples_total [1-9]' "
	      "%s && exit 0; done; cat %s; exit 1",
	      scrape, mport, scrape, scrape);
	status = tu_wait_bounded(rec, 30000, 100, NULL);
	tu_print_log("record log", log);
	tu_reap(wl);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The file's -F, -p, -d and -o were applied. */
	TU_SH("grep -q 'at %d Hz' %s && grep -q ';main;chain_01;.*;chain_24;leaf' "
	      "%s/rec/stacks.folded",
	      HZ, log, dir);
	run_check(PYTHON " tests/e2e/fleet_check.py metrics %s record", scrape);
	tu_rmtree(dir);
	free(dir);
}

/* Runs `omniprof agent ARGS` (a shell line) that must be refused before loading
 * anything: exit 2, n_lines lines (the error and any warnings before it), which
 * name want. */
static void expect_refused_n(const char *env, const char *args, size_t n_lines, const char *want)
{
	char *out = NULL;
	int rc = tu_run(&out, "%s %s agent %s 2>&1", env, tu_omniprof_path(), args);
	size_t lines = 0;

	printf("    %s", out ? out : "(none)\n");
	assert_non_null(out);
	for (const char *p = out; *p; p++)
		lines += *p == '\n';
	assert_int_equal(rc, 2);
	assert_int_equal(lines, n_lines);
	assert_non_null(strstr(out, want));
	free(out);
}

static void expect_refused(const char *env, const char *args, const char *want)
{
	expect_refused_n(env, args, 1, want);
}

static void test_malformed_endpoints(void **state)
{
	char *dir = tu_mkdtemp(), conf[1100];

	(void)state;
	expect_refused("", "--otlp-endpoint 'http://collector:99999'", "--otlp-endpoint");
	expect_refused("", "--otlp-endpoint 'http://bad host:4317'", "white space");
	expect_refused("", "--pyroscope-url collector:4040", "--pyroscope-url");
	expect_refused("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT='ftp://collector/'", "",
		       "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT");
	expect_refused("OTEL_EXPORTER_OTLP_ENDPOINT='http://[::1'", "",
		       "OTEL_EXPORTER_OTLP_ENDPOINT");
	expect_refused("OTEL_EXPORTER_OTLP_PROTOCOL=http/json", "--otlp-endpoint http://c:4318",
		       "OTEL_EXPORTER_OTLP_PROTOCOL: --otlp-protocol: 'http/json'");
	/* A header list the spec's rules refuse is ignored with a warning (as the spec
	 * asks); the bad endpoint after it still stops the start. */
	expect_refused_n(
	    "OTEL_EXPORTER_OTLP_HEADERS='a=1,b' OTEL_EXPORTER_OTLP_ENDPOINT=http://c:0", "", 2,
	    "warn OTEL_EXPORTER_OTLP_HEADERS ignored");
	expect_refused("", "--otlp-endpoint http://c:4317 --metrics-listen 127.0.0.1:0",
		       "--metrics-listen");
	snprintf(conf, sizeof(conf), "%s/agent.conf", dir);
	assert_int_equal(tu_write_file(conf, "otlp-endpoint = https://collector:4317\n"
					     "frequncy = 99\n"),
			 0);
	{
		char args[1200];

		snprintf(args, sizeof(args), "--config %s", conf);
		expect_refused("", args, "agent.conf:2: 'frequncy' is not an option of agent");
		/* A value from the file: its line is named. */
		assert_int_equal(
		    tu_write_file(conf, "\n otlp-endpoint = https://collector:65536\n"), 0);
		expect_refused("", args, "(/tmp/");
		expect_refused("", args, "agent.conf:2) is not usable");
		assert_int_equal(tu_write_file(conf, "frequency = 0\n"), 0);
		expect_refused("", args, "agent.conf:1: -F: '0' is not a frequency");
	}
	tu_rmtree(dir);
	free(dir);
}

/* make install into a temporary folder, and what it installs. */
static void test_install_and_packaging(void **state)
{
	char *dir = tu_mkdtemp(), *help = NULL, *man = NULL;
	const char *build = tu_build_dir();
	static const char *const cmds[] = {"record", "agent", "symbolize", "serve"};
	char rss[32];

	(void)state;
	/* Staged (DESTDIR), as a package build does it. */
	TU_SH("make --no-print-directory -s install BUILD=%s PREFIX=/usr DESTDIR=%s/stage", build,
	      dir);
	TU_SH("%s/stage/usr/bin/omniprof --help | grep -q '^usage: omniprof'", dir);
	TU_SH("%s/stage/usr/bin/omniprof agent --help | grep -q -- --metrics-listen", dir);
	TU_SH("test -f %s/stage/etc/omniprof/agent.conf", dir);
	TU_SH("grep -q '^ExecStart=/usr/bin/omniprof agent --config /etc/omniprof/agent.conf$' "
	      "%s/stage/usr/lib/systemd/system/omniprof-agent.service",
	      dir);

	/* The man page renders without a warning and documents every option. */
	assert_int_equal(tu_run(&man,
				"LC_ALL=C MANWIDTH=200 man --warnings -l "
				"%s/stage/usr/share/man/man1/omniprof.1 2>&1",
				dir),
			 0);
	assert_non_null(man);
	assert_non_null(strstr(man, "OMNIPROF(1)"));
	assert_null(strstr(man, "warning:"));
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *p;

		free(help);
		help = NULL;
		assert_int_equal(tu_run(&help,
					"%s/stage/usr/bin/omniprof %s --help | grep -oE -- "
					"'--[a-z][a-z0-9-]+' | sort -u",
					dir, cmds[i]),
				 0);
		for (p = strtok(help, "\n"); p; p = strtok(NULL, "\n")) {
			if (!strstr(man, p))
				fail_msg("the man page does not document %s %s", cmds[i], p);
		}
	}

	/* Bash completion: options from the installed binary, values of a few. */
	TU_SH(
	    "bash -c 'source %1$s/stage/usr/share/bash-completion/completions/omniprof; "
	    "COMP_WORDS=(%1$s/stage/usr/bin/omniprof agent --metrics-l); COMP_CWORD=2; _omniprof; "
	    "test \"${COMPREPLY[*]}\" = --metrics-listen; "
	    "COMP_WORDS=(%1$s/stage/usr/bin/omniprof record --metrics-l); COMP_CWORD=2; "
	    "_omniprof; test \"${COMPREPLY[*]}\" = --metrics-listen; "
	    "COMP_WORDS=(omniprof agent --log-format j); COMP_CWORD=3; _omniprof; "
	    "test \"${COMPREPLY[*]}\" = json; "
	    "COMP_WORDS=(omniprof sym); COMP_CWORD=1; _omniprof; "
	    "test \"${COMPREPLY[*]}\" = symbolize'",
	    dir);

	/* The unit, installed under its own prefix so ExecStart names a real file and
	 * man finds omniprof(1): systemd's own checks. */
	TU_SH("make --no-print-directory -s install BUILD=%s PREFIX=%s/usr", build, dir);
	TU_SH("MANPATH=%1$s/usr/share/man systemd-analyze verify "
	      "%1$s/usr/lib/systemd/system/omniprof-agent.service",
	      dir);
	TU_SH("systemd-analyze security --offline=yes --threshold=40 "
	      "%s/usr/lib/systemd/system/omniprof-agent.service >/dev/null",
	      dir);
	/* Capabilities only: no ambient ones, no CAP_SYS_ADMIN, the agent's list bounded. */
	TU_SH("grep -q '^CapabilityBoundingSet=CAP_BPF CAP_PERFMON ' "
	      "%s/usr/lib/systemd/system/omniprof-agent.service",
	      dir);
	TU_SH("! grep -v '^#' %s/usr/lib/systemd/system/omniprof-agent.service | "
	      "grep -q 'CAP_SYS_ADMIN\\|^AmbientCapabilities=.'",
	      dir);

	/* The unit's capabilities are enough: a recording with exactly that bounding set
	 * (uid 0, as the unit runs it) gets whole stacks, kernel frames named. */
	{
		pid_t wl = tu_workload_start("fp_chain", 20);
		char *out = NULL;
		int rc;

		assert_true(wl > 0);
		rc = tu_run(&out,
			    "caps=$(sed -n 's/^CapabilityBoundingSet=//p' "
			    "%1$s/usr/lib/systemd/system/omniprof-agent.service | "
			    "tr A-Z a-z | sed 's/cap_/+/g; s/ /,/g') && "
			    "setpriv --bounding-set=-all,$caps --no-new-privs sh -c "
			    "'sed -n \"s/^CapEff:[[:space:]]*/capeff=/p\" /proc/self/status; "
			    "exec %2$s record -d 2 -F 99 -p %3$d -o %1$s/rec' 2>&1 && "
			    "grep -c ';main;chain_01;.*;chain_24;leaf' %1$s/rec/stacks.folded",
			    dir, tu_omniprof_path(), (int)wl);
		tu_reap(wl);
		printf("    %s", out ? out : "(none)\n");
		assert_int_equal(rc, 0);
		assert_non_null(strstr(out, "Truncated:  0 "));
		assert_non_null(strstr(out, "capeff="));
		{
			unsigned long long eff = strtoull(strstr(out, "capeff=") + 7, NULL, 16);

			assert_true(eff & (1ull << 39));  /* CAP_BPF */
			assert_true(eff & (1ull << 38));  /* CAP_PERFMON */
			assert_false(eff & (1ull << 21)); /* CAP_SYS_ADMIN */
			assert_false(eff & (1ull << 1));  /* CAP_DAC_OVERRIDE */
		}
		free(out);
	}

	/* The DaemonSet, against the RSS + BPF map memory the metrics test measured (BPF
	 * maps are charged to the pod's memory cgroup too), or a floor. */
	snprintf(rss, sizeof(rss), "%.0f",
		 measured_footprint > 0 ? measured_footprint : 64.0 * 1048576);
	run_check(PYTHON " tests/e2e/fleet_check.py daemonset "
			 "packaging/kubernetes/omniprof-agent.yaml %s",
		  rss);
	free(help);
	free(man);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_settings_metrics_json_log),
	    cmocka_unit_test(test_record_config_metrics),
	    cmocka_unit_test(test_malformed_endpoints),
	    cmocka_unit_test(test_install_and_packaging),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
