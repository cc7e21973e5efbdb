// SPDX-License-Identifier: Apache-2.0
/*
 * The file cache opens a mapped file through the process that mapped it. When
 * that process is gone by the time the open runs, the open fails although the
 * file is fine: the next process that maps the file opens it again, through
 * itself (FILE_CACHE_OPENS opens at most), instead of every later process
 * finding the failure kept for good. Real processes: children that map libc
 * and are reaped before the open, and this test's own libc.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/file_cache.h"
#include "proc/proc_maps.h"

/* A child that maps what this process maps (a fork) and waits to be killed. */
static pid_t child_start(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

/* Kills and reaps pid: its /proc entry is gone. */
static void child_end(pid_t pid)
{
	int status;

	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

/*
 * The executable mapping of libc in pid's maps into *out (its path owned by
 * *all, freed with proc_maps__free(*all, *n)).
 */
static void libc_mapping(pid_t pid, struct proc_map **all, size_t *n, struct proc_map **out)
{
	*out = NULL;
	assert_int_equal(proc_maps__read(pid, all, n), 0);
	for (size_t i = 0; i < *n && !*out; i++) {
		const char *base = strrchr((*all)[i].path, '/');

		if (base && !strncmp(base, "/libc.so", 8) && ((*all)[i].perms & PROC_MAP_X))
			*out = &(*all)[i];
	}
	assert_non_null(*out);
}

static void test_open_again_through_a_live_process(void **state)
{
	struct proc_map *dead_all, *dead_m, *live_all, *live_m;
	size_t dead_n, live_n;
	struct cached_file *f;
	struct file_cache fc;
	uint32_t slot;
	pid_t child;

	(void)state;
	child = child_start();
	libc_mapping(child, &dead_all, &dead_n, &dead_m);
	child_end(child);
	file_cache__init(&fc);

	/* Through the reaped child: the file cannot be reached. */
	slot = file_cache__get(&fc, child, dead_m);
	assert_true(slot != 0);
	f = file_cache__at(&fc, slot);
	assert_non_null(f);
	assert_null(f->elf);
	assert_true(f->open_error == -ENOENT || f->open_error == -ESRCH);
	assert_int_equal(fc.stats.open_errors, 1);

	/* The same file mapped by a live process: opened again, through it. */
	libc_mapping(getpid(), &live_all, &live_n, &live_m);
	assert_int_equal(live_m->inode, dead_m->inode);
	assert_int_equal(file_cache__get(&fc, getpid(), live_m), slot);
	assert_non_null(f->elf);
	assert_int_equal(f->open_error, 0);
	assert_true(f->table_id != 0);
	assert_int_equal(fc.stats.open_retries, 1);

	/* Open: nothing more to try. */
	assert_int_equal(file_cache__get(&fc, getpid(), live_m), slot);
	assert_int_equal(fc.stats.open_retries, 1);
	assert_int_equal(fc.stats.opened, 1);
	file_cache__clear(&fc);
	proc_maps__free(dead_all, dead_n);
	proc_maps__free(live_all, live_n);
}

/* Processes that are all gone: FILE_CACHE_OPENS opens in all, then the failure stays. */
static void test_opens_bounded(void **state)
{
	struct proc_map *all[FILE_CACHE_OPENS + 2], *m[FILE_CACHE_OPENS + 2];
	pid_t pids[FILE_CACHE_OPENS + 2];
	size_t n[FILE_CACHE_OPENS + 2];
	const size_t count = FILE_CACHE_OPENS + 2;
	struct cached_file *f;
	struct file_cache fc;
	uint32_t slot = 0;

	(void)state;
	for (size_t i = 0; i < count; i++) {
		pids[i] = child_start();
		libc_mapping(pids[i], &all[i], &n[i], &m[i]);
		child_end(pids[i]);
	}
	file_cache__init(&fc);
	for (size_t i = 0; i < count; i++) {
		uint32_t s = file_cache__get(&fc, pids[i], m[i]);

		assert_true(s != 0);
		assert_true(!slot || s == slot);
		slot = s;
		/* The same gone process again opens nothing. */
		assert_int_equal(file_cache__get(&fc, pids[i], m[i]), slot);
	}
	f = file_cache__at(&fc, slot);
	assert_null(f->elf);
	assert_int_equal(f->opens, FILE_CACHE_OPENS);
	assert_int_equal(fc.stats.open_errors, FILE_CACHE_OPENS);
	assert_int_equal(fc.stats.open_retries, FILE_CACHE_OPENS - 1);
	file_cache__clear(&fc);
	for (size_t i = 0; i < count; i++)
		proc_maps__free(all[i], n[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_open_again_through_a_live_process),
	    cmocka_unit_test(test_opens_bounded),
	};

	return cmocka_run_group_tests_name("file_cache", tests, NULL, NULL);
}
