// SPDX-License-Identifier: Apache-2.0
#include "engine/targets.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "proc/cgroup.h"
#include "proc/proc_pids.h"
#include "util/array.h"
#include "util/log.h"
#include "util/read_file.h"

int targets__init(struct targets *t, const struct targets_opts *o)
{
	memset(t, 0, sizeof(*t));
	t->o = *o;
	t->map_fd = -1;
	t->gen_fd = -1;
	t->by_process = o->n_pids || o->comm || o->container;
	if (o->comm) {
		if (regcomp(&t->comm, o->comm, REG_EXTENDED | REG_NOSUB)) {
			pr_err("--comm: '%s' is not an extended regular expression", o->comm);
			return -EINVAL;
		}
		t->has_comm = true;
	}
	return 0;
}

void targets__clear(struct targets *t)
{
	if (t->has_comm)
		regfree(&t->comm);
	t->has_comm = false;
}

bool targets__by_process(const struct targets *t)
{
	return t->by_process;
}

bool targets__report_all_execs(const struct targets *t)
{
	/* A name or a container can change at exec: every exec must be seen. */
	return t->has_comm || t->o.container;
}

bool targets__follow_children(const struct targets *t)
{
	/* -p names processes, not their children; a name or a container is inherited by a
	 * fork (and checked again at its exec), a command's children are its own. */
	return t->o.follow_children || (!t->o.n_pids && (t->has_comm || t->o.container));
}

/* pid's comm from /proc into buf (the kernel's 15 characters), "" when gone. */
static const char *read_comm(uint32_t pid, char *buf, size_t size)
{
	char path[64], *text = NULL;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	buf[0] = '\0';
	if (!read_file(path, &text, &len)) {
		while (len && text[len - 1] == '\n')
			len--;
		snprintf(buf, size, "%.*s", (int)len, text);
		free(text);
	}
	return buf;
}

bool targets__match(const struct targets *t, uint32_t pid, const char *comm,
		    const char *container_id, bool in_tree)
{
	char comm_buf[64], id_buf[CGROUP_ID_LEN + 1];

	if (t->o.follow_children) {
		if (!in_tree)
			return false;
	} else if (t->o.n_pids) {
		bool listed = false;

		for (size_t i = 0; i < t->o.n_pids && !listed; i++)
			listed = t->o.pids[i] == pid;
		if (!listed)
			return false;
	}
	if (t->has_comm) {
		if (!comm)
			comm = read_comm(pid, comm_buf, sizeof(comm_buf));
		if (regexec(&t->comm, comm, 0, NULL, 0))
			return false;
	}
	if (t->o.container) {
		if (!container_id)
			container_id = cgroup__container_id(pid, id_buf) ? "" : id_buf;
		if (strncmp(container_id, t->o.container, strlen(t->o.container)))
			return false;
	}
	return true;
}

/* After a delete: the sampler's CPUs forget the pid they remembered in the map
 * (pid_wanted_cached in bpf/sampler.bpf.c). This process is the one writer. */
static void bump_gen(struct targets *t)
{
	uint32_t zero = 0;
	uint64_t gen = 0;

	if (t->gen_fd < 0)
		return;
	/* Not read: writing 0 would change nothing (a missed bump) or set the
	 * generation back to a value the CPUs may meet again with pids they
	 * remember from it. */
	if (bpf_map_lookup_elem(t->gen_fd, &zero, &gen)) {
		pr_warn("cannot read the pid filter's generation: %s", strerror(errno));
		return;
	}
	gen++;
	if (bpf_map_update_elem(t->gen_fd, &zero, &gen, BPF_ANY))
		pr_warn("cannot mark the pid filter changed: %s", strerror(errno));
}

/* Puts pid in or out of the map; counts a full map. */
static void set_target(struct targets *t, uint32_t pid, bool on)
{
	uint8_t one = 1;

	if (!on) {
		if (bpf_map_delete_elem(t->map_fd, &pid))
			return;
		t->stats.removed++;
		bump_gen(t);
		return;
	}
	if (bpf_map_update_elem(t->map_fd, &pid, &one, BPF_ANY)) {
		t->stats.map_full++;
		return;
	}
	t->stats.matched++;
}

/* The pids made targets at attach, for the caller. */
struct attach_ctx {
	struct targets *t;
	uint32_t *pids;
	size_t n, cap;
};

/* Appends pid to the list. 0 or -ENOMEM. */
static int push_pid(struct attach_ctx *a, uint32_t pid)
{
	if (array__grow(a->pids, a->cap, a->n))
		return -ENOMEM;
	a->pids[a->n++] = pid;
	return 0;
}

/* One process of /proc: a target when it matches (proc_pids__for_each's callback). */
static int attach_running(uint32_t pid, void *ctx)
{
	struct attach_ctx *a = ctx;

	if (!targets__match(a->t, pid, NULL, NULL, true)) {
		a->t->stats.excluded++;
		return 0;
	}
	set_target(a->t, pid, true);
	return push_pid(a, pid);
}

int targets__attach(struct targets *t, int map_fd, int gen_fd, uint32_t **out)
{
	struct attach_ctx a = {.t = t};
	int err = 0;

	t->map_fd = map_fd;
	t->gen_fd = gen_fd;
	if (t->o.follow_children || t->o.n_pids) {
		/* A command's process is a target before its exec (its comm is still ours). */
		for (size_t i = 0; i < t->o.n_pids && !err; i++) {
			if (!t->o.follow_children &&
			    !targets__match(t, t->o.pids[i], NULL, NULL, true))
				continue;
			set_target(t, t->o.pids[i], true);
			err = push_pid(&a, t->o.pids[i]);
		}
	} else {
		err = proc_pids__for_each(attach_running, &a);
	}
	if (err) {
		free(a.pids);
		return err;
	}
	if (out)
		*out = a.pids;
	else
		free(a.pids);
	return (int)a.n;
}

bool targets__on_exec(struct targets *t, uint32_t pid, const char *comm)
{
	uint8_t v;
	bool in_tree, ok;

	if (!t->by_process && !t->o.follow_children)
		return true;
	in_tree = t->map_fd >= 0 && !bpf_map_lookup_elem(t->map_fd, &pid, &v);
	ok = targets__match(t, pid, comm, NULL, in_tree);
	if (ok != in_tree) {
		set_target(t, pid, ok);
		if (!ok)
			t->stats.excluded++;
	} else if (!ok) {
		t->stats.excluded++;
	}
	return ok;
}

void targets__on_exit(struct targets *t, uint32_t pid)
{
	if ((t->by_process || t->o.follow_children) && t->map_fd >= 0)
		set_target(t, pid, false);
}
