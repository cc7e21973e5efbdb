// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end: `omniprof record -o DIR` against an attacker (the unprivileged
 * account of tests/lib/attacker.h) and against crashes and full disks.
 *
 * - links the attacker plants in the output folder, pointing at root-owned
 *   victim files, never write to the victims: the folder is refused when the
 *   attacker can still write to it, and when it has become ours the links are
 *   replaced by real files of ours;
 * - foreign, group/other-writable and sticky folders, /tmp and a symlink to a
 *   folder are refused with one error line and nothing written;
 * - record killed with SIGKILL at varied moments of its write phase leaves
 *   one whole set, every file parseable and all three from the same run;
 * - a full tmpfs gives one error line, a non-zero exit and no partial file
 *   (the previous set, if any, whole).
 * Needs root and BPF: without them the tests fail.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "attacker.h"
#include "profile.pb-c.h"
#include "omniprof_run.h"
#include "testutil.h"

static const char *const set_names[] = {"profile.pb.gz", "stacks.folded", "flamegraph.html"};
#define N_SET 3

/* Every name an attacker could hope we open: the old write test and temporary, the
 * final names, and the names of the new writer's switch link, temporaries and
 * generations. */
static const char *const trap_names[] = {
    ".omniprof-write-test",
    "profile.pb.gz",
    "profile.pb.gz.tmp",
    "stacks.folded",
    "flamegraph.html",
    ".omniprof-current",
    ".omniprof-tmp.0000000000000001",
    ".omniprof-set.0000000000000001",
};
#define N_TRAPS (sizeof(trap_names) / sizeof(trap_names[0]))

static int count_lines_with(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; p && (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* ---- victims and traps ------------------------------------------------------------ */

struct victims {
	char dir[256];
	char path[N_TRAPS][320];
	char text[N_TRAPS][64];
};

/* Root-owned files with known content, one per trap name. */
static void victims__make(struct victims *v, const char *base)
{
	snprintf(v->dir, sizeof(v->dir), "%s/victims", base);
	assert_int_equal(mkdir(v->dir, 0755), 0);
	for (size_t i = 0; i < N_TRAPS; i++) {
		snprintf(v->path[i], sizeof(v->path[i]), "%s/victim%zu", v->dir, i);
		snprintf(v->text[i], sizeof(v->text[i]), "root's file %zu, keep me\n", i);
		assert_int_equal(tu_write_file(v->path[i], v->text[i]), 0);
	}
}

static void victims__assert_unchanged(const struct victims *v)
{
	for (size_t i = 0; i < N_TRAPS; i++) {
		struct stat st;
		size_t len;
		char *got = tu_read_file(v->path[i], &len);

		assert_non_null(got);
		assert_int_equal(len, strlen(v->text[i]));
		assert_memory_equal(got, v->text[i], len);
		free(got);
		assert_int_equal(stat(v->path[i], &st), 0);
		assert_int_equal(st.st_uid, 0);
	}
	assert_int_equal(tu_count_entries(v->dir), (int)N_TRAPS);
}

/* The attacker plants dir/<trap name> -> victim for every trap name. */
static void plant_traps(const char *dir, const struct victims *v)
{
	for (size_t i = 0; i < N_TRAPS; i++) {
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "ln -s '%s' '%s/%s'", v->path[i], dir, trap_names[i]);
		assert_int_equal(attacker__system(cmd), 0);
	}
}

/* Every trap is still the attacker's link to its victim: nothing replaced it. */
static void assert_traps_untouched(const char *dir, const struct victims *v, uid_t attacker)
{
	for (size_t i = 0; i < N_TRAPS; i++) {
		char path[512], target[512];
		struct stat st;
		ssize_t n;

		snprintf(path, sizeof(path), "%s/%s", dir, trap_names[i]);
		assert_int_equal(lstat(path, &st), 0);
		assert_true(S_ISLNK(st.st_mode));
		assert_int_equal(st.st_uid, attacker);
		n = readlink(path, target, sizeof(target) - 1);
		assert_true(n > 0);
		target[n] = '\0';
		assert_string_equal(target, v->path[i]);
	}
	assert_int_equal(tu_count_entries(dir), (int)N_TRAPS);
}

/* A folder the attacker can reach (the test's base is 0700 otherwise). */
static char *reachable_base(void)
{
	char *base = tu_mkdtemp();

	assert_non_null(base);
	assert_int_equal(chmod(base, 0755), 0);
	return base;
}

static void expect_refused(const char *dir, const char *must_say)
{
	char *out = NULL;
	int rc = tu_run(&out, "%s record -d 1 -o %s", tu_omniprof_path(), dir);

	printf("    -o %s: exit %d: %s", dir, rc, out ? out : "(no output)\n");
	assert_true(rc != 0);
	assert_non_null(out);
	assert_int_equal(count_lines_with(out, "error:"), 1);
	assert_non_null(strstr(out, "cannot write to output folder"));
	assert_non_null(strstr(out, must_say));
	free(out);
}

/*
 * Plants the traps in dir, expects record to refuse it saying must_say, and
 * checks the victims and traps kept their bytes; then removes base and frees it.
 */
static void expect_traps_refused(char *base, const char *dir, const struct victims *v, uid_t uid,
				 const char *must_say)
{
	plant_traps(dir, v);
	expect_refused(dir, must_say);
	victims__assert_unchanged(v);
	assert_traps_untouched(dir, v, uid);
	tu_rmtree(base);
	free(base);
}

/* ---- planted links ---------------------------------------------------------------- */

/* The folder is writable by everyone (the attacker planted the links there): refused. */
static void test_traps_in_world_writable_folder(void **state)
{
	char *base = reachable_base(), dir[256];
	struct victims v;
	uid_t uid;
	gid_t gid;

	(void)state;
	assert_int_equal(attacker__ensure(&uid, &gid), 0);
	victims__make(&v, base);
	snprintf(dir, sizeof(dir), "%s/out", base);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	expect_traps_refused(base, dir, &v, uid, "other users may write to it");
}

/* The folder belongs to the attacker: refused. */
static void test_traps_in_attacker_folder(void **state)
{
	char *base = reachable_base(), dir[256], cmd[512];
	struct victims v;
	uid_t uid;
	gid_t gid;

	(void)state;
	assert_int_equal(attacker__ensure(&uid, &gid), 0);
	victims__make(&v, base);
	assert_int_equal(chmod(base, 01777), 0); /* the attacker makes its own folder */
	snprintf(dir, sizeof(dir), "%s/out", base);
	snprintf(cmd, sizeof(cmd), "mkdir -m 0755 '%s'", dir);
	assert_int_equal(attacker__system(cmd), 0);
	expect_traps_refused(base, dir, &v, uid, "belongs to uid");
}

/*
 * The links were planted while the folder was open to everyone; it has since
 * been made root's 0755 again, so record accepts it: every trap is replaced by
 * a name of ours (never written through), the victims keep their bytes, and
 * the leftovers are removed.
 */
static void test_traps_left_in_own_folder(void **state)
{
	char *base = reachable_base(), dir[256], *out = NULL;
	pid_t wl = tu_workload_start("fp_chain", 30);
	struct victims v;
	uid_t uid;
	gid_t gid;
	int rc;

	(void)state;
	assert_true(wl > 0);
	assert_int_equal(attacker__ensure(&uid, &gid), 0);
	victims__make(&v, base);
	snprintf(dir, sizeof(dir), "%s/out", base);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	plant_traps(dir, &v);
	assert_int_equal(chmod(dir, 0755), 0);

	rc = tu_run(&out, "%s record -d 1 -p %d -o %s", tu_omniprof_path(), wl, dir);
	tu_reap(wl);
	if (rc)
		print_error("record failed (%d):\n%s\n", rc, out ? out : "");
	assert_int_equal(rc, 0);
	free(out);
	victims__assert_unchanged(&v);
	for (size_t i = 0; i < N_SET; i++) {
		char path[512], target[512], want[128], real[PATH_MAX], gen_prefix[PATH_MAX];
		struct stat st;
		ssize_t n;

		snprintf(path, sizeof(path), "%s/%s", dir, set_names[i]);
		n = readlink(path, target, sizeof(target) - 1);
		assert_true(n > 0);
		target[n] = '\0';
		snprintf(want, sizeof(want), ".omniprof-current/%s", set_names[i]);
		assert_string_equal(target, want);
		/* it resolves to a regular root file inside the folder */
		assert_non_null(realpath(path, real));
		/* realpath of the folder, then our generation prefix */
		assert_non_null(realpath(dir, gen_prefix));
		assert_true(strlen(gen_prefix) + 16 < sizeof(gen_prefix));
		strcat(gen_prefix, "/.omniprof-set.");
		assert_int_equal(strncmp(real, gen_prefix, strlen(gen_prefix)), 0);
		assert_int_equal(lstat(real, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_uid, 0);
		assert_true(st.st_size > 0);
	}
	/* the other traps are gone (the old write-test name, temporaries, the old
	 * generation name) or replaced (the switch link) */
	assert_int_equal(tu_count_entries(dir), N_SET + 2);
	assert_int_equal(tu_count_prefix(dir, ".omniprof-set."), 1);
	assert_int_equal(tu_count_prefix(dir, ".omniprof-tmp."), 0);
	tu_rmtree(base);
	free(base);
}

/* ---- refused folders ---------------------------------------------------------------- */

/* base/NAME made with mode is refused, saying must_say, and left empty. */
static void expect_mode_refused(const char *base, const char *name, mode_t mode,
				const char *must_say)
{
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/%s", base, name);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(dir, mode), 0);
	expect_refused(dir, must_say);
	assert_int_equal(tu_count_entries(dir), 0);
}

static void test_refused_folders(void **state)
{
	char *base = reachable_base(), dir[256], link[256];
	const char *tmp_names[] = {"/tmp/profile.pb.gz", "/tmp/stacks.folded",
				   "/tmp/flamegraph.html", "/tmp/.omniprof-current"};
	bool tmp_had[4];
	uid_t uid;
	gid_t gid;

	(void)state;
	assert_int_equal(attacker__ensure(&uid, &gid), 0);
	snprintf(dir, sizeof(dir), "%s/attackers", base);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chown(dir, uid, gid), 0);
	expect_refused(dir, "belongs to uid");
	assert_int_equal(tu_count_entries(dir), 0);

	expect_mode_refused(base, "group", 0775, "other users may write to it");
	expect_mode_refused(base, "other", 0757, "other users may write to it");
	/* like /tmp: sticky does not make it ours */
	expect_mode_refused(base, "sticky", 01777, "other users may write to it");

	for (int i = 0; i < 4; i++)
		tmp_had[i] = access(tmp_names[i], F_OK) == 0;
	expect_refused("/tmp", "other users may write to it");
	for (int i = 0; i < 4; i++)
		if (!tmp_had[i])
			assert_int_equal(access(tmp_names[i], F_OK), -1);

	/* a link to a good folder, made by root itself, is still refused */
	snprintf(dir, sizeof(dir), "%s/good", base);
	snprintf(link, sizeof(link), "%s/link", base);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(symlink(dir, link), 0);
	expect_refused(link, "symbolic link");
	assert_int_equal(tu_count_entries(dir), 0);
	tu_rmtree(base);
	free(base);
}

/* ---- a whole set ------------------------------------------------------------------- */

struct set_totals {
	int64_t pprof, folded, html;
};

/* Reads DIR's set through its final names; every file must parse. */
static void read_set(const char *dir, struct set_totals *t)
{
	char path[512], *text, *p;
	Perftools__Profiles__Profile *prof;
	uint8_t *buf = malloc(64 << 20);
	size_t len = 0;
	gzFile gz;
	int got;

	assert_non_null(buf);
	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/profile.pb.gz", dir);
	gz = gzopen(path, "rb");
	assert_non_null(gz);
	while ((got = gzread(gz, buf + len, (unsigned)((64 << 20) - len))) > 0)
		len += (size_t)got;
	assert_int_equal(got, 0);
	assert_int_equal(gzclose(gz), Z_OK);
	prof = perftools__profiles__profile__unpack(NULL, len, buf);
	assert_non_null(prof);
	assert_int_equal(prof->n_sample_type, 2);
	for (size_t i = 0; i < prof->n_sample; i++) {
		assert_true(prof->sample[i]->n_value >= 1);
		t->pprof += prof->sample[i]->value[0];
	}
	perftools__profiles__profile__free_unpacked(prof, NULL);
	free(buf);

	snprintf(path, sizeof(path), "%s/stacks.folded", dir);
	text = tu_read_file(path, &len);
	assert_non_null(text);
	assert_true(len == 0 || text[len - 1] == '\n');
	for (char *line = text; *line; line = p + 1) {
		char *sp, *end;
		long count;

		p = strchr(line, '\n');
		assert_non_null(p);
		*p = '\0';
		sp = strrchr(line, ' ');
		assert_non_null(sp);
		assert_true(sp > line);
		count = strtol(sp + 1, &end, 10);
		assert_true(*end == '\0' && end > sp + 1 && count > 0);
		t->folded += count;
	}
	free(text);

	snprintf(path, sizeof(path), "%s/flamegraph.html", dir);
	text = tu_read_file(path, &len);
	assert_non_null(text);
	assert_true(len > 16);
	assert_non_null(strstr(text + len - 16, "</html>"));
	p = strstr(text, "\"total\":");
	assert_non_null(p);
	t->html = strtoll(p + 8, NULL, 10);
	free(text);
}

static void current_gen(const char *dir, char *buf, size_t len)
{
	char path[512];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/.omniprof-current", dir);
	n = readlink(path, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
}

#define KILL_RUNS 24
#define PAUSE_MS  100
#define N_STEPS	  8 /* clean, 3 files, links, switch, relink, remove-old */

/* Starts record with the step pauses and waits for its first step line. Its stderr
 * stays open in *err (the caller closes it after the kill: a closed pipe would
 * end record with SIGPIPE at its next step line). */
static pid_t start_paused_record(const char *dir, pid_t wl, FILE **err)
{
	char pidarg[16], line[256];
	int fds[2];
	pid_t pid;
	FILE *f;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);
		char ms[16];

		dup2(null, 1);
		dup2(fds[1], 2);
		close(fds[0]);
		snprintf(pidarg, sizeof(pidarg), "%d", wl);
		snprintf(ms, sizeof(ms), "%d", PAUSE_MS);
		setenv("OMNIPROF_TEST_OUTPUT_PAUSE_MS", ms, 1);
		execl(tu_omniprof_path(), "omniprof", "record", "-d", "1", "-F", "199", "-p",
		      pidarg, "-o", dir, NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	assert_non_null(f);
	for (;;) {
		assert_non_null(fgets(line, sizeof(line), f));
		if (strstr(line, "omniprof-test: output step "))
			break;
	}
	/* The rest of its stderr is not read: it writes at most a few short lines, well
	 * within the pipe's buffer. */
	*err = f;
	return pid;
}

static void test_kill_during_write_leaves_whole_set(void **state)
{
	char *base = tu_mkdtemp(), dir[256], *out = NULL, gen[128], gen_before[128];
	pid_t wl = tu_workload_start("fp_chain", 600);
	struct set_totals prev, t;
	int kept_old = 0, got_new = 0, status, rc;

	(void)state;
	assert_true(wl > 0);
	snprintf(dir, sizeof(dir), "%s/out", base);
	rc = tu_run(&out, "%s record -d 1 -p %d -o %s", tu_omniprof_path(), wl, dir);
	if (rc)
		print_error("record failed (%d):\n%s\n", rc, out ? out : "");
	assert_int_equal(rc, 0);
	free(out);
	read_set(dir, &prev);
	assert_true(prev.pprof == prev.folded && prev.folded == prev.html);

	for (int i = 0; i < KILL_RUNS; i++) {
		/* Spread over the whole write phase, one step's pause and a bit more. */
		int delay_ms = (i * (N_STEPS * PAUSE_MS + 200)) / KILL_RUNS;
		struct timespec ts = {delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L};
		FILE *err;
		pid_t rec;

		current_gen(dir, gen_before, sizeof(gen_before));
		rec = start_paused_record(dir, wl, &err);
		nanosleep(&ts, NULL);
		kill(rec, SIGKILL);
		assert_int_equal(waitpid(rec, &status, 0), rec);
		fclose(err);

		read_set(dir, &t);
		current_gen(dir, gen, sizeof(gen));
		printf("    run %2d killed %3d ms into the write phase (%s): totals pprof %" PRId64
		       ", folded %" PRId64 ", html %" PRId64 "\n",
		       i, delay_ms,
		       !WIFSIGNALED(status)	 ? "had finished"
		       : strcmp(gen, gen_before) ? "new set"
						 : "previous set",
		       t.pprof, t.folded, t.html);
		/* all three from the same run */
		assert_true(t.pprof == t.folded && t.folded == t.html);
		if (!strcmp(gen, gen_before)) {
			kept_old++;
			assert_true(t.pprof == prev.pprof);
		} else {
			got_new++;
		}
		prev = t;
	}
	/* The kills landed on both sides of the switch. */
	assert_true(kept_old > 0);
	assert_true(got_new > 0);

	/* The next run removes what the killed runs left. */
	rc = tu_run(&out, "%s record -d 1 -p %d -o %s", tu_omniprof_path(), wl, dir);
	tu_reap(wl);
	assert_int_equal(rc, 0);
	free(out);
	read_set(dir, &t);
	assert_true(t.pprof == t.folded && t.folded == t.html);
	assert_int_equal(tu_count_prefix(dir, ".omniprof-set."), 1);
	assert_int_equal(tu_count_prefix(dir, ".omniprof-tmp."), 0);
	assert_int_equal(tu_count_entries(dir), N_SET + 2);
	tu_rmtree(base);
	free(base);
}

/* ---- a full disk ------------------------------------------------------------------- */

static void expect_enospc(const char *dir, pid_t wl)
{
	char *out = NULL;
	int rc = tu_run(&out, "%s record -d 1 -p %d -o %s", tu_omniprof_path(), wl, dir);

	printf("    full tmpfs: exit %d: %s", rc, out ? out : "(no output)\n");
	assert_true(rc != 0);
	assert_non_null(out);
	assert_int_equal(count_lines_with(out, "error:"), 1);
	assert_non_null(strstr(out, "No space left on device"));
	assert_non_null(strstr(out, "cannot write "));
	free(out);
	assert_int_equal(tu_count_prefix(dir, ".omniprof-tmp."), 0);
}

static void test_enospc(void **state)
{
	char *base = tu_mkdtemp(), *out = NULL, filler[512], *before[N_SET];
	size_t before_len[N_SET];
	pid_t wl = tu_workload_start("fp_chain", 120);
	struct statvfs vfs;
	struct set_totals t;
	int rc;

	(void)state;
	assert_true(wl > 0);
	/* Too small for the flame graph page alone: nothing can be presented. */
	assert_int_equal(tu_tmpfs_mount(base, "16k"), 0);
	expect_enospc(base, wl);
	for (int i = 0; i < N_SET; i++) {
		char path[512];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", base, set_names[i]);
		assert_int_equal(lstat(path, &st), -1);
	}
	assert_int_equal(tu_count_entries(base), 0);
	assert_int_equal(tu_tmpfs_unmount(), 0);

	/* The previous set fits; the new one does not. */
	assert_int_equal(tu_tmpfs_mount(base, "64k"), 0);
	rc = tu_run(&out, "%s record -d 1 -p %d -o %s", tu_omniprof_path(), wl, base);
	if (rc)
		print_error("record failed (%d):\n%s\n", rc, out ? out : "");
	assert_int_equal(rc, 0);
	free(out);
	for (int i = 0; i < N_SET; i++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s", base, set_names[i]);
		before[i] = tu_read_file(path, &before_len[i]);
		assert_non_null(before[i]);
	}
	/* Leave about 8 KiB: less than the flame graph page of the next set. */
	assert_int_equal(statvfs(base, &vfs), 0);
	snprintf(filler, sizeof(filler), "%s/filler", base);
	{
		size_t free_bytes = (size_t)vfs.f_bavail * vfs.f_bsize;
		size_t n = free_bytes > 8192 ? free_bytes - 8192 : 0;
		char *zeros = calloc(1, n + 1);
		FILE *f = fopen(filler, "w");

		assert_non_null(zeros);
		assert_non_null(f);
		assert_int_equal(fwrite(zeros, 1, n, f), n);
		assert_int_equal(fclose(f), 0);
		free(zeros);
	}
	expect_enospc(base, wl);
	tu_reap(wl);
	for (int i = 0; i < N_SET; i++) {
		char path[512];
		size_t len;
		char *now;

		snprintf(path, sizeof(path), "%s/%s", base, set_names[i]);
		now = tu_read_file(path, &len);
		assert_non_null(now);
		assert_int_equal(len, before_len[i]);
		assert_memory_equal(now, before[i], len);
		free(now);
		free(before[i]);
	}
	read_set(base, &t);
	assert_true(t.pprof == t.folded && t.folded == t.html);
	assert_int_equal(tu_count_prefix(base, ".omniprof-set."), 1);
	assert_int_equal(tu_tmpfs_unmount(), 0);
	tu_rmtree(base);
	free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_traps_in_world_writable_folder),
	    cmocka_unit_test(test_traps_in_attacker_folder),
	    cmocka_unit_test(test_traps_left_in_own_folder),
	    cmocka_unit_test(test_refused_folders),
	    cmocka_unit_test(test_kill_during_write_leaves_whole_set),
	    cmocka_unit_test_teardown(test_enospc, tu_tmpfs_teardown),
	};

	return cmocka_run_group_tests_name("e2e_outputs", tests, NULL, NULL);
}
