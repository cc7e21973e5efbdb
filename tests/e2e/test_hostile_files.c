// SPDX-License-Identifier: Apache-2.0
/*
 * Files an unprivileged user plants for the profiler (root) to open. Each
 * attack hung or flooded `omniprof record` before util/safe_open.h:
 *
 *  - a stripped binary whose .gnu_debuglink names a FIFO next to it (and a
 *    symlink to /dev/zero in its .debug/): the recording must end in
 *    bounded time (killed at 60 s otherwise) with the process's samples;
 *  - the same debuglink naming a 64 GiB sparse file: refused by the size
 *    cap, nothing CRC'd;
 *  - the /proc/PID/root fallback of file_cache__open_mapped() for a process
 *    in its own mount namespace (unshare -Urm as the attacker) whose mapped
 *    path was swapped for a symlink to a root-only host file, then for a
 *    FIFO: the host file is never opened for reading, nothing blocks;
 *  - debuginfod servers (tests/e2e/fake_debuginfod.py) that never answer,
 *    stream without end, or serve garbage: the recording ends within the
 *    documented budget, each failure is counted, nothing is kept.
 *
 * Needs root, BPF, and the attacker account (tests/lib/attacker.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "attacker.h"
#include "proc/file_cache.h"
#include "omniprof_run.h"
#include "proc/proc_maps.h"
#include "testutil.h"
#include "util/safe_open.h"

#define RECORD_SECONDS 3
#define HARD_LIMIT_S   60 /* the recording is killed past this: a hang fails the test */
#define MIN_SAMPLES    20

struct fx {
	char *dir;     /* root-owned, 0755 */
	char att[512]; /* dir/att, the attacker's folder */
	uid_t uid;
	gid_t gid;
	pid_t pids[2]; /* the attacker's processes, killed at teardown whatever happened */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(attacker__ensure(&f->uid, &f->gid), 0);
	f->dir = tu_mkdtemp();
	assert_non_null(f->dir);
	assert_int_equal(chmod(f->dir, 0755), 0);
	snprintf(f->att, sizeof(f->att), "%s/att", f->dir);
	assert_int_equal(mkdir(f->att, 0755), 0);
	assert_int_equal(chown(f->att, f->uid, f->gid), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	for (int i = 0; i < 2; i++)
		if (f->pids[i] > 0) {
			kill(f->pids[i], SIGKILL);
			waitpid(f->pids[i], NULL, WNOHANG);
		}
	tu_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* att/hostile: fp_chain stripped, its .gnu_debuglink "hostile.debug", owned by the attacker. */
static void make_hostile_binary(struct fx *f)
{
	char wl[PATH_MAX];

	assert_non_null(realpath(tu_build_dir(), wl));
	TU_SH(
	    "cd %s && cp %s/workloads/fp_chain hostile && "
	    "objcopy --only-keep-debug hostile hostile.debug && "
	    "objcopy --strip-all --add-gnu-debuglink=hostile.debug hostile && rm hostile.debug && "
	    "chown %d:%d hostile",
	    f->att, wl, (int)f->uid, (int)f->gid);
}

static double now_s(void)
{
	return (double)tu_now_ms() / 1000.0;
}

/* Samples of comm in folded text ("comm;...;leaf COUNT" lines). */
static long samples_of(const char *text, const char *comm)
{
	size_t n = strlen(comm);
	long total = 0;

	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n'), *sp;

		if (!strncmp(l, comm, n) && l[n] == ';') {
			sp = nl ? nl : l + strlen(l);
			while (sp > l && sp[-1] != ' ')
				sp--;
			total += strtol(sp, NULL, 10);
		}
		l = nl ? nl + 1 : NULL;
	}
	return total;
}

/* The number after label in record -v output, or -1. */
static long long counter(const char *out, const char *label)
{
	const char *p = strstr(out, label);

	if (!p)
		return -1;
	p += strlen(label);
	while (*p == ' ')
		p++;
	return strtoll(p, NULL, 10);
}

/*
 * Starts att/hostile as the attacker, records it with -v under a hard
 * time limit, and returns record's output (caller frees); *elapsed set.
 */
static char *record_hostile_env(struct fx *f, double *elapsed, const char *env, int limit_s,
				const char *extra)
{
	char bin[PATH_MAX], secs[16], path[PATH_MAX], *out = NULL, *folded;
	char *argv[] = {bin, secs, NULL};
	double t0;
	pid_t pid;
	int rc;

	snprintf(bin, sizeof(bin), "%s/hostile", f->att);
	snprintf(secs, sizeof(secs), "%d", HARD_LIMIT_S + 30);
	pid = attacker__spawn_ready(argv, f->att);
	assert_true(pid > 0);
	f->pids[0] = pid;
	t0 = now_s();
	rc = tu_run(&out, "%s timeout -s KILL %d %s record -p %d -d %d -F 99 -o %s/out -v %s", env,
		    limit_s, tu_omniprof_path(), (int)pid, RECORD_SECONDS, f->dir, extra);
	*elapsed = now_s() - t0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("    record took %.1f s (exit %d)\n", *elapsed, rc);
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	assert_int_equal(rc, 0);
	assert_true(*elapsed < limit_s);
	/* The process itself was profiled all along. */
	snprintf(path, sizeof(path), "%s/out/stacks.folded", f->dir);
	folded = tu_read_file(path, NULL);
	assert_non_null(folded);
	printf("    hostile: %ld samples\n", samples_of(folded, "hostile"));
	assert_true(samples_of(folded, "hostile") >= MIN_SAMPLES);
	assert_non_null(strstr(folded, "hostile+0x"));
	free(folded);
	return out;
}

static char *record_hostile(struct fx *f, double *elapsed)
{
	return record_hostile_env(f, elapsed, "", HARD_LIMIT_S, "--no-debuginfod");
}

static void test_fifo_debuglink(void **state)
{
	struct fx *f = *state;
	char cmd[PATH_MAX * 2], *out;
	double elapsed;

	make_hostile_binary(f);
	/* The attacker's own doing: a FIFO where the debug file would be, /dev/zero in .debug/. */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && mkfifo hostile.debug && mkdir .debug && "
		 "ln -s /dev/zero .debug/hostile.debug",
		 f->att);
	assert_int_equal(attacker__system(cmd), 0);
	out = record_hostile(f, &elapsed);
	assert_true(counter(out, "files: refused, a FIFO") >= 1);
	assert_true(counter(out, "files: refused, a device") >= 1);
	assert_true(counter(out, "symbols: debug candidates refused") >= 2);
	free(out);
}

static void test_huge_sparse_debuglink(void **state)
{
	struct fx *f = *state;
	char cmd[PATH_MAX * 2], *out, *p;
	long long crc_bytes;
	double elapsed;

	make_hostile_binary(f);
	snprintf(cmd, sizeof(cmd), "cd %s && truncate -s 64G hostile.debug", f->att);
	assert_int_equal(attacker__system(cmd), 0);
	out = record_hostile(f, &elapsed);
	assert_true(counter(out, "files: refused, over the size cap") >= 1);
	/* "... N CRC bytes": nothing of the 64 GiB was read. */
	p = strstr(out, "roots gone,");
	assert_non_null(p);
	crc_bytes = strtoll(p + strlen("roots gone,"), NULL, 10);
	printf("    CRC bytes read: %lld\n", crc_bytes);
	assert_true(crc_bytes >= 0 && crc_bytes < (64LL << 20));
	free(out);
}

/* ---- the /proc/PID/root fallback --------------------------------------------------- */

static bool wait_file(const char *path, int seconds)
{
	for (int i = 0; i < seconds * 10; i++) {
		if (!access(path, F_OK))
			return true;
		usleep(100000);
	}
	return false;
}

/*
 * Tells the attacker to swap the mapped file (touches att/goSTEP), waits for
 * att/doneSTEP, then opens the mapping again through the fallback. Returns
 * what file_cache__open_mapped returned (an fd the caller closes, or -errno);
 * *before and *after: the safe_open counters around that open.
 */
static int swap_then_open(struct fx *f, int step, pid_t victim, const struct proc_map *m,
			  struct safe_open_stats *before, struct safe_open_stats *after)
{
	char flag[PATH_MAX], path[PATH_MAX];
	int fd;

	snprintf(flag, sizeof(flag), "%s/go%d", f->att, step);
	assert_int_equal(tu_run(NULL, "touch %s", flag), 0);
	snprintf(path, sizeof(path), "%s/done%d", f->att, step);
	assert_true(wait_file(path, 30));
	safe_open__stats(before);
	fd = file_cache__open_mapped(victim, m);
	safe_open__stats(after);
	return fd;
}

static void test_root_fallback_swapped_path(void **state)
{
	struct fx *f = *state;
	char script[PATH_MAX * 4], path[PATH_MAX], mapped[PATH_MAX], *pidtext;
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	struct proc_map *maps = NULL, m = {0};
	struct safe_open_stats before, after;
	struct stat shadow;
	size_t n = 0;
	pid_t sh, victim = 0;
	int fd;

	/*
	 * As the attacker, in a new user + mount namespace: a tmpfs only that
	 * namespace sees, a program run from it (it maps itself), then on the
	 * test's signal its path becomes a symlink to /etc/shadow, then a FIFO.
	 */
	snprintf(mapped, sizeof(mapped), "%s/mnt/prog", f->att);
	snprintf(script, sizeof(script),
		 "cd %s && mkdir -p mnt && exec unshare -Urm sh -c '"
		 "mount -t tmpfs none mnt && cp /bin/sleep mnt/prog && "
		 "(mnt/prog 1000 & echo $! > pid.tmp && mv pid.tmp pid) && echo ready && "
		 "while [ ! -e go1 ]; do sleep 0.1; done; "
		 "rm mnt/prog && ln -s /etc/shadow mnt/prog && touch done1 && "
		 "while [ ! -e go2 ]; do sleep 0.1; done; "
		 "rm mnt/prog && mkfifo mnt/prog && touch done2 && exec sleep 1000'",
		 f->att);
	sh = attacker__spawn_ready(argv, f->att);
	assert_true(sh > 0);
	f->pids[0] = sh;
	alarm(120); /* anything below that blocks fails the test */
	snprintf(path, sizeof(path), "%s/pid", f->att);
	assert_true(wait_file(path, 30));
	pidtext = tu_read_file(path, NULL);
	assert_non_null(pidtext);
	victim = (pid_t)atoi(pidtext);
	free(pidtext);
	f->pids[1] = victim;
	assert_true(victim > 0);
	/* The host does not see the namespace's tmpfs: only the in-root path leads there. */
	assert_int_equal(access(mapped, F_OK), -1);

	/* The mapping as /proc/PID/maps states it, at a range where nothing is mapped any more. */
	for (int tries = 0; tries < 50 && !m.inode; tries++) {
		proc_maps__free(maps, n);
		maps = NULL;
		assert_int_equal(proc_maps__read(victim, &maps, &n), 0);
		for (size_t i = 0; i < n; i++)
			if (maps[i].path && !strcmp(maps[i].path, mapped) && maps[i].inode) {
				m = maps[i];
				break;
			}
		if (!m.inode)
			usleep(100000);
	}
	assert_true(m.inode != 0);
	m.path = mapped;
	m.start = 0x10000;
	m.end = 0x11000; /* map_files has no such entry: the fallback runs */

	/* Control: the path still is the mapped file: the fallback opens it. */
	fd = file_cache__open_mapped(victim, &m);
	assert_true(fd >= 0);
	close(fd);

	/* Swapped for a symlink to a root-only host file: refused before it is opened to read. */
	assert_int_equal(stat("/etc/shadow", &shadow), 0);
	fd = swap_then_open(f, 1, victim, &m, &before, &after);
	printf("    symlink to /etc/shadow: %d (%s)\n", fd, fd < 0 ? strerror(-fd) : "opened");
	assert_int_equal(fd, -ESTALE);
	assert_int_equal(after.refused[SAFE_OPEN_R_MISMATCH],
			 before.refused[SAFE_OPEN_R_MISMATCH] + 1);
	/* Only one file was reopened for reading in all this: none. */
	assert_int_equal(after.opened, before.opened);

	/* Swapped for a FIFO: refused at once, nothing blocks (alarm above). */
	fd = swap_then_open(f, 2, victim, &m, &before, &after);
	printf("    FIFO: %d (%s)\n", fd, fd < 0 ? strerror(-fd) : "opened");
	assert_int_equal(fd, -ESPIPE);
	assert_int_equal(after.refused[SAFE_OPEN_R_FIFO], before.refused[SAFE_OPEN_R_FIFO] + 1);
	assert_int_equal(after.opened, before.opened);
	alarm(0);

	m.path = NULL;
	proc_maps__free(maps, n);
	kill(victim, SIGKILL);
	kill(sh, SIGKILL);
	waitpid(sh, NULL, 0);
}

/* ---- debuginfod servers that misbehave ---------------------------------------------- */

/*
 * One server per mode (tests/e2e/fake_debuginfod.py); the hostile binary has
 * no debug file anywhere else, so its build id (and those of the libraries
 * without local debug files) goes to the server. The recording must end
 * within the documented budget (30 s for all requests, 10 s each) plus
 * sampling and slack, and count what went wrong.
 */
enum { DFD_TIMEOUTS, DFD_TOO_BIG, DFD_INVALID, DFD_SKIPPED };

/* One of the numbers of record -v's "symbols: debuginfod failures" line, or -1. */
static long long debuginfod_count(const char *out, int which)
{
	const char *p = strstr(out, "symbols: debuginfod failures");
	long long v[4];

	if (!p)
		return -1;
	p += strlen("symbols: debuginfod failures");
	if (sscanf(p, " %lld timeouts, %lld over the size cap, %lld invalid, %lld skipped", &v[0],
		   &v[1], &v[2], &v[3]) != 4)
		return -1;
	return v[which];
}

static void run_debuginfod_case(struct fx *f, const char *mode, int which)
{
	char port_file[PATH_MAX], env[PATH_MAX * 2], cache[PATH_MAX], *port, *out, *found = NULL;
	char script[PATH_MAX];
	char *argv[] = {"/usr/bin/python3", script, (char *)mode, port_file, NULL};
	double elapsed;
	long long n;
	pid_t srv;

	make_hostile_binary(f);
	assert_non_null(realpath("tests/e2e/fake_debuginfod.py", script));
	snprintf(port_file, sizeof(port_file), "%s/port-%s", f->dir, mode);
	snprintf(cache, sizeof(cache), "%s/cache-%s", f->dir, mode);
	srv = fork();
	assert_true(srv >= 0);
	if (!srv) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	f->pids[1] = srv;
	/* The server writes its port once it listens. */
	assert_true(wait_file(port_file, 30));
	port = tu_read_file(port_file, NULL);
	assert_non_null(port);
	/* A 10 MB cap for the endless stream: nothing near it may land in the cache. */
	snprintf(env, sizeof(env),
		 "DEBUGINFOD_URLS=http://127.0.0.1:%s DEBUGINFOD_CACHE_PATH=%s "
		 "DEBUGINFOD_MAXSIZE=10000000",
		 port, cache);
	free(port);
	out = record_hostile_env(f, &elapsed, env, 120, "");
	n = debuginfod_count(out, which);
	printf("    %s server: %lld counted (timeouts %lld, too big %lld, invalid %lld, skipped "
	       "%lld)\n",
	       mode, n, debuginfod_count(out, DFD_TIMEOUTS), debuginfod_count(out, DFD_TOO_BIG),
	       debuginfod_count(out, DFD_INVALID), debuginfod_count(out, DFD_SKIPPED));
	if (n < 1)
		print_error("%s\n", out);
	assert_true(n >= 1);
	/* 3 s of sampling, at most 30 s of debuginfod, start-up and naming. */
	assert_true(elapsed < 90);
	free(out);
	/* Nothing the server sent is kept as a debug file. */
	assert_int_equal(
	    tu_run(&found, "find %s -type f -size +0 -name debuginfo 2>/dev/null", cache), 0);
	if (found && *found)
		print_error("kept in the cache: %s\n", found);
	assert_true(!found || !*found);
	free(found);
	tu_reap(srv);
	f->pids[1] = 0;
}

static void test_debuginfod_silent(void **state)
{
	run_debuginfod_case(*state, "silent", DFD_TIMEOUTS);
}

static void test_debuginfod_stream(void **state)
{
	run_debuginfod_case(*state, "stream", DFD_TOO_BIG);
}

static void test_debuginfod_garbage(void **state)
{
	run_debuginfod_case(*state, "garbage", DFD_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_fifo_debuglink, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_huge_sparse_debuglink, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_root_fallback_swapped_path, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_debuginfod_silent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_debuginfod_stream, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_debuginfod_garbage, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
