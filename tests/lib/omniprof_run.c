// SPDX-License-Identifier: Apache-2.0
#include "omniprof_run.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

char *tu_omniprof_path(void)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/omniprof", tu_build_dir());
	return path;
}

uint64_t tu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int tu_free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -EIO;

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &len))
		port = -errno;
	else
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

pid_t tu_spawn_logged(char *const argv[], const char *log_path, mode_t mode, bool run_without_log)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

		if (fd >= 0) {
			dup2(fd, STDERR_FILENO);
			dup2(fd, STDOUT_FILENO);
		} else if (!run_without_log) {
			_exit(126);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

pid_t tu_omniprof_start(const char *log_path, const char *sub, const char *const *args)
{
	const char *argv[TU_MAX_ARGS + 3];
	size_t n = 0;

	argv[n++] = tu_omniprof_path();
	argv[n++] = sub;
	for (; *args && n < TU_MAX_ARGS + 2; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	return tu_spawn_logged((char *const *)argv, log_path, 0644, true);
}

int tu_wait_bounded(pid_t pid, uint64_t limit_ms, unsigned poll_ms, struct rusage *ru)
{
	uint64_t start = tu_now_ms();
	int status = -1;

	for (;;) {
		if (wait4(pid, &status, WNOHANG, ru) == pid)
			return status;
		if (tu_now_ms() - start > limit_ms) {
			kill(pid, SIGKILL);
			wait4(pid, &status, 0, ru);
			return -1;
		}
		usleep(poll_ms * 1000);
	}
}

double tu_cpu_seconds(pid_t pid)
{
	char path[64], text[1024], *p;
	unsigned long long ut, st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1); /* one read: the kernel writes the line at once */
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	/* "pid (comm) state ppid ...": utime and stime are the 14th and 15th fields; comm may
	 * hold spaces and parentheses, so the fields are counted from its last ')'. */
	p = strrchr(text, ')');
	if (!p ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

bool tu_wait_cpu(pid_t pid, double cpu_s, uint64_t limit_ms, double *used)
{
	double first = tu_cpu_seconds(pid), now = first;
	uint64_t start = tu_now_ms();
	bool done = false;

	while (first >= 0 && now >= 0 && !(done = now - first >= cpu_s) &&
	       tu_now_ms() - start <= limit_ms) {
		usleep(50 * 1000);
		now = tu_cpu_seconds(pid);
	}
	if (used)
		*used = first >= 0 && now >= 0 ? now - first : -1;
	return done;
}

bool tu_log_has(const char *log_path, const char *needle)
{
	char *log = tu_read_file(log_path, NULL);
	bool has = log && strstr(log, needle);

	free(log);
	return has;
}

bool tu_wait_log(const char *log_path, const char *needle, unsigned timeout_ms)
{
	for (unsigned i = 0; i < timeout_ms / 100; i++) {
		if (tu_log_has(log_path, needle))
			return true;
		usleep(100 * 1000);
	}
	return false;
}

int tu_maps_has(pid_t pid, const char *needle)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int has = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!has && getline(&line, &cap, f) > 0) {
		const char *file = strchr(line, '/'); /* the path column, when there is one */

		has = file && strstr(file, needle);
	}
	free(line);
	fclose(f);
	return has;
}

void tu_print_log(const char *title, const char *log_path)
{
	char *log = tu_read_file(log_path, NULL);

	printf("    %s:\n%s", title, log ? log : "(none)\n");
	free(log);
}

long long tu_counter_after(const char *text, const char *label)
{
	const char *p = text ? strstr(text, label) : NULL;

	return p ? strtoll(p + strlen(label), NULL, 10) : -1;
}

pid_t tu_node_start(const char *script, const char *const *args)
{
	char node_path[4200], path[4200];
	char *argv[TU_MAX_ARGS];
	int n = 0;
	pid_t pid;

	snprintf(node_path, sizeof(node_path), "NODE_PATH=%s/node/node_modules", tu_build_dir());
	snprintf(path, sizeof(path), "tests/e2e/otlp/%s", script);
	argv[n++] = "/usr/bin/env";
	argv[n++] = node_path;
	argv[n++] = "node";
	argv[n++] = path;
	for (; *args && n < TU_MAX_ARGS - 1; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	pid = tu_spawn_ready(argv);
	if (pid <= 0)
		fprintf(stderr, "%s did not start: is Node.js installed and `make tests` run?\n",
			script);
	return pid;
}
