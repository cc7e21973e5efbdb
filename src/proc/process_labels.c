// SPDX-License-Identifier: Apache-2.0
#include "proc/process_labels.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/process_table.h"

static bool labels_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct process_labels *)entry)->pid == *(const uint32_t *)key;
}

void label_cache__init(struct label_cache *lc, const char *service_override)
{
	memset(lc, 0, sizeof(*lc));
	hashmap__init(&lc->by_pid, labels_equal, NULL);
	lc->service_override = service_override && *service_override ? service_override : NULL;
	lc->root = "/";
	if (gethostname(lc->host_name, sizeof(lc->host_name) - 1))
		lc->host_name[0] = '\0';
}

void label_cache__clear(struct label_cache *lc)
{
	void *e;

	if (!lc)
		return;
	for (size_t i = 0; hashmap__next(&lc->by_pid, &i, &e);)
		free(e);
	hashmap__clear(&lc->by_pid);
}

static void read_labels(struct label_cache *lc, struct process_labels *l, const char *comm)
{
	char path[64], exe[sizeof(l->exe_path)];
	ssize_t n;
	char *slash;

	snprintf(path, sizeof(path), "/proc/%u/exe", l->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	/*
	 * Gone since it was read (or asked for by another name, a thread's):
	 * what was read while it lived stays the truth.
	 */
	if (n <= 0 && l->exe_path[0])
		return;
	snprintf(l->comm, sizeof(l->comm), "%s", comm ? comm : "");
	memcpy(l->exe_path, exe, n > 0 ? (size_t)n : 0);
	l->exe_path[n > 0 ? n : 0] = '\0';
	/* The kernel marks a replaced or removed file; the name it had is what matters. */
	if (n > 10 && !strcmp(l->exe_path + n - 10, " (deleted)"))
		l->exe_path[n - 10] = '\0';
	slash = strrchr(l->exe_path, '/');
	l->exe_name = slash && slash[1] ? slash + 1 : l->comm;

	l->container_id[0] = l->container_name[0] = '\0';
	if (!cgroup__container_id(l->pid, l->container_id))
		cgroup__container_name(lc->root, l->container_id, l->container_name,
				       sizeof(l->container_name));
	if (lc->service_override)
		l->service = lc->service_override;
	else if (l->container_name[0])
		l->service = l->container_name;
	else if (l->exe_path[0])
		l->service = l->exe_name;
	else {
		snprintf(l->unknown_service, sizeof(l->unknown_service), "unknown_service:%s",
			 l->comm);
		l->service = l->unknown_service;
	}
}

const struct process_labels *label_cache__get(struct label_cache *lc, uint32_t pid,
					      const char *comm)
{
	uint64_t h = hash_u64(pid);
	struct process_labels *l = hashmap__find(&lc->by_pid, h, &pid);

	if (l && comm && strncmp(l->comm, comm, sizeof(l->comm) - 1))
		read_labels(lc, l, comm); /* exec: a new image */
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return NULL;
		l->pid = pid;
		read_labels(lc, l, comm);
		if (hashmap__insert(&lc->by_pid, h, l)) {
			free(l);
			return NULL;
		}
	}
	l->used_epoch = lc->epoch;
	return l;
}

void label_cache__note(struct label_cache *lc, uint32_t pid)
{
	char path[64], comm[OP_TASK_COMM_LEN];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0)
		return;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	label_cache__get(lc, pid, comm);
}

void label_cache__note_gone(struct label_cache *lc, uint32_t pid, const char *exec_path)
{
	uint64_t h = hash_u64(pid);
	struct process_labels *l = hashmap__find(&lc->by_pid, h, &pid);
	const char *slash = strrchr(exec_path, '/');

	if ((l && l->exe_path[0]) || exec_path[0] != '/' || !slash[1])
		return; /* read while it lived (the truth), or not a file's path */
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return;
		l->pid = pid;
		if (hashmap__insert(&lc->by_pid, h, l)) {
			free(l);
			return;
		}
		l->used_epoch = lc->epoch;
	}
	snprintf(l->exe_path, sizeof(l->exe_path), "%s", exec_path);
	l->exe_name = strrchr(l->exe_path, '/') + 1;
	l->container_id[0] = l->container_name[0] = '\0';
	l->service = lc->service_override ? lc->service_override : l->exe_name;
}

static void on_forget(void *ctx, const struct process *p)
{
	if (p->exec_path)
		label_cache__note_gone(ctx, p->pid, p->exec_path);
}

static void on_maps(void *ctx, const struct process *p)
{
	if (!p->exited && !p->gone)
		label_cache__note(ctx, p->pid);
}

int label_cache__listen(struct label_cache *lc, struct process_table *pt)
{
	/* maps_seen for a process whose files are still being opened, maps_read for the rest. */
	struct process_listener l = {
	    .maps_read = on_maps, .maps_seen = on_maps, .forget = on_forget, .ctx = lc};

	return process_table__add_listener(pt, &l);
}

void label_cache__expire(struct label_cache *lc)
{
	struct process_labels *stale[256];
	size_t n;
	void *e;

	do {
		n = 0;
		for (size_t i = 0; n < 256 && hashmap__next(&lc->by_pid, &i, &e);) {
			struct process_labels *l = e;

			/* Kept when used in this interval or the one before. */
			if (l->used_epoch + 1 < lc->epoch)
				stale[n++] = l;
		}
		for (size_t i = 0; i < n; i++) {
			hashmap__remove(&lc->by_pid, hash_u64(stale[i]->pid), &stale[i]->pid);
			free(stale[i]);
		}
	} while (n == 256);
	lc->epoch++;
}
