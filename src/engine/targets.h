/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What is profiled, by process: -p, --comm, --container and the process tree
 * of `record -- COMMAND`. The sampler checks one BPF map (pid_filter: tgid ->
 * 1) per sample, so an excluded process costs no unwinding; this module keeps
 * that map true. Processes that run at the start are matched from /proc; a
 * process that starts later is matched when its exec is reported (every exec
 * is, when a name or container decides), and a new process whose parent is a
 * target joins in the kernel (follow_children) until its own exec says
 * otherwise. --cgroup is tested in the kernel alone (the cgroup array), --cpu
 * by the CPUs the sampler opens events on.
 */
#ifndef OMNIPROF_ENGINE_TARGETS_H
#define OMNIPROF_ENGINE_TARGETS_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct targets_opts {
	const uint32_t *pids; /* -p */
	size_t n_pids;
	const char *comm;      /* --comm: extended regular expression, or NULL */
	const char *container; /* --container: id prefix, or NULL */
	bool follow_children;  /* record -- COMMAND: pids are the command, children join */
};

struct targets_stats {
	uint64_t matched;  /* processes made targets (at start or exec) */
	uint64_t excluded; /* execs (or running processes) that did not match */
	uint64_t removed;  /* targets whose exec no longer matched, or that exited */
	uint64_t map_full; /* targets the map had no room for */
};

struct targets {
	struct targets_opts o;
	bool by_process; /* a filter per process is on: the map is used */
	bool has_comm;
	regex_t comm;
	int map_fd; /* pid_filter; -1 until targets__attach */
	int gen_fd; /* pid_filter_gen, bumped after each delete; -1: none */
	struct targets_stats stats;
};

/* 0, or -EINVAL (a bad regular expression, logged). Clear with targets__clear(). */
int targets__init(struct targets *t, const struct targets_opts *o);
void targets__clear(struct targets *t); /* accepts a zeroed struct */

/* Whether a per-process filter is on (the sampler's pid_filter is then used), whether
 * every exec must be reported, and whether children follow their parents. */
bool targets__by_process(const struct targets *t);
bool targets__report_all_execs(const struct targets *t);
bool targets__follow_children(const struct targets *t);

/*
 * Whether a process passes the name and container filters and -p: comm is its
 * name (NULL: read from /proc), container_id its container ("" when none, NULL:
 * read from /proc). in_tree: the process already descends from the command.
 */
bool targets__match(const struct targets *t, uint32_t pid, const char *comm,
		    const char *container_id, bool in_tree);

/* Fills the map fd from the processes running now (or the -p list). gen_fd: the
 * sampler's pid_filter_gen (its CPUs remember a pid found in the map until it
 * changes), -1: none. Returns how many processes are targets and, when out is not
 * NULL, their pids (*out freed by the caller; NULL when none). -errno on failure. */
int targets__attach(struct targets *t, int map_fd, int gen_fd, uint32_t **out);
/* An exec of pid (its new comm): whether it is (still) a target; the map follows. */
bool targets__on_exec(struct targets *t, uint32_t pid, const char *comm);
/* pid exited: its map entry goes (a pid reused later must match on its own). */
void targets__on_exit(struct targets *t, uint32_t pid);

#endif
