// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end Python: every CPython 3 under pyenv's versions folder and
 * Debian's own python3 (3.11 on Debian 12; the interpreter linked into the
 * executable, symbols stripped) run a known chain of nested functions that
 * spins in its innermost one, recorded with -p. Each case requires the whole
 * chain, in order, in at least 95% of the innermost function's samples, and
 * checks in the pprof output that the frames carry the script's file name
 * and the exact line of each call. Plus: 130 levels of recursion (more than
 * 128 Python frames in one stack), Python -> C (ctypes) -> Python callback
 * interleaved with the native frames, and three threads each in its own
 * chain. Needs root and BPF.
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

#include "folded_check.h"
#include "pprof_read.h"
#include "profile.pb-c.h"
#include "testutil.h"

#define RECORD_SECONDS "3"
#define FREQUENCY      "199"
#define MIN_LEAF       20  /* fewer leaf samples than this says nothing */
#define CHAIN_LINKS    10  /* py_chain.py: link_01 .. link_10 */
#define DEEP_LEVELS    130 /* recursion levels of the deep cases */
#define GLUE_MAX       4   /* interpreter frames between two Python frames (<= 3.10) */
#define MAX_CASES      32

#define EXPECT(call) assert_int_equal((call), 0)

enum workload { CHAIN, DEEP, MIXED, THREADS };

struct py_case {
	char name[96];	   /* the cmocka test name */
	char python[1024]; /* interpreter path */
	enum workload what;
	bool copies; /* record --copy-all-stacks: every sample unwound in user space */
	/*
	 * Cases of one group (non-zero, next to each other, the same flags,
	 * one Python thread each) share one recording: two interpreters on two
	 * CPUs, each its own. Each is started through a symlink of its own name
	 * (its comm, the folded stacks' first field) and its lines are checked
	 * in its own samples (the pprof's pid label).
	 */
	int group;
};

static struct py_case cases[MAX_CASES];
static size_t n_cases;

#define MAX_GROUP 2

/* The recording of the last group, kept for its other cases. */
static struct {
	int group;
	int rc;
	char *dir;  /* the output and the symlinks; removed by rec_clear */
	char *text; /* stacks.folded, NULL when unreadable */
	pid_t pid[MAX_CASES];
} rec;

static void rec_clear(void)
{
	if (rec.dir)
		tu_rmtree(rec.dir);
	free(rec.dir);
	free(rec.text);
	memset(&rec, 0, sizeof(rec));
}

static int rec_teardown(void **state)
{
	(void)state;
	rec_clear();
	return 0;
}

static const char *script_dir(void)
{
	return "tests/workloads/python";
}

static char *omniprof(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/omniprof", tu_build_dir());
	return path;
}

/* The command name the kernel gives a process started from path. */
static void comm_of(const char *path, char *comm)
{
	const char *base = strrchr(path, '/');

	snprintf(comm, 16, "%.15s", base ? base + 1 : path);
}

/* ---- expected chains ------------------------------------------------------ */

/* A Python frame, after 0..GLUE_MAX interpreter frames (3.6-3.10 show the
 * C functions that call the eval loop between two Python functions). */
static void add_py(struct chain_spec *cs, const char *name)
{
	EXPECT(chain_spec__add_gap(cs, 0, GLUE_MAX));
	EXPECT(chain_spec__add(cs, "%s", name));
}

static void expect_chain(struct chain_spec *cs, int depth)
{
	char name[16];

	EXPECT(chain_spec__add(cs, "<module>"));
	add_py(cs, "main");
	add_py(cs, "run");
	for (int i = 1; i <= CHAIN_LINKS; i++) {
		snprintf(name, sizeof(name), "link_%02d", i);
		add_py(cs, name);
	}
	for (int i = 0; i <= depth; i++)
		add_py(cs, "rec");
	add_py(cs, "py_leaf");
}

/* Python -> ctypes -> C -> libffi closure -> Python. */
static void expect_mixed(struct chain_spec *cs)
{
	EXPECT(chain_spec__add(cs, "<module>"));
	add_py(cs, "main");
	add_py(cs, "call_into_c");
	EXPECT(chain_spec__add_gap(cs, 1, 12)); /* ctypes' call path and libffi */
	EXPECT(chain_spec__add(cs, "cb_outer"));
	EXPECT(chain_spec__add(cs, "cb_middle"));
	EXPECT(chain_spec__add_gap(cs, 1, 12)); /* libffi's closure and ctypes' callback */
	EXPECT(chain_spec__add(cs, "py_callback"));
	add_py(cs, "cb_leaf");
}

static void expect_thread(struct chain_spec *cs, char t)
{
	char name[16];

	snprintf(name, sizeof(name), "worker_%c", t);
	EXPECT(chain_spec__add(cs, "%s", name));
	snprintf(name, sizeof(name), "%c_mid", t);
	add_py(cs, name);
	snprintf(name, sizeof(name), "%c_leaf", t);
	add_py(cs, name);
}

/* ---- reporting ------------------------------------------------------------ */

static void report(const char *what, struct chain_count c)
{
	printf("    %s: %ld of %ld leaf samples complete (%.1f%%)\n", what, c.complete, c.leaf,
	       c.leaf ? 100.0 * (double)c.complete / (double)c.leaf : 0.0);
	if (c.worst && c.complete * 100 < c.leaf * 95) {
		if (c.worst_len <= 900)
			printf("      most frequent incomplete stack (%ld samples): %.*s\n",
			       c.worst_count, (int)c.worst_len, c.worst);
		else
			printf("      most frequent incomplete stack (%ld samples): %.300s ... "
			       "%.500s\n",
			       c.worst_count, c.worst, c.worst + c.worst_len - 500);
	}
	fflush(stdout);
}

static void assert_share(struct chain_count c)
{
	assert_true(c.leaf >= MIN_LEAF);
	assert_true(c.complete * 100 >= c.leaf * 95);
}

/* ---- pprof: file names and lines ------------------------------------------ */

struct line_check {
	const char *function;
	long min, max; /* lines every location of the function must have */
	long seen;     /* locations of it found */
	long
	    def_line; /* its `def` line: the function's start_line (co_firstlineno); 0: unchecked */
};

/*
 * Every location of each checked function must come from a file ending in
 * file_suffix, at a line in [min, max]; each function must be seen.
 */
static void check_lines(const char *pprof, const char *file_suffix, struct line_check *checks,
			size_t n, pid_t pid)
{
	Perftools__Profiles__Profile *p = tu_read_pprof(pprof);
	size_t suffix_len = strlen(file_suffix);
	bool *used = NULL; /* by location index: in a sample of pid (pid > 0) */

	assert_non_null(p);
	if (pid > 0) {
		used = tu_pprof_pid_locations(p, pid);
		assert_non_null(used);
	}
	for (size_t l = 0; l < p->n_location; l++) {
		const Perftools__Profiles__Location *loc = p->location[l];

		if (used && !used[l])
			continue;

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
				size_t flen = strlen(file);

				if (strcmp(name, checks[c].function))
					continue;
				checks[c].seen++;
				/* A runtime's function: no system name (pprof would demangle
				 * "<module>" away), its first line from co_firstlineno. */
				if (f->system_name >= (int64_t)p->n_string_table ||
				    p->string_table[f->system_name][0])
					fail_msg("%s: has a system name", name);
				if (checks[c].def_line && f->start_line != checks[c].def_line)
					fail_msg("%s: start_line %lld, its def is at line %ld",
						 name, (long long)f->start_line,
						 checks[c].def_line);
				if (flen < suffix_len ||
				    strcmp(file + flen - suffix_len, file_suffix) ||
				    loc->line[j]->line < checks[c].min ||
				    loc->line[j]->line > checks[c].max)
					fail_msg(
					    "%s: file %s line %lld, expected *%s lines %ld-%ld",
					    name, file, (long long)loc->line[j]->line, file_suffix,
					    checks[c].min, checks[c].max);
			}
		}
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(used);
	for (size_t c = 0; c < n; c++) {
		printf("    %s: %ld location(s) at %s:%ld%s\n", checks[c].function, checks[c].seen,
		       file_suffix, checks[c].min, checks[c].min == checks[c].max ? "" : "+");
		assert_true(checks[c].seen > 0);
	}
}

/* The chain's calls: link_NN's frame is at its `return link_NN+1(...)` line, etc. */
static void check_chain_lines(const char *pprof, pid_t pid)
{
	char script[512], needle[64], def[32], *text;
	struct line_check checks[CHAIN_LINKS + 3] = {{0}};
	static char names[CHAIN_LINKS][16];
	size_t n = 0;

	snprintf(script, sizeof(script), "%s/py_chain.py", script_dir());
	text = tu_read_file(script, NULL);
	assert_non_null(text);
	for (int i = 1; i <= CHAIN_LINKS; i++) {
		snprintf(names[i - 1], sizeof(names[i - 1]), "link_%02d", i);
		if (i < CHAIN_LINKS)
			snprintf(needle, sizeof(needle), "return link_%02d(d, depth)", i + 1);
		else
			snprintf(needle, sizeof(needle), "return rec(depth, d)");
		snprintf(def, sizeof(def), "def link_%02d(", i);
		checks[n++] =
		    (struct line_check){names[i - 1], tu_line_of(text, needle),
					tu_line_of(text, needle), 0, tu_line_of(text, def)};
	}
	checks[n++] = (struct line_check){"run", tu_line_of(text, "return link_01("),
					  tu_line_of(text, "return link_01("), 0,
					  tu_line_of(text, "def run(")};
	/* The leaf runs its loop: any line of its body. */
	checks[n++] =
	    (struct line_check){"py_leaf", tu_line_of(text, "def py_leaf") + 1,
				tu_line_of(text, "return x"), 0, tu_line_of(text, "def py_leaf")};
	free(text);
	for (size_t i = 0; i < n; i++)
		assert_true(checks[i].min > 0);
	check_lines(pprof, "/py_chain.py", checks, n, pid);
}

/* ---- one case ----------------------------------------------------------------- */

/*
 * The command line of pc's workload into argv (its script, depth or library
 * in the caller's buffers); interp is the interpreter's path.
 */
static void case_argv(const struct py_case *pc, const char *interp, char **argv, char *script,
		      char *lib, char *depth)
{
	argv[0] = (char *)interp;
	argv[1] = script;
	argv[2] = "60";
	argv[3] = argv[4] = argv[5] = NULL;
	switch (pc->what) {
	case CHAIN:
	case DEEP:
		snprintf(script, 512, "%s/py_chain.py", script_dir());
		snprintf(depth, 16, "%d", pc->what == DEEP ? DEEP_LEVELS : 0);
		argv[3] = depth;
		break;
	case MIXED:
		snprintf(script, 512, "%s/py_mixed.py", script_dir());
		snprintf(lib, 512, "%s/workloads/lib/py_callback.so", tu_build_dir());
		argv[3] = lib;
		break;
	case THREADS:
		snprintf(script, 512, "%s/py_threads.py", script_dir());
		break;
	}
}

/* The symlink a grouped case's interpreter is started through: its comm. */
static void group_link(size_t index, char *buf, size_t size)
{
	snprintf(buf, size, "%s/pycase%zu", rec.dir, index);
}

/*
 * Starts every case of pc's group, each through its symlink, and records
 * them together into rec (-p with all their pids). Fails the test when one
 * does not start.
 */
static void rec_group(const struct py_case *pc)
{
	char script[512], lib[512], depth[16], link[1100], pids[128] = "", *out = NULL;
	char folded[1100], *argv[6];
	pid_t pid[MAX_GROUP];
	size_t n = 0, len = 0;

	rec_clear();
	rec.dir = tu_mkdtemp();
	assert_non_null(rec.dir);
	rec.group = pc->group;
	for (size_t i = 0; i < n_cases; i++) {
		if (cases[i].group != pc->group)
			continue;
		assert_true(n < MAX_GROUP);
		assert_true(cases[i].what != THREADS && cases[i].copies == pc->copies &&
			    (cases[i].what == DEEP) == (pc->what == DEEP));
		group_link(i, link, sizeof(link));
		assert_int_equal(symlink(cases[i].python, link), 0);
		case_argv(&cases[i], link, argv, script, lib, depth);
		pid[n] = tu_spawn_ready(argv);
		if (pid[n] <= 0) {
			for (size_t j = 0; j < n; j++)
				tu_reap(pid[j]);
			fail_msg("%s (as %s) %s did not start", cases[i].python, link, script);
		}
		rec.pid[i] = pid[n];
		len +=
		    (size_t)snprintf(pids + len, sizeof(pids) - len, "%s%d", n ? "," : "", pid[n]);
		n++;
	}
	/* Deeper than the default --max-frames (256): the whole budget asked for. */
	rec.rc =
	    tu_run(&out, "%s record -p %s -d " RECORD_SECONDS " -F " FREQUENCY " -o %s/out%s%s",
		   omniprof(), pids, rec.dir, pc->copies ? " --copy-all-stacks" : "",
		   pc->what == DEEP ? " --max-frames 1024" : "");
	for (size_t j = 0; j < n; j++)
		tu_reap(pid[j]);
	if (rec.rc)
		print_error("omniprof record failed (%d):\n%s\n", rec.rc, out ? out : "");
	free(out);
	snprintf(folded, sizeof(folded), "%s/out/stacks.folded", rec.dir);
	rec.text = tu_read_file(folded, NULL);
}

static void test_case(void **state)
{
	const struct py_case *pc = *state;
	char script[512], lib[512], depth[16], comm[16], folded[1024], pprof[1100];
	char *dir = NULL, *out = NULL, *text = NULL, *argv[6];
	struct chain_spec *cs[3] = {chain_spec__new(), chain_spec__new(), chain_spec__new()};
	struct chain_count c[3] = {{0}, {0}, {0}};
	const char *labels[3] = {"chain", NULL, NULL};
	size_t n_chains = 1, index = (size_t)(pc - cases);
	pid_t pid;
	int rc;

	for (int i = 0; i < 3; i++)
		assert_non_null(cs[i]);
	switch (pc->what) {
	case CHAIN:
	case DEEP:
		expect_chain(cs[0], pc->what == DEEP ? DEEP_LEVELS : 0);
		break;
	case MIXED:
		expect_mixed(cs[0]);
		labels[0] = "python -> C -> python";
		break;
	case THREADS:
		for (int i = 0; i < 3; i++)
			expect_thread(cs[i], (char)('a' + i));
		labels[0] = "thread a";
		labels[1] = "thread b";
		labels[2] = "thread c";
		n_chains = 3;
		break;
	}
	if (pc->group) {
		char link[1100];

		if (rec.group != pc->group)
			rec_group(pc);
		group_link(index, link, sizeof(link));
		comm_of(link, comm);
		rc = rec.rc;
		pid = rec.pid[index];
		text = rec.text ? strdup(rec.text) : NULL;
		snprintf(pprof, sizeof(pprof), "%s/out/profile.pb.gz", rec.dir);
	} else {
		dir = tu_mkdtemp();
		assert_non_null(dir);
		comm_of(pc->python, comm);
		case_argv(pc, pc->python, argv, script, lib, depth);
		pid = tu_spawn_ready(argv);
		if (pid <= 0) {
			tu_rmtree(dir);
			fail_msg("%s %s did not start", pc->python, script);
		}
		/* Deeper than the default --max-frames (256): the whole budget asked for. */
		rc =
		    tu_run(&out, "%s record -p %d -d " RECORD_SECONDS " -F " FREQUENCY " -o %s%s%s",
			   omniprof(), pid, dir, pc->copies ? " --copy-all-stacks" : "",
			   pc->what == DEEP ? " --max-frames 1024" : "");
		tu_reap(pid);
		if (rc)
			print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
		free(out);
		snprintf(folded, sizeof(folded), "%s/stacks.folded", dir);
		snprintf(pprof, sizeof(pprof), "%s/profile.pb.gz", dir);
		text = tu_read_file(folded, NULL);
		/* Alone in its recording: every location is its own. */
		pid = 0;
	}
	for (size_t i = 0; i < n_chains && text; i++) {
		c[i] = chain_spec__count_folded(cs[i], text, comm);
		report(labels[i], c[i]);
	}
	if (!rc && text && pc->what == CHAIN)
		check_chain_lines(pprof, pid);
	if (dir)
		tu_rmtree(dir);
	free(dir);
	free(text);
	for (int i = 0; i < 3; i++)
		chain_spec__free(cs[i]);
	assert_int_equal(rc, 0);
	for (size_t i = 0; i < n_chains; i++)
		assert_share(c[i]);
}

/* ---- the interpreters ------------------------------------------------------- */

static void add_case(const char *name, const char *python, enum workload what)
{
	struct py_case *pc;

	if (n_cases == MAX_CASES)
		return;
	pc = &cases[n_cases++];
	snprintf(pc->name, sizeof(pc->name), "%s", name);
	snprintf(pc->python, sizeof(pc->python), "%s", python);
	pc->what = what;
	pc->copies = false;
	pc->group = 0;
}

/* Debian's python3 (tu_distro_python): its path and minor version, found once in main. */
static char debian_python[1024];
static unsigned int debian_minor;
static int debian_found = -ENOENT;

/* The machine must have the interpreters this suite is about: no silent skip. */
static void test_interpreters_present(void **state)
{
	char missing[128];
	int n_missing = tu_pyenv_missing(missing, sizeof(missing));
	size_t pyenv = 0;

	(void)state;
	for (size_t i = 0; i < n_cases; i++)
		pyenv += strstr(cases[i].name, "pyenv") != NULL;
	printf("    %zu pyenv interpreter case(s), Debian's python3: %s\n", pyenv,
	       debian_found ? "missing" : debian_python);
	if (debian_found)
		fail_msg("no python3 of Debian's python3-minimal package");
	if (n_missing)
		fail_msg("pyenv has no CPython %s: this suite needs 3.%d to 3.%d", missing,
			 TU_PYENV_FIRST_MINOR, TU_PYENV_LAST_MINOR);
}

int main(void)
{
	static char versions[MAX_CASES][64];
	struct CMUnitTest tests[MAX_CASES + 1];
	char root[512], python[1024], name[96];
	size_t n_versions = tu_pyenv_versions(versions, 16, root, sizeof(root));
	const char *oldest = NULL, *newest = NULL;
	char deb[32];

	for (size_t i = 0; i < n_versions; i++) {
		snprintf(python, sizeof(python), "%.400s/versions/%.60s/bin/python3", root,
			 versions[i]);
		snprintf(name, sizeof(name), "pyenv %.60s", versions[i]);
		add_case(name, python, CHAIN);
		/* Two by two (an odd last one alone). */
		if (i % 2 || i + 1 < n_versions)
			cases[n_cases - 1].group = (int)(i / 2) + 1;
	}
	debian_found = tu_distro_python(debian_python, sizeof(debian_python), &debian_minor);
	snprintf(deb, sizeof(deb), "debian python3.%u", debian_minor);
	snprintf(name, sizeof(name), "%s (static, stripped)", deb);
	add_case(name, debian_python, CHAIN);
	/* Deep: the oldest version (most native frames per Python frame) and the newest. */
	if (n_versions) {
		oldest = versions[0];
		newest = versions[n_versions - 1];
		snprintf(python, sizeof(python), "%.400s/versions/%.60s/bin/python3", root, oldest);
		snprintf(name, sizeof(name), "pyenv %.60s, %d levels deep", oldest, DEEP_LEVELS);
		add_case(name, python, DEEP);
		cases[n_cases - 1].group = 100;
		snprintf(python, sizeof(python), "%.400s/versions/%.60s/bin/python3", root, newest);
		snprintf(name, sizeof(name), "pyenv %.60s, %d levels deep", newest, DEEP_LEVELS);
		add_case(name, python, DEEP);
		cases[n_cases - 1].group = 100;
		snprintf(name, sizeof(name), "pyenv %.60s, ctypes callback", oldest);
		snprintf(python, sizeof(python), "%.400s/versions/%.60s/bin/python3", root, oldest);
		add_case(name, python, MIXED);
		cases[n_cases - 1].group = 101;
	}
	snprintf(name, sizeof(name), "%s, ctypes callback", deb);
	add_case(name, debian_python, MIXED);
	if (n_versions)
		cases[n_cases - 1].group = 101;
	snprintf(name, sizeof(name), "%s, three threads", deb);
	add_case(name, debian_python, THREADS);
	if (n_versions) {
		snprintf(python, sizeof(python), "%.400s/versions/%.60s/bin/python3", root, oldest);
		snprintf(name, sizeof(name), "pyenv %.60s, three threads", oldest);
		add_case(name, python, THREADS);
	}
	/* Young processes' samples, unwound from stack copies in user space (the
	 * Python walker reading the live process): the newest version, whose
	 * entry frames are on the copied stack, and Debian's, with threads. */
	if (n_versions) {
		snprintf(python, sizeof(python), "%.400s/versions/%.60s/bin/python3", root, newest);
		snprintf(name, sizeof(name), "pyenv %.40s, ctypes callback (stack copies)", newest);
		add_case(name, python, MIXED);
		cases[n_cases - 1].copies = true;
	}
	snprintf(name, sizeof(name), "%s, three threads (stack copies)", deb);
	add_case(name, debian_python, THREADS);
	cases[n_cases - 1].copies = true;

	tests[0] = (struct CMUnitTest){.name = "interpreters present",
				       .test_func = test_interpreters_present};
	for (size_t i = 0; i < n_cases; i++)
		tests[i + 1] = (struct CMUnitTest){
		    .name = cases[i].name, .test_func = test_case, .initial_state = &cases[i]};
	return _cmocka_run_group_tests("e2e_python", tests, n_cases + 1, NULL, rec_teardown);
}
