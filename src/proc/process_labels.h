/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a continuous exporter says about each process: executable path and
 * name, container id and name, host name and the service it belongs to.
 * Read from /proc once per process image and cached; entries not asked for
 * during two intervals are dropped, so the cache follows the live processes.
 *
 * service.name: the --service-name flag when given; else the container's
 * name when the runtime's files name it; else the executable's file name;
 * else (no executable known: a kernel thread, a process gone before it was
 * read) "unknown_service:COMM", as OpenTelemetry's SDKs say it.
 *
 * A process that lives shorter than an interval would be gone by the time
 * its samples are exported, leaving only its 15-character comm: listening to
 * the process table (label_cache__listen()) reads it as soon as its maps are,
 * and one gone before even that is named by its exec's path (the BPF exec
 * event's) when the table forgets it.
 */
#ifndef OMNIPROF_PROC_PROCESS_LABELS_H
#define OMNIPROF_PROC_PROCESS_LABELS_H

#include <stdint.h>

#include "proc/cgroup.h"
#include "omniprof/abi.h"
#include "util/hashmap.h"

struct process_table;

struct process_labels {
	uint32_t pid;
	char comm[OP_TASK_COMM_LEN];	      /* the name the samples carried when this was read */
	char exe_path[512];		      /* "" when unreadable (kernel thread, gone) */
	const char *exe_name;		      /* basename of exe_path, else comm */
	char container_id[CGROUP_ID_LEN + 1]; /* "" outside containers */
	char container_name[128];
	const char *service;			     /* see above; never NULL */
	char unknown_service[16 + OP_TASK_COMM_LEN]; /* "unknown_service:COMM" */
	uint64_t used_epoch;
};

struct label_cache {
	struct hashmap by_pid;	      /* of struct process_labels, owned */
	const char *service_override; /* --service-name, or NULL */
	const char *root;	      /* where runtimes keep container files: "/" */
	char host_name[256];
	uint64_t epoch;
};

void label_cache__init(struct label_cache *lc, const char *service_override);
void label_cache__clear(struct label_cache *lc); /* accepts NULL */
/* The labels of pid (re-read when its name changed: a new image). NULL on ENOMEM.
 * Valid until the next label_cache__expire(). */
const struct process_labels *label_cache__get(struct label_cache *lc, uint32_t pid,
					      const char *comm);
/* Reads pid's labels now (its /proc/PID/comm as its name), unless known under that name. */
void label_cache__note(struct label_cache *lc, uint32_t pid);
/*
 * pid is gone and its last exec ran exec_path (absolute): its labels, unless
 * read while it lived, are made from that path (no container known). Its
 * samples' comm is taken when they ask (label_cache__get).
 */
void label_cache__note_gone(struct label_cache *lc, uint32_t pid, const char *exec_path);
/* Calls label_cache__note() for every process whose maps pt reads, and
 * label_cache__note_gone() for every one it forgets. 0 or -ENOSPC. */
int label_cache__listen(struct label_cache *lc, struct process_table *pt);
/* Ends an interval: forgets processes not asked for in this one and the one before. */
void label_cache__expire(struct label_cache *lc);

#endif
