// SPDX-License-Identifier: Apache-2.0
/*
 * The output writer (src/export/output_set.c) on real folders: the folder
 * rules, the order in which a set becomes visible (a child paused and killed
 * at every step), removal of what killed runs left, planted links never
 * followed, and a full disk (a small tmpfs) leaving the previous set whole.
 * Runs as root (the tests chown, chmod and mount).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "export/output_set.h"
#include "testutil.h"

static const char *const names[] = {"profile.pb.gz", "stacks.folded", "flamegraph.html"};
#define N_NAMES 3

struct content {
	const char *tag; /* what every file of the set starts with */
	size_t bytes;	 /* total size of each file */
	int fail_at;	 /* index of the item whose writer fails (-1: none) */
	int fail_err;
};

struct item_ctx {
	const struct content *c;
	int index;
};

static int write_item(int fd, void *ctx)
{
	const struct item_ctx *ic = ctx;
	char buf[4096];
	size_t left = ic->c->bytes;
	int n = snprintf(buf, sizeof(buf), "%s %s\n", ic->c->tag, names[ic->index]);

	if (ic->index == ic->c->fail_at)
		return ic->c->fail_err;
	if (write(fd, buf, (size_t)n) != n)
		return -errno;
	left = left > (size_t)n ? left - (size_t)n : 0;
	memset(buf, 'x', sizeof(buf));
	while (left) {
		size_t part = left < sizeof(buf) ? left : sizeof(buf);
		ssize_t w = write(fd, buf, part);

		if (w < 0)
			return -errno;
		left -= (size_t)w;
	}
	return 0;
}

static int write_set(const char *dir, const struct content *c)
{
	struct output_dir d;
	struct item_ctx ctx[N_NAMES];
	struct output_item items[N_NAMES];
	int err = output_dir__open(&d, dir, OUTPUT_DIR_CREATE);

	if (err)
		return err;
	for (int i = 0; i < N_NAMES; i++) {
		ctx[i] = (struct item_ctx){c, i};
		items[i] = (struct output_item){names[i], write_item, &ctx[i]};
	}
	err = output_set__write(&d, items, N_NAMES);
	output_dir__close(&d);
	return err;
}

/* The tag of the set a reader sees through the final names: the common tag, "" when
 * no name resolves, "MIXED" when files of different sets or some missing are seen. */
static void visible_set(const char *dir, char *tag, size_t len)
{
	int found = 0;

	tag[0] = '\0';
	for (int i = 0; i < N_NAMES; i++) {
		char path[512], *text, first[64] = "", want[128];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		text = tu_read_file(path, NULL);
		if (!text)
			continue;
		sscanf(text, "%63s", first);
		snprintf(want, sizeof(want), "%s %s\n", first, names[i]);
		if (strncmp(text, want, strlen(want)))
			snprintf(first, sizeof(first), "BAD");
		free(text);
		if (found++ && strcmp(first, tag)) {
			snprintf(tag, len, "MIXED");
			return;
		}
		snprintf(tag, len, "%s", first);
	}
	if (found && found != N_NAMES)
		snprintf(tag, len, "MIXED");
}

static void assert_file_is(const char *path, const char *text)
{
	char *got = tu_read_file(path, NULL);

	assert_non_null(got);
	assert_string_equal(got, text);
	free(got);
}

static void assert_clean(const char *dir)
{
	assert_int_equal(tu_count_prefix(dir, OUTPUT_TMP_PREFIX), 0);
	assert_int_equal(tu_count_prefix(dir, OUTPUT_SET_GEN_PREFIX), 1);
}

/* ---- writing sets --------------------------------------------------------------- */

static void test_set_replaces_previous(void **state)
{
	char *base = tu_mkdtemp(), dir[256], tag[64], link[512], target[512];
	struct content one = {"one", 100, -1, 0}, two = {"two", 5000, -1, 0};
	ssize_t n;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/a/b/out", base);
	assert_int_equal(write_set(dir, &one), 0);
	visible_set(dir, tag, sizeof(tag));
	assert_string_equal(tag, "one");
	assert_clean(dir);
	assert_int_equal(write_set(dir, &two), 0);
	visible_set(dir, tag, sizeof(tag));
	assert_string_equal(tag, "two");
	/* the first generation is gone, only one remains */
	assert_clean(dir);
	snprintf(link, sizeof(link), "%s/stacks.folded", dir);
	n = readlink(link, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_string_equal(target, OUTPUT_SET_CURRENT "/stacks.folded");
	tu_rmtree(base);
	free(base);
}

/* A writer failing (the fault hook: its -errno) leaves the previous set and no
 * temporaries; EIO and ENOSPC alike. */
static void test_failed_write_keeps_previous(void **state)
{
	char *base = tu_mkdtemp(), tag[64];
	struct content one = {"one", 100, -1, 0};
	struct content bad_eio = {"two", 100, 1, -EIO}, bad_nospc = {"three", 100, 2, -ENOSPC};

	(void)state;
	assert_int_equal(write_set(base, &bad_eio), -EIO);
	visible_set(base, tag, sizeof(tag));
	assert_string_equal(tag, "");
	assert_int_equal(tu_count_prefix(base, OUTPUT_SET_GEN_PREFIX), 0);
	assert_int_equal(tu_count_prefix(base, OUTPUT_TMP_PREFIX), 0);

	assert_int_equal(write_set(base, &one), 0);
	assert_int_equal(write_set(base, &bad_eio), -EIO);
	assert_int_equal(write_set(base, &bad_nospc), -ENOSPC);
	visible_set(base, tag, sizeof(tag));
	assert_string_equal(tag, "one");
	assert_clean(base);
	tu_rmtree(base);
	free(base);
}

/*
 * The order: a child writes set "two" over "one", pausing before every step;
 * it is killed with SIGKILL in each pause in turn. Whatever step it died
 * before, a reader sees all of "one" or all of "two", and the next run leaves
 * exactly one generation and no temporaries.
 */
static void test_kill_at_every_step(void **state)
{
	char *base = tu_mkdtemp();
	int seen_one = 0, seen_two = 0, steps_total = -1;

	(void)state;
	for (int kill_at = 0;; kill_at++) {
		struct content one = {"one", 3000, -1, 0}, two = {"two", 3000, -1, 0};
		char dir[256], tag[64], line[256];
		int pipefd[2], status, step = 0;
		bool killed = false;
		FILE *f;
		pid_t pid;

		snprintf(dir, sizeof(dir), "%s/run%d", base, kill_at);
		assert_int_equal(write_set(dir, &one), 0);
		assert_int_equal(pipe(pipefd), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (!pid) {
			dup2(pipefd[1], 2);
			/* long enough for the parent to kill inside the pause */
			setenv(OUTPUT_PAUSE_ENV, "200", 1);
			_exit(write_set(dir, &two) ? 1 : 0);
		}
		close(pipefd[1]);
		f = fdopen(pipefd[0], "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			assert_non_null(strstr(line, "omniprof-test: output step "));
			if (step++ == kill_at) {
				kill(pid, SIGKILL);
				killed = true;
				break;
			}
		}
		fclose(f);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		visible_set(dir, tag, sizeof(tag));
		printf("    %s step %d: the reader sees set '%s'\n",
		       killed ? "killed in the pause before" : "not killed, ran past", kill_at,
		       tag);
		if (!killed) {
			steps_total = step;
			assert_true(WIFEXITED(status));
			assert_int_equal(WEXITSTATUS(status), 0);
			assert_string_equal(tag, "two");
			break;
		}
		assert_true(!strcmp(tag, "one") || !strcmp(tag, "two"));
		seen_one += !strcmp(tag, "one");
		seen_two += !strcmp(tag, "two");
		/* the next run cleans up after the killed one */
		assert_int_equal(write_set(dir, &one), 0);
		visible_set(dir, tag, sizeof(tag));
		assert_string_equal(tag, "one");
		assert_clean(dir);
	}
	assert_true(steps_total >= 5);
	assert_true(seen_one > 0 && seen_two > 0);
	tu_rmtree(base);
	free(base);
}

/* Leftovers of a killed run, some of them links to a victim, are removed without
 * being followed. */
static void test_stale_cleanup_follows_nothing(void **state)
{
	char *base = tu_mkdtemp(), dir[256], victim_dir[256], victim[256], p[512], tag[64];
	struct content one = {"one", 100, -1, 0};

	(void)state;
	snprintf(dir, sizeof(dir), "%s/out", base);
	snprintf(victim_dir, sizeof(victim_dir), "%s/victims", base);
	snprintf(victim, sizeof(victim), "%s/victims/precious", base);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(mkdir(victim_dir, 0755), 0);
	assert_int_equal(tu_write_file(victim, "precious\n"), 0);

	snprintf(p, sizeof(p), "%s/" OUTPUT_TMP_PREFIX "0000000000000001", dir);
	assert_int_equal(tu_write_file(p, "stale"), 0);
	snprintf(p, sizeof(p), "%s/" OUTPUT_TMP_PREFIX "0000000000000002", dir);
	assert_int_equal(symlink(victim, p), 0);
	/* a generation folder linked to the victims' folder */
	snprintf(p, sizeof(p), "%s/" OUTPUT_SET_GEN_PREFIX "0000000000000003", dir);
	assert_int_equal(symlink(victim_dir, p), 0);
	/* a real stale generation holding a link to the victim */
	snprintf(p, sizeof(p), "%s/" OUTPUT_SET_GEN_PREFIX "0000000000000004", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/" OUTPUT_SET_GEN_PREFIX "0000000000000004/stacks.folded", dir);
	assert_int_equal(symlink(victim, p), 0);
	/* the old write test's name */
	snprintf(p, sizeof(p), "%s/.omniprof-write-test", dir);
	assert_int_equal(symlink(victim, p), 0);

	assert_int_equal(write_set(dir, &one), 0);
	visible_set(dir, tag, sizeof(tag));
	assert_string_equal(tag, "one");
	assert_clean(dir);
	assert_int_equal(access(p, F_OK), -1);
	assert_file_is(victim, "precious\n");
	assert_int_equal(tu_count_prefix(victim_dir, ""), 3); /* ".", "..", precious */
	tu_rmtree(base);
	free(base);
}

/* Final names and the switch link planted by someone: replaced, never written
 * through; output_file__write likewise. */
static void test_planted_final_names(void **state)
{
	char *base = tu_mkdtemp(), dir[256], victim[256], p[512], tag[64];
	struct content one = {"one", 100, -1, 0};
	struct output_dir d;
	struct item_ctx ic = {&one, 0};
	struct stat st;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/out", base);
	snprintf(victim, sizeof(victim), "%s/victim", base);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(tu_write_file(victim, "precious\n"), 0);
	for (int i = 0; i < N_NAMES; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		assert_int_equal(symlink(victim, p), 0);
	}
	snprintf(p, sizeof(p), "%s/" OUTPUT_SET_CURRENT, dir);
	assert_int_equal(symlink(base, p), 0);

	assert_int_equal(write_set(dir, &one), 0);
	visible_set(dir, tag, sizeof(tag));
	assert_string_equal(tag, "one");
	assert_file_is(victim, "precious\n");

	assert_int_equal(output_dir__open(&d, dir, 0), 0);
	snprintf(p, sizeof(p), "%s/single", dir);
	assert_int_equal(symlink(victim, p), 0);
	assert_int_equal(output_file__write(&d, "single", write_item, &ic), 0);
	output_dir__close(&d);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_file_is(victim, "precious\n");
	assert_int_equal(tu_count_prefix(dir, OUTPUT_TMP_PREFIX), 0);
	tu_rmtree(base);
	free(base);
}

/* ---- the folder rules ------------------------------------------------------------ */

static void expect_refused(const char *dir)
{
	struct output_dir d;

	assert_true(output_dir__open(&d, dir, OUTPUT_DIR_CREATE) < 0);
	assert_int_equal(d.fd, -1);
}

static void test_folder_rules(void **state)
{
	char *base = tu_mkdtemp(), p[256], q[256];
	struct output_dir d;
	struct stat st;

	(void)state;
	/* created: 0755 whatever the umask, owned by the invoking user */
	umask(077);
	snprintf(p, sizeof(p), "%s/new", base);
	assert_int_equal(output_dir__open(&d, p, OUTPUT_DIR_CREATE), 0);
	assert_int_equal(output_dir__probe(&d), 0);
	assert_int_equal(tu_count_prefix(p, "."), 2); /* the probe left nothing */
	output_dir__close(&d);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(st.st_uid, 0);
	umask(022);

	/* through sudo: the folder goes to SUDO_UID/SUDO_GID, and is then accepted */
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	snprintf(p, sizeof(p), "%s/bysudo", base);
	assert_int_equal(output_dir__open(&d, p, OUTPUT_DIR_CREATE), 0);
	output_dir__close(&d);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(st.st_gid, 65534);
	assert_int_equal(output_dir__open(&d, p, 0), 0);
	output_dir__close(&d);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	/* without sudo, another user's folder is refused */
	expect_refused(p);

	snprintf(p, sizeof(p), "%s/group", base);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chmod(p, 0775), 0);
	expect_refused(p);
	snprintf(p, sizeof(p), "%s/sticky", base);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chmod(p, 01777), 0);
	expect_refused(p);
	expect_refused("/tmp");

	snprintf(p, sizeof(p), "%s/real", base);
	snprintf(q, sizeof(q), "%s/link", base);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(symlink(p, q), 0);
	expect_refused(q);
	/* a folder below a link another user made */
	assert_int_equal(lchown(q, 65534, 65534), 0);
	snprintf(q, sizeof(q), "%s/link/sub", base);
	expect_refused(q);
	snprintf(q, sizeof(q), "%s/real/sub", base);
	assert_int_equal(access(q, F_OK), -1);
	tu_rmtree(base);
	free(base);
}

/* ---- a full disk ------------------------------------------------------------------ */

static void test_enospc_on_tmpfs(void **state)
{
	char *base = tu_mkdtemp(), tag[64], before[3][64];
	struct content small = {"small", 2000, -1, 0}, big = {"big", 40000, -1, 0};
	int err;

	(void)state;
	assert_int_equal(tu_tmpfs_mount(base, "64k"), 0);
	/* nothing fits: error, nothing under a final name, nothing left behind */
	err = write_set(base, &(struct content){"huge", 100000, -1, 0});
	assert_int_equal(err, -ENOSPC);
	visible_set(base, tag, sizeof(tag));
	assert_string_equal(tag, "");
	assert_int_equal(tu_count_prefix(base, OUTPUT_TMP_PREFIX), 0);
	assert_int_equal(tu_count_prefix(base, OUTPUT_SET_GEN_PREFIX), 0);

	/* the previous set fits, the new one does not */
	assert_int_equal(write_set(base, &small), 0);
	for (int i = 0; i < N_NAMES; i++) {
		char path[512];
		char *t;

		snprintf(path, sizeof(path), "%s/%s", base, names[i]);
		t = tu_read_file(path, NULL);
		assert_non_null(t);
		snprintf(before[i], sizeof(before[i]), "%.40s", t);
		free(t);
	}
	err = write_set(base, &big);
	assert_int_equal(err, -ENOSPC);
	visible_set(base, tag, sizeof(tag));
	assert_string_equal(tag, "small");
	assert_clean(base);
	for (int i = 0; i < N_NAMES; i++) {
		char path[512];
		char *t;
		size_t len;

		snprintf(path, sizeof(path), "%s/%s", base, names[i]);
		t = tu_read_file(path, &len);
		assert_non_null(t);
		assert_int_equal(len, 2000);
		assert_int_equal(strncmp(t, before[i], strlen(before[i])), 0);
		free(t);
	}
	assert_int_equal(tu_tmpfs_unmount(), 0);
	tu_rmtree(base);
	free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_set_replaces_previous),
	    cmocka_unit_test(test_failed_write_keeps_previous),
	    cmocka_unit_test(test_kill_at_every_step),
	    cmocka_unit_test(test_stale_cleanup_follows_nothing),
	    cmocka_unit_test(test_planted_final_names),
	    cmocka_unit_test(test_folder_rules),
	    cmocka_unit_test_teardown(test_enospc_on_tmpfs, tu_tmpfs_teardown),
	};

	return cmocka_run_group_tests_name("output_set", tests, NULL, NULL);
}
