// SPDX-License-Identifier: Apache-2.0
#include "interp/frame_store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/process_table.h"

struct frame_store_key {
	uint32_t pid;
	uint64_t addr;
	uint64_t fingerprint;
	uint32_t id;
	uint64_t used; /* fs->interval when a sample last named it */
};

struct frame_store_proc {
	uint32_t pid;
	size_t objects; /* counted at each interval's end */
	size_t bytes;	/* added as read, recounted at each interval's end */
};

static bool key_equal(const void *entry, const void *key, void *ctx)
{
	const struct frame_store_key *a = entry, *b = key;

	(void)ctx;
	return a->pid == b->pid && a->addr == b->addr;
}

static uint64_t key_hash(uint32_t pid, uint64_t addr)
{
	return hash_u64(addr ^ hash_u64(pid));
}

static bool proc_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct frame_store_proc *)entry)->pid == *(const uint32_t *)key;
}

void frame_store__init(struct frame_store *fs, const struct frame_store_limits *limits,
		       void (*free_obj)(void *obj), size_t (*obj_bytes)(const void *obj))
{
	memset(fs, 0, sizeof(*fs));
	fs->limits = *limits;
	fs->free_obj = free_obj;
	fs->obj_bytes = obj_bytes;
	hashmap__init(&fs->keys, key_equal, NULL);
	hashmap__init(&fs->procs, proc_equal, NULL);
	id_pool__init(&fs->ids);
}

void frame_store__clear(struct frame_store *fs)
{
	void *e;

	if (!fs)
		return;
	for (size_t i = 0; hashmap__next(&fs->keys, &i, &e);)
		free(e);
	for (size_t i = 0; hashmap__next(&fs->procs, &i, &e);)
		free(e);
	hashmap__clear(&fs->keys);
	hashmap__clear(&fs->procs);
	for (size_t id = 1; id <= id_pool__end(&fs->ids); id++) {
		void *obj = id_pool__get(&fs->ids, (uint32_t)id);

		if (obj)
			fs->free_obj(obj);
	}
	id_pool__clear(&fs->ids);
	free(fs->retired);
	fs->retired = NULL;
	fs->n_retired = fs->cap_retired = 0;
	fs->bytes = 0;
}

static struct frame_store_proc *proc_of(const struct frame_store *fs, uint32_t pid)
{
	return hashmap__find(&fs->procs, hash_u64(pid), &pid);
}

/* pid's accounting, created on first use; NULL on ENOMEM. */
static struct frame_store_proc *proc_get(struct frame_store *fs, uint32_t pid)
{
	struct frame_store_proc *fp = proc_of(fs, pid);

	if (fp)
		return fp;
	fp = calloc(1, sizeof(*fp));
	if (!fp)
		return NULL;
	fp->pid = pid;
	if (hashmap__insert(&fs->procs, hash_u64(pid), fp)) {
		free(fp);
		return NULL;
	}
	return fp;
}

bool frame_store__find(struct frame_store *fs, uint32_t pid, uint64_t addr, uint64_t fingerprint,
		       uint32_t *id, bool *reused)
{
	struct frame_store_key key = {.pid = pid, .addr = addr};
	struct frame_store_key *k = hashmap__find(&fs->keys, key_hash(pid, addr), &key);

	*reused = false;
	if (!k)
		return false;
	if (k->fingerprint != fingerprint) {
		*reused = true;
		return false;
	}
	k->used = fs->interval;
	*id = k->id;
	return true;
}

size_t frame_store__proc_bytes(const struct frame_store *fs, uint32_t pid)
{
	const struct frame_store_proc *fp = proc_of(fs, pid);

	return fp ? fp->bytes : 0;
}

bool frame_store__budget_allows(const struct frame_store *fs, uint32_t pid)
{
	return frame_store__proc_bytes(fs, pid) < fs->limits.bytes_per_process &&
	       fs->bytes < fs->limits.bytes_total;
}

/* Frees object id now; its id goes to the next new one. */
static void free_id(struct frame_store *fs, uint32_t id)
{
	const void *obj = id_pool__get(&fs->ids, id);
	size_t bytes = obj ? fs->obj_bytes(obj) : 0;
	void *gone = obj ? id_pool__remove(&fs->ids, id) : NULL;

	if (!gone)
		return; /* unknown, or kept (ENOMEM): freed at the end */
	fs->bytes -= bytes;
	fs->free_obj(gone);
	fs->stats.evicted++;
}

/* Queues id to be freed by frame_store__end_interval(). 0, or -ENOMEM (not queued). */
static int retire_id(struct frame_store *fs, uint32_t id)
{
	if (fs->n_retired == fs->cap_retired) {
		size_t cap = fs->cap_retired ? fs->cap_retired * 2 : 64;
		uint32_t *tmp = realloc(fs->retired, cap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		fs->retired = tmp;
		fs->cap_retired = cap;
	}
	fs->retired[fs->n_retired++] = id;
	return 0;
}

uint32_t frame_store__add(struct frame_store *fs, uint32_t pid, uint64_t addr, uint64_t fingerprint,
			  void *obj)
{
	struct frame_store_key key = {.pid = pid, .addr = addr}, *k;
	uint64_t h = key_hash(pid, addr);
	struct frame_store_proc *fp = proc_get(fs, pid);
	size_t bytes = fs->obj_bytes(obj);

	if (!fp) {
		fs->free_obj(obj);
		return 0;
	}
	fp->bytes += bytes;
	k = hashmap__find(&fs->keys, h, &key);
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k || hashmap__insert(&fs->keys, h, k)) {
			free(k);
			fs->free_obj(obj);
			return 0;
		}
		k->pid = pid;
		k->addr = addr;
	}
	/* The address holds another object now: samples of this interval may
	 * still name the old one, so it goes when the interval ends. */
	if (k->id && retire_id(fs, k->id))
		free_id(fs, k->id);
	k->fingerprint = fingerprint;
	k->used = fs->interval;
	k->id = id_pool__add(&fs->ids, obj);
	if (!k->id) {
		fs->free_obj(obj);
		return 0;
	}
	fs->bytes += bytes;
	if (fs->bytes > fs->stats.bytes_peak)
		fs->stats.bytes_peak = fs->bytes;
	return k->id;
}

const void *frame_store__get(const struct frame_store *fs, uint32_t id)
{
	return id_pool__get(&fs->ids, id);
}

static bool key_stale(const struct frame_store *fs, const struct frame_store_key *k,
		      const struct process_table *pt, bool over_cap)
{
	const struct process *p = process_table__find(pt, k->pid);

	if (!p || p->exited)
		return true;
	return over_cap && k->used != fs->interval;
}

/* Per process: how many objects it holds and their bytes, counted again. */
static void recount(struct frame_store *fs)
{
	void *e;

	for (size_t i = 0; hashmap__next(&fs->procs, &i, &e);) {
		((struct frame_store_proc *)e)->objects = 0;
		((struct frame_store_proc *)e)->bytes = 0;
	}
	for (size_t i = 0; hashmap__next(&fs->keys, &i, &e);) {
		struct frame_store_key *k = e;
		struct frame_store_proc *fp = proc_get(fs, k->pid);
		const void *obj = id_pool__get(&fs->ids, k->id);

		if (!fp)
			continue;
		fp->objects++;
		if (obj)
			fp->bytes += fs->obj_bytes(obj);
	}
}

/* Forgets the accounting of processes that left (their objects went with them). */
static void drop_gone_procs(struct frame_store *fs, const struct process_table *pt)
{
	struct frame_store_proc **empty = NULL;
	size_t n = 0, cap = 0;
	void *e;

	for (size_t i = 0; hashmap__next(&fs->procs, &i, &e);) {
		struct frame_store_proc *fp = e;
		const struct process *p = process_table__find(pt, fp->pid);

		if (p && !p->exited)
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct frame_store_proc **tmp = realloc(empty, c * sizeof(*tmp));

			if (!tmp)
				break; /* the rest next time */
			empty = tmp;
			cap = c;
		}
		empty[n++] = fp;
	}
	/* Removed after the walk: removing moves entries the iteration has not reached. */
	for (size_t i = 0; i < n; i++) {
		hashmap__remove_entry(&fs->procs, hash_u64(empty[i]->pid), empty[i]);
		free(empty[i]);
	}
	free(empty);
}

size_t frame_store__end_interval(struct frame_store *fs, const struct process_table *pt)
{
	struct frame_store_key **drop = NULL;
	size_t n = 0, cap = 0;
	void *e;

	for (size_t i = 0; i < fs->n_retired; i++)
		free_id(fs, fs->retired[i]);
	fs->n_retired = 0;
	recount(fs);
	for (size_t i = 0; hashmap__next(&fs->keys, &i, &e);) {
		struct frame_store_key *k = e;
		const struct frame_store_proc *fp = proc_of(fs, k->pid);
		bool over_cap = !fp || fp->objects > fs->limits.objects_per_process ||
				fp->bytes > fs->limits.bytes_per_process ||
				fs->bytes > fs->limits.bytes_total;

		if (!key_stale(fs, k, pt, over_cap))
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 256;
			struct frame_store_key **tmp = realloc(drop, c * sizeof(*tmp));

			if (!tmp)
				break;
			drop = tmp;
			cap = c;
		}
		drop[n++] = k;
	}
	for (size_t i = 0; i < n; i++) {
		hashmap__remove_entry(&fs->keys, key_hash(drop[i]->pid, drop[i]->addr), drop[i]);
		free_id(fs, drop[i]->id);
		free(drop[i]);
	}
	free(drop);
	/*
	 * The counts stay as they were before the drop until the next interval's
	 * end: a process that was over its budget reads no new object meanwhile.
	 */
	drop_gone_procs(fs, pt);
	fs->interval++;
	return fs->ids.live;
}

size_t frame_store__held(const struct frame_store *fs, uint32_t pid)
{
	size_t n = 0;
	void *e;

	for (size_t i = 0; hashmap__next(&fs->keys, &i, &e);)
		n += ((const struct frame_store_key *)e)->pid == pid;
	return n;
}
