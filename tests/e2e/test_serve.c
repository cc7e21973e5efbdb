// SPDX-License-Identifier: Apache-2.0
/*
 * omniprof serve end to end, one recording for every assertion (about 30 s):
 * the real agent profiles fp_chain and reports over OTLP/HTTP, then
 * deep_recursion over OTLP/gRPC (the agent's default protocol), both with
 * the auth token; /api/folded holds each workload's leaf chain; requests
 * without or with a wrong token get 401; a malformed body gets 400 and
 * changes nothing; then tests/serve/browser.js drives Debian's chromium
 * over the page (screenshots in build/serve-shots/).
 *
 * Firefox: OMNIPROF_SERVE_FIREFOX=1 runs the same browser test in Debian's
 * firefox-esr too (WebDriver BiDi). Not in `make test`: firefox-esr is a
 * 300 MB install and the run takes about 40 s on the CI machine, past the
 * suite's budget; install it by hand (apt-get install firefox-esr) to run it.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "omniprof_run.h"
#include "testutil.h"

static char token[] = "e2e-token-0123456789abcdef";

static pid_t start_agent(const char *log, const char *endpoint, const char *protocol, pid_t wl)
{
	char pid_s[16], header[128];
	const char *args[] = {"--interval",
			      "1",
			      "-F",
			      "99",
			      "-p",
			      pid_s,
			      "--otlp-endpoint",
			      endpoint,
			      "--otlp-protocol",
			      protocol,
			      "--insecure",
			      "--header",
			      header,
			      NULL};
	pid_t pid;

	snprintf(pid_s, sizeof(pid_s), "%d", wl);
	snprintf(header, sizeof(header), "Authorization=Bearer %s", token);
	pid = tu_omniprof_start(log, "agent", args);
	assert_true(pid > 0);
	return pid;
}

static void stop(pid_t pid, const char *log, const char *what)
{
	int status;

	kill(pid, SIGTERM);
	status = tu_wait_bounded(pid, 20000, 50, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		tu_print_log(what, log);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* One workload profiled for `seconds` by an agent; [*from, *to) brackets it. */
static void phase(const char *dir, const char *workload, const char *wl_arg2, const char *endpoint,
		  const char *protocol, int seconds, long *from, long *to)
{
	char log[1100], wl_path[1100], secs[16];
	char *wl_argv[] = {wl_path, secs, (char *)wl_arg2, NULL};
	pid_t wl, agent;

	snprintf(log, sizeof(log), "%s/agent-%s.log", dir, protocol);
	snprintf(wl_path, sizeof(wl_path), "%s/workloads/%s", tu_build_dir(), workload);
	snprintf(secs, sizeof(secs), "%d", seconds + 10);
	wl = tu_spawn_ready(wl_argv);
	assert_true(wl > 0);
	*from = time(NULL);
	agent = start_agent(log, endpoint, protocol, wl);
	assert_true(tu_wait_log(log, "sampling", 10000));
	sleep((unsigned)seconds);
	stop(agent, log, "agent log");
	*to = time(NULL) + 1;
	kill(wl, SIGKILL);
	tu_reap(wl);
	assert_true(tu_log_has(log, "0 (rejected)"));
}

static long long samples_stored(const char *base)
{
	char *out = NULL;
	long long n = -1;
	const char *p;

	tu_run(&out, "curl -s -H 'Authorization: Bearer %s' %s/api/meta", token, base);
	if (out && (p = strstr(out, "\"samples\":")))
		n = atoll(p + 10);
	free(out);
	return n;
}

/* serve on [::1]: the page's port answers, and the gRPC port decodes (and refuses) a request. */
static void v6_listeners(const char *dir)
{
	char log[1100], listen[64], glisten[64], db[1100], *out = NULL;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/serve6.log", dir);
	snprintf(db, sizeof(db), "%s/v6.db", dir);
	snprintf(listen, sizeof(listen), "[::1]:%d", tu_free_port());
	snprintf(glisten, sizeof(glisten), "[::1]:%d", tu_free_port());
	{
		const char *args[] = {"--listen", listen, "--grpc-listen", glisten, "--db",
				      db,	  NULL};

		pid = tu_omniprof_start(log, "serve", args);
		assert_true(pid > 0);
	}
	assert_true(tu_wait_log(log, "database", 10000));
	tu_run(&out, "curl -s -g 'http://%s/api/meta'", listen);
	if (!out || !strstr(out, "\"samples\":0"))
		fail_msg("serve on %s: /api/meta said %s", listen, out ? out : "(none)");
	free(out);
	tu_run(
	    &out,
	    "printf '\\000\\000\\000\\000\\003\\012\\001\\377' | curl -s -g "
	    "--http2-prior-knowledge -H 'content-type: application/grpc' --data-binary @- -D - -o "
	    "/dev/null "
	    "'http://%s/opentelemetry.proto.collector.profiles.v1development.ProfilesService/"
	    "Export'",
	    glisten);
	if (!out || !strstr(out, "grpc-status: 3"))
		fail_msg("gRPC on %s: %s", glisten, out ? out : "(none)");
	free(out);
	stop(pid, log, "serve [::1] log");
}

static void test_serve(void **state)
{
	char *dir = tu_mkdtemp(), db[1100], tokf[1100], log[1100], listen[64], glisten[64];
	char base[96], *out = NULL, cmd[4096];
	int hport = tu_free_port(), gport = tu_free_port(), rc;
	long a0, a1, b0, b1;
	long long before;
	pid_t serve;

	(void)state;
	assert_true(hport > 0 && gport > 0 && hport != gport);
	snprintf(db, sizeof(db), "%s/serve.db", dir);
	snprintf(tokf, sizeof(tokf), "%s/token", dir);
	snprintf(log, sizeof(log), "%s/serve.log", dir);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", hport);
	snprintf(glisten, sizeof(glisten), "127.0.0.1:%d", gport);
	snprintf(base, sizeof(base), "http://%s", listen);
	assert_int_equal(tu_write_file(tokf, token), 0);
	{
		const char *args[] = {"--listen", listen, "--grpc-listen",     glisten,
				      "--db",	  db,	  "--auth-token-file", tokf,
				      NULL};

		serve = tu_omniprof_start(log, "serve", args);
		assert_true(serve > 0);
	}
	assert_true(tu_wait_log(log, "database", 10000));

	/* A non-loopback address without a token is refused. */
	rc = tu_run(&out, "%s serve --listen 0.0.0.0:%d --db %s/other.db", tu_omniprof_path(),
		    tu_free_port(), dir);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(out, "without --auth-token-file"));
	free(out);

	/* Nor is IPv6's any-address; IPv6 loopback is served (both ports) without one. */
	rc = tu_run(&out, "%s serve --listen '[::]:%d' --db %s/other.db", tu_omniprof_path(),
		    tu_free_port(), dir);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(out, "without --auth-token-file"));
	free(out);
	v6_listeners(dir);

	phase(dir, "fp_chain", NULL, listen, "http", 4, &a0, &a1);
	/* Whole seconds apart: the page's brush rounds a range out to whole seconds, so the
	 * second range's first samples must not share a second with the first's last. */
	sleep(2);
	phase(dir, "deep_recursion", "40", glisten, "grpc", 4, &b0, &b1);

	/* The folded stacks of each range hold the workload's chain, comm first. */
	tu_run(&out, "curl -s -H 'Authorization: Bearer %s' '%s/api/folded?from=%ld&to=%ld'", token,
	       base, a0, a1);
	assert_non_null(out);
	if (!strstr(out, "fp_chain;") || !strstr(out, ";main;chain_01;chain_02;") ||
	    !strstr(out, ";chain_24;leaf"))
		fail_msg("OTLP/HTTP range: no fp_chain leaf chain in /api/folded:\n%s", out);
	free(out);
	tu_run(&out, "curl -s -H 'Authorization: Bearer %s' '%s/api/folded?from=%ld&to=%ld'", token,
	       base, b0, b1);
	assert_non_null(out);
	if (!strstr(out, "deep_recursion;") || !strstr(out, ";recurse;recurse;leaf"))
		fail_msg("OTLP/gRPC range: no deep_recursion chain in /api/folded:\n%s", out);
	free(out);

	/* A large answer comes gzip'ed to a client that takes it, and inflates to the same text. */
	tu_run(&out,
	       "curl -s -D - -o %s/flame.gz -H 'Accept-Encoding: gzip' -H 'Authorization: Bearer "
	       "%s' '%s/api/flame?from=%ld&to=%ld' && curl -s -o %s/flame.json -H 'Authorization: "
	       "Bearer %s' '%s/api/flame?from=%ld&to=%ld' && gzip -dc %s/flame.gz | cmp - "
	       "%s/flame.json && echo same",
	       dir, token, base, a0, b1, dir, token, base, a0, b1, dir, dir);
	if (!out || !strcasestr(out, "content-encoding: gzip") || !strstr(out, "same"))
		fail_msg("gzip'ed flame answer: %s", out ? out : "(none)");
	free(out);

	/* Auth: none, a wrong one. */
	tu_run(&out, "curl -s -o /dev/null -w '%%{http_code}' %s/api/folded", base);
	assert_string_equal(out, "401");
	free(out);
	tu_run(&out,
	       "curl -s -o /dev/null -w '%%{http_code}' -H 'Authorization: Bearer %sx' "
	       "-X POST --data-binary x %s/v1development/profiles",
	       token, base);
	assert_string_equal(out, "401");
	free(out);

	/* Malformed OTLP: 400 with a reason, nothing stored. */
	before = samples_stored(base);
	assert_true(before > 0);
	tu_run(&out,
	       "printf '\\012\\005\\012\\003\\022\\001\\377' | curl -s -w ' %%{http_code}' -H "
	       "'Authorization: Bearer %s' -X POST --data-binary @- %s/v1development/profiles",
	       token, base);
	if (!strstr(out, "malformed OTLP profiles") || !strstr(out, " 400"))
		fail_msg("malformed body: %s", out);
	free(out);
	assert_int_equal(samples_stored(base), before);
	/* The same over gRPC: INVALID_ARGUMENT with the reason; UNAUTHENTICATED without the token.
	 */
	tu_run(
	    &out,
	    "printf '\\000\\000\\000\\000\\003\\012\\001\\377' | curl -s "
	    "--http2-prior-knowledge -H 'content-type: application/grpc' -H 'Authorization: "
	    "Bearer %s' --data-binary @- -D - -o /dev/null "
	    "http://%s/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export",
	    token, glisten);
	if (!strstr(out, "grpc-status: 3") || !strstr(out, "decoding failed"))
		fail_msg("malformed gRPC request: %s", out);
	free(out);
	tu_run(
	    &out,
	    "printf '\\000\\000\\000\\000\\000' | curl -s --http2-prior-knowledge -H "
	    "'content-type: application/grpc' --data-binary @- -D - -o /dev/null "
	    "http://%s/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export",
	    glisten);
	if (!strstr(out, "grpc-status: 16"))
		fail_msg("gRPC without the token: %s", out);
	free(out);
	assert_int_equal(samples_stored(base), before);

	/* The page in chromium. */
	snprintf(cmd, sizeof(cmd),
		 "NODE_PATH=%s/serve-node/node_modules node tests/serve/browser.js %s/ %s leaf %ld "
		 "%ld recurse %ld %ld %s/serve-shots",
		 tu_build_dir(), base, token, a0, a1, b0, b1, tu_build_dir());
	rc = tu_run(&out, "%s", cmd);
	printf("%s", out ? out : "(no output)\n");
	free(out);
	assert_int_equal(rc, 0);
	if (getenv("OMNIPROF_SERVE_FIREFOX") && !strcmp(getenv("OMNIPROF_SERVE_FIREFOX"), "1")) {
		rc = tu_run(&out, "%s --browser=firefox", cmd);
		printf("firefox:\n%s", out ? out : "(no output)\n");
		free(out);
		assert_int_equal(rc, 0);
	}

	stop(serve, log, "serve log");
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_serve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
