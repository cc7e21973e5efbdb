// SPDX-License-Identifier: Apache-2.0
/*
 * safe_open: only regular files of a sane size are opened, nothing blocks
 * (FIFOs under an alarm: a hang kills the test), and paths resolved inside a
 * root never leave it, with openat2 and with the component walk.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/safe_open.h"
#include "testutil.h"

struct fx {
	char *dir;
};

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *path_in(const struct fx *f, const char *name)
{
	static char buf[4][512];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, 512, "%s/%s", f->dir, name);
	return p;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->dir = tu_mkdtemp();
	assert_non_null(f->dir);
	*state = f;
	/* A hang in any call below ends the test as a failure (SIGALRM). */
	alarm(20);
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	alarm(0);
	tu_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static void expect_contents(int fd, const char *want)
{
	char buf[64] = {0};

	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), (ssize_t)strlen(want));
	assert_string_equal(buf, want);
	/* Handed back in blocking mode. */
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
}

static uint64_t refused(enum safe_open_reason r)
{
	struct safe_open_stats st;

	safe_open__stats(&st);
	return st.refused[r];
}

static void test_regular_file(void **state)
{
	struct fx *f = *state;

	put(path_in(f, "a"), "hello");
	expect_contents(safe_open(path_in(f, "a"), SAFE_OPEN_NOFOLLOW, SAFE_OPEN_MAX_ELF), "hello");
	assert_int_equal(safe_open(path_in(f, "missing"), 0, SAFE_OPEN_MAX_ELF), -ENOENT);
}

static void test_fifo_refused_without_blocking(void **state)
{
	struct fx *f = *state;
	uint64_t before = refused(SAFE_OPEN_R_FIFO);

	assert_int_equal(mkfifo(path_in(f, "fifo"), 0666), 0);
	assert_int_equal(safe_open(path_in(f, "fifo"), SAFE_OPEN_NOFOLLOW, SAFE_OPEN_MAX_ELF),
			 -ESPIPE);
	/* Through a symlink the last component is followed, and still refused. */
	assert_int_equal(symlink(path_in(f, "fifo"), path_in(f, "to_fifo")), 0);
	assert_int_equal(safe_open(path_in(f, "to_fifo"), 0, SAFE_OPEN_MAX_ELF), -ESPIPE);
	assert_int_equal(refused(SAFE_OPEN_R_FIFO), before + 2);
}

static void test_devices_refused(void **state)
{
	(void)state;
	assert_int_equal(safe_open("/dev/null", 0, SAFE_OPEN_MAX_ELF), -ENODEV);
	assert_int_equal(safe_open("/dev/zero", 0, SAFE_OPEN_MAX_ELF), -ENODEV);
}

static void test_socket_refused(void **state)
{
	struct fx *f = *state;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(s >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path_in(f, "sock"));
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(safe_open(path_in(f, "sock"), 0, SAFE_OPEN_MAX_ELF), -ENXIO);
	close(s);
}

static void test_symlink_and_directory(void **state)
{
	struct fx *f = *state;

	put(path_in(f, "real"), "real");
	assert_int_equal(symlink("real", path_in(f, "link")), 0);
	assert_int_equal(safe_open(path_in(f, "link"), SAFE_OPEN_NOFOLLOW, SAFE_OPEN_MAX_ELF),
			 -ELOOP);
	expect_contents(safe_open(path_in(f, "link"), 0, SAFE_OPEN_MAX_ELF), "real");
	assert_int_equal(safe_open(f->dir, 0, SAFE_OPEN_MAX_ELF), -EISDIR);
}

static void test_pseudo_files_refused(void **state)
{
	uint64_t before = refused(SAFE_OPEN_R_PSEUDO_FS);

	(void)state;
	assert_int_equal(safe_open("/proc/self/status", 0, SAFE_OPEN_MAX_ELF), -EXDEV);
	/* Regular files of size 0 that never end: refused whatever the cap. */
	assert_int_equal(safe_open("/proc/self/maps", 0, UINT64_MAX), -EXDEV);
	assert_int_equal(safe_open("/sys/kernel/btf/vmlinux", 0, SAFE_OPEN_MAX_ELF), -EXDEV);
	assert_int_equal(refused(SAFE_OPEN_R_PSEUDO_FS), before + 3);
}

static void test_sparse_file_over_cap(void **state)
{
	struct fx *f = *state;
	int fd = open(path_in(f, "huge"), O_WRONLY | O_CREAT, 0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 64LL << 30), 0);
	close(fd);
	assert_int_equal(safe_open(path_in(f, "huge"), 0, SAFE_OPEN_MAX_ELF), -EFBIG);
	/* The cap is the caller's: a larger one accepts it. */
	fd = safe_open(path_in(f, "huge"), 0, 128ULL << 30);
	assert_true(fd >= 0);
	close(fd);
}

/*
 * root/ holds etc/shadow ("inside"), abs -> /etc/shadow, up -> ../../../etc/shadow,
 * dir/ -> a folder; the host's /etc/shadow must never be what opens.
 */
static int make_root(struct fx *f)
{
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/root", f->dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/root/etc", f->dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/root/etc/shadow", f->dir);
	put(p, "inside");
	snprintf(p, sizeof(p), "%s/root/abs", f->dir);
	assert_int_equal(symlink("/etc/shadow", p), 0);
	snprintf(p, sizeof(p), "%s/root/up", f->dir);
	assert_int_equal(symlink("../../../../../etc/shadow", p), 0);
	snprintf(p, sizeof(p), "%s/root/etc/sub", f->dir);
	assert_int_equal(symlink("../etc/./shadow", p), 0);
	snprintf(p, sizeof(p), "%s/root/fifo", f->dir);
	assert_int_equal(mkfifo(p, 0666), 0);
	snprintf(p, sizeof(p), "%s/root/magic", f->dir);
	assert_int_equal(symlink("/proc/self/root/etc/shadow", p), 0);
	snprintf(p, sizeof(p), "%s/root", f->dir);
	fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

static void in_root_cases(struct fx *f, unsigned walk)
{
	int root = make_root(f), fd;

	expect_contents(safe_open_in_root(root, "../../etc/shadow", walk, SAFE_OPEN_MAX_ELF, NULL),
			"inside");
	expect_contents(safe_open_in_root(root, "/etc/shadow", walk, SAFE_OPEN_MAX_ELF, NULL),
			"inside");
	expect_contents(safe_open_in_root(root, "abs", walk, SAFE_OPEN_MAX_ELF, NULL), "inside");
	expect_contents(safe_open_in_root(root, "/up", walk, SAFE_OPEN_MAX_ELF, NULL), "inside");
	expect_contents(safe_open_in_root(root, "etc/sub", walk, SAFE_OPEN_MAX_ELF, NULL),
			"inside");
	expect_contents(
	    safe_open_in_root(root, "/etc/../../etc/shadow", walk, SAFE_OPEN_MAX_ELF, NULL),
	    "inside");
	assert_int_equal(
	    safe_open_in_root(root, "abs", walk | SAFE_OPEN_NOFOLLOW, SAFE_OPEN_MAX_ELF, NULL),
	    -ELOOP);
	assert_int_equal(safe_open_in_root(root, "fifo", walk, SAFE_OPEN_MAX_ELF, NULL), -ESPIPE);
	assert_int_equal(safe_open_in_root(root, "etc", walk, SAFE_OPEN_MAX_ELF, NULL), -EISDIR);
	/* Inside this root /proc does not exist: the absolute link stays in. */
	assert_int_equal(safe_open_in_root(root, "magic", walk, SAFE_OPEN_MAX_ELF, NULL), -ENOENT);
	close(root);

	/* With the real root, /proc/self/... is a magic link: refused. */
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	assert_int_equal(
	    safe_open_in_root(root, "/proc/self/root/etc/hostname", walk, SAFE_OPEN_MAX_ELF, NULL),
	    -ELOOP);
	assert_int_equal(safe_open_in_root(root, "/proc/self/exe", walk, SAFE_OPEN_MAX_ELF, NULL),
			 -ELOOP);
	fd = safe_open_in_root(root, "/proc/self/status", walk, SAFE_OPEN_MAX_ELF, NULL);
	/* openat2 stops at the magic "self" link; the walk refuses procfs links too. */
	assert_true(fd == -ELOOP || fd == -EXDEV);
	close(root);
}

static void test_in_root_openat2(void **state)
{
	in_root_cases(*state, 0);
}

static void test_in_root_walk(void **state)
{
	in_root_cases(*state, SAFE_OPEN_WALK);
}

static void test_in_pid_root(void **state)
{
	struct fx *f = *state;
	char p[512];

	put(path_in(f, "mine"), "mine");
	snprintf(p, sizeof(p), "%s/mine", f->dir);
	expect_contents(
	    safe_open_in_pid_root(getpid(), p, SAFE_OPEN_NOFOLLOW, SAFE_OPEN_MAX_ELF, NULL),
	    "mine");
	assert_true(safe_open_in_pid_root(999999999, p, 0, SAFE_OPEN_MAX_ELF, NULL) < 0);
}

static void test_check_fd(void **state)
{
	struct fx *f = *state;
	int fd;

	(void)f;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(safe_open__check(fd, SAFE_OPEN_MAX_ELF), -ENODEV);
	close(fd);
	put(path_in(f, "small"), "0123456789");
	fd = open(path_in(f, "small"), O_RDONLY | O_CLOEXEC);
	assert_int_equal(safe_open__check(fd, 100), 0);
	assert_int_equal(safe_open__check(fd, 5), -EFBIG);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_regular_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fifo_refused_without_blocking, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_devices_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_socket_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_symlink_and_directory, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pseudo_files_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sparse_file_over_cap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_in_root_openat2, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_in_root_walk, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_in_pid_root, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_check_fd, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
