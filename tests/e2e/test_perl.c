// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end Perl: Debian's /usr/bin/perl (5.36, threaded, the interpreter
 * linked into the stripped executable) runs tests/workloads/perl/perl_chain.pl,
 * a chain of subs in package Report that spins in Report::cell, recorded
 * with -p. Each case requires the whole chain in order, from the C main
 * and perl_run through the main program to the leaf sub, in at least 95%
 * of the leaf's samples, and checks in the pprof output each Perl frame's
 * file and line against the script's "# at:NAME" markers. The cases:
 * named subs; an anonymous sub (Report::__ANON__); sort with a Perl
 * comparator (Perl -> pp_sort, C -> Perl: the native frames between); a
 * string eval ("(eval)", its code's file "(eval N)" and line); an eval
 * block in sort's comparator, which docatch() runs in a runops loop of its
 * own (the frames below it stay with the runops frame below); 500 levels of
 * recursion; and the chain in a process of another user (the unprivileged
 * attacker account); three ithreads, each its own interpreter and chain;
 * and the sort case from stack copies, every sample
 * walked in user space by the same walker (src/interp/perl/perl_unwind.c).
 * Needs root and BPF.
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

#include "attacker.h"
#include "folded_check.h"
#include "pprof_read.h"
#include "profile.pb-c.h"
#include "testutil.h"

#define PERL_DEBIAN    "/usr/bin/perl"
#define SCRIPT	       "tests/workloads/perl/perl_chain.pl"
#define RECORD_SECONDS "3"
#define FREQUENCY      "199"
#define MIN_LEAF       20  /* fewer leaf samples than this says nothing */
#define DEEP_LEVELS    500 /* Report::deep(500): 501 Report::deep frames */
#define SORT_GLUE_MAX  4   /* pp_sort, sortsv_flags, the comparator caller, ... */

#define EXPECT(call) assert_int_equal((call), 0)

struct perl_case {
	const char *name;
	const char *mode; /* perl_chain.pl's MODE */
	bool copies;	  /* record --copy-all-stacks: every sample walked in user space */
	/*
	 * Cases of one group (non-zero, next to each other, no flags) share one
	 * recording: two perls on two CPUs, each its own. Each is started
	 * through a symlink of its own name (its comm, the folded stacks' first
	 * field), its lines checked in its own samples (the pprof's pid label).
	 */
	int group;
};

#define MAX_GROUP 2

/* The recording of the last group, kept for its other cases. */
static struct {
	int group;
	int rc;
	char *dir;  /* the output and the symlinks; removed by rec_clear */
	char *text; /* stacks.folded, NULL when unreadable */
	const struct perl_case *member[MAX_GROUP];
	pid_t pid[MAX_GROUP];
	size_t n;
} rec;

/* The list (in main), for a group's other cases. */
static const struct perl_case *all_cases;
static size_t n_cases;

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

/*
 * The perl the cases run: Debian's, or OMNIPROF_TEST_PERL (a perl built
 * from source, to verify another version's or build's layout by hand; CI
 * runs Debian's).
 */
static const char *perl(void)
{
	const char *p = getenv("OMNIPROF_TEST_PERL");

	return p && *p ? p : PERL_DEBIAN;
}

static bool perl_threaded(void)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s -MConfig -e 'exit($Config{useithreads} ? 0 : 1)'", perl());
	return system(cmd) == 0;
}

static char *omniprof(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/omniprof", tu_build_dir());
	return path;
}

/* ---- expected chains ------------------------------------------------------ */

static void expect_chain_tail(struct chain_spec *cs, const char *mode);

static void expect_chain(struct chain_spec *cs, const char *mode)
{
	/* The native frames below the Perl program, then the program itself. */
	EXPECT(chain_spec__add(cs, "main"));
	EXPECT(chain_spec__add(cs, "perl_run"));
	EXPECT(chain_spec__add(cs, "(main)"));
	EXPECT(chain_spec__add(cs, "Report::build"));
	expect_chain_tail(cs, mode);
}

/* What follows Report::build in each mode, down to the leaf. */
static void expect_chain_tail(struct chain_spec *cs, const char *mode)
{
	if (!strcmp(mode, "chain")) {
		EXPECT(chain_spec__add(cs, "Report::row"));
	} else if (!strcmp(mode, "anon")) {
		EXPECT(chain_spec__add(cs, "Report::__ANON__"));
	} else if (!strcmp(mode, "sort")) {
		EXPECT(chain_spec__add(cs, "Perl_pp_sort"));
		EXPECT(chain_spec__add_gap(cs, 1, SORT_GLUE_MAX));
		EXPECT(chain_spec__add(cs, "Report::by_cmp"));
	} else if (!strcmp(mode, "sorteval")) {
		/* The eval block runs under docatch(), in a runops loop of its own: the
		 * comparator's runops frame (no Perl frame of its own) stays native. */
		EXPECT(chain_spec__add(cs, "Report::sorteval"));
		EXPECT(chain_spec__add(cs, "Perl_pp_sort"));
		EXPECT(chain_spec__add_gap(cs, 1, SORT_GLUE_MAX));
		EXPECT(chain_spec__add(cs, "Perl_runops_standard"));
		EXPECT(chain_spec__add_gap(cs, 1, 2)); /* pp_entertry, docatch */
		EXPECT(chain_spec__add(cs, "(eval)"));
	} else if (!strcmp(mode, "sortnamed")) {
		/* The leaf: sort's C code, between calls of the comparator or in one. */
		EXPECT(chain_spec__add(cs, "Perl_pp_sort"));
		return;
	} else if (!strcmp(mode, "eval")) {
		EXPECT(chain_spec__add(cs, "(eval)"));
	} else if (!strcmp(mode, "deep")) {
		for (int i = 0; i <= DEEP_LEVELS; i++)
			EXPECT(chain_spec__add(cs, "Report::deep"));
	}
	EXPECT(chain_spec__add(cs, "Report::cell"));
}

/* Thread t of the threads mode: threads.so -> call_sv -> the thread's closure -> Worker::t. */
static void expect_thread(struct chain_spec *cs, char t)
{
	EXPECT(chain_spec__add(cs, "start_thread"));
	EXPECT(chain_spec__add_gap(cs, 1, 4)); /* threads.so's thread start */
	EXPECT(chain_spec__add(cs, "Perl_call_sv"));
	EXPECT(chain_spec__add(cs, "main::__ANON__"));
	EXPECT(chain_spec__add(cs, "Worker::%c", t));
}

static void report(const char *what, struct chain_count c)
{
	printf("    %s: %ld of %ld leaf samples complete (%.1f%%)\n", what, c.complete, c.leaf,
	       c.leaf ? 100.0 * (double)c.complete / (double)c.leaf : 0.0);
	if (c.worst && c.complete * 100 < c.leaf * 95)
		printf("      most frequent incomplete stack (%ld samples): %.300s%s\n",
		       c.worst_count, c.worst, c.worst_len > 300 ? " ..." : "");
	fflush(stdout);
}

/* ---- pprof: file names and lines ------------------------------------------ */

struct line_check {
	const char *function;
	const char *file; /* the file must end with this */
	long min, max;	  /* lines every location of the function must have */
	long seen;	  /* locations of it found */
	bool either;	  /* the line is min or max, nothing between */
};

/* Every location of each checked function: its file and a line in [min, max]; each seen.
 * An eval's file is perl's name for its code, "(eval N)". */
static void check_lines(const char *pprof, struct line_check *checks, size_t n, pid_t pid)
{
	Perftools__Profiles__Profile *p = tu_read_pprof(pprof);
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
				size_t flen = strlen(file), slen = strlen(checks[c].file);

				if (strcmp(name, checks[c].function))
					continue;
				checks[c].seen++;
				if (flen < slen || strcmp(file + flen - slen, checks[c].file) ||
				    (!strcmp(name, "(eval)") && strncmp(file, "(eval ", 6)) ||
				    loc->line[j]->line < checks[c].min ||
				    loc->line[j]->line > checks[c].max ||
				    (checks[c].either && loc->line[j]->line != checks[c].min &&
				     loc->line[j]->line != checks[c].max))
					fail_msg(
					    "%s: file %s line %lld, expected *%s lines %ld-%ld",
					    name, file, (long long)loc->line[j]->line,
					    checks[c].file, checks[c].min, checks[c].max);
			}
		}
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(used);
	for (size_t c = 0; c < n; c++) {
		printf("    %s: %ld location(s) at %s:%ld%s\n", checks[c].function, checks[c].seen,
		       checks[c].file, checks[c].min, checks[c].min == checks[c].max ? "" : "+");
		assert_true(checks[c].seen > 0);
	}
}

#define AT(fn, marker)                                                                             \
	(struct line_check)                                                                        \
	{                                                                                          \
		fn, "/perl_chain.pl", tu_line_of(text, "# at:" marker),                            \
		    tu_line_of(text, "# at:" marker), 0, false                                     \
	}

/* Each frame at the statement that called the next one; the leaf anywhere in its body. */
static void check_case_lines(const char *pprof, const char *mode, pid_t pid)
{
	struct line_check checks[8];
	char *text = tu_read_file(SCRIPT, NULL);
	size_t n = 0;

	assert_non_null(text);
	checks[n++] = AT("(main)", "main");
	checks[n++] = (struct line_check){"Report::cell",
					  "/perl_chain.pl",
					  tu_line_of(text, "sub cell {"),
					  tu_line_of(text, "sub row {"),
					  0,
					  false};
	if (!strcmp(mode, "chain")) {
		checks[n++] = AT("Report::build", "build_chain");
		checks[n++] = AT("Report::row", "row");
	} else if (!strcmp(mode, "anon")) {
		checks[n++] = AT("Report::build", "build_anon");
		checks[n++] = AT("Report::__ANON__", "anon");
	} else if (!strcmp(mode, "sort")) {
		checks[n++] = AT("Report::build", "build_sort");
		checks[n++] = AT("Report::by_cmp", "by_cmp");
	} else if (!strcmp(mode, "sorteval")) {
		checks[n++] = AT("Report::build", "build_sorteval");
		checks[n++] = AT("Report::sorteval", "sorteval");
	} else if (!strcmp(mode, "sortnamed")) {
		/* No Report::cell in this mode. The comparator's statement, or, before
		 * it ran in this call, the sort's (sort restores PL_curcop after each). */
		checks[1] = AT("Report::build", "build_sortnamed");
		checks[n++] = (struct line_check){"Report::by_num",
						  "/perl_chain.pl",
						  tu_line_of(text, "sub by_num {"),
						  tu_line_of(text, "# at:build_sortnamed"),
						  0,
						  true};
	} else if (!strcmp(mode, "eval")) {
		checks[n++] = AT("Report::build", "build_eval");
		/* The eval's code "\n\nReport::cell() + 3;\n": its line 3, its file "(eval N)". */
		checks[n++] = (struct line_check){"(eval)", ")", 3, 3, 0, false};
	} else if (!strcmp(mode, "deep")) {
		checks[n++] = AT("Report::build", "build_deep");
		checks[n++] = (struct line_check){"Report::deep",
						  "/perl_chain.pl",
						  tu_line_of(text, "# at:deep_leaf"),
						  tu_line_of(text, "# at:deep\n"),
						  0,
						  false};
	}
	free(text);
	check_lines(pprof, checks, n, pid);
}

/* ---- one case ----------------------------------------------------------------- */

/* The symlink a grouped case's perl is started through: its comm. */
static void group_link(size_t m, char *buf, size_t size)
{
	snprintf(buf, size, "%s/perlcase%zu", rec.dir, m);
}

/*
 * Starts every case of pc's group, each through its symlink, and records
 * them together into rec (-p with all their pids). Fails the test when one
 * does not start.
 */
static void rec_group(const struct perl_case *pc)
{
	char link[MAX_GROUP][1100], pids[64] = "", folded[1100], *out = NULL;
	size_t len = 0;

	rec_clear();
	rec.dir = tu_mkdtemp();
	assert_non_null(rec.dir);
	rec.group = pc->group;
	for (size_t i = 0; i < n_cases; i++) {
		char *argv[] = {link[rec.n], SCRIPT, "60", (char *)all_cases[i].mode, NULL};

		if (all_cases[i].group != pc->group)
			continue;
		assert_true(rec.n < MAX_GROUP);
		assert_true(!all_cases[i].copies && strcmp(all_cases[i].mode, "deep"));
		group_link(rec.n, link[rec.n], sizeof(link[rec.n]));
		assert_int_equal(symlink(perl(), link[rec.n]), 0);
		rec.member[rec.n] = &all_cases[i];
		rec.pid[rec.n] = tu_spawn_ready(argv);
		if (rec.pid[rec.n] <= 0) {
			for (size_t j = 0; j < rec.n; j++)
				tu_reap(rec.pid[j]);
			fail_msg("%s (as %s) %s did not start", perl(), link[rec.n], SCRIPT);
		}
		len += (size_t)snprintf(pids + len, sizeof(pids) - len, "%s%d", rec.n ? "," : "",
					rec.pid[rec.n]);
		rec.n++;
	}
	rec.rc = tu_run(&out, "%s record -p %s -d " RECORD_SECONDS " -F " FREQUENCY " -o %s/out -v",
			omniprof(), pids, rec.dir);
	for (size_t j = 0; j < rec.n; j++)
		tu_reap(rec.pid[j]);
	if (rec.rc)
		print_error("omniprof record failed (%d):\n%s\n", rec.rc, out ? out : "");
	free(out);
	snprintf(folded, sizeof(folded), "%s/out/stacks.folded", rec.dir);
	rec.text = tu_read_file(folded, NULL);
}

/* A case of a group: its chain counted by its comm, its lines in its samples. */
static void run_group_case(const struct perl_case *pc)
{
	char link[1100], pprof[1100];
	struct chain_spec *cs = chain_spec__new();
	struct chain_count c = {0};
	size_t m = 0;

	assert_non_null(cs);
	expect_chain(cs, pc->mode);
	if (rec.group != pc->group)
		rec_group(pc);
	while (m < rec.n && rec.member[m] != pc)
		m++;
	assert_true(m < rec.n);
	group_link(m, link, sizeof(link));
	if (rec.text)
		c = chain_spec__count_folded(cs, rec.text, strrchr(link, '/') + 1);
	report(pc->mode, c);
	snprintf(pprof, sizeof(pprof), "%s/out/profile.pb.gz", rec.dir);
	if (!rec.rc && rec.text)
		check_case_lines(pprof, pc->mode, rec.pid[m]);
	chain_spec__free(cs);
	assert_int_equal(rec.rc, 0);
	assert_true(c.leaf >= MIN_LEAF);
	assert_true(c.complete * 100 >= c.leaf * 95);
}

static void run_case(const struct perl_case *pc, bool as_attacker)
{
	char folded[1024], pprof[1024], cmd[1024];
	char *dir = tu_mkdtemp(), *out = NULL, *text = NULL;
	char *argv[] = {(char *)perl(), SCRIPT, "60", (char *)pc->mode, NULL};
	struct chain_spec *cs = chain_spec__new();
	struct chain_count c = {0};
	pid_t pid;
	int rc;

	assert_non_null(dir);
	assert_non_null(cs);
	expect_chain(cs, pc->mode);
	if (as_attacker) {
		uid_t uid;
		gid_t gid;

		/* It may not read the worktree: a copy of the script it can read. */
		EXPECT(attacker__ensure(&uid, &gid));
		snprintf(cmd, sizeof(cmd), "%s/perl_chain.pl", dir);
		TU_SH("cp %s %s && chmod 0755 %s && chmod 0644 %s", SCRIPT, cmd, dir, cmd);
		argv[1] = cmd;
		pid = attacker__spawn_ready(argv, dir);
	} else {
		pid = tu_spawn_ready(argv);
	}
	if (pid <= 0) {
		tu_rmtree(dir);
		fail_msg("%s %s did not start", perl(), SCRIPT);
	}
	/* Deeper than the default --max-frames (256): the whole budget asked for. */
	rc = tu_run(&out, "%s record -p %d -d " RECORD_SECONDS " -F " FREQUENCY " -o %s -v%s%s",
		    omniprof(), pid, dir, pc->copies ? " --copy-all-stacks" : "",
		    !strcmp(pc->mode, "deep") ? " --max-frames 1024" : "");
	tu_reap(pid);
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	if (!rc && pc->copies) {
		/* The samples were walked in user space: the Perl walker's copies count. */
		const char *at = out ? strstr(out, "copies: perl walks") : NULL;
		long walks = at ? strtol(at + strlen("copies: perl walks"), NULL, 10) : 0;

		printf("    stack copies walked with the Perl walker: %ld\n", walks);
		if (walks < MIN_LEAF) {
			free(out);
			fail_msg("too few stack copies walked with the Perl walker");
		}
	}
	free(out);
	snprintf(folded, sizeof(folded), "%s/stacks.folded", dir);
	snprintf(pprof, sizeof(pprof), "%s/profile.pb.gz", dir);
	text = tu_read_file(folded, NULL);
	if (text)
		c = chain_spec__count_folded(cs, text, "perl");
	report(pc->mode, c);
	if (!rc && text && !as_attacker)
		check_case_lines(pprof, pc->mode, 0);
	tu_rmtree(dir);
	free(dir);
	free(text);
	chain_spec__free(cs);
	assert_int_equal(rc, 0);
	assert_true(c.leaf >= MIN_LEAF);
	assert_true(c.complete * 100 >= c.leaf * 95);
}

static void test_case(void **state)
{
	const struct perl_case *pc = *state;

	if (pc->group)
		run_group_case(pc);
	else
		run_case(pc, false);
}

static void test_attacker(void **state)
{
	run_case(*state, true);
}

/*
 * Three ithreads, each with its own interpreter (found through its own
 * thread-local PL_current_context): each thread's samples hold its own
 * chain, Worker::a, ::b or ::c at its call of Report::cell.
 */
static void test_threads(void **state)
{
	char folded[1024], pprof[1024];
	char *dir = tu_mkdtemp(), *out = NULL, *text = NULL;
	char *argv[] = {(char *)perl(), SCRIPT, "60", "threads", NULL};
	struct chain_spec *cs[3];
	struct chain_count c[3] = {{0}, {0}, {0}};
	struct line_check checks[3];
	pid_t pid;
	int rc;

	(void)state;
	assert_non_null(dir);
	text = tu_read_file(SCRIPT, NULL);
	assert_non_null(text);
	checks[0] = AT("Worker::a", "worker_a");
	checks[1] = AT("Worker::b", "worker_b");
	checks[2] = AT("Worker::c", "worker_c");
	free(text);
	for (int i = 0; i < 3; i++) {
		cs[i] = chain_spec__new();
		assert_non_null(cs[i]);
		expect_thread(cs[i], (char)('a' + i));
	}
	pid = tu_spawn_ready(argv);
	if (pid <= 0) {
		tu_rmtree(dir);
		fail_msg("%s %s did not start", perl(), SCRIPT);
	}
	usleep(300 * 1000); /* the threads clone their interpreters */
	/* Longer: three threads share two CPUs with everything else running. */
	rc = tu_run(&out, "%s record -p %d -d 5 -F " FREQUENCY " -o %s", omniprof(), pid, dir);
	tu_reap(pid);
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	free(out);
	snprintf(folded, sizeof(folded), "%s/stacks.folded", dir);
	snprintf(pprof, sizeof(pprof), "%s/profile.pb.gz", dir);
	text = tu_read_file(folded, NULL);
	for (int i = 0; i < 3 && text; i++) {
		char label[16];

		snprintf(label, sizeof(label), "thread %c", 'a' + i);
		c[i] = chain_spec__count_folded(cs[i], text, "perl");
		report(label, c[i]);
	}
	if (!rc && text)
		check_lines(pprof, checks, 3, 0);
	tu_rmtree(dir);
	free(dir);
	free(text);
	for (int i = 0; i < 3; i++)
		chain_spec__free(cs[i]);
	assert_int_equal(rc, 0);
	for (int i = 0; i < 3; i++) {
		assert_true(c[i].leaf >= MIN_LEAF);
		assert_true(c[i].complete * 100 >= c[i].leaf * 95);
	}
}

/*
 * A C program embedding libperl.so runs an interpreter on each of three
 * threads of its own (tests/workloads/perl_embed.c): no thread-local
 * pointer at a fixed offset, not the main thread, so each interpreter is
 * found through PL_thr_key in glibc's thread-specific data. Each thread
 * its own chain: chain, anon, eval.
 */
static void test_embed_threads(void **state)
{
	static const char *const modes[3] = {"chain", "anon", "eval"};
	char folded[1024], workload[1024];
	char *dir = tu_mkdtemp(), *out = NULL, *text = NULL;
	char *argv[] = {workload, SCRIPT, "60", NULL};
	struct chain_spec *cs[3];
	struct chain_count c[3] = {{0}, {0}, {0}};
	pid_t pid;
	int rc;

	(void)state;
	assert_non_null(dir);
	snprintf(workload, sizeof(workload), "%s/workloads/perl_embed", tu_build_dir());
	for (int i = 0; i < 3; i++) {
		cs[i] = chain_spec__new();
		assert_non_null(cs[i]);
		EXPECT(chain_spec__add(cs[i], "start_thread"));
		EXPECT(chain_spec__add(cs[i], "run_interpreter"));
		EXPECT(chain_spec__add(cs[i], "perl_run"));
		EXPECT(chain_spec__add(cs[i], "(main)"));
		EXPECT(chain_spec__add(cs[i], "Report::build"));
		expect_chain_tail(cs[i], modes[i]);
	}
	pid = tu_spawn_ready(argv);
	if (pid <= 0) {
		tu_rmtree(dir);
		fail_msg("%s did not start", workload);
	}
	usleep(1000 * 1000); /* the other threads parse their scripts */
	rc = tu_run(&out, "%s record -p %d -d 5 -F " FREQUENCY " -o %s -v", omniprof(), pid, dir);
	tu_reap(pid);
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	snprintf(folded, sizeof(folded), "%s/stacks.folded", dir);
	text = tu_read_file(folded, NULL);
	for (int i = 0; i < 3 && text; i++) {
		c[i] = chain_spec__count_folded(cs[i], text, "perl_embed");
		report(modes[i], c[i]);
		if (c[i].leaf < MIN_LEAF && out && strstr(out, "perl: samples"))
			printf("%.600s\n", strstr(out, "perl: samples"));
	}
	free(out);
	tu_rmtree(dir);
	free(dir);
	free(text);
	for (int i = 0; i < 3; i++)
		chain_spec__free(cs[i]);
	assert_int_equal(rc, 0);
	/* The three threads share their leaf (Report::cell): its samples are all
	 * three's, each complete in one thread's chain. */
	assert_true(c[0].leaf >= MIN_LEAF);
	for (int i = 0; i < 3; i++)
		assert_true(c[i].complete >= MIN_LEAF / 4);
	assert_true((c[0].complete + c[1].complete + c[2].complete) * 100 >= c[0].leaf * 95);
}

/* The machine must have Debian's perl (or the one named): no silent skip. */
static void test_perl_present(void **state)
{
	(void)state;
	TU_SH("test -x %s && %s -e 'exit($] >= %s ? 0 : 1)'", perl(), perl(),
	      getenv("OMNIPROF_TEST_PERL") ? "5.028" : "5.036");
	TU_SH("%s -V:version -V:useithreads", perl());
}

int main(void)
{
	/* Two by two where no flag is needed (a recording costs its length plus the start). */
	static const struct perl_case cases[] = {
	    {"named subs: main -> Report::build -> Report::row -> Report::cell", "chain", false, 1},
	    {"anonymous sub: Report::__ANON__", "anon", false, 1},
	    {"sort with a Perl comparator: Perl -> C -> Perl", "sort", false, 2},
	    {"sort with a named comparator (MULTICALL), mostly in sort's C code", "sortnamed",
	     false, 2},
	    {"string eval: (eval)", "eval", false, 3},
	    {"eval block under docatch (sort's comparator): its own runops frame", "sorteval",
	     false, 3},
	    {"500 levels of recursion", "deep", false, 0},
	    {"sort with a Perl comparator, from stack copies (walked in user space)", "sort", true,
	     0},
	};
	struct CMUnitTest tests[17];
	bool debian = !getenv("OMNIPROF_TEST_PERL");
	size_t n = 0;

	all_cases = cases;
	n_cases = sizeof(cases) / sizeof(cases[0]);
	tests[n++] = (struct CMUnitTest){.name = "perl present", .test_func = test_perl_present};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tests[n++] = (struct CMUnitTest){.name = cases[i].name,
						 .test_func = test_case,
						 .initial_state = (void *)&cases[i]};
	/* Another perl (OMNIPROF_TEST_PERL): ithreads only when it has them. */
	if (debian || perl_threaded())
		tests[n++] = (struct CMUnitTest){.name = "three ithreads, an interpreter each",
						 .test_func = test_threads};
	else
		printf("[ INFO     ] %s is unthreaded: no ithreads case\n", perl());
	/* Debian's libperl.so, whatever perl the other cases run. */
	if (debian)
		tests[n++] = (struct CMUnitTest){
		    .name =
			"libperl embedded, an interpreter on each of three threads (PL_thr_key)",
		    .test_func = test_embed_threads};
	tests[n++] = (struct CMUnitTest){.name = "named subs, in another user's process",
					 .test_func = test_attacker,
					 .initial_state = (void *)&cases[0]};
	/* By hand: OMNIPROF_TEST_FILTER="*embedded*" runs the cases it matches. */
	if (getenv("OMNIPROF_TEST_FILTER"))
		cmocka_set_test_filter(getenv("OMNIPROF_TEST_FILTER"));
	return _cmocka_run_group_tests("e2e_perl", tests, n, NULL, rec_teardown);
}
