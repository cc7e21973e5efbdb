// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end: hostile targets. Real programs run as an unprivileged account
 * (tests/lib/attacker.h) and do what a process can do to confuse a profiler,
 * while `omniprof record -v` records them with real BPF (-p of each, plus two
 * control workloads run as root: fp_chain with frame pointers, nofp_gcc
 * without). The cases, six recordings:
 *   damaged files   six copies of an executable, each damaged in one way
 *                   (ELF header, section headers, notes with absurd sizes,
 *                   .eh_frame with CIE/FDE lengths past the end and CIE
 *                   pointers that loop, truncated, empty), mapped PROT_EXEC
 *                   and run from; a binary deleted after it started; an
 *                   executable run from a memfd (fexecve); self-modifying
 *                   code in an RWX page (tests/workloads/hostile_elf.c,
 *                   hostile_memfd.c, hostile_rwx.c)
 *   10,000 threads, 50,000 executable mappings of a file, 50,000
 *                   anonymous executable (JIT) regions, 100,000-deep
 *                   recursion (hostile_many.c, hostile_elf.c maps and jit)
 *   CPython damaging its own interpreter state with ctypes
 *                   (tests/workloads/python/hostile_frames.py)
 * For every recording: omniprof exits 0 within RECORD_SECONDS +
 * RECORD_SLACK_S, writes its three outputs, and its peak RSS (the kernel's
 * high-water mark, ru_maxrss of wait4: what VmHWM says at exit) stays under
 * RSS_BOUND_MB (OMNIPROF_TEST_RSS_BOUND_MB for a sanitizer build); both
 * controls keep their whole chain in >= 95% of their leaf's samples (as
 * tests/e2e/test_unwind.c requires), at least MIN_LEAF of them. For the hostile processes, "marked,
 * never garbage" means, per stack that holds the case's leaf function: every frame between the root
 * and the leaf is one the program really has on that path (its own
 * functions, libc's start-up frames, the damaged copy's frame named by its
 * own symbol or as file+0xOFFSET of that copy, `[anon]` for the RWX page),
 * except that the outermost frame may be an `[unwind stopped: ...]` marker
 * where the walk gave up; no frame is named after a function the program
 * does not call there. An address in no mapping shows as
 * "[unknown]+0x...", which names nothing: allowed where a sample taken
 * before the process's maps were read is walked with frame pointers the
 * code lacks (the threads case). Python cases have their own rule. A
 * program can still lie about its own stack (a frame pointer aimed at a
 * forged frame); what it must never do is crash, hang or bloat the
 * profiler, or damage another process's stacks: the controls check that.
 * `record -v` counters show each case was really met (files refused as
 * not ELF, malformed CFI entries skipped, stacks too deep, Python threads
 * without a thread state, unreadable Python frames). Needs root and BPF.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "attacker.h"
#include "folded_check.h"
#include "omniprof_run.h"
#include "testutil.h"

#define RECORD_SECONDS 8
#define RECORD_SLACK_S 40  /* start-up, naming, writing: far more than ever seen */
#define RSS_BOUND_MB   128 /* about 38-41 MiB measured; see rss_bound_mb() */
#define FREQUENCY      "199"
#define MIN_LEAF       20 /* control leaf samples, as test_unwind.c */
#define MIN_HOSTILE    5  /* hostile leaf samples: the case was sampled at all */
#define WORKLOAD_SECS  "60"
#define N_THREADS      "10000"
#define N_MAPPINGS     "50000"
#define N_DEPTH	       "100000"
#define MAX_PROCS      16

#define EXPECT(call) assert_int_equal((call), 0)

/* Absolute: the attacker's processes start in a folder of their own. */
static void workload_path(char *buf, size_t size, const char *name)
{
	char *build = realpath(tu_build_dir(), NULL);

	snprintf(buf, size, "%s/workloads/%s", build ? build : tu_build_dir(), name);
	free(build);
}

/*
 * The peak-RSS bound in MiB: RSS_BOUND_MB, or OMNIPROF_TEST_RSS_BOUND_MB for
 * a sanitizer build of omniprof, whose shadow memory and quarantine cost
 * far more (ASan + UBSan: 92 to 320 MiB measured, the most for 50,000
 * mappings; all six cases passed with 400).
 */
static long rss_bound_mb(void)
{
	const char *env = getenv("OMNIPROF_TEST_RSS_BOUND_MB");
	long v = env ? atol(env) : 0;

	return v > 0 ? v : RSS_BOUND_MB;
}

/* ---- a recording and its processes ----------------------------------------- */

struct session {
	char *dir;	       /* test folder (root's) */
	char hostile[1100];    /* DIR/attacker: owned by the attacker, its files go there */
	char out[1100];	       /* DIR/out: omniprof's output folder */
	pid_t pids[MAX_PROCS]; /* the controls first */
	size_t n_pids;
	size_t n_controls;
	/* After the recording: */
	char *log;    /* record -v's stdout + stderr */
	char *folded; /* stacks.folded */
	double seconds;
	long maxrss_kb;
	int status;
};

/* The session of the running test, for teardown() when an assertion ends it early. */
static struct session *active;

static void session__init(struct session *s)
{
	uid_t uid;
	gid_t gid;

	memset(s, 0, sizeof(*s));
	active = s;
	s->dir = tu_mkdtemp();
	assert_non_null(s->dir);
	EXPECT(attacker__ensure(&uid, &gid));
	assert_int_equal(chmod(s->dir, 0755), 0);
	snprintf(s->hostile, sizeof(s->hostile), "%s/attacker", s->dir);
	snprintf(s->out, sizeof(s->out), "%s/out", s->dir);
	assert_int_equal(mkdir(s->hostile, 0755), 0);
	assert_int_equal(chown(s->hostile, uid, gid), 0);
}

static void session__add(struct session *s, pid_t pid, const char *what)
{
	if (pid <= 0)
		fail_msg("%s did not start", what);
	assert_true(s->n_pids < MAX_PROCS);
	s->pids[s->n_pids++] = pid;
}

static double now_s(void)
{
	return (double)tu_now_ms() / 1000.0;
}

/*
 * The controls: another user's ordinary programs, recorded alongside. They
 * come first in -p and are stopped (SIGSTOP) until omniprof says it is
 * sampling: a sample taken before omniprof has read its process's maps is
 * walked with frame pointers, which nofp_gcc lacks ("fallback to frame
 * pointers: unknown pid"). With the hostile processes starving omniprof of
 * CPU, that start-up window held up to 10 of nofp_gcc's ~170 leaf samples;
 * what the controls measure here is sampling next to hostile processes.
 */
static void session__add_controls(struct session *s)
{
	char fp[512], nofp[512];
	char *fp_argv[] = {fp, WORKLOAD_SECS, NULL}, *nofp_argv[] = {nofp, WORKLOAD_SECS, NULL};

	workload_path(fp, sizeof(fp), "fp_chain");
	workload_path(nofp, sizeof(nofp), "nofp_gcc");
	session__add(s, tu_spawn_ready(fp_argv), "fp_chain");
	session__add(s, tu_spawn_ready(nofp_argv), "nofp_gcc");
	s->n_controls = 2;
	for (size_t i = 0; i < s->n_controls; i++)
		assert_int_equal(kill(s->pids[i], SIGSTOP), 0);
}

/* Lets the controls run once `record` printed that it samples (or gave up). */
static void session__resume_controls(struct session *s, const char *log, pid_t rec, double limit)
{
	double start = now_s();

	while (now_s() - start < limit) {
		bool sampling = tu_log_has(log, "omniprof: sampling");
		siginfo_t info = {0};

		/* Exited already (then reaped by the caller, so not here: WNOWAIT). */
		if (sampling || (!waitid(P_PID, (id_t)rec, &info, WEXITED | WNOHANG | WNOWAIT) &&
				 info.si_pid == rec))
			break;
		usleep(20 * 1000);
	}
	for (size_t i = 0; i < s->n_controls; i++)
		kill(s->pids[i], SIGCONT);
}

static void session__attack(struct session *s, char *const argv[])
{
	session__add(s, attacker__spawn_ready(argv, s->hostile), argv[0]);
}

static void session__free(struct session *s)
{
	active = NULL;
	for (size_t i = 0; i < s->n_pids; i++)
		tu_reap(s->pids[i]);
	s->n_pids = 0;
	if (getenv("OMNIPROF_KEEP_TEST_DIR"))
		printf("    kept %s\n", s->dir);
	else
		tu_rmtree(s->dir);
	free(s->dir);
	free(s->log);
	free(s->folded);
	memset(s, 0, sizeof(*s));
}

/*
 * Runs `omniprof record -v -d RECORD_SECONDS -p ...` over every process of
 * the session, stopping it (SIGKILL) if it runs past the bound, and keeps
 * its output, run time, peak RSS and stacks.folded.
 */
static void session__record(struct session *s)
{
	char *argv[8 + 2 * MAX_PROCS], pids[MAX_PROCS][16], secs[16], log[1200];
	double start, limit = RECORD_SECONDS + RECORD_SLACK_S;
	struct rusage ru;
	size_t n = 0;
	pid_t rec, got = 0;

	snprintf(secs, sizeof(secs), "%d", RECORD_SECONDS);
	snprintf(log, sizeof(log), "%s/record.log", s->dir);
	argv[n++] = tu_omniprof_path();
	argv[n++] = "record";
	argv[n++] = "-v";
	argv[n++] = "-d";
	argv[n++] = secs;
	argv[n++] = "-F";
	argv[n++] = FREQUENCY;
	argv[n++] = "-o";
	argv[n++] = s->out;
	for (size_t i = 0; i < s->n_pids; i++) {
		snprintf(pids[i], sizeof(pids[i]), "%d", (int)s->pids[i]);
		argv[n++] = "-p";
		argv[n++] = pids[i];
	}
	argv[n] = NULL;
	start = now_s();
	rec = tu_spawn_logged(argv, log, 0600, false);
	assert_true(rec >= 0);
	session__resume_controls(s, log, rec, limit);
	while ((got = wait4(rec, &s->status, WNOHANG, &ru)) == 0 && now_s() - start < limit)
		usleep(50 * 1000);
	if (got != rec) {
		kill(rec, SIGKILL);
		wait4(rec, &s->status, 0, &ru);
	}
	s->seconds = now_s() - start;
	s->maxrss_kb = ru.ru_maxrss;
	s->log = tu_read_file(log, NULL);
	{
		char path[1300];

		snprintf(path, sizeof(path), "%s/stacks.folded", s->out);
		s->folded = tu_read_file(path, NULL);
	}
	printf("    omniprof record: %s %d after %.1f s (limit %.0f s), peak RSS %.1f MiB (bound "
	       "%ld MiB)\n",
	       WIFEXITED(s->status) ? "exit" : "signal",
	       WIFEXITED(s->status) ? WEXITSTATUS(s->status) : WTERMSIG(s->status), s->seconds,
	       limit, (double)s->maxrss_kb / 1024.0, rss_bound_mb());
	fflush(stdout);
	if (got != rec || !WIFEXITED(s->status) || WEXITSTATUS(s->status))
		print_error("record output:\n%s\n", s->log ? s->log : "(none)");
}

/* The value printed after `key` in record -v's counters, -1 when missing. */
static long long counter(const struct session *s, const char *key)
{
	return tu_counter_after(s->log, key);
}

static long long show_counter(const struct session *s, const char *key)
{
	long long v = counter(s, key);

	printf("      %-44s %lld\n", key, v);
	fflush(stdout);
	return v;
}

/* omniprof kept running, stopped in time, wrote its outputs, stayed small. */
static void session__assert_ran_well(const struct session *s)
{
	const char *files[] = {"stacks.folded", "profile.pb.gz", "flamegraph.html"};
	char path[1300];
	struct stat st;

	assert_true(WIFEXITED(s->status));
	assert_int_equal(WEXITSTATUS(s->status), 0);
	assert_true(s->seconds < RECORD_SECONDS + RECORD_SLACK_S);
	assert_true(s->maxrss_kb > 0);
	assert_true(s->maxrss_kb < rss_bound_mb() * 1024L);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", s->out, files[i]);
		assert_int_equal(stat(path, &st), 0);
		assert_true(st.st_size > 0);
	}
	assert_non_null(s->folded);
	show_counter(s, "fallback to frame pointers: unknown pid");
	show_counter(s, "dropped: ring buffer full");
}

/* ---- the controls ------------------------------------------------------------ */

static void assert_control(const struct session *s, const char *comm,
			   void (*expect)(struct chain_spec *))
{
	struct chain_spec *cs = chain_spec__new();
	struct chain_count c;

	assert_non_null(cs);
	expect(cs);
	c = chain_spec__count_folded(cs, s->folded, comm);
	chain_spec__free(cs);
	printf("    control %s: %ld of %ld leaf samples complete (%.1f%%)\n", comm, c.complete,
	       c.leaf, c.leaf ? 100.0 * (double)c.complete / (double)c.leaf : 0.0);
	if (c.worst && c.complete * 100 < c.leaf * 95)
		printf("      most frequent incomplete stack (%ld samples): %.*s\n", c.worst_count,
		       c.worst_len > 600 ? 600 : (int)c.worst_len, c.worst);
	fflush(stdout);
	assert_true(c.leaf >= MIN_LEAF);
	assert_true(c.complete * 100 >= c.leaf * 95);
}

static void expect_fp_chain(struct chain_spec *cs)
{
	EXPECT(chain_spec__add_fp_chain(cs));
}

static void expect_nofp(struct chain_spec *cs)
{
	EXPECT(chain_spec__add(cs, "main"));
	for (int i = 1; i <= 20; i++)
		EXPECT(chain_spec__add(cs, "a_%02d", i));
	EXPECT(chain_spec__add(cs, "leaf"));
}

static void assert_controls(const struct session *s)
{
	assert_control(s, "fp_chain", expect_fp_chain);
	assert_control(s, "nofp_gcc", expect_nofp);
}

/* ---- "marked, never garbage" ------------------------------------------------- */

/* Frames of libc's process and thread start-up, below main or a thread's function. */
static const char *const root_frames[] = {
    "_start", "__libc_start_main", "__libc_start_call_main", "clone3", "clone", "start_thread",
    NULL};

/*
 * What may sit above a leaf: the workloads' spin loops, inlined into it
 * (tests/workloads/workload.h), and the clock wl_spin_until reads through
 * libc's time() (glibc resolves it straight to the vDSO's), caught now and
 * then, in its PLT stub too (named "time@plt"; an unnamed stub once made
 * this test count a sample as garbage).
 */
static const char *const leaf_callees[] = {
    "wl_spin_n", "wl_spin_until", "time", "time@plt", "__vdso_time", "__vdso_clock_gettime", NULL};

/* record ran well with the attack going on, and the controls were sampled whole. */
static void session__record_checked(struct session *s)
{
	session__record(s);
	session__assert_ran_well(s);
	assert_controls(s);
}

/* Mappings past the per-process cap went untracked (counted), with the table counters. */
static void assert_mappings_capped(const struct session *s)
{
	assert_true(show_counter(s, "user: mappings past the cap (untracked)") > 0);
	show_counter(s, "tables: mapping entries (LPM)");
	show_counter(s, "tables: inserts refused (map full)");
	show_counter(s, "user: maps reads");
}

/* A frame name matches a pattern exactly, or by prefix when it ends in '*'. */
static bool frame_matches(const char *frame, size_t len, const char *pattern)
{
	size_t plen = strlen(pattern);

	if (plen && pattern[plen - 1] == '*')
		return len >= plen - 1 && !memcmp(frame, pattern, plen - 1);
	return len == plen && !memcmp(frame, pattern, len);
}

static bool frame_in(const char *frame, size_t len, const char *const *patterns)
{
	for (size_t i = 0; patterns && patterns[i]; i++)
		if (frame_matches(frame, len, patterns[i]))
			return true;
	return false;
}

struct marked_count {
	long leaf;	     /* samples whose stack holds the leaf */
	long marked;	     /* ... whose outermost frame is an [unwind stopped: ...] marker */
	long garbage;	     /* ... with a frame the program does not have on that path */
	long extra;	     /* samples that hold `must_hold` (when given) */
	char bad[600];	     /* the first garbage stack (its start) */
	char bad_frame[200]; /* ... and the frame of it that is garbage, with its position */
};

#define MARKER "[unwind stopped:"

/*
 * Checks every stacks.folded line of `comm` that holds `leaf`: between the
 * root and the leaf only root_frames and `allowed`, the outermost frame may
 * be a marker, and past the leaf only leaf_callees and kernel
 * frames ("_[k]").
 */
static struct marked_count count_marked(const char *text, const char *comm, const char *leaf,
					const char *const *allowed, const char *must_hold)
{
	struct marked_count mc = {0};
	size_t comm_len = strlen(comm);

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n'), *end = eol ? eol : line + strlen(line);
		const char *space = end, *frames, *f, *leaf_at = NULL;
		long count, n_frame = 0;
		bool bad = false, this_bad = false;

		while (space > line && *space != ' ')
			space--;
		if (space == line || (size_t)(end - line) <= comm_len ||
		    memcmp(line, comm, comm_len) || line[comm_len] != ';')
			goto next;
		count = strtol(space + 1, NULL, 10);
		frames = line + comm_len + 1;
		/* The leaf: its last occurrence (recursion repeats names). */
		for (f = frames; f < space;) {
			const char *semi = memchr(f, ';', (size_t)(space - f)),
				   *fe = semi ? semi : space;

			if (frame_matches(f, (size_t)(fe - f), leaf))
				leaf_at = f;
			f = fe + 1;
		}
		if (!leaf_at)
			goto next;
		mc.leaf += count;
		if (must_hold &&
		    memmem(frames, (size_t)(space - frames), must_hold, strlen(must_hold)))
			mc.extra += count;
		for (f = frames; f < space;) {
			const char *semi = memchr(f, ';', (size_t)(space - f)),
				   *fe = semi ? semi : space;
			size_t len = (size_t)(fe - f);

			if (f == frames && len > strlen(MARKER) &&
			    !memcmp(f, MARKER, strlen(MARKER)))
				mc.marked += count;
			else if (f < leaf_at)
				this_bad =
				    !frame_in(f, len, root_frames) && !frame_in(f, len, allowed);
			else if (f > leaf_at)
				this_bad = !(len > 4 && !memcmp(fe - 4, "_[k]", 4)) &&
					   !frame_in(f, len, leaf_callees);
			/* The stack can be 1024 frames: say which one is wrong. */
			if (this_bad && !bad && !mc.garbage)
				snprintf(mc.bad_frame, sizeof(mc.bad_frame),
					 "%s the leaf, frame %ld: %.*s",
					 f < leaf_at ? "outside" : "inside", n_frame, (int)len, f);
			bad |= this_bad;
			this_bad = false;
			n_frame++;
			f = fe + 1;
		}
		if (bad) {
			if (!mc.garbage)
				snprintf(mc.bad, sizeof(mc.bad), "%.*s", (int)(end - line), line);
			mc.garbage += count;
		}
	next:
		line = eol ? eol + 1 : NULL;
	}
	return mc;
}

static struct marked_count report_marked(const struct session *s, const char *comm,
					 const char *leaf, const char *const *allowed,
					 const char *must_hold)
{
	struct marked_count mc = count_marked(s->folded, comm, leaf, allowed, must_hold);

	printf("    %s: %ld leaf samples, %ld end in a marker, %ld garbage", comm, mc.leaf,
	       mc.marked, mc.garbage);
	if (must_hold)
		printf(", %ld through %s", mc.extra, must_hold);
	printf("\n");
	if (mc.garbage) {
		printf("      first garbage stack: %.500s\n", mc.bad);
		printf("      its garbage frame (%s)\n", mc.bad_frame);
	}
	fflush(stdout);
	return mc;
}

static void assert_marked(const struct session *s, const char *comm, const char *leaf,
			  const char *const *allowed, const char *must_hold)
{
	struct marked_count mc = report_marked(s, comm, leaf, allowed, must_hold);

	assert_true(mc.leaf >= MIN_HOSTILE);
	assert_int_equal(mc.garbage, 0);
	if (must_hold)
		assert_true(mc.extra > 0);
}

/* ---- damaged files, deleted and memfd binaries, self-modifying code ------------ */

static const char *const damage_modes[] = {"ehdr",    "shdr",	   "notes",
					   "ehframe", "truncated", "empty"};
#define N_DAMAGE (sizeof(damage_modes) / sizeof(damage_modes[0]))

static void expect_memfd(struct chain_spec *cs)
{
	EXPECT(chain_spec__add(cs, "main"));
	for (int i = 1; i <= 6; i++)
		EXPECT(chain_spec__add(cs, "mf_%02d", i));
	EXPECT(chain_spec__add(cs, "mf_leaf"));
}

static void test_damaged_files(void **state)
{
	char elf[512], memfd[512], rwx[512], fp[512], deleted[1200], comm[32];
	char *mode_argv[] = {elf, NULL, NULL, WORKLOAD_SECS, NULL};
	char *memfd_argv[] = {memfd, WORKLOAD_SECS, NULL};
	char *rwx_argv[] = {rwx, WORKLOAD_SECS, NULL};
	char *deleted_argv[] = {deleted, WORKLOAD_SECS, NULL};
	static struct session s; /* static: the teardown reaches it after a failure */
	char *out = NULL;

	(void)state;
	session__init(&s);
	session__add_controls(&s);
	workload_path(elf, sizeof(elf), "hostile_elf");
	workload_path(memfd, sizeof(memfd), "hostile_memfd");
	workload_path(rwx, sizeof(rwx), "hostile_rwx");
	workload_path(fp, sizeof(fp), "fp_chain");
	mode_argv[2] = s.hostile;
	for (size_t i = 0; i < N_DAMAGE; i++) {
		mode_argv[1] = (char *)damage_modes[i];
		session__attack(&s, mode_argv);
	}
	session__attack(&s, memfd_argv);
	session__attack(&s, rwx_argv);
	/* A copy of fp_chain, removed once it runs: named from the inode it maps. */
	snprintf(deleted, sizeof(deleted), "%s/deleted_chain", s.hostile);
	assert_int_equal(tu_run(&out, "cp %s %s && chmod 755 %s", fp, deleted, deleted), 0);
	free(out);
	session__attack(&s, deleted_argv);
	assert_int_equal(unlink(deleted), 0);

	session__record_checked(&s);

	/* Both runs through the damaged copy's frame, named by the copy's own
	 * symbol or as an offset in the copy. */
	for (size_t i = 0; i < N_DAMAGE; i++) {
		char pattern[64];
		const char *allowed[] = {"main", "hx_run", "hx_cb", "hx_stub", pattern, NULL};

		snprintf(comm, sizeof(comm), "hx_%s", damage_modes[i]);
		snprintf(pattern, sizeof(pattern), "hx_%s.bin+0x*", damage_modes[i]);
		/* hx_run reaches hx_cb only through the stub: each leaf stack went through it. */
		assert_marked(&s, comm, "hx_leaf", allowed, NULL);
	}
	/* memfd and deleted binaries are ordinary programs (with frame pointers,
	 * so not paused over the start-up either): whole chains, named. */
	assert_control(&s, "hx_memfd", expect_memfd);
	assert_control(&s, "deleted_chain", expect_fp_chain);
	{
		const char *allowed[] = {"main", "rwx_run", "[anon]*", "rwx_cb", NULL};
		struct marked_count mc;

		assert_marked(&s, "hostile_rwx", "rwx_leaf", allowed, "[anon]");
		mc = count_marked(s.folded, "hostile_rwx", "rwx_leaf", allowed, NULL);
		/* The framed variant gets through; the other stops, saying why. */
		assert_true(mc.marked > 0);
		assert_true(mc.marked < mc.leaf);
		assert_non_null(strstr(s.folded, "hostile_rwx;" MARKER
						 " JIT/anonymous code without frame pointer]"));
	}
	/* The damage was met: files refused, CFI entries skipped. */
	assert_true(show_counter(&s, "user: files not ELF or malformed") >= 3);
	assert_true(show_counter(&s, "tables: malformed CFI entries skipped") >= 1);
	show_counter(&s, "user: files that could not be opened");
	session__free(&s);
}

/* ---- numbers: threads, mappings, depth ----------------------------------------- */

static void test_ten_thousand_threads(void **state)
{
	char many[512];
	char *argv[] = {many, "threads", N_THREADS, WORKLOAD_SECS, NULL};
	/* A sample taken before the maps were read is walked with frame pointers,
	 * which these functions lack: what it finds is an address in no mapping,
	 * shown as "[unknown]+0x...", never a name. */
	const char *allowed[] = {"mt_thread", "mt_work", "[unknown]+0x*", NULL};
	static struct session s; /* static: the teardown reaches it after a failure */

	(void)state;
	session__init(&s);
	session__add_controls(&s);
	workload_path(many, sizeof(many), "hostile_many");
	session__attack(&s, argv);
	session__record_checked(&s);
	assert_marked(&s, "hm_threads", "mt_leaf", allowed, NULL);
	show_counter(&s, "user: trace records");
	session__free(&s);
}

/*
 * 50,000 executable mappings of one file: the process table tracks at most
 * PROCESS_MAPS_MAX per process, the files mapped fewest times first, so the
 * executable and libc stay tracked (the leaf is named) and only copies of the
 * mass-mapped file go untracked, counted; its maps are re-read at most every
 * few seconds. Before the cap, each read published all 50,000 LPM ranges and
 * queued unknown-pid reports re-read them again: `record -d 8` ran for 41 s
 * or was killed at 48 s.
 */
static void test_fifty_thousand_mappings(void **state)
{
	char elf[512];
	char *argv[] = {elf, "maps", NULL, WORKLOAD_SECS, N_MAPPINGS, NULL};
	const char *allowed[] = {"main", "hx_run", "hx_cb", "hx_stub", "hx_maps.bin+0x*", NULL};
	static struct session s; /* static: the teardown reaches it after a failure */

	(void)state;
	session__init(&s);
	session__add_controls(&s);
	workload_path(elf, sizeof(elf), "hostile_elf");
	argv[2] = s.hostile;
	session__attack(&s, argv);
	session__record_checked(&s);
	assert_marked(&s, "hx_maps", "hx_leaf", allowed, NULL);
	assert_mappings_capped(&s);
	session__free(&s);
}

/*
 * The same numbers as JIT code: 50,000 anonymous executable regions, each
 * an LPM entry of its own (OP_TABLE_ID_ANON): held to the same per-process
 * cap (the anonymous regions, all one pseudo file, are the ones dropped).
 */
static void test_fifty_thousand_jit_regions(void **state)
{
	char elf[512];
	char *argv[] = {elf, "jit", NULL, WORKLOAD_SECS, N_MAPPINGS, NULL};
	const char *allowed[] = {"main", "hx_run", "hx_cb", "[anon]*", NULL};
	static struct session s; /* static: the teardown reaches it after a failure */

	(void)state;
	session__init(&s);
	session__add_controls(&s);
	workload_path(elf, sizeof(elf), "hostile_elf");
	argv[2] = s.hostile;
	session__attack(&s, argv);
	session__record_checked(&s);
	assert_marked(&s, "hx_jit", "hx_leaf", allowed, "[anon]");
	assert_mappings_capped(&s);
	session__free(&s);
}

static void test_hundred_thousand_deep(void **state)
{
	char many[512];
	char *argv[] = {many, "deep", N_DEPTH, WORKLOAD_SECS, NULL};
	const char *allowed[] = {"dp_recurse", NULL};
	struct marked_count mc;
	static struct session s; /* static: the teardown reaches it after a failure */

	(void)state;
	session__init(&s);
	session__add_controls(&s);
	workload_path(many, sizeof(many), "hostile_many");
	session__attack(&s, argv);
	session__record_checked(&s);
	/* Never the thread's start: every stack stops, marked, long before it. */
	assert_marked(&s, "hm_deep", "dp_leaf", allowed, NULL);
	mc = count_marked(s.folded, "hm_deep", "dp_leaf", allowed, NULL);
	assert_int_equal(mc.marked, mc.leaf);
	assert_true(show_counter(&s, "truncated: user stack too deep") >= 1);
	session__free(&s);
}

/* ---- CPython damaging its own interpreter state -------------------------------- */

/*
 * The samples of `comm` whose stack holds `needle` and, when `first` is not
 * NULL, whose frames start with it (the outermost frame, after the comm).
 */
static long samples_with(const char *text, const char *comm, const char *needle, const char *first)
{
	size_t comm_len = strlen(comm);
	long n = 0;

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n'), *end = eol ? eol : line + strlen(line);
		const char *space = end;

		while (space > line && *space != ' ')
			space--;
		if (space > line && !memcmp(line, comm, comm_len) && line[comm_len] == ';' &&
		    memmem(line, (size_t)(space - line), needle, strlen(needle)) &&
		    (!first || !strncmp(line + comm_len + 1, first, strlen(first))))
			n += strtol(space + 1, NULL, 10);
		line = eol ? eol + 1 : NULL;
	}
	return n;
}

static long report_samples(const struct session *s, const char *comm, const char *needle,
			   const char *first)
{
	long n = samples_with(s->folded, comm, needle, first);

	printf("    %s: %ld samples hold \"%s\"%s%s\n", comm, n, needle,
	       first ? " and start with " : "", first ? first : "");
	fflush(stdout);
	return n;
}

/*
 * Python's rules: the damaged frame itself is named (it is real); what lies
 * past the damage is a marker, never a frame the damage made up:
 *   garbage  hp_garbage_inner is the outermost frame after the marker of an
 *            unreadable Python frame; hp_garbage_outer never shows
 *   loop     hp_loop_inner repeats up to the frame limit and the stack ends
 *            in a marker; hp_loop_outer never shows
 *   code     the caller whose code object is a bytes object is
 *            "[unknown Python code]", never hp_code_outer
 *   tstate   no Python frame at all (the thread cannot be matched), counted
 */
static void test_python_damages_itself(void **state)
{
	const char *modes[] = {"garbage", "loop", "code", "tstate"};
	char script[1200], comm[16], python[1024];
	char *argv[] = {python, script, NULL, WORKLOAD_SECS, NULL};
	static struct session s; /* static: the teardown reaches it after a failure */
	unsigned int minor;
	long all;

	(void)state;
	/* Debian's own (3.11 on Debian 12): hostile_frames.py knows its frame layout. */
	if (tu_distro_python(python, sizeof(python), &minor))
		fail_msg("no python3 of Debian's python3-minimal package");
	session__init(&s);
	session__add_controls(&s);
	/* The attacker reads the script from a copy of its own. */
	snprintf(script, sizeof(script), "%s/hostile_frames.py", s.hostile);
	{
		char *out = NULL;

		assert_int_equal(tu_run(&out,
					"cp tests/workloads/python/hostile_frames.py %s && "
					"chmod 644 %s",
					script, script),
				 0);
		free(out);
	}
	for (size_t i = 0; i < 4; i++) {
		argv[2] = (char *)modes[i];
		session__attack(&s, argv);
	}
	session__record_checked(&s);

	all = report_samples(&s, "hp_garbage", "hp_garbage_inner", NULL);
	assert_true(all >= MIN_HOSTILE);
	assert_int_equal(
	    report_samples(&s, "hp_garbage", "hp_garbage_inner",
			   "[unwind stopped: unreadable Python frame];hp_garbage_inner"),
	    all);
	assert_int_equal(report_samples(&s, "hp_garbage", "hp_garbage_outer", NULL), 0);

	all = report_samples(&s, "hp_loop", "hp_loop_inner", NULL);
	assert_true(all >= MIN_HOSTILE);
	assert_int_equal(report_samples(&s, "hp_loop", "hp_loop_inner", MARKER), all);
	assert_int_equal(report_samples(&s, "hp_loop", "hp_loop_outer", NULL), 0);
	assert_int_equal(report_samples(&s, "hp_loop", "<module>", NULL), 0);

	all = report_samples(&s, "hp_code", "hp_code_inner", NULL);
	assert_true(all >= MIN_HOSTILE);
	assert_int_equal(report_samples(&s, "hp_code", "[unknown Python code];hp_code_inner", NULL),
			 all);
	assert_int_equal(report_samples(&s, "hp_code", "hp_code_outer", NULL), 0);

	snprintf(comm, sizeof(comm), "hp_tstate");
	assert_true(report_samples(&s, comm, ";", NULL) >= MIN_HOSTILE);
	assert_int_equal(report_samples(&s, comm, "hp_tstate_", NULL), 0);
	assert_int_equal(report_samples(&s, comm, "<module>", NULL), 0);

	assert_true(show_counter(&s, "python: thread without a thread state") >= 1);
	assert_true(show_counter(&s, "python: unreadable interpreter frames") >= 1);
	session__free(&s);
}

/* After a failed assertion: no process stays behind, stopped or running. */
static int teardown(void **state)
{
	(void)state;
	if (active)
		session__free(active);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_damaged_files, teardown),
	    cmocka_unit_test_teardown(test_ten_thousand_threads, teardown),
	    cmocka_unit_test_teardown(test_fifty_thousand_mappings, teardown),
	    cmocka_unit_test_teardown(test_fifty_thousand_jit_regions, teardown),
	    cmocka_unit_test_teardown(test_hundred_thousand_deep, teardown),
	    cmocka_unit_test_teardown(test_python_damages_itself, teardown),
	};

	return cmocka_run_group_tests_name("e2e_hostile_targets", tests, NULL, NULL);
}
