// SPDX-License-Identifier: Apache-2.0
/*
 * A compiler loop (`clang++ -O2 -c`, a new process every second or two, each
 * mapping libLLVM and libclang-cpp: 2.5M deltas of tables) recorded the way
 * a whole-system agent sees it, selected by --comm:
 *  - first with an empty --table-cache folder (cold: every table built while
 *    the compilers' samples wait as stack copies, which the recording's end
 *    waits for);
 *  - then again with the folder the first run filled (a restarted agent):
 *    the tables are read back, not built;
 * in both at least MIN_ROOTED_PCT of clang++'s samples start at a true root
 * (_start, or the dynamic loader's entry while it relocates) with no stop
 * marker anywhere. --max-frames 1024 (perf's depth): F<300> instantiates
 * deeper than the default 256 frames.
 * `perf record --call-graph dwarf,65528` follows the same loop (-p on its
 * process group: the compilers forked later inherit the event) for PERF_SECONDS of the
 * warm run; its share of clang++'s samples ending at a root is printed beside
 * ours (not asserted: a reference). One recording pair serves every assertion.
 * Every sample with user frames that does not start at a root is printed by
 * shape: its stop, the outermost frame reached, and whether it was a BPF
 * walk or a stack copy, held or not (tests/lib/folded_shapes.h).
 * Needs root, BPF, clang and linux-perf (scripts/install-deps.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/collector.h"
#include "folded_shapes.h"
#include "omniprof_run.h"
#include "perf_script.h"
#include "testutil.h"

#define FREQUENCY    "99"
#define COLD_SECONDS "3"
#define WARM_SECONDS "8"
#define PERF_SECONDS "6" /* within the warm run: perf script unwinds it in 2-4 s */
#define MIN_SAMPLES  40
/* perf dwarf reaches a root in all such samples (issue 17, with a large enough
 * stack copy). Ours: warm 99.1-99.3% on an idle machine, 94.3% once in CI's
 * pool of four tests at a time; cold 100% (69/69) at a load of 19 once copies
 * held 128 KiB and the end waited for the held copies' tables (before: 0-65%,
 * 23.9% at that load). A floor against regressions, not issue 17's 99%.
 * Since session 20 kernel-only samples (no user stack: an exec or an exit)
 * are not counted, as in test_whole_system: they were the misses of a
 * warm run at 97.4% (3 of 117) whose stacks with user frames were 114/114. */
#define MIN_ROOTED_PCT 90.0
/* Issue 17's 99%, of the cold and warm runs pooled (300-800 samples; CI of
 * 72baede: 579 of 583, the merged tree of session 20: 825 of 825). */
#define MIN_POOLED_PCT 99.0

/* Enough C++ for a compile of about a second: templates, the standard library. */
static const char source[] =
    "#include <algorithm>\n#include <functional>\n#include <iostream>\n#include <map>\n"
    "#include <string>\n#include <unordered_map>\n#include <vector>\n"
    "template <int N> struct F { static int v() { return F<N - 1>::v() + N; } };\n"
    "template <> struct F<0> { static int v() { return 0; } };\n"
    "int main() {\n  std::map<std::string, std::vector<int>> m;\n"
    "  std::unordered_map<int, std::function<int(int)>> u;\n"
    "  std::cout << F<300>::v() << m.size() << u.size();\n}\n";

struct rooted {
	long samples;
	long rooted;
	long stops; /* samples with a stop marker */
};

static double pct(long a, long b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

/* clang++'s roots in our output: crt1's _start, or the loader's entry (no .symtab). */
static bool is_root(const char *f, size_t len)
{
	return (len == 6 && !strncmp(f, "_start", 6)) ||
	       (len > 21 && !strncmp(f, "ld-linux-x86-64.so.2+", 21));
}

/*
 * clang++'s samples with user frames in a stacks.folded: "clang++;ROOT;...;LEAF
 * COUNT", root first; every unrooted one is printed first, by shape
 * (folded_shapes.h). Kernel-only samples (an exiting compiler's, its user
 * stack gone) are not judged, as in test_whole_system and test_deep_compile.
 */
static struct rooted count_folded(const char *path, const char *title)
{
	struct rooted r = {0};
	size_t len;
	char *text = tu_read_file(path, &len), *line, *save = NULL;

	assert_non_null(text);
	printf("    %s, every unrooted sample:\n", title);
	folded_shapes__print(text, "clang++", is_root, "      ");
	folded_shapes__strip(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *space = strrchr(line, ' '), *first;
		long n;

		if (strncmp(line, "clang++;", 8) || !space)
			continue;
		n = atol(space + 1);
		*space = '\0';
		first = line + 8;
		len = strcspn(first, ";");
		if (!strstr(line, ";[") && len > 4 && !strncmp(first + len - 4, "_[k]", 4))
			continue;
		r.samples += n;
		if (strstr(line, ";[")) {
			r.stops += n;
			continue;
		}
		if (is_root(first, len))
			r.rooted += n;
	}
	free(text);
	return r;
}

/* perf's roots: crt1's or the loader's _start, or _dl_start_user (the loader's entry, no CFI). */
static bool perf_is_root(const char *f, size_t len)
{
	return (len == 6 && !strncmp(f, "_start", 6)) ||
	       (len == 14 && !strncmp(f, "_dl_start_user", 14));
}

/*
 * perf following the loop's process group (its shell and the compiler running
 * now: -p follows only the children forked after it attaches, and one
 * compile can outlast the window under load); returns perf's pid.
 */
static pid_t perf_start(pid_t loop, const char *data)
{
	pid_t perf = fork();

	assert_true(perf >= 0);
	if (perf == 0) {
		char cmd[1024];
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		/* 65528: perf's largest copy (its default 8 KiB reached a root in 8 of 78);
		 * deeper clang++ stacks still stop it, at __libc_start_call_main. */
		snprintf(
		    cmd, sizeof(cmd),
		    "exec perf record -q -F %s --call-graph dwarf,65528 -p \"$(pgrep -d, -g %d)\" "
		    "-o '%s' -- sleep %s",
		    FREQUENCY, (int)loop, data, PERF_SECONDS);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return perf;
}

static char *record(const char *dir, const char *cache, const char *name, const char *secs)
{
	char *out = NULL;
	int rc = tu_run(&out,
			COLLECTOR_MARK_ORIGIN_ENV
			"=1 %s record -v --comm '^clang\\+\\+$' -F " FREQUENCY
			" --max-frames 1024 -d %s --table-cache '%s' -o '%s/%s' 2>&1",
			tu_omniprof_path(), secs, cache, dir, name);

	if (rc)
		printf("%s\n", out ? out : "");
	assert_int_equal(rc, 0);
	return out;
}

static void print_counters(const char *title, const char *out)
{
	static const char *const keys[] = {"tables: disk cache",
					   "tables: build time",
					   "held: records waiting",
					   "copies: unwound in user space",
					   "not copied (over budget)",
					   "end: waited",
					   "user: files that could not be opened"};

	printf("    %s:\n", title);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *at = strstr(out, keys[i]);

		if (at)
			printf("      %.*s\n", (int)strcspn(at, "\n"), at);
	}
}

static void test_clang_loop(void **state)
{
	char *dir = tu_mkdtemp(), src[600], obj[600], cache[600], folded[600], perf_data[600];
	char loop[2048], *out_cold, *out_warm;
	struct rooted cold, warm;
	pid_t compiler, perf;
	long perf_samples;
	double perf_share, perf_depth;
	struct stat st;
	int status;
	FILE *f;

	(void)state;
	assert_non_null(dir);
	assert_int_equal(tu_run(NULL, "command -v clang++"), 0);
	assert_int_equal(tu_run(NULL, "command -v perf"), 0);
	snprintf(src, sizeof(src), "%s/unit.cpp", dir);
	snprintf(obj, sizeof(obj), "%s/unit.o", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	snprintf(perf_data, sizeof(perf_data), "%s/perf.data", dir);
	f = fopen(src, "w");
	assert_non_null(f);
	fputs(source, f);
	fclose(f);

	snprintf(loop, sizeof(loop), "while :; do clang++ -O2 -c '%s' -o '%s' || exit 1; done", src,
		 obj);
	compiler = fork();
	assert_true(compiler >= 0);
	if (compiler == 0) {
		setpgid(0, 0);
		execl("/bin/sh", "sh", "-c", loop, (char *)NULL);
		_exit(127);
	}
	setpgid(compiler, compiler);

	/* Cold: an empty cache folder, created 0700 by omniprof. */
	out_cold = record(dir, cache, "cold", COLD_SECONDS);
	assert_int_equal(stat(cache, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(folded, sizeof(folded), "%s/cold/stacks.folded", dir);
	cold = count_folded(folded, "cold");

	/* Warm: a restarted recorder with the folder the first one filled; perf beside it. */
	perf = perf_start(compiler, perf_data);
	out_warm = record(dir, cache, "warm", WARM_SECONDS);
	waitpid(perf, &status, 0);
	kill(-compiler, SIGKILL);
	waitpid(compiler, &status, 0);
	perf_share =
	    perf_script__rooted(perf_data, "clang++", perf_is_root, &perf_samples, &perf_depth);
	snprintf(folded, sizeof(folded), "%s/warm/stacks.folded", dir);
	warm = count_folded(folded, "warm");

	printf("    clang++ -O2 -c in a loop, --comm, %s Hz:\n", FREQUENCY);
	printf("      omniprof, cold cache (%s s): %ld of %ld samples start at a root, no stop "
	       "marker (%.1f%%; %ld with a marker)\n",
	       COLD_SECONDS, cold.rooted, cold.samples, pct(cold.rooted, cold.samples), cold.stops);
	printf("      omniprof, warm cache (%s s): %ld of %ld (%.1f%%; %ld with a marker)\n",
	       WARM_SECONDS, warm.rooted, warm.samples, pct(warm.rooted, warm.samples), warm.stops);
	printf("      perf --call-graph dwarf,65528, same loop (%s s of the warm run): %.1f%% of "
	       "%ld samples end at _start or _dl_start_user (%.1f frames a sample)\n",
	       PERF_SECONDS, perf_share, perf_samples, perf_depth);
	print_counters("cold", out_cold);
	print_counters("warm", out_warm);
	/* Below a floor: everything the runs counted, and where their stacks stopped. */
	if (pct(warm.rooted, warm.samples) < MIN_ROOTED_PCT ||
	    pct(cold.rooted, cold.samples) < MIN_ROOTED_PCT) {
		printf("    cold, every counter:\n%s\n    warm, every counter:\n%s\n", out_cold,
		       out_warm);
	}

	/* The second run read libLLVM's and libclang-cpp's tables back instead of building them. */
	assert_true(tu_counter_after(out_warm, "tables: disk cache") >= 2);
	assert_true(warm.samples >= MIN_SAMPLES);
	assert_true(pct(warm.rooted, warm.samples) >= MIN_ROOTED_PCT);
	/* Cold: the compilers' samples came as copies, held for the tables being built. */
	assert_true(tu_counter_after(out_cold, "copies: unwound in user space") >= 1);
	assert_true(cold.samples >= MIN_SAMPLES / 4);
	assert_true(pct(cold.rooted, cold.samples) >= MIN_ROOTED_PCT);
	printf("      pooled: %ld of %ld (%.1f%%; floor %.0f%%)\n", cold.rooted + warm.rooted,
	       cold.samples + warm.samples,
	       pct(cold.rooted + warm.rooted, cold.samples + warm.samples), MIN_POOLED_PCT);
	assert_true(pct(cold.rooted + warm.rooted, cold.samples + warm.samples) >= MIN_POOLED_PCT);
	free(out_cold);
	free(out_warm);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clang_loop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
