// SPDX-License-Identifier: Apache-2.0
/*
 * Issue 17's whole-system record: three of Debian's programs at once, each in
 * a loop (a new process every one to few seconds), recorded by one `omniprof
 * record` of the whole machine (no -p, no --comm) with an empty --table-cache
 * folder, so that every table is built during the recording while the new
 * processes' samples come as stack copies:
 *  - `clang++ -O2 -c` of test_compile_loop's source (libLLVM, libclang-cpp);
 *  - Debian's gofmt over Go's sources (Go, no CFI: .gopclntab);
 *  - cc1plus on test_deep_compile's constexpr recursion (~640 frames deep).
 * For each, the share of its samples with user frames that start at a true
 * root with no stop marker is printed, and the share of the cold and the
 * warm record pooled is held to a floor (MIN_*_PCT, the 99%, which
 * a ring over half full, under a load of 15 and more, does not give); every
 * sample that does not is printed by shape (tests/lib/folded_shapes.h: its stop, the
 * outermost frame reached, and whether it was a BPF walk or a stack copy,
 * held or not);
 * `perf record -a --call-graph dwarf` of PERF_SECONDS inside the same window
 * gives the reference figure printed beside ours (not asserted). A second
 * record follows with the table cache the first filled (a warm start: every
 * table read back at once, issue 17 and 22), pooled with the first. Stacks
 * deeper than --max-frames (gofmt's go/printer recursion) keep their leaf
 * side and say so: counted apart, not in the share.
 * Needs root, BPF, clang, g++, golang-go and linux-perf
 * (scripts/install-deps.sh).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "compile_sources.h"
#include "engine/collector.h"
#include "folded_shapes.h"
#include "omniprof_run.h"
#include "perf_script.h"
#include "testutil.h"

#define FREQUENCY      "99"
#define SECONDS	       "10"
#define WARM_SECONDS   "6" /* the warm record: its start is what it tests */
#define PERF_DELAY     3   /* perf starts this long into the recording */
#define PERF_SECONDS   "4" /* perf script unwinds -a dwarf data slowly under load */
#define WARMUP_SECONDS 2   /* the loops run before the recording starts */
/*
 * Per workload, with user frames, the cold and the warm record pooled: at a
 * load of 18-33 on 2 CPUs a 10 s cold record gave cc1plus 8-12 such samples
 * (each compile's start is a few kernel-only samples), too few to judge
 * alone, and 1 miss in 8 is 12.5%. The shares are asserted over the pool.
 */
#define MIN_SAMPLES 30
#define TOO_DEEP    "[unwind stopped: too many frames]"
/*
 * Floors of the pooled share (cold + warm) of samples starting at a root
 * with no stop marker; each record's share is printed. Issue 17's target is
 * 99% for all three; CI (session 19, the lead) gave cold clang++ 100%, gofmt
 * 100%, cc1plus 99.8%, warm 100, 100 and 99.3%. Session 20 ran it five
 * times under nice -n 19 at a load of 15-33 (five helpers' builds and
 * tests), every miss printed by shape (bench/RESULTS.md, "Issue 17, session
 * 20 (stops)"): cold clang++ 70.0-97.5%, gofmt 95.3-100%, cc1plus 83.3-92.1%
 * (of 8-169 samples); warm clang++ 100%, gofmt 99.4-100%, cc1plus
 * 96.2-100%; pooled clang++ 89.3-98.9%, gofmt 97.9-100%, cc1plus
 * 92.9-96.1%. Every native miss of a cold record was a BPF walk by frame
 * pointers of a process not ready yet, held and handled with it never
 * published ("BPF walk, held, never ready"): its copy refused with the ring
 * half full (the agent, niced, starved of CPU: "not copied: ring half full"
 * 183-678 in 10 s), not an unwinding error. The one warm native miss, a
 * cc1plus copy cut short in two runs ("unreadable stack" above
 * cc1plus+0x6de2e4), was a copy sampled in mmap, whose mmap lock
 * bpf_find_vma could not take: 128 KiB of a deeper stack (fixed:
 * copy_limit_unlocked, test_unwind "big_frames (stack copies, 340 KiB, in
 * mprotect)"). gofmt's were Go walks stopped at runtime.sigtramp,
 * runtime.systemstack or runtime.execute (Go's signal and switch frames:
 * another helper's work in session 20) and goroutine stack copies that
 * ended before their root. The per-record floors before (cold 85/90/95%,
 * warm 75/80/90%) failed in the first three runs, on too few samples or one
 * miss in a dozen; the pooled floors keep a margin below what the loaded
 * runs gave.
 */
/*
 * Held to the 99% (session 20, the lead), once the two causes above
 * were fixed (and rbp's save slot below sp in an epilogue, 3eb6a98: cc1plus's
 * copies at `pop %r14` or `ret`): at a load of 2-5, as CI runs the end-to-end
 * tests one at a time, the merged tree gave pooled clang++ 719 of 720, gofmt
 * 1226 of 1226, cc1plus 713 of 713, no copy refused. Pooled, 99% of 600-1200
 * samples leaves room for a few misses; a ring over half full (an agent
 * starved of CPU, as in the loaded runs above) fails it, as it should.
 */
#define MIN_CLANG_PCT	99.0
#define MIN_GOFMT_PCT	99.0
#define MIN_CC1PLUS_PCT 99.0

/* test_compile_loop's source: templates and the standard library, about a second. */
static const char unit_src[] =
    "#include <algorithm>\n#include <functional>\n#include <iostream>\n#include <map>\n"
    "#include <string>\n#include <unordered_map>\n#include <vector>\n"
    "template <int N> struct F { static int v() { return F<N - 1>::v() + N; } };\n"
    "template <> struct F<0> { static int v() { return 0; } };\n"
    "int main() {\n  std::map<std::string, std::vector<int>> m;\n"
    "  std::unordered_map<int, std::function<int(int)>> u;\n"
    "  std::cout << F<300>::v() << m.size() << u.size();\n}\n";

/* Where Go's stacks end: a goroutine's, g0's, and a new thread's first frame (as test_go). */
static const char *const go_roots[] = {"runtime.goexit", "runtime.mstart",    "runtime.rt0_go",
				       "runtime.mcall",	 "runtime.morestack", "runtime.clone"};

static bool frame_is(const char *f, size_t len, const char *name)
{
	return strlen(name) == len && !strncmp(f, name, len);
}

/* A C or C++ process's root: crt1's _start, or the dynamic loader's entry
 * (unnamed in our output: no .symtab; _dl_start_user in perf's). */
static bool native_root(const char *f, size_t len)
{
	return frame_is(f, len, "_start") || frame_is(f, len, "_dl_start_user") ||
	       (len >= 8 && !strncmp(f, "ld-linux", 8));
}

static bool go_root(const char *f, size_t len)
{
	for (size_t i = 0; i < sizeof(go_roots) / sizeof(go_roots[0]); i++)
		if (frame_is(f, len, go_roots[i]))
			return true;
	return false;
}

struct workload {
	const char *comm;
	bool (*is_root)(const char *f, size_t len);
	double floor_pct;
	long user;     /* our samples with user frames (or a stop marker) */
	long too_deep; /* ... not counted there: deeper than --max-frames, marked so */
	long rooted;   /* ... starting at a root, no stop marker */
	long perf_samples;
	double perf_pct;
};

static double pct(long a, long b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

/* Counts w's samples in stacks.folded text ("comm;ROOT;...;LEAF COUNT", root first). */
static void count_folded(const char *text, struct workload *w)
{
	size_t comm_len = strlen(w->comm);

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n'), *count_at, *stack, *semi;
		size_t len = end ? (size_t)(end - line) : strlen(line);

		count_at = memrchr(line, ' ', len);
		if (count_at && len > comm_len && !strncmp(line, w->comm, comm_len) &&
		    line[comm_len] == ';') {
			long count = strtol(count_at + 1, NULL, 10);
			bool marker = memmem(line, len, "[unwind", 7) != NULL;
			bool deep = memmem(line, len, TOO_DEEP, strlen(TOO_DEEP)) != NULL;
			size_t first;

			stack = line + comm_len + 1;
			semi = memchr(stack, ';', (size_t)(count_at - stack));
			first = (size_t)((semi ? semi : count_at) - stack);
			/* Kernel-only samples have no user stack to judge; a stack deeper
			 * than --max-frames keeps its leaf side and says so (gofmt's
			 * go/printer recursion): right, and apart. */
			if (deep)
				w->too_deep += count;
			else if (marker || !(first > 4 && !strncmp(stack + first - 4, "_[k]", 4))) {
				w->user += count;
				if (!marker && w->is_root(stack, first)) {
					w->rooted += count;
				}
			}
		}
		line = end ? end + 1 : NULL;
	}
}

/* Starts `sh -c loop` as a process group of its own; returns its pid. */
static pid_t start_loop(const char *loop)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		setpgid(0, 0);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execl("/bin/sh", "sh", "-c", loop, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	return pid;
}

static void stop_loop(pid_t pid)
{
	int status;

	kill(-pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* perf of the whole machine, PERF_SECONDS from PERF_DELAY on; returns its pid. */
static pid_t perf_start(const char *data)
{
	pid_t perf = fork();

	assert_true(perf >= 0);
	if (perf == 0) {
		char cmd[1024];
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		snprintf(cmd, sizeof(cmd),
			 "sleep %d; exec perf record -q -a -F %s --call-graph dwarf -o '%s' -- "
			 "sleep %s",
			 PERF_DELAY, FREQUENCY, data, PERF_SECONDS);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return perf;
}

static void print_counter(const char *out, const char *key)
{
	const char *at = strstr(out, key);

	if (at)
		printf("      %.*s\n", (int)strcspn(at, "\n"), at);
}

/* The records the ring's reader lost ("ring: reader's queue  B bytes at most, N lost, ..."); -1: no
 * line. */
static long queue_lost_of(const char *out)
{
	const char *at = strstr(out, "ring: reader's queue");
	unsigned long long bytes;
	long lost;

	if (!at || sscanf(at + strlen("ring: reader's queue"), " %llu bytes at most, %ld lost",
			  &bytes, &lost) != 2)
		return -1;
	return lost;
}

/* One record's figures for the three workloads. */
struct record_run {
	const char *what; /* "empty --table-cache", ... */
	struct workload w[3];
	long queue_lost;
};

static const char *const counter_keys[] = {"not copied (over budget)",
					   "not copied: ring half full",
					   "fallback to frame pointers: unknown pid",
					   "ring: most held",
					   "ring: reader's queue",
					   "held: records waiting",
					   "held: copies released before publish",
					   "held: memory",
					   "held: file jobs moved ahead",
					   "copies: unwound in user space",
					   "copies: a frame in a file without table",
					   "copies: frames from the file's CFI",
					   "copies: frames from Go's .gopclntab",
					   "copies: truncated, bad frame pointer",
					   "copies: truncated, too many frames",
					   "tables: build time",
					   "tables: builds on the file worker",
					   "tables: disk cache",
					   "file worker: build memory",
					   "end: waited"};

/*
 * One whole-system `record` of seconds with dir/cache as its table cache into
 * dir/NAME, perf beside it when perf_data is given; counts run->w from its
 * stacks.folded and prints the figures and counters.
 */
static void record_once(const char *dir, const char *name, const char *seconds,
			const char *perf_data, struct record_run *run)
{
	size_t n = sizeof(run->w) / sizeof(run->w[0]);
	char path[700], *out = NULL, *text = NULL;
	pid_t perf = perf_data ? perf_start(perf_data) : -1;
	int rc, status;

	rc = tu_run(&out,
		    COLLECTOR_MARK_ORIGIN_ENV "=1 %s record -v -F " FREQUENCY
					      " --max-frames 1024 -d %s"
					      " --table-cache '%s/cache' -o '%s/%s' 2>&1",
		    tu_omniprof_path(), seconds, dir, dir, name);
	if (perf > 0)
		waitpid(perf, &status, 0);
	if (rc)
		printf("%s\n", out ? out : "");
	assert_int_equal(rc, 0);
	snprintf(path, sizeof(path), "%s/%s/stacks.folded", dir, name);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	printf("    %s record, every unrooted sample:\n", run->what);
	for (size_t i = 0; i < n; i++)
		folded_shapes__print(text, run->w[i].comm, run->w[i].is_root, "      ");
	folded_shapes__strip(text);
	for (size_t i = 0; i < n; i++) {
		count_folded(text, &run->w[i]);
		if (perf_data)
			run->w[i].perf_pct =
			    perf_script__rooted(perf_data, run->w[i].comm, run->w[i].is_root,
						&run->w[i].perf_samples, &(double){0});
	}
	free(text);

	printf("    clang++ loop + gofmt loop + cc1plus loop, one whole-system record "
	       "(%s s, %s Hz, %s):\n",
	       seconds, FREQUENCY, run->what);
	for (size_t i = 0; i < n; i++) {
		struct workload *w = &run->w[i];

		printf("      %-8s omniprof %ld of %ld samples start at a root, no stop marker "
		       "(%.1f%%; %ld more deeper than 1024 frames)",
		       w->comm, w->rooted, w->user, pct(w->rooted, w->user), w->too_deep);
		if (perf_data)
			printf("; perf dwarf (%s s of it): %.1f%% of %ld", PERF_SECONDS,
			       w->perf_pct, w->perf_samples);
		printf("\n");
	}
	for (size_t i = 0; i < sizeof(counter_keys) / sizeof(counter_keys[0]); i++)
		print_counter(out, counter_keys[i]);
	run->queue_lost = queue_lost_of(out);
	text = NULL;
	tu_run(&text, "cat /proc/loadavg");
	printf("      load: %s", text ? text : "?\n");
	fflush(stdout);
	free(text);
	free(out);
}

/* Asserts the pooled figures of cold and warm (see MIN_SAMPLES). */
static void check_runs(const struct record_run *cold, const struct record_run *warm)
{
	/* The ring's reader never loses a record: past its queue's room it
	 * leaves the ring to the BPF side's refusals (counted there). */
	assert_int_equal(cold->queue_lost, 0);
	assert_int_equal(warm->queue_lost, 0);
	for (size_t i = 0; i < sizeof(cold->w) / sizeof(cold->w[0]); i++) {
		const struct workload *c = &cold->w[i], *w = &warm->w[i];
		long user = c->user + w->user, rooted = c->rooted + w->rooted;

		printf("    %-8s cold and warm pooled: %ld of %ld samples start at a root, no "
		       "stop marker (%.1f%%; floor %.0f%%)\n",
		       c->comm, rooted, user, pct(rooted, user), c->floor_pct);
		fflush(stdout);
		assert_true(user + c->too_deep + w->too_deep >= MIN_SAMPLES);
		assert_true(pct(rooted, user) >= c->floor_pct);
	}
}

static void test_whole_system(void **state)
{
	struct record_run cold = {
	    .what = "empty --table-cache",
	    .w = {{.comm = "clang++", .is_root = native_root, .floor_pct = MIN_CLANG_PCT},
		  {.comm = "gofmt", .is_root = go_root, .floor_pct = MIN_GOFMT_PCT},
		  {.comm = "cc1plus", .is_root = native_root, .floor_pct = MIN_CC1PLUS_PCT}},
	};
	struct record_run warm = {
	    .what = "warm start: the --table-cache the first record filled",
	    .w = {{.comm = "clang++", .is_root = native_root},
		  {.comm = "gofmt", .is_root = go_root},
		  {.comm = "cc1plus", .is_root = native_root}},
	};
	char *dir = tu_mkdtemp(), unit[600], deep[600], perf_data[600], loop[2048], *cc1plus = NULL;
	pid_t loops[3];

	(void)state;
	assert_non_null(dir);
	assert_int_equal(tu_run(NULL, "command -v clang++ && command -v perf"), 0);
	assert_int_equal(access("/usr/bin/gofmt", X_OK), 0);
	assert_int_equal(access("/usr/lib/go/src/go/parser", R_OK), 0);
	assert_int_equal(tu_run(&cc1plus, "g++ -print-prog-name=cc1plus"), 0);
	cc1plus[strcspn(cc1plus, "\n")] = '\0';
	assert_int_equal(access(cc1plus, X_OK), 0);
	snprintf(unit, sizeof(unit), "%s/unit.cpp", dir);
	snprintf(deep, sizeof(deep), "%s/deep.cc", dir);
	snprintf(perf_data, sizeof(perf_data), "%s/perf.data", dir);
	assert_int_equal(tu_write_file(unit, unit_src), 0);
	assert_int_equal(tu_write_file(deep, deep_compile_src), 0);

	snprintf(loop, sizeof(loop), "while :; do clang++ -O2 -c '%s' -o '%s.o' || exit 1; done",
		 unit, unit);
	loops[0] = start_loop(loop);
	loops[1] = start_loop("while :; do /usr/bin/gofmt -l /usr/lib/go/src/; done");
	snprintf(loop, sizeof(loop), "while :; do '%s' -quiet '%s' -o /dev/null || exit 1; done",
		 cc1plus, deep);
	loops[2] = start_loop(loop);
	sleep(WARMUP_SECONDS);

	/* Every table built during the record (and stored in the cache)... */
	record_once(dir, "cold", SECONDS, perf_data, &cold);
	/* ...then read back at once by the next agent's start (issue 17, 22). */
	record_once(dir, "warm", WARM_SECONDS, NULL, &warm);
	for (size_t i = 0; i < 3; i++)
		stop_loop(loops[i]);
	free(cc1plus);
	tu_rmtree(dir);
	free(dir);

	check_runs(&cold, &warm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_whole_system),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
