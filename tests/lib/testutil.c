// SPDX-License-Identifier: Apache-2.0
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

const char *tu_build_dir(void)
{
	const char *b = getenv("OMNIPROF_BUILD");

	return b && *b ? b : "build";
}

char *tu_mkdtemp(void)
{
	char *dir = strdup("/tmp/omniprof-test-XXXXXX");

	if (dir && !mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

void tu_rmtree(const char *dir)
{
	if (dir && !strncmp(dir, "/tmp/omniprof-test-", 19))
		tu_run(NULL, "rm -rf '%s'", dir);
}

int tu_run(char **out, const char *fmt, ...)
{
	char *cmd = NULL, *full = NULL, *buf = NULL;
	size_t len = 0, cap = 0;
	va_list ap;
	FILE *p;
	int status, n;

	va_start(ap, fmt);
	n = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (n < 0 || asprintf(&full, "(%s) 2>&1", cmd) < 0) {
		free(cmd);
		return -1;
	}
	free(cmd);
	p = popen(full, "r");
	free(full);
	if (!p)
		return -1;
	for (;;) {
		if (cap - len < 4096) {
			char *tmp = realloc(buf, cap ? cap * 2 : 8192);
			if (!tmp)
				break;
			buf = tmp;
			cap = cap ? cap * 2 : 8192;
		}
		size_t r = fread(buf + len, 1, cap - len - 1, p);
		if (!r)
			break;
		len += r;
	}
	if (buf)
		buf[len] = '\0';
	status = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

char *tu_read_file(const char *path, size_t *len_out)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)len + 1);
	if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (!buf)
		return NULL;
	buf[len] = '\0';
	if (len_out)
		*len_out = (size_t)len;
	return buf;
}

pid_t tu_spawn_ready(char *const argv[])
{
	int fds[2];
	char line[64];
	pid_t pid;
	ssize_t n;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	n = read(fds[0], line, sizeof(line) - 1);
	close(fds[0]);
	if (n <= 0 || strncmp(line, "ready", 5)) {
		tu_reap(pid);
		return -1;
	}
	return pid;
}

void tu_reap(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

void tu_pyenv_root(char *buf, size_t len)
{
	const char *env = getenv("PYENV_ROOT"), *home = getenv("HOME");
	char *out = NULL;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	if (!tu_run(&out, "pyenv root 2>/dev/null") && out && *out) {
		out[strcspn(out, "\n")] = '\0';
		snprintf(buf, len, "%s", out);
		free(out);
		return;
	}
	free(out);
	if (!home || !*home) {
		const struct passwd *pw = getpwuid(getuid());

		home = pw ? pw->pw_dir : "";
	}
	snprintf(buf, len, "%s/.pyenv", home);
}

int tu_pyenv_python(const char *version, char *buf, size_t len)
{
	char root[512], path[1024];
	size_t vlen = strlen(version);
	struct dirent *de;
	int err = -ENOENT;
	DIR *d;

	tu_pyenv_root(root, sizeof(root));
	snprintf(path, sizeof(path), "%s/versions", root);
	d = opendir(path);
	if (!d)
		return -ENOENT;
	while (err && (de = readdir(d))) {
		if (strncmp(de->d_name, version, vlen) || de->d_name[vlen] != '.')
			continue;
		snprintf(path, sizeof(path), "%s/versions/%s/bin/python3", root, de->d_name);
		if (access(path, X_OK) == 0) {
			snprintf(buf, len, "%s", path);
			err = 0;
		}
	}
	closedir(d);
	return err;
}

/* "3.9.18" before "3.10.13": by major, then minor number. */
static int version_cmp(const void *a, const void *b)
{
	unsigned int ma = 0, na = 0, mb = 0, nb = 0;

	sscanf(a, "%u.%u", &ma, &na);
	sscanf(b, "%u.%u", &mb, &nb);
	return ma != mb ? (ma > mb) - (ma < mb) : (na > nb) - (na < nb);
}

size_t tu_pyenv_versions(char names[][64], size_t max, char *root, size_t root_len)
{
	char path[1024];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	tu_pyenv_root(root, root_len);
	snprintf(path, sizeof(path), "%.900s/versions", root);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		snprintf(path, sizeof(path), "%.900s/versions/%.60s/bin/python3", root, de->d_name);
		if (de->d_name[0] == '3' && de->d_name[1] == '.' && access(path, X_OK) == 0)
			snprintf(names[n++], 64, "%.63s", de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), version_cmp);
	return n;
}

int tu_pyenv_missing(char *missing, size_t len)
{
	const char *opt_out = getenv("OMNIPROF_NO_PYENV");
	char version[16], python[1024];
	size_t used = 0;
	int n = 0;

	if (len)
		missing[0] = '\0';
	if (opt_out && !strcmp(opt_out, "1"))
		return 0;
	for (int minor = TU_PYENV_FIRST_MINOR; minor <= TU_PYENV_LAST_MINOR; minor++) {
		snprintf(version, sizeof(version), "3.%d", minor);
		if (!tu_pyenv_python(version, python, sizeof(python)))
			continue;
		n++;
		if (used < len)
			used += (size_t)snprintf(missing + used, len - used, "%s%s",
						 used ? " " : "", version);
	}
	return n;
}

int tu_distro_python(char *buf, size_t len, unsigned int *minor)
{
	char *out = NULL, *line, *save = NULL, *resolved = NULL, *base;
	int err = -ENOENT;

	if (tu_run(&out, "dpkg-query -L python3-minimal 2>/dev/null") || !out)
		goto cleanup;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(line);

		if (n >= 12 && !strcmp(line + n - 12, "/bin/python3"))
			break;
	}
	if (!line || !(resolved = realpath(line, NULL)) || access(resolved, X_OK))
		goto cleanup;
	base = strrchr(resolved, '/');
	if (!base || sscanf(base, "/python3.%u", minor) != 1)
		goto cleanup;
	snprintf(buf, len, "%s", resolved);
	err = 0;
cleanup:
	free(resolved);
	free(out);
	return err;
}

int tu_system_lib(const char *soname, char *buf, size_t len)
{
	char *out = NULL, *line, *save = NULL, *resolved = NULL;
	size_t slen = strlen(soname);
	int err = -ENOENT;

	/* "\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6" */
	if (tu_run(&out, "ldconfig -p 2>/dev/null") || !out)
		goto cleanup;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *arrow;

		line += strspn(line, " \t");
		if (strncmp(line, soname, slen) || line[slen] != ' ' || !strstr(line, "x86-64)"))
			continue;
		arrow = strstr(line, "=> ");
		if (!arrow)
			continue;
		resolved = realpath(arrow + 3, NULL);
		if (resolved && access(resolved, R_OK) == 0) {
			snprintf(buf, len, "%s", resolved);
			err = 0;
			break;
		}
		free(resolved);
		resolved = NULL;
	}
cleanup:
	free(resolved);
	free(out);
	return err;
}

int tu_workload_path(const char *name, char *buf, size_t size)
{
	char build[PATH_MAX];
	int n;

	if (!realpath(tu_build_dir(), build))
		return -1;
	n = snprintf(buf, size, "%s/workloads/%s", build, name);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

pid_t tu_workload_start(const char *name, int seconds)
{
	char path[512], secs[16];
	char *argv[] = {path, secs, NULL};

	snprintf(path, sizeof(path), "%s/workloads/%s", tu_build_dir(), name);
	snprintf(secs, sizeof(secs), "%d", seconds);
	return tu_spawn_ready(argv);
}

int tu_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fputs(text, f) < 0)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* Entries of dir whose name starts with prefix, skipping "." and ".." when skip_dots. */
static int count_dir(const char *dir, const char *prefix, int skip_dots)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (skip_dots && (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")))
			continue;
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	}
	closedir(d);
	return n;
}

int tu_count_prefix(const char *dir, const char *prefix)
{
	return count_dir(dir, prefix, 0);
}

int tu_count_entries(const char *dir)
{
	return count_dir(dir, "", 1);
}

/* The tmpfs tu_tmpfs_mount put up, "" when none. */
static char tmpfs_dir[4096];

int tu_tmpfs_mount(const char *dir, const char *size)
{
	char opts[64];

	/* Remembered first: a failed mount is detached by the teardown too (harmless). */
	snprintf(tmpfs_dir, sizeof(tmpfs_dir), "%s", dir);
	snprintf(opts, sizeof(opts), "size=%s,mode=0755", size);
	return mount("omniprof-test", dir, "tmpfs", 0, opts) ? -errno : 0;
}

int tu_tmpfs_unmount(void)
{
	if (umount(tmpfs_dir))
		return -errno;
	tmpfs_dir[0] = '\0';
	return 0;
}

int tu_tmpfs_teardown(void **state)
{
	(void)state;
	if (tmpfs_dir[0])
		umount2(tmpfs_dir, MNT_DETACH);
	tmpfs_dir[0] = '\0';
	return 0;
}
