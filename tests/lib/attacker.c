// SPDX-License-Identifier: Apache-2.0
#include "attacker.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int attacker__ensure(uid_t *uid, gid_t *gid)
{
	struct passwd *pw = getpwnam(ATTACKER_NAME);

	if (!pw) {
		/* -M: no home; the shell only matters for attacker__system (sh -c). */
		int rc = system("useradd -M -s /usr/sbin/nologin " ATTACKER_NAME
				" >/dev/null 2>&1");

		if (rc)
			fprintf(stderr, "attacker: useradd %s failed (status %d)\n",
				ATTACKER_NAME, rc);
		pw = getpwnam(ATTACKER_NAME);
		if (!pw)
			return -ENOENT;
	}
	if (!pw->pw_uid)
		return -EPERM; /* never "attack" as root */
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

/* In the child: become the attacker for good. Exits on any failure. */
static void drop_to_attacker(uid_t uid, gid_t gid, const char *dir)
{
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid)) {
		perror("attacker: dropping privileges");
		_exit(126);
	}
	if (!setuid(0)) {
		fprintf(stderr, "attacker: could regain root\n");
		_exit(126);
	}
	if (dir && chdir(dir)) {
		perror("attacker: chdir");
		_exit(126);
	}
}

pid_t attacker__spawn(char *const argv[], const char *dir, int *out_fd)
{
	int fds[2] = {-1, -1};
	uid_t uid;
	gid_t gid;
	pid_t pid;
	int err = attacker__ensure(&uid, &gid);

	if (err)
		return err;
	if (out_fd && pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		if (out_fd) {
			close(fds[0]);
			close(fds[1]);
		}
		return err;
	}
	if (!pid) {
		if (out_fd && dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(126);
		drop_to_attacker(uid, gid, dir);
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (out_fd) {
		close(fds[1]);
		*out_fd = fds[0];
	}
	return pid;
}

pid_t attacker__spawn_ready(char *const argv[], const char *dir)
{
	struct pollfd pfd = {.events = POLLIN};
	char line[256];
	size_t len = 0;
	pid_t pid = attacker__spawn(argv, dir, &pfd.fd);

	if (pid < 0)
		return -1;
	while (len < sizeof(line) - 1) {
		ssize_t n;

		if (poll(&pfd, 1, 30000) <= 0)
			break;
		n = read(pfd.fd, line + len, 1);
		if (n <= 0)
			break;
		if (line[len++] == '\n') {
			close(pfd.fd);
			return pid;
		}
	}
	fprintf(stderr, "attacker: %s never said it was ready\n", argv[0]);
	close(pfd.fd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

int attacker__system(const char *cmd)
{
	char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
	int status;
	pid_t pid = attacker__spawn(argv, "/tmp", NULL);

	if (pid < 0)
		return -1;
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
