// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end symbolization: real recordings (BPF) of workloads whose names
 * must come from somewhere other than the binary's own symbol table:
 *
 *  - a stripped binary whose separate debug file is found through its
 *    .gnu_debuglink (next to it), and another through the build-id path
 *    under a --debug-dir root (so no test writes /usr/lib/debug);
 *  - an -O2 C++ program whose hot template is always inlined: it must be
 *    its own frame (a second line of the location in pprof) with the name
 *    each --demangle mode gives;
 *  - a Rust binary with v0 mangling, demangled;
 *  - a Go binary built with -ldflags='-s -w' (no .symtab, no DWARF), named
 *    from .gopclntab with file:line;
 *  - a recording with names absent, then `omniprof symbolize` with a folder
 *    holding the unstripped file: names present afterwards;
 *  - a debug file served by a local debuginfod (DEBUGINFOD_URLS).
 *
 * Each expected chain is the workload's call structure; at least 90% of the
 * samples in its leaf must carry the whole chain. Needs root and BPF.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/elf_file.h"
#include "folded_check.h"
#include "testutil.h"

#define RECORD_SECONDS 2
#define MIN_LEAF       20
#define GO_LINKS       12 /* go_chain.go: chain_01 .. chain_12 */

#define EXPECT(call) assert_int_equal((call), 0)

static const char *omniprof(void)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/omniprof", tu_build_dir());
	return path;
}

static const char *workload(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/workloads/%s", tu_build_dir(), name);
	return path;
}

/*
 * Starts bin (which prints "ready"), records it with extra options (and env,
 * a prefix for the command line) into dir/out, stops it. Returns the folded
 * stacks (caller frees).
 */
static char *record(const char *bin, const char *dir, const char *env, const char *extra)
{
	char *argv[] = {(char *)bin, "60", NULL}, *out = NULL, path[PATH_MAX], *text;
	pid_t pid = tu_spawn_ready(argv);
	int rc;

	if (pid <= 0)
		fail_msg("%s did not start", bin);
	rc = tu_run(&out, "%s %s record -p %d -d %d -F 99 -o %s/out %s", env ? env : "", omniprof(),
		    pid, RECORD_SECONDS, dir, extra ? extra : "");
	tu_reap(pid);
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	free(out);
	assert_int_equal(rc, 0);
	snprintf(path, sizeof(path), "%s/out/stacks.folded", dir);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	return text;
}

/* At least 90% of the leaf's samples of comm carry the whole chain. */
static void assert_chain(struct chain_spec *cs, const char *text, const char *comm)
{
	struct chain_count c = chain_spec__count_folded(cs, text, comm);

	printf("    %s: %ld of %ld leaf samples complete\n", comm, c.complete, c.leaf);
	if (c.worst)
		printf("      most frequent stack without the chain (%ld): %.*s\n", c.worst_count,
		       (int)c.worst_len, c.worst);
	fflush(stdout);
	assert_true(c.leaf >= MIN_LEAF);
	assert_true(c.complete * 100 >= c.leaf * 90);
}

/* `go tool pprof -raw` (no symbolization of its own) of a profile, caller frees. */
static char *pprof_raw(const char *profile)
{
	char *out = NULL;
	int rc = tu_run(&out,
			"HOME=/tmp GOCACHE=/tmp/omniprof-gocache go tool pprof "
			"-symbolize=none -raw %s",
			profile);

	if (rc)
		print_error("go tool pprof failed: %s\n", out ? out : "");
	assert_int_equal(rc, 0);
	return out;
}

/* ---- C++: the inlined template under each --demangle mode ------------------ */

struct demangle_case {
	const char *mode;
	const char *outer; /* hot_loop as the mode names it */
	const char *inl;   /* kern::mix<unsigned long>, inlined into hot_loop */
};

static const struct demangle_case demangle_cases[] = {
    {"none", "_Z8hot_loopml", "_ZN4kern3mixImEET_S1_l"},
    {"simplified", "hot_loop", "kern::mix"},
    {"templates", "hot_loop", "kern::mix<unsigned long>"},
    {"full", "hot_loop(unsigned long, long)",
     "unsigned long kern::mix<unsigned long>(unsigned long, long)"},
};

static void expect_cpp_inline(struct chain_spec *cs, const struct demangle_case *dc)
{
	EXPECT(chain_spec__add(cs, "main"));
	EXPECT(chain_spec__add(cs, "%s", dc->outer));
	EXPECT(chain_spec__add(cs, "%s", dc->inl));
}

static void test_cpp_inline_demangle(void **state)
{
	const struct demangle_case *dc = *state;
	struct chain_spec *cs = chain_spec__new();
	char *dir = tu_mkdtemp(), opt[64], profile[PATH_MAX], *text, *raw, *loc;

	assert_non_null(cs);
	assert_non_null(dir);
	expect_cpp_inline(cs, dc);
	snprintf(opt, sizeof(opt), "--demangle %s", dc->mode);
	text = record(workload("cpp_inline"), dir, NULL, opt);
	assert_chain(cs, text, "cpp_inline");

	/*
	 * In pprof the inlined call is the first line of a location and the
	 * function it was inlined into the second, with the file and line.
	 */
	snprintf(profile, sizeof(profile), "%s/out/profile.pb.gz", dir);
	raw = pprof_raw(profile);
	loc = strstr(raw, dc->inl);
	if (!loc)
		print_error("no location names %s:\n%s\n", dc->inl, raw);
	assert_non_null(loc);
	assert_non_null(strstr(loc, "cpp_inline.cc:"));
	{
		const char *nl = strchr(loc, '\n');

		assert_non_null(nl);
		/* The next line of the listing continues the same location: indented. */
		assert_true(nl[1] == ' ');
		assert_non_null(strstr(nl, dc->outer));
	}
	free(raw);
	free(text);
	chain_spec__free(cs);
	tu_rmtree(dir);
	free(dir);
}

/* ---- separate debug files ---------------------------------------------------- */

static void expect_default_cpp(struct chain_spec *cs)
{
	expect_cpp_inline(cs, &demangle_cases[2]);
}

/* The GNU build id of path in hex (caller frees). */
static char *build_id_of(const char *path)
{
	struct elf_file *ef;
	char *id;

	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	assert_non_null(ef->build_id);
	id = strdup(ef->build_id);
	elf_file__close(ef);
	return id;
}

/* Records bin (in dir) with extra options and checks the default C++ chain. */
static void record_cpp_copy(const char *dir, const char *name, const char *env, const char *extra)
{
	struct chain_spec *cs = chain_spec__new();
	char bin[PATH_MAX], *text;

	assert_non_null(cs);
	expect_default_cpp(cs);
	snprintf(bin, sizeof(bin), "%s/%s", dir, name);
	text = record(bin, dir, env, extra);
	assert_chain(cs, text, name);
	free(text);
	chain_spec__free(cs);
}

static void test_debuglink(void **state)
{
	char *dir = tu_mkdtemp();

	(void)state;
	assert_non_null(dir);
	/* Stripped, with a .gnu_debuglink naming the debug file next to it. */
	TU_SH(
	    "cp %s %s/sym_dlink && cd %s && objcopy --only-keep-debug sym_dlink sym_dlink.debug && "
	    "objcopy --strip-all --add-gnu-debuglink=sym_dlink.debug sym_dlink",
	    workload("cpp_inline"), dir, dir);
	TU_SH("! readelf -S %s/sym_dlink | grep -qE '\\.symtab|\\.debug_info'", dir);
	record_cpp_copy(dir, "sym_dlink", NULL, "--no-debuginfod");
	tu_rmtree(dir);
	free(dir);
}

static void test_build_id_path(void **state)
{
	char *dir = tu_mkdtemp(), *id, opt[PATH_MAX];

	(void)state;
	assert_non_null(dir);
	/* Stripped without a debuglink; the debug file only at ROOT/.build-id/xx/rest.debug. */
	TU_SH("cp %s %s/sym_bid", workload("cpp_inline"), dir);
	id = build_id_of(workload("cpp_inline"));
	TU_SH("cd %s && mkdir -p dbg/.build-id/%.2s && objcopy --only-keep-debug sym_bid "
	      "dbg/.build-id/%.2s/%s.debug && objcopy --strip-all sym_bid",
	      dir, id, id, id + 2);
	TU_SH("! readelf -S %s/sym_bid | grep -qE '\\.symtab|\\.debug_info|debuglink'", dir);
	snprintf(opt, sizeof(opt), "--no-debuginfod --debug-dir %s/dbg", dir);
	record_cpp_copy(dir, "sym_bid", NULL, opt);
	free(id);
	tu_rmtree(dir);
	free(dir);
}

/* ---- Rust v0 and stripped Go ---------------------------------------------------- */

static void test_rust_v0(void **state)
{
	struct chain_spec *cs = chain_spec__new();
	char *dir = tu_mkdtemp(), profile[PATH_MAX], *text, *raw;

	(void)state;
	assert_non_null(cs);
	assert_non_null(dir);
	EXPECT(chain_spec__add(cs, "rust_v0::main"));
	EXPECT(chain_spec__add(cs, "rust_v0::rv_outer"));
	EXPECT(chain_spec__add(cs, "rust_v0::rv_middle"));
	EXPECT(chain_spec__add(cs, "rust_v0::rv_leaf::<u32>"));
	/* The binary really has v0 names (and no DWARF to take names from instead). */
	TU_SH("nm %s | grep -q ' _RINv.*7rv_leaf'", workload("rust_v0"));
	text = record(workload("rust_v0"), dir, NULL, NULL);
	assert_chain(cs, text, "rust_v0");
	/* pprof keeps the mangled name as the system name. */
	snprintf(profile, sizeof(profile), "%s/out/profile.pb.gz", dir);
	raw = pprof_raw(profile);
	assert_non_null(strstr(raw, "rust_v0::rv_leaf::<u32>"));
	assert_non_null(strstr(raw, "(_RINv"));
	free(raw);
	free(text);
	chain_spec__free(cs);
	tu_rmtree(dir);
	free(dir);
}

static void test_go_stripped(void **state)
{
	struct chain_spec *cs = chain_spec__new();
	char *dir = tu_mkdtemp(), bin[PATH_MAX], build[PATH_MAX], profile[PATH_MAX], *text, *raw;

	(void)state;
	assert_non_null(cs);
	assert_non_null(dir);
	assert_non_null(realpath(tu_build_dir(), build));
	EXPECT(chain_spec__add(cs, "main.main"));
	for (int i = 1; i <= GO_LINKS; i++)
		EXPECT(chain_spec__add(cs, "main.chain_%02d", i));
	EXPECT(chain_spec__add(cs, "main.leaf"));
	snprintf(bin, sizeof(bin), "%s/go_stripped", dir);
	TU_SH("GOCACHE=%s/gocache GOPATH=%s/gopath GOFLAGS= go build -ldflags='-s -w' -o %s "
	      "tests/workloads/go_chain.go",
	      build, build, bin);
	TU_SH("! readelf -S %s | grep -qE '\\.symtab|\\.debug_info'", bin);
	text = record(bin, dir, NULL, NULL);
	assert_chain(cs, text, "go_stripped");
	snprintf(profile, sizeof(profile), "%s/out/profile.pb.gz", dir);
	raw = pprof_raw(profile);
	/* File and line from the pc tables; the Go build id travels in a comment. */
	assert_non_null(strstr(raw, "go_chain.go:"));
	free(raw);
	TU_SH("HOME=/tmp GOCACHE=/tmp/omniprof-gocache go tool pprof -comments %s | "
	      "grep -q 'omniprof.file .*go_build_id=.* path=.*go_stripped'",
	      profile);
	free(text);
	chain_spec__free(cs);
	tu_rmtree(dir);
	free(dir);
}

/* ---- off-host: omniprof symbolize ---------------------------------------------------- */

static void test_symbolize_round_trip(void **state)
{
	char *dir = tu_mkdtemp(), *text, *out = NULL;
	int rc;

	(void)state;
	assert_non_null(dir);
	/* Recorded stripped with no debug file anywhere: frames are offsets. */
	TU_SH("mkdir %s/gathered && cp %s %s/gathered/sym_rt && cp %s %s/sym_rt && "
	      "objcopy --strip-all %s/sym_rt",
	      dir, workload("cpp_inline"), dir, workload("cpp_inline"), dir, dir);
	{
		char bin[PATH_MAX];
		char *argv[] = {bin, "60", NULL};
		pid_t pid;

		snprintf(bin, sizeof(bin), "%s/sym_rt", dir);
		pid = tu_spawn_ready(argv);
		assert_true(pid > 0);
		rc = tu_run(&out, "%s record -p %d -d %d -F 99 -o %s/out --no-debuginfod",
			    omniprof(), pid, RECORD_SECONDS, dir);
		tu_reap(pid);
		assert_int_equal(rc, 0);
		free(out);
	}
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/out/stacks.folded", dir);
		text = tu_read_file(path, NULL);
		assert_non_null(text);
		assert_null(strstr(text, "hot_loop"));
		assert_non_null(strstr(text, "sym_rt+0x"));
		free(text);
	}
	/* Named afterwards from the folder holding the unstripped copy. */
	rc = tu_run(&out,
		    "%s symbolize %s/out/profile.pb.gz --no-debuginfod --debug-dir %s/gathered "
		    "-o %s/named.pb.gz",
		    omniprof(), dir, dir, dir);
	if (rc)
		print_error("omniprof symbolize failed (%d): %s\n", rc, out ? out : "");
	free(out);
	assert_int_equal(rc, 0);
	rc = tu_run(&out,
		    "HOME=/tmp GOCACHE=/tmp/omniprof-gocache go tool pprof -symbolize=none "
		    "-traces %s/named.pb.gz",
		    dir);
	assert_int_equal(rc, 0);
	if (!strstr(out, "kern::mix<unsigned long> (inline)"))
		print_error("symbolized traces lack the inline frame:\n%s\n", out);
	assert_non_null(strstr(out, "kern::mix<unsigned long> (inline)"));
	assert_non_null(strstr(out, "hot_loop"));
	assert_null(strstr(out, "sym_rt+0x"));
	free(out);
	tu_rmtree(dir);
	free(dir);
}

/* ---- debuginfod ------------------------------------------------------------------------ */

static void test_debuginfod(void **state)
{
	char *dir = tu_mkdtemp(), *id, env[PATH_MAX * 2], log[PATH_MAX];
	char db[PATH_MAX], srv[PATH_MAX], port[16];
	char *argv[] = {"/usr/bin/debuginfod", "-F", srv, "-p", port, "-d", db, "-t", "1", NULL};
	bool found = false;
	pid_t server;

	(void)state;
	assert_non_null(dir);
	/* A stripped binary whose debug file only the server has. */
	TU_SH(
	    "mkdir %s/srv && cp %s %s/sym_dinfod && cd %s && objcopy --only-keep-debug sym_dinfod "
	    "srv/sym_dinfod.debug && objcopy --strip-all sym_dinfod",
	    dir, workload("cpp_inline"), dir, dir);
	id = build_id_of(workload("cpp_inline"));
	snprintf(srv, sizeof(srv), "%s/srv", dir);
	snprintf(db, sizeof(db), "%s/db.sqlite", dir);
	snprintf(port, sizeof(port), "%d", 20000 + (int)(getpid() % 20000));
	snprintf(log, sizeof(log), "%s/debuginfod.log", dir);
	server = fork();
	assert_true(server >= 0);
	if (server == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	/*
	 * Wait (up to 30 s) until the server has indexed the folder. Each probe
	 * gets its own cache: the client remembers a miss for 10 minutes.
	 */
	for (int i = 0; i < 60 && !found; i++) {
		found =
		    tu_run(NULL,
			   "DEBUGINFOD_URLS=http://127.0.0.1:%s DEBUGINFOD_CACHE_PATH=%s/probe%d "
			   "debuginfod-find debuginfo %s",
			   port, dir, i, id) == 0;
		if (!found)
			usleep(500 * 1000);
	}
	if (!found) {
		kill(server, SIGTERM);
		waitpid(server, NULL, 0);
		fail_msg("debuginfod did not serve %s (see %s)", id, log);
	}
	/* A fresh cache, so omniprof itself downloads the file. */
	snprintf(env, sizeof(env),
		 "DEBUGINFOD_URLS=http://127.0.0.1:%s DEBUGINFOD_CACHE_PATH=%s/cache2", port, dir);
	record_cpp_copy(dir, "sym_dinfod", env, NULL);
	kill(server, SIGTERM);
	waitpid(server, NULL, 0);
	free(id);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_prestate(test_cpp_inline_demangle, (void *)&demangle_cases[0]),
	    cmocka_unit_test_prestate(test_cpp_inline_demangle, (void *)&demangle_cases[1]),
	    cmocka_unit_test_prestate(test_cpp_inline_demangle, (void *)&demangle_cases[2]),
	    cmocka_unit_test_prestate(test_cpp_inline_demangle, (void *)&demangle_cases[3]),
	    cmocka_unit_test(test_debuglink),
	    cmocka_unit_test(test_build_id_path),
	    cmocka_unit_test(test_rust_v0),
	    cmocka_unit_test(test_go_stripped),
	    cmocka_unit_test(test_symbolize_round_trip),
	    cmocka_unit_test(test_debuginfod),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_symbolize: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
