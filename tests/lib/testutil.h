/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the tests: running commands, temporary folders, files. */
#ifndef OMNIPROF_TESTS_TESTUTIL_H
#define OMNIPROF_TESTS_TESTUTIL_H

#include <stddef.h>
#include <sys/types.h>

/* The build folder (OMNIPROF_BUILD, default "build"). */
const char *tu_build_dir(void);
/* Creates a fresh temporary folder; the caller frees the returned path. */
char *tu_mkdtemp(void);
/* Removes a folder tree (rm -rf). */
void tu_rmtree(const char *dir);
/* Runs a shell command, capturing stdout+stderr into *out (caller frees; may be NULL).
 * Returns the exit status, or -1 when it did not exit normally. */
int tu_run(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Runs a shell command (tu_run's arguments) that must succeed: on failure its
 * output is printed and the test fails. A cmocka assertion: for test bodies.
 */
#define TU_SH(...)                                                                                 \
	do {                                                                                       \
		char *o_ = NULL;                                                                   \
		int rc_ = tu_run(&o_, __VA_ARGS__);                                                \
		if (rc_)                                                                           \
			print_error("command failed (%d): %s\n", rc_, o_ ? o_ : "");               \
		free(o_);                                                                          \
		assert_int_equal(rc_, 0);                                                          \
	} while (0)
/* Reads a whole file (NUL-terminated; caller frees), NULL on error. */
char *tu_read_file(const char *path, size_t *len);
/* Starts argv in the background with stdout on a pipe and waits for its first
 * line ("ready"). Returns the pid, or -1. */
pid_t tu_spawn_ready(char *const argv[]);
/* The absolute path of build/workloads/NAME in buf. 0, or -1 when it does not fit or the
 * build folder cannot be resolved. */
int tu_workload_path(const char *name, char *buf, size_t size);
/* Starts build/workloads/NAME SECONDS (tu_spawn_ready): its pid, or -1. */
pid_t tu_workload_start(const char *name, int seconds);
/* Kills and reaps a spawned process. */
void tu_reap(pid_t pid);
/* Writes text to path (created or truncated): 0, or -errno. */
int tu_write_file(const char *path, const char *text);
/* How many entries of dir (with "." and "..") have a name starting with prefix; -errno when dir
 * cannot be read. */
int tu_count_prefix(const char *dir, const char *prefix);
/* How many entries dir holds besides "." and ".."; -errno when dir cannot be read. */
int tu_count_entries(const char *dir);
/*
 * Mounts a tmpfs of size (a tmpfs size= value, "64k"), mode 0755, on dir, and
 * remembers dir for tu_tmpfs_unmount and tu_tmpfs_teardown: 0, or -errno.
 */
int tu_tmpfs_mount(const char *dir, const char *size);
/* Unmounts the remembered tmpfs and forgets it: 0, or -errno (then it stays remembered). */
int tu_tmpfs_unmount(void);
/* cmocka teardown: detaches (MNT_DETACH) a tmpfs a failed test left mounted. Returns 0. */
int tu_tmpfs_teardown(void **state);
/* pyenv's root: $PYENV_ROOT, else what `pyenv root` says, else ~/.pyenv (pyenv's default). */
void tu_pyenv_root(char *buf, size_t len);
/* The python3 of pyenv's CPython VERSION ("3.8": the first versions/3.8.*
 * folder holding bin/python3) into buf. 0, or -ENOENT. */
int tu_pyenv_python(const char *version, char *buf, size_t len);
/*
 * Every pyenv CPython 3 (a versions/3.* folder holding an executable
 * bin/python3): the folder names ("3.9.18") into names, oldest first (by
 * major, then minor number), and pyenv's root into root. Returns how many (at
 * most max).
 */
size_t tu_pyenv_versions(char names[][64], size_t max, char *root, size_t root_len);
/*
 * The CPython minor versions (3.TU_PYENV_FIRST_MINOR to 3.TU_PYENV_LAST_MINOR)
 * the Python tests run under pyenv: every version the Python walker supports.
 * pyenv and these interpreters come with the machine, not from
 * scripts/install-deps.sh (Debian has no package for them).
 */
#define TU_PYENV_FIRST_MINOR 6
#define TU_PYENV_LAST_MINOR  13
/*
 * The required versions pyenv lacks, as "3.6 3.9" into missing ("" when
 * none): their count. OMNIPROF_NO_PYENV=1 (a machine without pyenv, said
 * out loud) requires none.
 */
int tu_pyenv_missing(char *missing, size_t len);
/*
 * The distribution's own python3 (the interpreter Debian's python3-minimal
 * package installs, symlinks resolved: "/usr/bin/python3.11") into buf, and
 * its minor version into *minor: 0, or -ENOENT.
 */
int tu_distro_python(char *buf, size_t len, unsigned int *minor);
/*
 * The path of the x86-64 shared library SONAME ("libc.so.6") the dynamic
 * linker's cache (ldconfig -p) names, symlinks resolved, into buf: 0, or
 * -ENOENT. Tests find system libraries through it instead of naming a
 * distribution's folder.
 */
int tu_system_lib(const char *soname, char *buf, size_t len);

#endif
