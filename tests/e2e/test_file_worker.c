// SPDX-License-Identifier: Apache-2.0
/*
 * File work never blocks sampling (issue 13): a library served by a FUSE
 * file system that hangs every open and read (tests/workloads/fuse_hang.c,
 * mounted as root with allow_other) is mapped by a process of the attacker
 * account; `omniprof record` must still finish and write its outputs in
 * bounded time, abandon the stuck open (counted), and record every sample
 * of a busy process next to it. Real BPF, real processes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "attacker.h"
#include "folded_check.h"
#include "omniprof_run.h"
#include "proc/file_cache.h"
#include "testutil.h"
#include "util/file_worker.h"

#define RECORD_SECONDS 8 /* past the file worker's 5 s timeout */
#define HZ	       99
/* The record must be done this long after it started, or it hung. */
#define RECORD_BOUND_S 60

static double now_s(void)
{
	return (double)tu_now_ms() / 1000.0;
}

/* A /proc file's text (its size says 0, so it is read to the end); caller frees. NULL on error. */
static char *read_proc(const char *path)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (!buf || fd < 0) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 4096) {
			char *tmp = realloc(buf, cap * 2);

			if (!tmp)
				break;
			buf = tmp;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* The state letter of pid ('Z': its main thread exited), or 0 when it is gone. */
static char proc_state(pid_t pid)
{
	char path[64], *text, *p, c = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	text = read_proc(path);
	if (text && (p = strrchr(text, ')')))
		c = p[2];
	free(text);
	return c;
}

/* Samples of comm in stacks.folded text ("comm;frames COUNT" lines). */
static long folded_samples(const char *text, const char *comm)
{
	size_t len = strlen(comm);
	long total = 0;

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n'), *sp;

		if (!end)
			end = line + strlen(line);
		if (!strncmp(line, comm, len) && line[len] == ';') {
			for (sp = end; sp > line && sp[-1] != ' ';)
				sp--;
			total += strtol(sp, NULL, 10);
		}
		line = *end ? end + 1 : end;
	}
	return total;
}

/*
 * Starts `omniprof record -v -F HZ -d seconds -p a -p b -o out_dir` with its
 * output in log; returns its pid (the caller reaps it).
 */
static pid_t start_record(const char *log, const char *out_dir, int seconds, pid_t a, pid_t b)
{
	char hz[16], secs[16], pid_a[16], pid_b[16];
	char *argv[] = {tu_omniprof_path(),
			"record",
			"-v",
			"-F",
			hz,
			"-d",
			secs,
			"-p",
			pid_a,
			"-p",
			pid_b,
			"-o",
			(char *)out_dir,
			NULL};
	pid_t pid;

	snprintf(hz, sizeof(hz), "%d", HZ);
	snprintf(secs, sizeof(secs), "%d", seconds);
	snprintf(pid_a, sizeof(pid_a), "%d", (int)a);
	snprintf(pid_b, sizeof(pid_b), "%d", (int)b);
	pid = tu_spawn_logged(argv, log, 0644, false);
	assert_true(pid >= 0);
	return pid;
}

/* record's output (*out) and out_dir/stacks.folded (*text); NULL when unreadable, caller frees
 * both. */
static void read_outputs(const char *log, const char *out_dir, char **out, char **text)
{
	char folded[1200];

	*out = tu_read_file(log, NULL);
	snprintf(folded, sizeof(folded), "%s/stacks.folded", out_dir);
	*text = tu_read_file(folded, NULL);
}

/* The number after `label` in `record -v` output, or -1. */
static long counter(const char *out, const char *label, const char *word)
{
	const char *p = out ? strstr(out, label) : NULL, *q;

	if (!p)
		return -1;
	q = strstr(p, word);
	if (!q || strchr(p, '\n') < q)
		return -1;
	while (q > p && (q[-1] == ' '))
		q--;
	while (q > p && q[-1] >= '0' && q[-1] <= '9')
		q--;
	return strtol(q, NULL, 10);
}

static bool wait_for(bool (*cond)(const void *), const void *arg, int seconds)
{
	for (int i = 0; i < seconds * 20; i++) {
		if (cond(arg))
			return true;
		usleep(50000);
	}
	return false;
}

static bool exists(const void *path)
{
	return access(path, F_OK) == 0;
}

struct maps_query {
	pid_t pid;
	const char *needle;
};

static bool maps_hold(const void *arg)
{
	const struct maps_query *q = arg;
	char path[64], *text;
	bool found;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)q->pid);
	text = read_proc(path);
	found = text && strstr(text, q->needle);
	free(text);
	return found;
}

static void test_hung_fuse_file(void **state)
{
	char *dir = tu_mkdtemp(), mnt[512], wl[400], flag[512], lib[512], server[512], exe[512],
	     busy_exe[512], out_dir[512], log[512], srcexe[512];
	char *server_argv[] = {server, lib,  "late_lib.so", flag, mnt,
			       "-f",   "-o", "allow_other", NULL};
	char *hung_argv[] = {exe, "90", "0", NULL};
	char *busy_argv[] = {busy_exe, "90", NULL};
	char *text = NULL, *out = NULL;
	pid_t srv, hung, busy, rec;
	double t0, t_done = -1, busy_cpu0, busy_cpu1, hung_cpu0, hung_cpu1;
	long busy_samples, hung_samples, abandoned;
	int status = -1, fd;
	bool exited = false;
	struct maps_query q;
	uid_t uid;
	gid_t gid;

	(void)state;
	assert_non_null(dir);
	assert_int_equal(attacker__ensure(&uid, &gid), 0);
	chmod(dir, 0755);
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	snprintf(wl, sizeof(wl), "%s/wl", dir);
	snprintf(flag, sizeof(flag), "%s/hang", dir);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	snprintf(lib, sizeof(lib), "%s/workloads/lib/late_lib.so", tu_build_dir());
	snprintf(server, sizeof(server), "%s/workloads/fuse_hang", tu_build_dir());
	snprintf(srcexe, sizeof(srcexe), "%s/workloads/dlopen_late", tu_build_dir());
	snprintf(busy_exe, sizeof(busy_exe), "%s/workloads/fp_chain", tu_build_dir());
	snprintf(exe, sizeof(exe), "%s/dlopen_late", wl);
	assert_int_equal(mkdir(mnt, 0755), 0);
	assert_int_equal(mkdir(wl, 0755), 0);
	/* dlopen_late loads lib/late_lib.so next to itself: lib is the FUSE mount. */
	assert_int_equal(tu_run(NULL, "cp %s %s && ln -s %s %s/lib", srcexe, exe, mnt, wl), 0);

	srv = fork();
	assert_true(srv >= 0);
	if (srv == 0) {
		execv(server, server_argv);
		_exit(127);
	}
	{
		char served[600];

		snprintf(served, sizeof(served), "%s/late_lib.so", mnt);
		assert_true(wait_for(exists, served, 20));
	}
	/* The attacker maps the library while the server still answers. */
	hung = attacker__spawn_ready(hung_argv, wl);
	assert_true(hung > 0);
	q = (struct maps_query){hung, "late_lib.so"};
	assert_true(wait_for(maps_hold, &q, 20));
	/* From now on every open and read of it blocks for ever. */
	fd = open(flag, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	busy = tu_spawn_ready(busy_argv);
	assert_true(busy > 0);

	busy_cpu0 = tu_cpu_seconds(busy);
	hung_cpu0 = tu_cpu_seconds(hung);
	t0 = now_s();
	rec = start_record(log, out_dir, RECORD_SECONDS, busy, hung);
	/*
	 * Done when reaped, or when its main thread exited (state Z) while a
	 * worker thread stays blocked in the hung open: the kernel keeps the
	 * process until the FUSE request is answered, which is the server's
	 * doing, not the profiler's.
	 */
	while (now_s() - t0 < RECORD_BOUND_S) {
		pid_t w = waitpid(rec, &status, WNOHANG);

		if (w == rec) {
			exited = true;
			break;
		}
		if (proc_state(rec) == 'Z') {
			break;
		}
		usleep(50000);
	}
	t_done = now_s() - t0;
	busy_cpu1 = tu_cpu_seconds(busy);
	hung_cpu1 = tu_cpu_seconds(hung);
	/* Let the stuck requests go: kill the server, unmount. */
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	umount2(mnt, MNT_DETACH);
	if (!exited) {
		if (now_s() - t0 >= RECORD_BOUND_S)
			kill(rec, SIGKILL);
		waitpid(rec, &status, 0);
	}
	tu_reap(busy);
	kill(hung, SIGKILL);
	waitpid(hung, NULL, 0);

	read_outputs(log, out_dir, &out, &text);
	busy_samples = text ? folded_samples(text, "fp_chain") : -1;
	hung_samples = text ? folded_samples(text, "dlopen_late") : -1;
	abandoned = counter(out, "file worker: jobs", "abandoned");
	print_message("record done after %.1f s (bound %d s); fp_chain %ld samples for %.2f CPU s, "
		      "dlopen_late %ld for %.2f CPU s; jobs abandoned %ld\n",
		      t_done, RECORD_BOUND_S, busy_samples, busy_cpu1 - busy_cpu0, hung_samples,
		      hung_cpu1 - hung_cpu0, abandoned);
	if (!text || abandoned < 1 || busy_samples < 20 || hung_samples < 20)
		print_message("%s\n", out ? out : "(no log)");
	tu_rmtree(dir);
	free(dir);
	free(text);
	free(out);

	assert_true(t_done < RECORD_BOUND_S);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(abandoned >= 1);
	/* Every sample of the busy process, at the rate, for the CPU it used (generous). */
	assert_true(busy_samples >=
		    (long)((busy_cpu1 - busy_cpu0) / t_done * RECORD_SECONDS * HZ * 0.4));
	assert_true(busy_samples >= 20);
	/* The process whose file hangs is still profiled (its library's frames unnamed). */
	assert_true(hung_samples >=
		    (long)((hung_cpu1 - hung_cpu0) / t_done * RECORD_SECONDS * HZ * 0.4));
	assert_true(hung_samples >= 20);
}

static bool log_says_sampling(const void *path)
{
	return tu_log_has(path, "omniprof: sampling");
}

/* A big library (its table takes a second or more to build), found through ldconfig. */
#define LLVM_SONAME   "libLLVM-14.so.1"
#define BUILD_SECONDS 15

/*
 * A process maps a copy of libLLVM (a new file id: its table is built, not
 * reused; the build takes a second or more) and then a small library it
 * spins in without frame pointers. Meanwhile another process keeps being
 * sampled (no ring-buffer loss, its samples all there), and the samples of
 * the first taken while the table is built are held and unwound complete
 * once its tables are in.
 */
static void test_long_table_build(void **state)
{
	char *dir = tu_mkdtemp(), lib[512], flag[512], log[512], out_dir[512], busy_exe[512],
	     big_exe[512], llvm_lib[512];
	char *busy_argv[] = {busy_exe, "90", NULL};
	char *big_argv[] = {big_exe, "90", lib, flag, NULL};
	struct chain_spec *cs = chain_spec__new();
	struct chain_count cc = {0};
	double t0, t_done, cpu0, cpu1;
	long busy_samples, released, ring_lost, copies_lost, builds;
	char *text, *out;
	int status = -1, fd;
	pid_t busy, big, rec;

	(void)state;
	assert_non_null(dir);
	assert_non_null(cs);
	assert_int_equal(chain_spec__add(cs, "main"), 0);
	assert_int_equal(chain_spec__add(cs, "lib_outer"), 0);
	assert_int_equal(chain_spec__add(cs, "lib_mid"), 0);
	assert_int_equal(chain_spec__add(cs, "lib_leaf"), 0);
	snprintf(lib, sizeof(lib), "%s/libbig.so", dir);
	snprintf(flag, sizeof(flag), "%s/go", dir);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	snprintf(busy_exe, sizeof(busy_exe), "%s/workloads/fp_chain", tu_build_dir());
	snprintf(big_exe, sizeof(big_exe), "%s/workloads/big_lib_chain", tu_build_dir());
	/* Bytes appended change the htlhash: a table no process on the host has loaded. */
	if (tu_system_lib(LLVM_SONAME, llvm_lib, sizeof(llvm_lib)))
		fail_msg(LLVM_SONAME " is not in the dynamic linker's cache (package llvm)");
	assert_int_equal(tu_run(NULL, "cp %s %s && echo %s >> %s", llvm_lib, lib, dir, lib), 0);

	busy = tu_spawn_ready(busy_argv);
	assert_true(busy > 0);
	big = tu_spawn_ready(big_argv);
	assert_true(big > 0);
	cpu0 = tu_cpu_seconds(busy);
	t0 = now_s();
	rec = start_record(log, out_dir, BUILD_SECONDS, busy, big);
	assert_true(wait_for(log_says_sampling, log, 60));
	sleep(1);
	/* Now it maps the big library, then spins. */
	fd = open(flag, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	while (now_s() - t0 < RECORD_BOUND_S + BUILD_SECONDS && waitpid(rec, &status, WNOHANG) == 0)
		usleep(50000);
	t_done = now_s() - t0;
	cpu1 = tu_cpu_seconds(busy);
	if (t_done >= RECORD_BOUND_S + BUILD_SECONDS) {
		kill(rec, SIGKILL);
		waitpid(rec, &status, 0);
	}
	tu_reap(busy);
	tu_reap(big);

	read_outputs(log, out_dir, &out, &text);
	busy_samples = text ? folded_samples(text, "fp_chain") : -1;
	if (text)
		cc = chain_spec__count_folded(cs, text, "big_lib_chain");
	released = counter(out, "held: records waiting for files", "released");
	ring_lost = tu_counter_after(out, "dropped: ring buffer full");
	copies_lost = tu_counter_after(out, "dropped: stack copies, ring buffer full");
	builds = counter(out, "tables: builds on the file worker", "posted");
	print_message("record done after %.1f s; fp_chain %ld samples for %.2f CPU s; "
		      "big_lib_chain %ld of %ld leaf samples complete; held released %ld; "
		      "ring lost %ld + %ld copies; builds %ld\n",
		      t_done, busy_samples, cpu1 - cpu0, cc.complete, cc.leaf, released, ring_lost,
		      copies_lost, builds);
	if (!text || cc.leaf < 20 || cc.complete * 100 < cc.leaf * 90 || released < 1)
		print_message("%s\n", out ? out : "(no log)");
	tu_rmtree(dir);
	free(dir);
	free(text);
	free(out);
	chain_spec__free(cs);

	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(builds >= 1);
	assert_int_equal(ring_lost, 0);
	assert_int_equal(copies_lost, 0);
	assert_true(busy_samples >= (long)((cpu1 - cpu0) / t_done * BUILD_SECONDS * HZ * 0.4));
	assert_true(busy_samples >= 20);
	/* Samples taken during the build were held, then unwound with the tables. */
	assert_true(released >= 1);
	assert_true(cc.leaf >= 20);
	assert_true(cc.complete * 100 >= cc.leaf * 90);
}

/* Descriptors of pid: those open on a file under dir (the mapped files) and the others. */
struct fd_count {
	int files, other;
};

static struct fd_count count_fds(pid_t pid, const char *dir)
{
	char path[64], link[PATH_MAX], target[PATH_MAX];
	struct fd_count c = {-1, -1};
	size_t dir_len = strlen(dir);
	struct dirent *de;
	ssize_t n;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return c;
	c.files = c.other = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue; /* closed since readdir saw it */
		target[n] = '\0';
		if (!strncmp(target, dir, dir_len) && target[dir_len] == '/')
			c.files++;
		else
			c.other++;
	}
	closedir(d);
	return c;
}

#define MANY_FILES 22000
/*
 * Descriptors on the mapped files: the cache keeps FILE_CACHE_MAX_FDS open;
 * the file worker holds at most FILE_WORKER_MAX_DONE finished opens not yet
 * taken by the cache (counted until the cache has taken each), plus, per
 * running thread (FILE_WORKER_THREADS and any abandoned one still blocked),
 * the job in hand: its O_PATH descriptor and the file reopened from it, and
 * the process's root when the path inside it is the fallback.
 */
#define FDS_PER_RUNNING_JOB 3
#define FDS_FILES_BOUND(threads)                                                                   \
	((int)(FILE_CACHE_MAX_FDS + FILE_WORKER_MAX_DONE + (threads)*FDS_PER_RUNNING_JOB))
/*
 * Every other descriptor, however many files a target maps: 57 seen on 2
 * CPUs (35 BPF maps, 3 programs, 4 links, the BTF; a perf event per CPU and
 * an epoll; stdio and the log, the output folder, the vDSO's memfd, the few
 * binaries the symbolizer reads), and the outputs' files while written.
 */
#define FDS_OTHER_BOUND ((int)(80 + 2 * sysconf(_SC_NPROCESSORS_CONF)))
/* Lines other than the -v counters (one "  name value" line each, a list
 * that grows with every runtime): a flood would be one per file. */
#define MAX_LOG_LINES 50

/*
 * An attacker maps 22,000 distinct small ELF files: the agent's descriptors
 * stay under the bound (least recently used closed), another process's
 * frames are all named, and the log is not flooded.
 */
static void test_many_files_bounded_fds(void **state)
{
	char *dir = tu_mkdtemp(), files[512], log[512], out_dir[512], many_exe[512], busy_exe[512],
	     n_files[16];
	char *busy_argv[] = {busy_exe, "90", NULL};
	char *many_argv[] = {many_exe, "120", files, n_files, NULL};
	struct chain_spec *cs = chain_spec__new();
	struct chain_count cc = {0};
	long truncated, log_lines = 0, counter_lines = 0;
	struct fd_count max = {0, 0};
	char files_real[PATH_MAX];
	long abandoned;
	int status = -1, max_total = 0;
	char *text, *out;
	pid_t busy, many, rec;
	double t0;
	uid_t uid;
	gid_t gid;

	(void)state;
	assert_non_null(dir);
	assert_non_null(cs);
	assert_int_equal(chain_spec__add_fp_chain(cs), 0);
	assert_int_equal(attacker__ensure(&uid, &gid), 0);
	chmod(dir, 0755);
	snprintf(files, sizeof(files), "%s/files", dir);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	snprintf(n_files, sizeof(n_files), "%d", MANY_FILES);
	snprintf(busy_exe, sizeof(busy_exe), "%s/workloads/fp_chain", tu_build_dir());
	snprintf(many_exe, sizeof(many_exe), "%s/many_files", dir);
	assert_int_equal(mkdir(files, 0755), 0);
	/* Where the attacker can run it from. */
	assert_int_equal(tu_run(NULL, "cp %s/workloads/many_files %s", tu_build_dir(), many_exe),
			 0);
	assert_int_equal(chown(files, uid, gid), 0);
	assert_non_null(realpath(files, files_real)); /* what /proc/PID/fd links say */

	many = attacker__spawn_ready(many_argv, files);
	assert_true(many > 0);
	busy = tu_spawn_ready(busy_argv);
	assert_true(busy > 0);
	t0 = now_s();
	rec = start_record(log, out_dir, RECORD_SECONDS, busy, many);
	while (now_s() - t0 < RECORD_BOUND_S + RECORD_SECONDS &&
	       waitpid(rec, &status, WNOHANG) == 0) {
		struct fd_count n = count_fds(rec, files_real);

		if (n.files > max.files)
			max.files = n.files;
		if (n.other > max.other)
			max.other = n.other;
		if (n.files + n.other > max_total)
			max_total = n.files + n.other;
		usleep(20000);
	}
	if (now_s() - t0 >= RECORD_BOUND_S + RECORD_SECONDS) {
		kill(rec, SIGKILL);
		waitpid(rec, &status, 0);
	}
	tu_reap(busy);
	kill(many, SIGKILL);
	waitpid(many, NULL, 0);

	read_outputs(log, out_dir, &out, &text);
	if (text)
		cc = chain_spec__count_folded(cs, text, "fp_chain");
	for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "") {
		if (!strncmp(p, "  ", 2))
			counter_lines++;
		else
			log_lines++;
	}
	truncated = tu_counter_after(out, "user: mappings past the cap (untracked)");
	/* A thread abandoned past the timeout may still hold its job's descriptors. */
	abandoned = counter(out, "file worker: jobs", "abandoned");
	if (abandoned < 0 || abandoned > FILE_WORKER_MAX_ABANDONED)
		abandoned = FILE_WORKER_MAX_ABANDONED;
	print_message(
	    "at most %d descriptors: %d on the mapped files (bound %d, %ld thread(s) "
	    "abandoned), %d others (bound %d); fp_chain %ld of %ld leaf samples "
	    "complete; %ld log lines (and %ld counter lines); %ld mappings past the cap\n",
	    max_total, max.files, FDS_FILES_BOUND(FILE_WORKER_THREADS + abandoned), abandoned,
	    max.other, FDS_OTHER_BOUND, cc.complete, cc.leaf, log_lines, counter_lines, truncated);
	if (cc.leaf < 20 || log_lines > MAX_LOG_LINES)
		print_message("%s\n", out ? out : "(no log)");
	tu_rmtree(dir);
	free(dir);
	free(text);
	free(out);
	chain_spec__free(cs);

	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The cache filled (the bound was tested) and no descriptor escaped it. */
	assert_true(max.files >= FILE_CACHE_MAX_FDS);
	assert_true(max.files <= FDS_FILES_BOUND(FILE_WORKER_THREADS + abandoned));
	assert_true(max.other <= FDS_OTHER_BOUND);
	assert_true(truncated >= 1);
	assert_true(cc.leaf >= 20);
	assert_true(cc.complete * 100 >= cc.leaf * 95);
	assert_true(log_lines <= MAX_LOG_LINES);
}

/* A fuse_hang server serving late_lib.so at dir/mntN, and a copy of dlopen_late at dir/wlN
 * whose lib/ is that mount; the server's pid. */
static pid_t fuse_served_copy(const char *dir, int n, char *mnt, size_t mnt_len, char *flag,
			      size_t flag_len, char *exe, size_t exe_len)
{
	char wl[400], lib[512], server[512], served[600];
	char *server_argv[] = {server, lib, "late_lib.so", flag, mnt, "-f", NULL};
	pid_t srv;

	snprintf(mnt, mnt_len, "%s/mnt%d", dir, n);
	snprintf(flag, flag_len, "%s/hang%d", dir, n);
	snprintf(wl, sizeof(wl), "%s/wl%d", dir, n);
	snprintf(exe, exe_len, "%s/dlopen_late", wl);
	snprintf(lib, sizeof(lib), "%s/workloads/lib/late_lib.so", tu_build_dir());
	snprintf(server, sizeof(server), "%s/workloads/fuse_hang", tu_build_dir());
	assert_int_equal(mkdir(mnt, 0755), 0);
	assert_int_equal(mkdir(wl, 0755), 0);
	assert_int_equal(tu_run(NULL, "cp %s/workloads/dlopen_late %s && ln -s %s %s/lib",
				tu_build_dir(), exe, mnt, wl),
			 0);
	srv = fork();
	assert_true(srv >= 0);
	if (srv == 0) {
		execv(server, server_argv);
		_exit(127);
	}
	snprintf(served, sizeof(served), "%s/late_lib.so", mnt);
	assert_true(wait_for(exists, served, 20));
	return srv;
}

/*
 * A file is opened through the process that mapped it. Here both worker
 * threads hang on two FUSE files (processes H1, H2) while the opens of a
 * third process's files wait behind them; that process (A) is killed
 * meanwhile, so when the hung opens are abandoned its files' opens run
 * through a process that is gone, and fail. C, started after A, maps the same
 * files all along; B, started after the failure, too: they are opened again
 * through them, and their samples are walked and named as any (before: the
 * failure was kept while any process used the files, the library had no
 * range and no names, and the samples came as stack copies walked without a
 * table; a CI run's clang++ loop lost its whole warm recording so).
 */
static void test_open_again_after_opener_gone(void **state)
{
	char *dir = tu_mkdtemp(), mnt[2][512], flag[2][512], hung_exe[2][512], exe[512], exe_b[512],
	     wl[400], log[512], out_dir[512], build[PATH_MAX], secs_h[] = "7", secs_a[] = "60",
	     delay[] = "0";
	char *hung_argv[2][4] = {{hung_exe[0], secs_h, delay, NULL},
				 {hung_exe[1], secs_h, delay, NULL}};
	char *argv[] = {exe, secs_a, delay, NULL}, *b_argv[] = {exe_b, secs_a, delay, NULL};
	char *rec_argv[] = {
	    tu_omniprof_path(),	  "record", "-v",    "-F", "99", "-d", "14", "--comm",
	    "^dlopen_late(_b)?$", "-o",	    out_dir, NULL};
	struct chain_spec *cs = chain_spec__new();
	struct chain_count cc = {0}, cc_c = {0};
	pid_t srv[2], hung[2], a, b, c, rec;
	long reopened, timed_out;
	char *text = NULL, *out = NULL;
	int status = -1, fd;

	(void)state;
	assert_non_null(dir);
	assert_non_null(cs);
	/* From the root: a walk that stopped has no _start. */
	assert_int_equal(chain_spec__add(cs, "_start"), 0);
	assert_int_equal(chain_spec__add(cs, "__libc_start_main"), 0);
	assert_int_equal(chain_spec__add(cs, "__libc_start_call_main"), 0);
	assert_int_equal(chain_spec__add(cs, "main"), 0);
	assert_int_equal(chain_spec__add(cs, "run_late"), 0);
	assert_int_equal(chain_spec__add(cs, "lib_outer"), 0);
	assert_int_equal(chain_spec__add(cs, "lib_mid"), 0);
	assert_int_equal(chain_spec__add(cs, "lib_leaf"), 0);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	for (int i = 0; i < 2; i++) {
		struct maps_query q;

		srv[i] = fuse_served_copy(dir, i + 1, mnt[i], sizeof(mnt[i]), flag[i],
					  sizeof(flag[i]), hung_exe[i], sizeof(hung_exe[i]));
		hung[i] = tu_spawn_ready(hung_argv[i]);
		assert_true(hung[i] > 0);
		q = (struct maps_query){hung[i], "late_lib.so"};
		assert_true(wait_for(maps_hold, &q, 20));
		/* From now on every open and read of the served file blocks. */
		fd = open(flag[i], O_CREAT | O_WRONLY, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	/* A and B: the same program and library (the real one), started last. */
	snprintf(wl, sizeof(wl), "%s/wl", dir);
	snprintf(exe, sizeof(exe), "%s/dlopen_late", wl);
	/* B's own name (a hard link): its samples told from C's. */
	snprintf(exe_b, sizeof(exe_b), "%s/dlopen_late_b", wl);
	assert_int_equal(mkdir(wl, 0755), 0);
	assert_non_null(realpath(tu_build_dir(), build)); /* the link is read from wl/ */
	assert_int_equal(
	    tu_run(NULL,
		   "cp %s/workloads/dlopen_late %s && ln %s %s && ln -s %s/workloads/lib %s/lib",
		   build, exe, exe, exe_b, build, wl),
	    0);
	a = tu_spawn_ready(argv);
	assert_true(a > 0);
	{
		struct maps_query q = {a, "late_lib.so"};

		assert_true(wait_for(maps_hold, &q, 20));
	}
	/* C keeps using A's files after A is gone (the next compiler of a loop): a file no
	 * process uses is forgotten, and a failure with it. */
	c = tu_spawn_ready(argv);
	assert_true(c > 0);
	{
		struct maps_query q = {c, "late_lib.so"};

		assert_true(wait_for(maps_hold, &q, 20));
	}

	rec = tu_spawn_logged(rec_argv, log, 0644, false);
	assert_true(rec > 0);
	/* The start-up scan posted every file's open (H1's and H2's hang both threads): A goes. */
	assert_true(wait_for(log_says_sampling, log, 60));
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	/* The hung opens abandoned (5 s), A's ran and failed: B maps the same files. */
	for (int i = 0; i < 200 && !tu_log_has(log, "took over the timeout"); i++)
		usleep(50000);
	usleep(500000);
	b = tu_spawn_ready(b_argv);
	assert_true(b > 0);
	/*
	 * The stuck requests go (their threads were replaced): the record's
	 * exit is not held by a thread blocked in the kernel for the server.
	 */
	for (int i = 0; i < 2; i++) {
		kill(hung[i], SIGKILL);
		waitpid(hung[i], NULL, 0);
		kill(srv[i], SIGKILL);
		waitpid(srv[i], NULL, 0);
		umount2(mnt[i], MNT_DETACH);
	}
	assert_int_equal(waitpid(rec, &status, 0), rec);
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);

	read_outputs(log, out_dir, &out, &text);
	reopened = counter(out, "user: files that could not be opened", "opened again");
	timed_out = counter(out, "user: file opens on the file worker", "timed out");
	if (text) {
		cc = chain_spec__count_folded(cs, text, "dlopen_late_b");
		cc_c = chain_spec__count_folded(cs, text, "dlopen_late");
	}
	print_message("opens timed out %ld, files opened again through another process %ld; B: "
		      "%ld samples with lib_leaf named, %ld of them the whole chain from a root "
		      "(C, A: %ld, %ld; C's samples held while it waited for the hung opens "
		      "overflowed)\n",
		      timed_out, reopened, cc.leaf, cc.complete, cc_c.leaf, cc_c.complete);
	if (!text || cc.leaf < 40 || reopened < 1 || cc.complete < cc.leaf * 9 / 10)
		print_message("%s\n", out ? out : "(no log)");
	tu_rmtree(dir);
	free(dir);
	free(text);
	free(out);
	chain_spec__free(cs);

	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The scenario happened: the hung opens were abandoned, A's files opened again. */
	assert_true(timed_out >= 2);
	assert_true(reopened >= 1);
	/* B, the next process of the program, ran seconds at 99 Hz: named, and whole. */
	assert_true(cc.leaf >= 40);
	assert_true(cc.complete >= cc.leaf * 9 / 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hung_fuse_file),
	    cmocka_unit_test(test_long_table_build),
	    cmocka_unit_test(test_many_files_bounded_fds),
	    cmocka_unit_test(test_open_again_after_opener_gone),
	};

	return cmocka_run_group_tests_name("e2e_file_worker", tests, NULL, NULL);
}
