// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end V8: the installed node (no flags) runs the JavaScript
 * workloads of tests/workloads/v8/, recorded with -p. Each case requires
 * its chain of JavaScript functions, in order, in at least 95% of the leaf
 * function's samples (the leaf is only named once V8's frames are walked,
 * so the profiler's own warm-up, while node's tables are built, does not
 * count), and the chain cases check in the pprof output that the frames
 * carry the script's path and the exact line of each call. Cases: a warm
 * chain (optimized by TurboFan, each link too big to be inlined), a cold
 * one (a leaf too big to optimize: interpreted, then baseline), an
 * anonymous function and class methods, a worker_threads worker, an async
 * function's synchronous part, a
 * function deoptimized over and over, GC pressure, JavaScript -> an N-API
 * addon (tests/workloads/lib/v8_addon.c) -> JavaScript, and the warm chain
 * through stack copies (the walker in user space); inlined functions
 * (TurboFan's, and Maglev's on Node 24, from its deoptimization
 * translation) as the lines of one location. Cases with the same
 * recording flags and distinct function names run side by side in one
 * recording (two groups of three nodes, a third of five: four other node
 * majors, Node 16 twice); each process's samples are counted by its pid
 * (the pprof's "pid" label). Last, a node started while a whole-system
 * recording runs. Needs root and BPF.
 */
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

#define NODE "/usr/bin/node"
/* The leaf is named once node's 98 MB table is built and V8 attached: under
 * load (the whole suite, other builds) that can take seconds of the run. */
#define RECORD_SECONDS "10"
#define FREQUENCY      "199"
#define MIN_LEAF       20

#define EXPECT(call) assert_int_equal((call), 0)

struct v8_case {
	const char *name;
	const char *script; /* under tests/workloads/v8/ */
	const char *mode;
	const char *chain[6]; /* root first, NULL-terminated */
	bool lines;	      /* check call lines in the pprof ("// line: <fn> ..." comments) */
	const char *need_lines[4]; /* chain functions that must be seen with their line */
	bool copies;		   /* --copy-all-stacks */
	const char *seconds;	   /* recording length, RECORD_SECONDS when NULL */
	const char *lib;	   /* a library under build/workloads/lib/ passed to the script */
	int gaps;		   /* native frames allowed between two chain links (0: none) */
	const char
	    *node; /* another node (scripts/install-deps.sh's /opt/omniprof-node), NODE when NULL */
	/* A second node recorded at the same time (its own chain count, same chain). */
	const char *node2;
	/* node started twice: each process counted by its pid (the pprof's labels). */
	bool twice;
	/* One V8 flag for node choosing a tier for the workload (the profiler uses none). */
	const char *flag;
	/* Cases of one group (non-zero, listed next to each other) share one recording. */
	int group;
	/* Functions that must be seen as the lines of one location, innermost
	 * first: inlined into one optimized frame (NULL-terminated). */
	const char *one_location[5];
};

static char *omniprof(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/omniprof", tu_build_dir());
	return path;
}

static void report(const char *what, struct chain_count c)
{
	printf("    %s: %ld of %ld leaf samples complete (%.1f%%)\n", what, c.complete, c.leaf,
	       c.leaf ? 100.0 * (double)c.complete / (double)c.leaf : 0.0);
	if (c.worst && (c.complete * 100 < c.leaf * 95 || !c.leaf))
		printf("      most frequent incomplete stack (%ld samples): %.*s\n", c.worst_count,
		       (int)(c.worst_len > 1500 ? 1500 : c.worst_len), c.worst);
	fflush(stdout);
}

/*
 * Every location of each chain function that carries a line must be in the
 * script, inside that function (from "function <fn>(" to its closing brace:
 * a frame sampled in its own code, e.g. its entry stack check or, for the
 * leaf, its loop check and return, carries those positions); each must be
 * seen at the line of its "// line: <fn> " comment, its call or loop, at
 * least once (a baseline frame has no line: 0 is allowed).
 */
static void check_lines(const char *pprof, const char *script, const char *const *chain,
			const char *const *need)
{
	Perftools__Profiles__Profile *p = tu_read_pprof(pprof);
	char *text = tu_read_file(script, NULL), needle[96];
	const char *base = strrchr(script, '/');
	long want[6] = {0}, seen[6] = {0}, first[6] = {0}, last[6] = {0};
	long internal = 0; /* node's own modules' frames with a line (external sources) */

	assert_non_null(p);
	assert_non_null(text);
	for (int c = 0; c < 6 && chain[c]; c++) {
		snprintf(needle, sizeof(needle), "// line: %s ", chain[c]);
		want[c] = tu_line_of(text, needle);
		assert_true(want[c] > 0);
		/* Its body: "function NAME(" (or its line) to the closing brace after its line. */
		snprintf(needle, sizeof(needle), "function %s(", chain[c]);
		first[c] = tu_line_of(text, needle) ? tu_line_of(text, needle) : want[c];
		snprintf(needle, sizeof(needle), "// line: %s ", chain[c]);
		last[c] = want[c] + tu_line_of(strstr(text, needle), "\n}\n");
	}
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
			internal += !strncmp(file, "node:internal/", 14) && loc->line[j]->line > 0;
			for (int c = 0; c < 6 && chain[c]; c++) {
				size_t fl = strlen(file), bl = strlen(base);

				if (strcmp(name, chain[c]) || !loc->line[j]->line)
					continue;
				if (fl < bl || strcmp(file + fl - bl, base) ||
				    loc->line[j]->line < first[c] || loc->line[j]->line > last[c])
					fail_msg("%s: %s:%lld, expected *%s:%ld-%ld", name, file,
						 (long long)loc->line[j]->line, base, first[c],
						 last[c]);
				seen[c] += loc->line[j]->line == want[c];
			}
		}
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(text);
	printf("    node:internal/* locations with a line: %ld\n", internal);
	if (!internal)
		fail_msg(
		    "no node:internal frame carries a line (their sources are external strings)");
	for (int c = 0; c < 6 && chain[c]; c++)
		printf("    %s: %ld location(s) at %s:%ld (allowed %ld-%ld)\n", chain[c], seen[c],
		       base + 1, want[c], first[c], last[c]);
	for (int c = 0; c < 6 && chain[c]; c++)
		for (int k = 0; k < 4 && need[k]; k++)
			if (!strcmp(need[k], chain[c]) && !seen[c])
				fail_msg("%s: never seen with its line", chain[c]);
}

/*
 * Cases of one group (same recording flags, distinct leaf functions) run at
 * the same time in one recording: each counts its own leaf's stacks.
 */
#define MAX_GROUP 4

/* The case table (set by main). */
static const struct v8_case *all_cases;
static size_t n_cases;

/* The recording of the group running now (or of one case alone). */
static struct {
	const struct v8_case *first; /* its first case: NULL when none */
	char *dir;
	char *text; /* stacks.folded */
	int rc;
	/* Each member case's processes. */
	const struct v8_case *member[MAX_GROUP];
	pid_t pid[MAX_GROUP][2];
	size_t n_members;
} rec;

static void rec_clear(void)
{
	if (rec.dir) {
		tu_rmtree(rec.dir);
		free(rec.dir);
	}
	free(rec.text);
	memset(&rec, 0, sizeof(rec));
}

static int rec_teardown(void **state)
{
	(void)state;
	rec_clear();
	return 0;
}

/*
 * Starts every case of vc's group (vc alone when it has none) and records
 * them together into rec. Fails the test when one does not start.
 */
static void rec_group(const struct v8_case *vc)
{
	const struct v8_case *members[MAX_GROUP] = {vc};
	char script[MAX_GROUP][512], lib[MAX_GROUP][512], pids[256] = "", *out = NULL;
	pid_t pid[2 * MAX_GROUP];
	size_t n = 0, n_pids = 0, len = 0;

	rec_clear();
	for (size_t i = 0; i < n_cases; i++)
		if (&all_cases[i] == vc || (vc->group && all_cases[i].group == vc->group)) {
			assert_true(n < MAX_GROUP);
			members[n++] = &all_cases[i];
		}
	assert_true(n >= 1);
	rec.first = members[0];
	rec.dir = tu_mkdtemp();
	assert_non_null(rec.dir);
	for (size_t m = 0; m < n; m++) {
		const struct v8_case *c = members[m];
		/* Longer than any recording: killed once it ends (under load,
		 * record's start-up alone took 20 s, and with 30 s the first of
		 * five nodes had exited before sampling began). */
		char *argv[7];
		int a = 0;

		argv[a++] = (char *)(c->node ? c->node : NODE);
		if (c->flag)
			argv[a++] = (char *)c->flag;
		argv[a++] = script[m];
		argv[a++] = "120";
		argv[a++] = (char *)c->mode;
		if (c->lib)
			argv[a++] = lib[m];
		argv[a] = NULL;

		/* One recording: the same flags for all. */
		assert_true(c->copies == members[0]->copies && c->seconds == members[0]->seconds);
		snprintf(script[m], sizeof(script[m]), "tests/workloads/v8/%s", c->script);
		if (c->lib)
			snprintf(lib[m], sizeof(lib[m]), "%s/workloads/lib/%s", tu_build_dir(),
				 c->lib);
		rec.member[rec.n_members++] = c;
		for (int k = 0; k < (c->node2 || c->twice ? 2 : 1); k++) {
			if (k && c->node2)
				argv[0] = (char *)c->node2;
			pid[n_pids] = tu_spawn_ready(argv);
			if (pid[n_pids] <= 0) {
				for (size_t j = 0; j < n_pids; j++)
					tu_reap(pid[j]);
				fail_msg("%s %s did not start", argv[0], script[m]);
			}
			rec.pid[m][k] = pid[n_pids];
			len += (size_t)snprintf(pids + len, sizeof(pids) - len, "%s%d",
						n_pids ? "," : "", pid[n_pids]);
			n_pids++;
		}
	}
	rec.rc = tu_run(&out, "%s record -p %s -d %s -F " FREQUENCY " -o %s%s", omniprof(), pids,
			vc->seconds ? vc->seconds : RECORD_SECONDS, rec.dir,
			vc->copies ? " --copy-all-stacks" : "");
	for (size_t j = 0; j < n_pids; j++)
		tu_reap(pid[j]);
	if (rec.rc)
		print_error("omniprof record failed (%d):\n%s\n", rec.rc, out ? out : "");
	free(out);
	snprintf(script[0], sizeof(script[0]), "%s/stacks.folded", rec.dir);
	rec.text = tu_read_file(script[0], NULL);
}

/* The location (function) with this id: entry id - 1 when ids are 1..n in
 * order (ours are), else found by search; NULL when absent. */
static const Perftools__Profiles__Location *location_by_id(const Perftools__Profiles__Profile *p,
							   uint64_t id)
{
	if (id >= 1 && id <= p->n_location && p->location[id - 1]->id == id)
		return p->location[id - 1];
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	return NULL;
}

static const Perftools__Profiles__Function *function_by_id(const Perftools__Profiles__Profile *p,
							   uint64_t id)
{
	if (id >= 1 && id <= p->n_function && p->function[id - 1]->id == id)
		return p->function[id - 1];
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	return NULL;
}

/*
 * Whether some location of the pprof holds exactly the functions of want
 * as its lines, in that order (innermost first): one code object's frame
 * with its inlined functions, not frames of their own.
 */
static bool one_location(const char *pprof, const char *const *want)
{
	Perftools__Profiles__Profile *p = tu_read_pprof(pprof);
	bool found = false;

	assert_non_null(p);
	for (size_t i = 0; i < p->n_location && !found; i++) {
		const Perftools__Profiles__Location *loc = p->location[i];
		size_t k = 0;

		for (; k < loc->n_line && want[k]; k++) {
			const Perftools__Profiles__Function *f =
			    function_by_id(p, loc->line[k]->function_id);

			if (!f || f->name < 0 || (size_t)f->name >= p->n_string_table ||
			    strcmp(p->string_table[f->name], want[k]))
				break;
		}
		found = k == loc->n_line && !want[k];
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	printf("    %s%s%s... as the lines of one location: %s\n", want[0], want[1] ? ", " : "",
	       want[1] ? want[1] : "", found ? "yes" : "no");
	return found;
}

/*
 * The chain counted in the samples of process pid alone (the pprof's "pid"
 * label): each sample's stack, root first, inlined frames in their place,
 * as stacks.folded gives it.
 */
static struct chain_count count_pid(const struct chain_spec *cs, const char *pprof, pid_t pid)
{
	static char worst[1500], top[1500];
	size_t top_len = 0;
	long all = 0, top_count = 0;
	Perftools__Profiles__Profile *p = tu_read_pprof(pprof);
	struct chain_count c = {0};
	int64_t key = -1;
	size_t cap = 1 << 16;
	char *stack = malloc(cap);

	assert_non_null(p);
	assert_non_null(stack);
	for (size_t i = 0; i < p->n_string_table; i++)
		if (!strcmp(p->string_table[i], "pid"))
			key = (int64_t)i;
	assert_true(key > 0);
	for (size_t s = 0; s < p->n_sample; s++) {
		const Perftools__Profiles__Sample *sm = p->sample[s];
		bool ours = false;
		size_t len = 0;

		for (size_t k = 0; k < sm->n_label; k++)
			ours |= sm->label[k]->key == key && sm->label[k]->num == pid;
		if (!ours || !sm->n_value)
			continue;
		for (size_t j = sm->n_location_id; j-- > 0;) {
			const Perftools__Profiles__Location *loc =
			    location_by_id(p, sm->location_id[j]);

			for (size_t k = loc ? loc->n_line : 0; k-- > 0;) {
				const Perftools__Profiles__Function *f =
				    function_by_id(p, loc->line[k]->function_id);
				const char *name = f && f->name < (int64_t)p->n_string_table
						       ? p->string_table[f->name]
						       : "?";

				if (len + strlen(name) + 2 < cap)
					len += (size_t)snprintf(stack + len, cap - len, "%s%s",
								len ? ";" : "", name);
			}
		}
		all += sm->value[0];
		if (!chain_spec__has_leaf(cs, stack, len)) {
			/* Kept for the report when no leaf is seen (the process's top stack). */
			if (sm->value[0] > top_count) {
				memcpy(top, stack, len < sizeof(top) ? len : sizeof(top));
				top_len = len < sizeof(top) ? len : sizeof(top);
				top_count = sm->value[0];
			}
			continue;
		}
		c.leaf += sm->value[0];
		if (chain_spec__matches(cs, stack, len)) {
			c.complete += sm->value[0];
		} else if (sm->value[0] > c.worst_count) {
			/* Kept for the report (the most frequent incomplete stack). */
			memcpy(worst, stack, len < sizeof(worst) ? len : sizeof(worst));
			c.worst = worst;
			c.worst_len = len < sizeof(worst) ? len : sizeof(worst);
			c.worst_count = sm->value[0];
		}
	}
	printf("    pid %d: %ld samples in all\n", (int)pid, all);
	if (!c.leaf && top_count) {
		c.worst = top;
		c.worst_len = top_len;
		c.worst_count = top_count;
	}
	free(stack);
	perftools__profiles__profile__free_unpacked(p, NULL);
	return c;
}

static void test_case(void **state)
{
	const struct v8_case *vc = *state;
	char script[512], pprof[1024];
	struct chain_spec *cs = chain_spec__new();
	struct chain_count c = {0}, c2 = {0};
	bool same_group = rec.first && vc->group && rec.first->group == vc->group;

	assert_non_null(cs);
	snprintf(script, sizeof(script), "tests/workloads/v8/%s", vc->script);
	for (int i = 0; i < 6 && vc->chain[i]; i++) {
		/* Links in C (v8_addon.c) sit between V8's and N-API's native frames. */
		if (i && vc->gaps)
			EXPECT(chain_spec__add_gap(cs, 0, (unsigned int)vc->gaps));
		EXPECT(chain_spec__add(cs, "%s", vc->chain[i]));
	}
	if (!same_group)
		rec_group(vc);
	snprintf(pprof, sizeof(pprof), "%s/profile.pb.gz", rec.dir);
	/* Each process by its pid: processes of one binary are told apart. */
	for (size_t m = 0; rec.text && m < rec.n_members; m++) {
		if (rec.member[m] != vc)
			continue;
		for (int k = 0; k < (vc->node2 || vc->twice ? 2 : 1); k++) {
			struct chain_count *ck = k ? &c2 : &c;
			char what[160];

			*ck = count_pid(cs, pprof, rec.pid[m][k]);
			snprintf(what, sizeof(what), "%s, pid %d",
				 k && vc->node2 ? vc->node2 : vc->name, (int)rec.pid[m][k]);
			report(what, *ck);
		}
	}
	if (!rec.rc && rec.text && vc->lines)
		check_lines(pprof, script, vc->chain, vc->need_lines);
	if (!rec.rc && rec.text && vc->one_location[0])
		assert_true(one_location(pprof, vc->one_location));
	chain_spec__free(cs);
	assert_int_equal(rec.rc, 0);
	assert_true(c.leaf >= MIN_LEAF);
	assert_true(c.complete * 100 >= c.leaf * 95);
	if (vc->node2 || vc->twice) {
		assert_true(c2.leaf >= MIN_LEAF);
		assert_true(c2.complete * 100 >= c2.leaf * 95);
	}
}

/*
 * A node started while a whole-system recording runs (no -p): covered from
 * its first JavaScript frames, its warm chain complete in >= 95% of its
 * leaf's samples (counted by its pid).
 */
static void test_young(void **state)
{
	char *dir = tu_mkdtemp(), log[1024], out_dir[1024], pprof[1100];
	char *argv[] = {NODE, "tests/workloads/v8/v8_chain.js", "8", "warm", NULL};
	const char *args[] = {"-F", FREQUENCY, "-o", out_dir, NULL};
	const char *const chain[] = {"main", "render", "layout", "measure"};
	struct chain_spec *cs = chain_spec__new();
	struct chain_count c;
	pid_t rec, pid;
	int status;

	(void)state;
	assert_non_null(dir);
	assert_non_null(cs);
	for (size_t i = 0; i < sizeof(chain) / sizeof(chain[0]); i++)
		EXPECT(chain_spec__add(cs, "%s", chain[i]));
	snprintf(log, sizeof(log), "%s/record.log", dir);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	rec = tu_omniprof_start(log, "record", args);
	assert_true(rec > 0);
	if (!tu_wait_log(log, "sampling", 60000)) {
		kill(rec, SIGKILL);
		tu_wait_bounded(rec, 10000, 20, NULL);
		fail_msg("omniprof did not start sampling within 60 s");
	}
	/* The start-up scan of every process first: not this test's subject. */
	sleep(2);
	pid = tu_spawn_ready(argv);
	assert_true(pid > 0);
	/* Its 8 s of work (tu_reap would kill it now). */
	tu_wait_bounded(pid, 60000, 50, NULL);
	kill(rec, SIGHUP);
	status = tu_wait_bounded(rec, 120000, 20, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		tu_print_log("record", log);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	snprintf(pprof, sizeof(pprof), "%s/profile.pb.gz", out_dir);
	c = count_pid(cs, pprof, pid);
	report("started during the recording", c);
	chain_spec__free(cs);
	tu_rmtree(dir);
	free(dir);
	assert_true(c.leaf >= MIN_LEAF);
	assert_true(c.complete * 100 >= c.leaf * 95);
}

static void test_node_present(void **state)
{
	(void)state;
	if (access(NODE, X_OK))
		fail_msg(NODE " is missing: scripts/install-deps.sh installs nodejs");
}

/*
 * Each group records its cases' nodes at the same time (distinct leaf
 * functions; a script's lines are checked over the group's whole pprof, so
 * two chains of one script in a group are at the same lines: the cold chain
 * on Node 20 and 16, the warm and cold ones of group 3). The warm and the
 * cold chain of Node 20 are in different groups. Grouped to keep the suite
 * short: each recording costs its length plus node's start.
 */
static const struct v8_case cases[] = {
    {.name = "warm chain (TurboFan)",
     .script = "v8_chain.js",
     .mode = "warm",
     .chain = {"main", "render", "layout", "measure"},
     .lines = true,
     .need_lines = {"main", "render", "layout", "measure"},
     .group = 1},
    /* inlA, inlB, inlC inlined by TurboFan into inlineHost: one JIT frame, five frames. */
    {.name = "inlined functions (TurboFan)",
     .script = "v8_inline.js",
     .mode = "inline",
     .chain = {"inlineMain", "inlineHost", "inlA", "inlB", "inlC"},
     .lines = true,
     .need_lines = {"inlineHost", "inlA", "inlB", "inlC"},
     .one_location = {"inlC", "inlB", "inlA", "inlineHost"},
     .group = 1},
    {.name = "worker_threads worker",
     .script = "v8_shapes.js",
     .mode = "worker",
     .chain = {"workerMain", "workerLeaf"},
     .group = 1},
    /* An async function's synchronous part: asyncMain resumed from the
     * microtask queue after each await calls asyncStep, which runs
     * asyncLeaf before its own await. */
    {.name = "async functions (synchronous part)",
     .script = "v8_shapes.js",
     .mode = "async",
     .chain = {"asyncMain", "asyncStep", "asyncLeaf"},
     .group = 1},
    {.name = "cold chain (interpreted, baseline)",
     .script = "v8_chain.js",
     .mode = "cold",
     .chain = {"main", "render", "layout", "measureCold"},
     .lines = true,
     .need_lines = {"main", "render", "layout", "measureCold"},
     .seconds = "15",
     .group = 2},
    {.name = "deoptimized over and over",
     .script = "v8_shapes.js",
     .mode = "deopt",
     .chain = {"deoptMain", "polyLeaf"},
     .seconds = "15",
     .group = 2},
    {.name = "JavaScript -> native addon -> JavaScript",
     .script = "v8_shapes.js",
     .mode = "addon",
     .chain = {"addonMain", "addon_call_back", "addon_inner", "jsLeaf"},
     .lib = "v8_addon.so",
     .gaps = 16,
     .seconds = "15",
     .group = 2},
    /* Node 16's interpreted and baseline frames (V8 9.4's derived bytecode
     * start and script source) beside Node 20's: the same script's lines. */
    {.name = "Node 16 cold chain (interpreted, baseline)",
     .script = "v8_chain.js",
     .mode = "cold",
     .chain = {"main", "render", "layout", "measureCold"},
     .lines = true,
     .need_lines = {"main", "render", "layout", "measureCold"},
     .node = "/opt/omniprof-node/16/node",
     .seconds = "15",
     .group = 2},
    /* Alone: recorded beside three other nodes (one run, a loaded machine),
     * its anonymous function's frame was an unnamed [anon]+0x... in 3 of 4
     * leaf samples. V8 records Ring as spin's class (spin uses Ring: the
     * class scope has a context), none for area (Shape's scope has none):
     * Node 20 by the class scope's positions, Node 16 (V8 9: no class
     * positions) by the class variable among its locals. */
    {.name = "anonymous function and class method",
     .script = "v8_shapes.js",
     .mode = "classes",
     .chain = {"classesMain", "(anonymous)", "Ring.spin", "area"},
     .node2 = "/opt/omniprof-node/16/node",
     .seconds = "15"},
    /* The same on Node 22 and 24: V8 12 numbers scope types as V8 9 to 11
     * (the class's scope 0, the method's 2), V8 13 from SCRIPT_SCOPE (2
     * and 4, in raw 32-bit flags) and keeps the class's positions before
     * its locals. */
    {.name = "anonymous function and class method, Node 22 and Node 24",
     .script = "v8_shapes.js",
     .mode = "classes",
     .chain = {"classesMain", "(anonymous)", "Ring.spin", "area"},
     .node = "/opt/omniprof-node/22/node",
     .node2 = "/opt/omniprof-node/24/node",
     .seconds = "15"},
    /* GC threads take the CPUs from the profiler's start too: longer, alone. */
    {.name = "GC pressure",
     .script = "v8_shapes.js",
     .mode = "gc",
     .chain = {"gcMain", "allocLeaf"},
     .seconds = "15"},
    {.name = "warm chain (stack copies)",
     .script = "v8_chain.js",
     .mode = "warm",
     .chain = {"main", "render", "layout", "measure"},
     .copies = true},
    /* Maglev alone: Node 24 (V8 13.6) with TurboFan off compiles the warm
     * chain with Maglev only (--trace-opt: main, render, layout, measure
     * "target MAGLEV"); every frame named, in order. Maglev code has no
     * source positions: a caller's line is its call's (the return
     * address's safepoint -> lazy deoptimization entry -> bytecode offset);
     * the leaf's pc is no call's (no line). */
    {.name = "Node 24 warm chain (Maglev)",
     .script = "v8_chain.js",
     .mode = "warm",
     .chain = {"main", "render", "layout", "measure"},
     .lines = true,
     .need_lines = {"main", "render", "layout"},
     .node = "/opt/omniprof-node/24/node",
     .flag = "--no-turbofan",
     .seconds = "15",
     .group = 4},
    /* Maglev's inlining (Node 24, TurboFan off for the workload):
     * --trace-maglev-inlining shows mgA and mgB inlined into mgHost, mgLeaf
     * not (too big). The return address in mgHost's code is mgB's call of
     * mgLeaf: its deoptimization translation gives mgHost, mgA and mgB,
     * each a frame of its own at its call line. */
    {.name = "Node 24 inlined functions (Maglev)",
     .script = "v8_inline.js",
     .mode = "maglev",
     .chain = {"mgMain", "mgHost", "mgA", "mgB", "mgLeaf"},
     .lines = true,
     .need_lines = {"mgMain", "mgHost", "mgA", "mgB"},
     .one_location = {"mgB", "mgA", "mgHost"},
     .node = "/opt/omniprof-node/24/node",
     .flag = "--no-turbofan",
     .seconds = "15",
     .group = 4},
    /* Official builds of other majors (no pointer compression), all in one
     * recording (group 3), each process counted by its pid. Node 16 runs
     * twice: two processes of one binary in a recording must both be
     * attached and named (one was once seen never attached, session 10).
     * All are named and lined like Node 20: V8 9 (Node 16) with V8 9.4's
     * layouts derived from what it describes,
     * V8 10 (Node 18) with its Code objects' tables derived, V8 12 and 13
     * (Node 22, 24) with their bytecode and code in trusted space found
     * through what they describe; the cold chain's callers are JIT code
     * (optimized), its leaf interpreted. Every line in the pprof must be in
     * its function, each chain function seen at its call line. 15 s: node's
     * 100+ MB tables are built once per binary, four here; on the loaded
     * machine the last was seen attached only after 10 s. */
    {.name = "Node 16 warm chain, two processes",
     .script = "v8_chain.js",
     .mode = "warm",
     .chain = {"main", "render", "layout", "measure"},
     .lines = true,
     .need_lines = {"main", "render", "layout", "measure"},
     .node = "/opt/omniprof-node/16/node",
     .twice = true,
     .seconds = "15",
     .group = 3},
    {.name = "Node 18 warm chain",
     .script = "v8_chain.js",
     .mode = "warm",
     .chain = {"main", "render", "layout", "measure"},
     .lines = true,
     .need_lines = {"main", "render", "layout", "measure"},
     .node = "/opt/omniprof-node/18/node",
     .seconds = "15",
     .group = 3},
    {.name = "Node 22 and Node 24 cold chain (interpreted)",
     .script = "v8_chain.js",
     .mode = "cold",
     .chain = {"main", "render", "layout", "measureCold"},
     .lines = true,
     .need_lines = {"measureCold"},
     .node = "/opt/omniprof-node/22/node",
     .node2 = "/opt/omniprof-node/24/node",
     .seconds = "15",
     .group = 3},
};

int main(void)
{
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + 2];
	size_t n = sizeof(cases) / sizeof(cases[0]);

	all_cases = cases;
	n_cases = n;
	tests[0] = (struct CMUnitTest){.name = "node present", .test_func = test_node_present};
	const char *only = getenv("V8_CASE"); /* run the cases whose name holds it */
	size_t k = 1;

	for (size_t i = 0; i < n; i++)
		if (!only || strstr(cases[i].name, only))
			tests[k++] = (struct CMUnitTest){.name = cases[i].name,
							 .test_func = test_case,
							 .initial_state = (void *)&cases[i]};
	if (!only || strstr("node started during a whole-system recording", only))
		tests[k++] =
		    (struct CMUnitTest){.name = "node started during a whole-system recording",
					.test_func = test_young};
	return _cmocka_run_group_tests("e2e_v8", tests, k, NULL, rec_teardown);
}
