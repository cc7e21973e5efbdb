// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end Ruby with Debian's ruby (3.1, libruby-3.1.so.3.1): each
 * workload under tests/workloads/ruby_*.rb runs a known chain of methods and
 * blocks that spins in its innermost one, recorded with -p. Each case
 * requires the whole chain, Ruby frames and the native frames between them,
 * in order, in at least 95% of the innermost method's samples: a chain of
 * instance and singleton methods and a block through Integer#times (with the
 * file and exact line of every frame checked in the pprof output), 500
 * levels of recursion (all 501 frames, with the cut the 512-frame budget
 * makes marked), 8 Ruby threads each in its own chain, Ruby -> a C extension
 * -> a Ruby block, and a script that requires another file (frames from both
 * files). Two cases again through stack copies (--copy-all-stacks: the
 * same walker in user space), and a ruby started while a whole-system
 * recording runs, and the chain again under YJIT (--yjit: its code marked
 * "[YJIT code]", never an unnamed address, every Ruby frame still there,
 * the marker between the compiled caller and Integer#times, and with 3.1
 * the native frames past it down to ruby_run_node),
 * and 3 Ractors at once (each native thread's own execution context: the
 * two started ones from their thread's start_thread).
 * Needs root, BPF and /usr/bin/ruby.
 *
 * OMNIPROF_TEST_RUBY=/path/to/bin/ruby runs the same cases against another
 * CRuby (one built from source: another version, or the VM linked into the
 * executable); the C extension is then built against that ruby's headers.
 * CI runs Debian's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include <signal.h>
#include <sys/wait.h>

#include "folded_check.h"
#include "omniprof_run.h"
#include "pprof_read.h"
#include "profile.pb-c.h"
#include "testutil.h"

#define DEBIAN_RUBY	       "/usr/bin/ruby"
#define COMM		       "ruby"
#define RECORD_SECONDS	       "3"
#define RECORD_SECONDS_THREADS "6"
#define FREQUENCY	       "199"
#define MIN_LEAF	       20  /* fewer leaf samples than this says nothing */
#define DEEP_LEVELS	       500 /* Shop#rec levels of the deep case */
#define THREADS		       8
#define RACTORS_N	       3 /* the main Ractor and two more */
#define VM_GLUE		       12 /* native frames between a C function's frame and the block it yields to */

#define EXPECT(call) assert_int_equal((call), 0)

enum workload { CHAIN, DEEP, THREADS_CASE, CEXT, REQUIRE, YJIT, RACTORS };

/* The ruby under test: OMNIPROF_TEST_RUBY, else Debian's. */
static const char *ruby(void)
{
	const char *r = getenv("OMNIPROF_TEST_RUBY");

	return r && *r ? r : DEBIAN_RUBY;
}

/*
 * Native frames at least between a C function's frame and the block it
 * yields to: Debian's 3.1 has its C glue there; a newer ruby may have none
 * (3.3's Integer#times is written in Ruby).
 */
static unsigned int glue_min(void)
{
	return strcmp(ruby(), DEBIAN_RUBY) ? 0 : 1;
}

/*
 * The C extension for the ruby under test: the one the build made against
 * Debian's ruby-dev, or, for another ruby, one built here against its own
 * headers into dir. 0 and the path in lib.
 */
static int cext_for_ruby(const char *dir, char *lib, size_t size)
{
	char *out = NULL;
	int rc;

	if (!getenv("OMNIPROF_TEST_RUBY") || !*getenv("OMNIPROF_TEST_RUBY")) {
		snprintf(lib, size, "%s/workloads/lib/ruby_cext.so", tu_build_dir());
		if (lib[0] != '/') {
			char cwd[256];

			if (!getcwd(cwd, sizeof(cwd)))
				return -1;
			snprintf(lib, size, "%s/%s/workloads/lib/ruby_cext.so", cwd,
				 tu_build_dir());
		}
		return 0;
	}
	snprintf(lib, size, "%s/ruby_cext.so", dir);
	/* Its symbols resolve against the VM already loaded (libruby or the executable). */
	rc = tu_run(&out,
		    "gcc -O2 -g -shared -fPIC -fno-optimize-sibling-calls -fno-inline "
		    "$(%s -rrbconfig -e 'c = RbConfig::CONFIG; print \"-I#{c[%%q(rubyhdrdir)]} "
		    "-I#{c[%%q(rubyarchhdrdir)]}\"') "
		    "tests/workloads/lib/ruby_cext.c -o %s 2>&1",
		    ruby(), lib);
	if (rc)
		printf("    building the C extension for %s failed: %s\n", ruby(), out ? out : "");
	free(out);
	return rc;
}

struct rb_case {
	const char *name;
	enum workload what;
	bool copies; /* record --copy-all-stacks: every sample unwound in user space */
};

static char *omniprof(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/omniprof", tu_build_dir());
	return path;
}

/* ---- expected chains ------------------------------------------------------ */

/* <main> -> Shop.open -> Shop#serve -> Shop#pick -> Integer#times (C) -> block in pick -> ... */
static void expect_chain(struct chain_spec *cs, int depth)
{
	EXPECT(chain_spec__add(cs, "<main>"));
	EXPECT(chain_spec__add(cs, "Shop.open"));
	EXPECT(chain_spec__add(cs, "Shop#serve"));
	EXPECT(chain_spec__add(cs, "Shop#pick"));
	EXPECT(chain_spec__add(cs, "Integer#times"));
	EXPECT(chain_spec__add_gap(cs, glue_min(), VM_GLUE));
	EXPECT(chain_spec__add(cs, "block in Shop#pick"));
	EXPECT(chain_spec__add(cs, "Shop#link_1"));
	EXPECT(chain_spec__add(cs, "Shop#link_2"));
	EXPECT(chain_spec__add(cs, "Shop#link_3"));
	for (int i = 0; i <= depth; i++)
		EXPECT(chain_spec__add(cs, "Shop#rec"));
	EXPECT(chain_spec__add(cs, "Shop#leaf"));
}

/*
 * Under YJIT (every method compiled at its first call): the same Ruby frames
 * in order. Where the native walk meets YJIT's code depends on what the
 * version compiles (3.1: Shop#pick's code calling Integer#times, marked
 * between it and the block; 3.3: the leaf's own code, marked above it), so
 * the marker may stand in the gap or above the leaf; assert_yjit_marked()
 * checks it is there.
 */
static void expect_yjit_chain(struct chain_spec *cs)
{
	EXPECT(chain_spec__add(cs, "<main>"));
	EXPECT(chain_spec__add(cs, "Shop.open"));
	EXPECT(chain_spec__add(cs, "Shop#serve"));
	EXPECT(chain_spec__add(cs, "Shop#pick"));
	/* "[YJIT code]" here when the sample came back into Shop#pick's compiled code, after
	 * the native frames of the VM loop that entered it (3.1). */
	EXPECT(chain_spec__add_gap(cs, 0, VM_GLUE));
	EXPECT(chain_spec__add(cs, "Integer#times"));
	EXPECT(chain_spec__add_gap(cs, 0, VM_GLUE));
	EXPECT(chain_spec__add(cs, "block in Shop#pick"));
	EXPECT(chain_spec__add(cs, "Shop#link_1"));
	EXPECT(chain_spec__add(cs, "Shop#link_2"));
	EXPECT(chain_spec__add(cs, "Shop#link_3"));
	EXPECT(chain_spec__add(cs, "Shop#rec"));
	EXPECT(chain_spec__add(cs, "Shop#leaf"));
}

/*
 * YJIT's code is marked, never an address: no stack of the ruby whose Ruby
 * frames were walked holds an anonymous-code frame ("[anon]+0x..."), and
 * enough hold "[YJIT code]". (The few samples taken before the process's
 * maps were first read have no Ruby frames at all, JIT or not.) The marker
 * stands for the compiled code that called Integer#times, so it never
 * comes right after Integer#times (root first). With Debian's 3.1, the
 * native frames go on past the JIT code to ruby_run_node in >= 95% of the
 * marked samples.
 */
static void assert_yjit_marked(const char *text)
{
	long marked = 0, unnamed = 0, after_times = 0, before_times = 0, past = 0;

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char *copy = strndup(line, len);
		char *count = copy ? strrchr(copy, ' ') : NULL;

		assert_non_null(copy);
		if (count && !strncmp(copy, COMM ";", strlen(COMM) + 1)) {
			long n = strtol(count + 1, NULL, 10);

			if (strstr(copy, ";[YJIT code]"))
				marked += n;
			if (strstr(copy, ";Integer#times;[YJIT code]"))
				after_times += n;
			if (strstr(copy, ";[YJIT code];Integer#times;"))
				before_times += n;
			/* Native frames past the JIT code: the stack goes on to ruby_run_node. */
			if (strstr(copy, ";[YJIT code]") && strstr(copy, ";ruby_run_node;"))
				past += n;
			if (strstr(copy, ";[anon]") && strstr(copy, ";Shop#")) {
				if (!unnamed)
					printf("    unnamed: %.600s\n", copy);
				unnamed += n;
			}
		}
		free(copy);
		line = end ? end + 1 : NULL;
	}
	printf("    YJIT: %ld samples through its code marked, %ld with unnamed anonymous code; "
	       "marker before Integer#times %ld, after it %ld; %ld reach ruby_run_node past it\n",
	       marked, unnamed, before_times, after_times, past);
	assert_true(marked >= MIN_LEAF);
	assert_int_equal(unnamed, 0);
	assert_int_equal(after_times, 0);
	/* 3.1's YJIT (Debian's): its entries' callers are found, the native frames go on. */
	if (!strcmp(ruby(), DEBIAN_RUBY))
		assert_true(past * 100 >= marked * 95);
}

/* The deep case's cut stack: the innermost part of the chain, all 501 levels. */
static void expect_deep(struct chain_spec *cs)
{
	EXPECT(chain_spec__add(cs, "Shop#link_3"));
	for (int i = 0; i <= DEEP_LEVELS; i++)
		EXPECT(chain_spec__add(cs, "Shop#rec"));
	EXPECT(chain_spec__add(cs, "Shop#leaf"));
}

/* Thread n: its block, then Worker#run -> Worker#mid -> Worker#leaf_n (-> Worker#spin). */
static void expect_thread(struct chain_spec *cs, int n)
{
	EXPECT(chain_spec__add(cs, "rb_vm_invoke_proc"));
	EXPECT(chain_spec__add(cs, "block (2 levels) in <main>"));
	EXPECT(chain_spec__add(cs, "Worker#run"));
	EXPECT(chain_spec__add(cs, "Worker#mid"));
	/* The leaf: Worker#spin, which every thread runs, would count all threads'. */
	EXPECT(chain_spec__add(cs, "Worker#leaf_%d", n));
}

/*
 * Ractor n (0: the main one): its own native thread's chain. The others
 * start at their thread's start_thread, the VM's thread start-up between.
 */
static void expect_ractor(struct chain_spec *cs, int n)
{
	if (n) {
		EXPECT(chain_spec__add(cs, "start_thread"));
		EXPECT(chain_spec__add_gap(cs, 1, VM_GLUE));
		EXPECT(chain_spec__add(cs, "block (2 levels) in <main>"));
	} else {
		EXPECT(chain_spec__add(cs, "<main>"));
	}
	EXPECT(chain_spec__add(cs, "Crew.run"));
	EXPECT(chain_spec__add(cs, "Crew.leaf_%d", n));
}

/* Ruby -> CExt.call_block (C) -> cext_middle -> rb_yield -> Ruby block. */
static void expect_cext(struct chain_spec *cs)
{
	EXPECT(chain_spec__add(cs, "<main>"));
	EXPECT(chain_spec__add(cs, "Caller#go"));
	EXPECT(chain_spec__add(cs, "CExt.call_block"));
	EXPECT(chain_spec__add_gap(cs, glue_min(), VM_GLUE));
	EXPECT(chain_spec__add(cs, "ruby_cext_call"));
	EXPECT(chain_spec__add(cs, "cext_middle"));
	EXPECT(chain_spec__add(cs, "rb_yield"));
	/* A libruby with its symbols (not Debian's) names its glue here too. */
	if (!glue_min())
		EXPECT(chain_spec__add_gap(cs, 0, VM_GLUE));
	EXPECT(chain_spec__add(cs, "block in Caller#go"));
	EXPECT(chain_spec__add(cs, "Caller#cb_leaf"));
}

/* <main> -> load_it -> require_relative (C) -> <top (required)> -> Required.outer -> .inner */
static void expect_require(struct chain_spec *cs)
{
	EXPECT(chain_spec__add(cs, "<main>"));
	EXPECT(chain_spec__add(cs, "Object#load_it"));
	EXPECT(chain_spec__add(cs, "Kernel#require_relative"));
	EXPECT(chain_spec__add_gap(cs, glue_min(), VM_GLUE));
	EXPECT(chain_spec__add(cs, "<top (required)>"));
	EXPECT(chain_spec__add(cs, "Required.outer"));
	EXPECT(chain_spec__add(cs, "Required.inner"));
}

/* ---- reporting ------------------------------------------------------------ */

static void report(const char *what, struct chain_count c)
{
	printf("    %s: %ld of %ld leaf samples complete (%.1f%%)\n", what, c.complete, c.leaf,
	       c.leaf ? 100.0 * (double)c.complete / (double)c.leaf : 0.0);
	if (c.worst && c.complete * 100 < c.leaf * 95)
		printf("      most frequent incomplete stack (%ld samples): %.900s\n",
		       c.worst_count, c.worst);
	fflush(stdout);
}

static void assert_share(struct chain_count c, long min_leaf)
{
	assert_true(c.leaf >= min_leaf);
	assert_true(c.complete * 100 >= c.leaf * 95);
}

/*
 * The deep case: each stack holding the leaf must either reach <main> or say
 * it was cut ("[unwind stopped: too many frames]" at its root end).
 */
static void assert_deep_roots(const char *text)
{
	long leaf = 0, rooted = 0;

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char *copy = strndup(line, len);
		char *count = copy ? strrchr(copy, ' ') : NULL;

		assert_non_null(copy);
		if (count && !strncmp(copy, COMM ";", strlen(COMM) + 1) &&
		    strstr(copy, ";Shop#leaf")) {
			long n = strtol(count + 1, NULL, 10);

			leaf += n;
			if (strstr(copy, ";<main>;Shop.open;Shop#serve;Shop#pick;") ||
			    !strncmp(copy, COMM ";[unwind stopped: too many frames];",
				     strlen(COMM) + 35))
				rooted += n;
		}
		free(copy);
		line = end ? end + 1 : NULL;
	}
	printf("    deep: %ld of %ld leaf samples reach <main> or mark the cut\n", rooted, leaf);
	assert_true(leaf >= MIN_LEAF);
	assert_int_equal(rooted, leaf);
}

/* ---- pprof: file names and lines ------------------------------------------ */

struct line_check {
	const char *function;
	const char *file_suffix; /* "/ruby_chain.rb" */
	long min, max;		 /* lines every location of the function must have */
	long seen;		 /* locations of it found */
};

/* Every location of each checked function must be in its file, at a line in [min, max]. */
static void check_lines(const char *pprof, struct line_check *checks, size_t n)
{
	Perftools__Profiles__Profile *p = tu_read_pprof(pprof);

	assert_non_null(p);
	for (size_t l = 0; l < p->n_location; l++) {
		const Perftools__Profiles__Location *loc = p->location[l];

		for (size_t j = 0; j < loc->n_line; j++) {
			const Perftools__Profiles__Function *f = NULL;
			const char *name, *file;

			for (size_t k = 0; k < p->n_function && !f; k++)
				if (p->function[k]->id == loc->line[j]->function_id)
					f = p->function[k];
			if (!f || f->name >= (int64_t)p->n_string_table ||
			    f->filename >= (int64_t)p->n_string_table)
				continue;
			name = p->string_table[f->name];
			file = p->string_table[f->filename];
			for (size_t c = 0; c < n; c++) {
				size_t flen = strlen(file), slen = strlen(checks[c].file_suffix);

				if (strcmp(name, checks[c].function))
					continue;
				checks[c].seen++;
				if (flen < slen ||
				    strcmp(file + flen - slen, checks[c].file_suffix) ||
				    loc->line[j]->line < checks[c].min ||
				    loc->line[j]->line > checks[c].max)
					fail_msg(
					    "%s: file %s line %lld, expected *%s lines %ld-%ld",
					    name, file, (long long)loc->line[j]->line,
					    checks[c].file_suffix, checks[c].min, checks[c].max);
			}
		}
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	for (size_t c = 0; c < n; c++) {
		printf("    %s: %ld location(s) at %s:%ld%s\n", checks[c].function, checks[c].seen,
		       checks[c].file_suffix, checks[c].min,
		       checks[c].min == checks[c].max ? "" : "+");
		assert_true(checks[c].seen > 0);
	}
}

static char *read_workload(const char *name)
{
	char path[512];
	char *text;

	snprintf(path, sizeof(path), "tests/workloads/%s", name);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	return text;
}

/* Each frame of the chain at the line of its call (the leaf: any line of its loop). */
static void check_chain_lines(const char *pprof)
{
	char *text = read_workload("ruby_chain.rb");
	const char *f = "/ruby_chain.rb";
	struct line_check checks[] = {
	    {"Shop.open", f, tu_line_of(text, "new.serve("), tu_line_of(text, "new.serve("), 0},
	    {"Shop#serve", f, tu_line_of(text, "  pick(deadline"),
	     tu_line_of(text, "  pick(deadline"), 0},
	    {"Shop#pick", f, tu_line_of(text, "1.times do"), tu_line_of(text, "1.times do"), 0},
	    {"block in Shop#pick", f, tu_line_of(text, "r = link_1("),
	     tu_line_of(text, "r = link_1("), 0},
	    {"Shop#link_1", f, tu_line_of(text, "  link_2(deadline"),
	     tu_line_of(text, "  link_2(deadline"), 0},
	    {"Shop#link_2", f, tu_line_of(text, "  link_3(deadline"),
	     tu_line_of(text, "  link_3(deadline"), 0},
	    {"Shop#link_3", f, tu_line_of(text, "  rec(depth"), tu_line_of(text, "  rec(depth"), 0},
	    {"Shop#rec", f, tu_line_of(text, "return leaf(deadline)"),
	     tu_line_of(text, "return leaf(deadline)"), 0},
	    {"Shop#leaf", f, tu_line_of(text, "def leaf") + 1, tu_line_of(text, "def leaf") + 8, 0},
	};
	size_t n = sizeof(checks) / sizeof(checks[0]);

	free(text);
	for (size_t i = 0; i < n; i++)
		assert_true(checks[i].min > 0);
	check_lines(pprof, checks, n);
}

/* Frames from both files of the require case. */
static void check_require_lines(const char *pprof)
{
	char *main_text = read_workload("ruby_require.rb");
	char *req_text = read_workload("ruby_required.rb");
	struct line_check checks[] = {
	    {"Object#load_it", "/ruby_require.rb", tu_line_of(main_text, "  require_relative \""),
	     tu_line_of(main_text, "  require_relative \""), 0},
	    {"<top (required)>", "/ruby_required.rb",
	     tu_line_of(req_text, "Required.outer($deadline)"),
	     tu_line_of(req_text, "Required.outer($deadline)"), 0},
	    {"Required.outer", "/ruby_required.rb", tu_line_of(req_text, "    inner(deadline)"),
	     tu_line_of(req_text, "    inner(deadline)"), 0},
	};
	size_t n = sizeof(checks) / sizeof(checks[0]);

	free(main_text);
	free(req_text);
	for (size_t i = 0; i < n; i++)
		assert_true(checks[i].min > 0);
	check_lines(pprof, checks, n);
}

/* ---- one case ----------------------------------------------------------------- */

static void test_case(void **state)
{
	const struct rb_case *rc_ = *state;
	char script[512], lib[512], folded[1024], pprof[1024], label[32];
	char *dir = tu_mkdtemp(), *out = NULL, *text = NULL;
	char *argv[8] = {(char *)ruby(), script, "60", NULL, NULL, NULL, NULL, NULL};
	struct chain_spec *cs[THREADS];
	struct chain_count c[THREADS] = {{0}};
	size_t n_chains = 1;
	pid_t pid;
	int rc;

	assert_non_null(dir);
	for (int i = 0; i < THREADS; i++) {
		cs[i] = chain_spec__new();
		assert_non_null(cs[i]);
	}
	switch (rc_->what) {
	case CHAIN:
		snprintf(script, sizeof(script), "tests/workloads/ruby_chain.rb");
		expect_chain(cs[0], 0);
		break;
	case DEEP:
		snprintf(script, sizeof(script), "tests/workloads/ruby_chain.rb");
		argv[3] = "500";
		expect_deep(cs[0]);
		break;
	case THREADS_CASE:
		snprintf(script, sizeof(script), "tests/workloads/ruby_threads.rb");
		for (int i = 0; i < THREADS; i++)
			expect_thread(cs[i], i);
		n_chains = THREADS;
		break;
	case CEXT:
		snprintf(script, sizeof(script), "tests/workloads/ruby_cext.rb");
		if (cext_for_ruby(dir, lib, sizeof(lib))) {
			tu_rmtree(dir);
			fail_msg("no C extension for %s", ruby());
		}
		argv[3] = lib;
		expect_cext(cs[0]);
		break;
	case YJIT:
		snprintf(script, sizeof(script), "tests/workloads/ruby_chain.rb");
		/* Every method compiled at its first call; a small code region. */
		argv[1] = "--yjit";
		argv[2] = "--yjit-call-threshold=1";
		argv[3] = "--yjit-exec-mem-size=8";
		argv[4] = script;
		argv[5] = "60";
		expect_yjit_chain(cs[0]);
		break;
	case RACTORS:
		snprintf(script, sizeof(script), "tests/workloads/ruby_ractors.rb");
		for (int i = 0; i < RACTORS_N; i++)
			expect_ractor(cs[i], i);
		n_chains = RACTORS_N;
		break;
	case REQUIRE:
		snprintf(script, sizeof(script), "tests/workloads/ruby_require.rb");
		expect_require(cs[0]);
		break;
	}
	pid = tu_spawn_ready(argv);
	if (pid <= 0) {
		tu_rmtree(dir);
		fail_msg("%s %s did not start", ruby(), script);
	}
	/* 8 threads share the GVL: twice the time, so each gets its samples. */
	/* Deeper than the default --max-frames (256): the whole budget asked for. */
	rc = tu_run(&out, "%s record -p %d -d %s -F " FREQUENCY " -o %s%s%s", omniprof(), pid,
		    n_chains > 1 ? RECORD_SECONDS_THREADS : RECORD_SECONDS, dir,
		    rc_->copies ? " --copy-all-stacks" : "",
		    rc_->what == DEEP ? " --max-frames 1024" : "");
	tu_reap(pid);
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	free(out);
	snprintf(folded, sizeof(folded), "%s/stacks.folded", dir);
	snprintf(pprof, sizeof(pprof), "%s/profile.pb.gz", dir);
	text = tu_read_file(folded, NULL);
	for (size_t i = 0; i < n_chains && text; i++) {
		c[i] = chain_spec__count_folded(cs[i], text, COMM);
		snprintf(label, sizeof(label),
			 n_chains == 1		? "chain"
			 : rc_->what == RACTORS ? "ractor %zu"
						: "thread %zu",
			 i);
		report(label, c[i]);
	}
	if (!rc && text && rc_->what == CHAIN)
		check_chain_lines(pprof);
	if (!rc && text && rc_->what == REQUIRE)
		check_require_lines(pprof);
	if (!rc && text && rc_->what == DEEP)
		assert_deep_roots(text);
	if (!rc && text && rc_->what == YJIT)
		assert_yjit_marked(text);
	tu_rmtree(dir);
	free(dir);
	free(text);
	for (int i = 0; i < THREADS; i++)
		chain_spec__free(cs[i]);
	assert_int_equal(rc, 0);
	for (size_t i = 0; i < n_chains; i++)
		assert_share(c[i], n_chains > 1 ? MIN_LEAF / 2 : MIN_LEAF);
}

/*
 * A ruby started while a whole-system recording runs: covered from its first
 * samples (its first ones come as stack copies, walked in user space once
 * its maps are read), with its whole chain.
 */
static void test_young(void **state)
{
	char *dir = tu_mkdtemp(), log[1024], out_dir[1024], folded[1100];
	char *argv[] = {(char *)ruby(), "tests/workloads/ruby_chain.rb", "4", "0", "5", NULL};
	const char *args[] = {"-F", FREQUENCY, "-o", out_dir, NULL};
	struct chain_spec *cs = chain_spec__new();
	struct chain_count c;
	char *text;
	pid_t rec, pid;
	int status;

	(void)state;
	assert_non_null(dir);
	assert_non_null(cs);
	expect_chain(cs, 0);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	rec = tu_omniprof_start(log, "record", args);
	assert_true(rec > 0);
	if (!tu_wait_log(log, "sampling", 30000)) {
		kill(rec, SIGKILL);
		tu_wait_bounded(rec, 10000, 20, NULL);
		fail_msg("omniprof did not start sampling within 30 s");
	}
	/* The start-up scan of every process first: not this test's subject. */
	sleep(2);
	pid = tu_spawn_ready(argv);
	assert_true(pid > 0);
	/* Its 4 s of work and 2 s of life after (tu_reap would kill it now). */
	tu_wait_bounded(pid, 60000, 50, NULL);
	kill(rec, SIGHUP);
	status = tu_wait_bounded(rec, 120000, 20, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		tu_print_log("record", log);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	snprintf(folded, sizeof(folded), "%s/stacks.folded", out_dir);
	text = tu_read_file(folded, NULL);
	assert_non_null(text);
	c = chain_spec__count_folded(cs, text, COMM);
	report("started during the recording", c);
	if (c.leaf < MIN_LEAF)
		tu_print_log("record", log);
	free(text);
	chain_spec__free(cs);
	tu_rmtree(dir);
	free(dir);
	assert_share(c, MIN_LEAF);
}

static void test_ruby_present(void **state)
{
	(void)state;
	printf("    ruby under test: %s\n", ruby());
	assert_int_equal(access(ruby(), X_OK), 0);
	/* Debian's ruby is a test dependency (scripts/install-deps.sh): never skipped. */
	if (!strcmp(ruby(), DEBIAN_RUBY))
		assert_int_equal(access("/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1", R_OK), 0);
}

int main(void)
{
	static const struct rb_case cases[] = {
	    {"methods, singleton method and block (Integer#times)", CHAIN, false},
	    {"500 levels of recursion", DEEP, false},
	    {"8 threads", THREADS_CASE, false},
	    {"Ruby -> C extension -> Ruby block", CEXT, false},
	    {"require of another file", REQUIRE, false},
	    /* The same walker in user space, reading the live process. */
	    {"8 threads (stack copies)", THREADS_CASE, true},
	    {"Ruby -> C extension -> Ruby block (stack copies)", CEXT, true},
	    {"methods and blocks under YJIT: its code marked", YJIT, false},
	    {"3 Ractors, each on its own thread", RACTORS, false},
	};
	struct CMUnitTest tests[2 + sizeof(cases) / sizeof(cases[0])];
	size_t n = sizeof(cases) / sizeof(cases[0]);

	tests[0] = (struct CMUnitTest){.name = "ruby present", .test_func = test_ruby_present};
	for (size_t i = 0; i < n; i++)
		tests[i + 1] = (struct CMUnitTest){.name = cases[i].name,
						   .test_func = test_case,
						   .initial_state = (void *)&cases[i]};
	tests[n + 1] = (struct CMUnitTest){.name = "ruby started during a whole-system recording",
					   .test_func = test_young};
	return _cmocka_run_group_tests("e2e_ruby", tests, n + 2, NULL, NULL);
}
