/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An unprivileged account for the tests that attack the profiler the way
 * another user of the host would: created on first use (useradd, no home,
 * no login shell), its processes started with that uid/gid and no
 * supplementary groups, so they can do exactly what any local user can.
 */
#ifndef OMNIPROF_TESTS_ATTACKER_H
#define OMNIPROF_TESTS_ATTACKER_H

#include <sys/types.h>

#define ATTACKER_NAME "omniprof-attacker"

/* Creates the account if missing and returns its ids. 0, or -errno. */
int attacker__ensure(uid_t *uid, gid_t *gid);
/*
 * Starts argv as the attacker (fork, drop groups, setgid, setuid, exec),
 * with cwd set to dir when not NULL. stdout goes to a pipe whose read end is
 * returned in *out_fd when out_fd is not NULL (the caller closes it).
 * Returns the pid, or -errno.
 */
pid_t attacker__spawn(char *const argv[], const char *dir, int *out_fd);
/* Like tu_spawn_ready(): starts argv as the attacker and waits for its first
 * line on stdout ("ready"), at most 30 s. Returns the pid, or -1. */
pid_t attacker__spawn_ready(char *const argv[], const char *dir);
/* Runs a shell command line as the attacker and waits. Its exit status, or -1. */
int attacker__system(const char *cmd);

#endif
