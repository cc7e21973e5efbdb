// SPDX-License-Identifier: Apache-2.0
#include "proc/process_table.h"

#include <signal.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gelf.h>

#include "elf/elf_file.h"
#include "proc/file_cache.h"
#include "util/file_worker.h"
#include "proc/proc_maps.h"
#include "proc/proc_pids.h"
#include "unwind/lpm_ranges.h"
#include "unwind/unwind_maps.h"
#include "util/log.h"
#include "util/clock.h"

/* A process whose samples keep missing its maps is re-read at most this often. */
#define REFRESH_MIN_INTERVAL_NS (50ull * 1000 * 1000)
/* ... and one with more mappings than are tracked (its untracked addresses always
 * miss; reading 20,000 lines of maps costs the kernel tens of milliseconds). */
#define REFRESH_TRUNCATED_INTERVAL_NS (5000ull * 1000 * 1000)

/* p's mappings as the ranges unwind/lpm_ranges.h publishes. */
static struct lpm_ranges ranges_of(struct process_mapping *maps, size_t n)
{
	return (struct lpm_ranges){
	    .first = maps ? &maps->lpm : NULL, .n = n, .stride = sizeof(*maps)};
}

static void release_tables(struct process_table *pt, struct process_mapping *maps, size_t n)
{
	struct lpm_ranges r = ranges_of(maps, n);

	lpm_ranges__release(pt->unwind, &r);
}

/* Removes p's mappings from the BPF maps and drops its table references. */
static void unpublish(struct process_table *pt, struct process *p)
{
	struct lpm_ranges r =
	    p->waiting ? ranges_of(p->published, p->n_published) : ranges_of(p->maps, p->n_maps);

	if (!pt->unwind)
		return;
	lpm_ranges__unpublish(pt->unwind, p->pid, &r);
}

/* What the LPM trie says about a mapping of file f (lpm_ranges__range_id()). */
static uint64_t range_id_of(const struct cached_file *f)
{
	if (!f)
		return 0;
	return lpm_ranges__range_id(f->elf != NULL, f->table_id, f->open_error, f->inode == 0);
}

/* lpm_owner.find: the greediest pid's mappings, for its eviction. */
static bool find_ranges(void *ctx, uint32_t pid, struct lpm_ranges *ranges, bool **evicted)
{
	struct process *p = process_table__find(ctx, pid);

	if (!p)
		return false;
	*ranges = ranges_of(p->maps, p->n_maps);
	*evicted = &p->lpm_evicted;
	return true;
}

/*
 * Takes references on the tables of p's mappings (set in table_id), within
 * the process's share of delta pages (lpm_ranges__acquire_within_share()).
 */
static void acquire_tables(struct process_table *pt, struct process *p, uint64_t *table_pages)
{
	for (size_t i = 0; i < p->n_maps; i++) {
		struct process_mapping *m = &p->maps[i];
		struct cached_file *f = file_cache__at(pt->files, m->file_slot);

		m->table_id = 0;
		m->range_id = range_id_of(f);
		if (!f || !f->elf || !f->table_id || !m->has_bias)
			continue;
		/* With a file worker every table is built by now; without one it is built here. */
		m->table_id = lpm_ranges__acquire_within_share(
		    pt->unwind, f->table_id, pt->files->worker ? NULL : f->elf, table_pages);
	}
}

/*
 * Puts p's new executable file mappings into the BPF maps in place of the old
 * ones (lpm_ranges__publish()), their tables acquired first.
 */
static void publish(struct process_table *pt, struct process *p, struct process_mapping *old,
		    size_t n_old)
{
	uint64_t table_pages = 0; /* of the tables p's mappings took so far */
	struct lpm_ranges r, o = ranges_of(old, n_old);
	struct lpm_owner owner = {.find = find_ranges, .ctx = pt};

	if (!pt->unwind)
		return;
	if (!p->lpm_evicted)
		acquire_tables(pt, p, &table_pages);
	r = ranges_of(p->maps, p->n_maps);
	lpm_ranges__publish(pt->unwind, p->pid, &r, &o, &p->lpm_evicted, &owner);
	/* Mappings past the cap have no range: their addresses are not new ones. */
	if (p->truncated && !p->lpm_evicted)
		unwind_maps__add_pid(pt->unwind, p->pid, OP_MARKER_F_PARTIAL);
}

static void unref_files(struct process_table *pt, const struct process_mapping *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		file_cache__unref(pt->files, maps[i].file_slot);
}

void process_table__set_unwind_maps(struct process_table *pt, struct unwind_maps *um)
{
	pt->unwind = um;
}

int process_table__add_listener(struct process_table *pt, const struct process_listener *l)
{
	if (pt->n_listeners == PROCESS_LISTENERS_MAX)
		return -ENOSPC;
	pt->listeners[pt->n_listeners++] = *l;
	return 0;
}

void process_table__remove_listener(struct process_table *pt, void *ctx)
{
	for (size_t i = 0; i < pt->n_listeners; i++) {
		if (pt->listeners[i].ctx != ctx)
			continue;
		memmove(&pt->listeners[i], &pt->listeners[i + 1],
			(pt->n_listeners - i - 1) * sizeof(pt->listeners[0]));
		pt->n_listeners--;
		return;
	}
}

/* Calls callback cb of every listener that has one, with p. */
#define TELL(pt, cb, p)                                                                            \
	do {                                                                                       \
		for (size_t i_ = 0; i_ < (pt)->n_listeners; i_++)                                  \
			if ((pt)->listeners[i_].cb)                                                \
				(pt)->listeners[i_].cb((pt)->listeners[i_].ctx, (p));              \
	} while (0)

static bool pid_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct process *)entry)->pid == *(const uint32_t *)key;
}

void process_table__init(struct process_table *pt, struct file_cache *files)
{
	memset(pt, 0, sizeof(*pt));
	hashmap__init(&pt->by_pid, pid_equal, NULL);
	pt->files = files;
}

void process_table__clear(struct process_table *pt)
{
	struct process *p;
	void *e;

	if (!pt)
		return;
	for (size_t i = 0; hashmap__next(&pt->by_pid, &i, &e);) {
		p = e;
		free(p->maps);
		free(p->published);
		free(p->exec_path);
		free(p);
	}
	hashmap__clear(&pt->by_pid);
}

/* The ELF address of each mapping's first byte, for files opened since the read. */
static void set_biases(struct process_table *pt, struct process *p)
{
	for (size_t i = 0; i < p->n_maps; i++) {
		struct process_mapping *m = &p->maps[i];
		struct cached_file *f = file_cache__at(pt->files, m->file_slot);
		uint64_t vaddr;

		if (m->has_bias || !f || !f->elf)
			continue;
		if (elf_file__mapping_bias(f->elf, m->offset, m->end - m->start, PF_X, &vaddr)) {
			m->bias = m->start - vaddr;
			m->has_bias = true;
		}
	}
}

/*
 * Whether every file of p's maps is ready to publish: opened (or failed),
 * and its table built (or failed). Posts the builds still missing.
 */
static bool files_ready(struct process_table *pt, struct process *p)
{
	bool ready = true;

	for (size_t i = 0; i < p->n_maps; i++) {
		struct cached_file *f = file_cache__at(pt->files, p->maps[i].file_slot);
		struct table_source src;
		struct table_build_job *j;

		if (f && f->pending) {
			ready = false;
			continue;
		}
		if (!pt->unwind || !pt->files->worker || !f || !f->elf || !f->table_id ||
		    !p->maps[i].has_bias)
			continue;
		switch (unwind_maps__table_state(pt->unwind, f->table_id)) {
		case UNWIND_TABLE_READY:
			break;
		case UNWIND_TABLE_BUILDING:
			ready = false;
			break;
		case UNWIND_TABLE_UNKNOWN:
			/* Opened again on the worker: a queued job holds no descriptor. */
			if (file_cache__table_source(pt->files, f->slot, &src))
				break;
			j = unwind_maps__build_job(pt->unwind, f->table_id, &src);
			if (j) {
				/* Files actually sampled first: a process with no sample
				 * waiting builds in the background (process_table__promote()
				 * moves its jobs ahead at its first held sample). */
				file_worker__post_as(pt->files->worker, &j->job, !p->held_bytes);
				ready = false;
			}
			break;
		}
	}
	return ready;
}

size_t process_table__promote(struct process_table *pt, struct process *p)
{
	const struct file_job *job;
	size_t n = 0;

	if (!pt->files->worker)
		return 0;
	for (size_t i = 0; i < p->n_maps; i++) {
		struct cached_file *f = file_cache__at(pt->files, p->maps[i].file_slot);

		if (!f)
			continue;
		job = f->pending ? f->open_job
		      : f->table_id && pt->unwind
			  ? unwind_maps__build_job_of(pt->unwind, f->table_id)
			  : NULL;
		if (job && file_worker__promote(pt->files->worker, job))
			n++;
	}
	return n;
}

/*
 * Publishes p's maps in place of p->published when its files are ready (the
 * old list's files and tables released then). False: p has to wait.
 */
static bool try_publish(struct process_table *pt, struct process *p)
{
	set_biases(pt, p);
	if (!files_ready(pt, p))
		return false;
	if (p->exited) {
		/* Exited while waiting: nothing to publish, its held samples still need the
		 * tables (see process_table__publish_ready). */
		return true;
	}
	publish(pt, p, p->published, p->n_published);
	unref_files(pt, p->published, p->n_published);
	free(p->published);
	p->published = NULL;
	p->n_published = 0;
	TELL(pt, maps_read, p);
	return true;
}

/* Whether maps (sorted by start) hold o as it is: same range, file and offset. */
static bool still_mapped(const struct process_mapping *maps, size_t n,
			 const struct process_mapping *o)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps[mid].start < o->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && maps[lo].start == o->start && maps[lo].end == o->end &&
	       maps[lo].file_slot == o->file_slot && maps[lo].offset == o->offset;
}

/*
 * p waits for the files of its new maps while p->published stays in the BPF
 * maps: a published range the new maps no longer hold as it was (unmapped,
 * or another file mapped there: a library dlclosed and another dlopened at
 * its address) leaves them now, so the new code is not walked with the old
 * file's table meanwhile (its samples, with no range and no pid marker, come
 * as stack copies, held until the new tables are in).
 */
static void withdraw_replaced(struct process_table *pt, struct process *p)
{
	size_t kept = 0;

	for (size_t i = 0; i < p->n_published; i++) {
		struct process_mapping *o = &p->published[i];

		if (still_mapped(p->maps, p->n_maps, o)) {
			p->published[kept++] = *o;
			continue;
		}
		if (o->range_id && pt->unwind)
			unwind_maps__remove_range(pt->unwind, p->pid, o->start, o->end);
		if (o->table_id && pt->unwind)
			unwind_maps__release(pt->unwind, o->table_id);
		file_cache__unref(pt->files, o->file_slot);
		pt->stats.withdrawn++;
	}
	p->n_published = kept;
}

/* How many files of p's maps are still being opened on the file worker. */
static uint32_t pending_files(const struct process_table *pt, const struct process *p)
{
	uint32_t n = 0;

	for (size_t i = 0; i < p->n_maps; i++) {
		const struct cached_file *f = file_cache__at(pt->files, p->maps[i].file_slot);

		n += f && f->pending;
	}
	return n;
}

/* Tells the listeners of waiting p (maps_seen), its pending files counted. */
static void offer_waiting(struct process_table *pt, struct process *p)
{
	p->offered_pending = pending_files(pt, p);
	TELL(pt, maps_seen, p);
}

/*
 * p still waits (tables building) but some file that was being opened when
 * the listeners last saw it is open now: they are told again, or a runtime
 * whose file was one of them (node's 100 MB binary) would attach only once
 * every table is built. At most once per file per maps read: bounded.
 */
static void reoffer_opened(struct process_table *pt, struct process *p)
{
	if (!p->offered_pending || p->exited || pending_files(pt, p) >= p->offered_pending)
		return;
	pt->stats.reoffered++;
	offer_waiting(pt, p);
}

size_t process_table__publish_ready(struct process_table *pt, process_ready_fn fn, void *ctx)
{
	struct process **ready = NULL;
	size_t n = 0, cap = 0;
	void *e;

	if (!pt->n_waiting)
		return 0;
	for (size_t i = 0; hashmap__next(&pt->by_pid, &i, &e);) {
		struct process *p = e;

		if (!p->waiting)
			continue;
		if (!try_publish(pt, p)) {
			reoffer_opened(pt, p);
			continue;
		}
		p->offered_pending = 0;
		p->waiting = false;
		pt->n_waiting--;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 16;
			struct process **tmp = realloc(ready, c * sizeof(*tmp));

			if (!tmp)
				continue; /* published; its held records go with the next release */
			ready = tmp;
			cap = c;
		}
		ready[n++] = p;
	}
	/* Called after the walk: fn may read maps (hashmap changes) for other pids. */
	for (size_t i = 0; i < n; i++) {
		struct process *p = ready[i];

		if (p->exited && pt->unwind) {
			uint64_t pages = 0;

			acquire_tables(pt, p, &pages);
			if (fn)
				fn(ctx, p);
			release_tables(pt, p->maps, p->n_maps);
		} else if (fn) {
			fn(ctx, p);
		}
	}
	free(ready);
	return n;
}

/* One executable mapping of a maps read, with how many its file has. */
struct map_pick {
	const struct proc_map *m;
	size_t index;
	size_t per_file;
};

static int pick_by_file(const void *a, const void *b)
{
	const struct proc_map *x = ((const struct map_pick *)a)->m;
	const struct proc_map *y = ((const struct map_pick *)b)->m;

	if (x->dev_major != y->dev_major)
		return x->dev_major < y->dev_major ? -1 : 1;
	if (x->dev_minor != y->dev_minor)
		return x->dev_minor < y->dev_minor ? -1 : 1;
	if (x->inode != y->inode)
		return x->inode < y->inode ? -1 : 1;
	return x->inode ? 0 : strcmp(x->path, y->path);
}

static int pick_by_share(const void *a, const void *b)
{
	const struct map_pick *x = a, *y = b;

	if (x->per_file != y->per_file)
		return x->per_file < y->per_file ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Which executable mappings of raw to track when there are more than
 * PROCESS_MAPS_MAX: the files mapped fewest times first, so that a process
 * mapping one file (or anonymous JIT memory) 50,000 times still has its
 * executable, libc and every other file tracked, and only copies of the
 * mass-mapped file go untracked. Returns a mask (caller frees) or NULL when
 * everything fits (or on ENOMEM: then the first PROCESS_MAPS_MAX are kept).
 */
static bool *pick_mappings(const struct proc_map *raw, size_t n_raw)
{
	struct map_pick *picks;
	size_t n = 0;
	bool *keep;

	for (size_t i = 0; i < n_raw; i++)
		n += !!(raw[i].perms & PROC_MAP_X);
	if (n <= PROCESS_MAPS_MAX)
		return NULL;
	picks = malloc(n * sizeof(*picks));
	keep = calloc(n_raw, sizeof(*keep));
	if (!picks || !keep)
		goto enomem;
	n = 0;
	for (size_t i = 0; i < n_raw; i++)
		if (raw[i].perms & PROC_MAP_X)
			picks[n++] = (struct map_pick){.m = &raw[i], .index = i};
	qsort(picks, n, sizeof(*picks), pick_by_file);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !pick_by_file(&picks[i], &picks[j]); j++)
			;
		for (size_t k = i; k < j; k++)
			picks[k].per_file = j - i;
	}
	qsort(picks, n, sizeof(*picks), pick_by_share);
	for (size_t i = 0; i < PROCESS_MAPS_MAX; i++)
		keep[picks[i].index] = true;
	free(picks);
	return keep;
enomem:
	free(picks);
	free(keep);
	return NULL;
}

static bool any_code(const struct proc_map *raw, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (raw[i].perms & PROC_MAP_X)
			return true;
	return false;
}

int process_table__refresh(struct process_table *pt, struct process *p)
{
	struct process_mapping *maps = NULL, *old;
	struct proc_map *raw = NULL;
	struct cached_file *f;
	bool *keep = NULL;
	size_t n_old;
	uint64_t vaddr;
	size_t n_raw = 0, n = 0;
	int err;

	p->refreshed_ns = clock__now_ns();
	p->refreshes++;
	pt->stats.maps_reads++;
	err = proc_maps__read((pid_t)p->pid, &raw, &n_raw);
	if (err) {
		pt->stats.maps_errors++;
		if (err == -ENOENT)
			p->gone = true;
		return err;
	}
	/*
	 * A process past its exit_mm (exiting, or a zombie) reads as no mapping
	 * at all; every live process maps its program or the loader. Its samples
	 * still queued were taken with the maps it had: keep those.
	 */
	if (p->n_maps && !any_code(raw, n_raw)) {
		pt->stats.maps_errors++;
		p->gone = true;
		err = -ESRCH;
		goto cleanup;
	}
	maps = malloc((n_raw ? n_raw : 1) * sizeof(*maps));
	if (!maps) {
		err = -ENOMEM;
		goto cleanup;
	}
	p->truncated = false;
	keep = pick_mappings(raw, n_raw);
	/* /proc/PID/maps is sorted by address; only executable code is sampled. */
	for (size_t i = 0; i < n_raw; i++) {
		uint32_t slot;

		if (!(raw[i].perms & PROC_MAP_X))
			continue;
		if ((keep && !keep[i]) || n >= PROCESS_MAPS_MAX) {
			/* A bounded cost per process: the rest is counted, not tracked. */
			pt->stats.maps_truncated++;
			p->truncated = true;
			continue;
		}
		slot = file_cache__get(pt->files, (pid_t)p->pid, &raw[i]);
		if (!slot) {
			err = -ENOMEM;
			goto cleanup;
		}
		file_cache__ref(pt->files, slot);
		maps[n] = (struct process_mapping){.start = raw[i].start,
						   .end = raw[i].end,
						   .offset = raw[i].offset,
						   .file_slot = slot};
		f = file_cache__at(pt->files, slot);
		if (f && f->elf &&
		    elf_file__mapping_bias(f->elf, raw[i].offset, raw[i].end - raw[i].start, PF_X,
					   &vaddr)) {
			maps[n].bias = raw[i].start - vaddr;
			maps[n].has_bias = true;
		}
		n++;
	}
	old = p->maps;
	n_old = p->n_maps;
	p->maps = maps;
	p->n_maps = n;
	maps = NULL;
	if (p->waiting) {
		/* Read while waiting: this read replaces the one never published. */
		unref_files(pt, old, n_old);
		free(old);
	} else {
		p->published = old;
		p->n_published = n_old;
	}
	if (!try_publish(pt, p)) {
		/*
		 * Without its marker, samples whose pc is in no published range
		 * (the new files) come as stack copies, held until the tables are
		 * in, instead of walks cut short where a file has no table yet.
		 */
		if (pt->unwind)
			unwind_maps__remove_pid(pt->unwind, p->pid);
		withdraw_replaced(pt, p);
		pt->stats.waited++;
		if (!p->waiting)
			pt->n_waiting++;
		p->waiting = true;
		offer_waiting(pt, p);
	} else if (p->waiting) {
		/*
		 * Published by this read (its files were readied since the last
		 * one): it waits no longer, or its records would still be held,
		 * its next read would take its published maps for unpublished
		 * ones and it would never be purged.
		 */
		p->waiting = false;
		p->offered_pending = 0;
		pt->n_waiting--;
	}
cleanup:
	if (maps)
		unref_files(pt, maps, n);
	free(maps);
	free(keep);
	proc_maps__free(raw, n_raw);
	return err;
}

struct process *process_table__get(struct process_table *pt, uint32_t pid)
{
	uint64_t h = hash_u64(pid);
	struct process *p = hashmap__find(&pt->by_pid, h, &pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (hashmap__insert(&pt->by_pid, h, p)) {
		free(p);
		return NULL;
	}
	pt->stats.processes++;
	process_table__refresh(pt, p);
	return p;
}

struct scan_all_ctx {
	struct process_table *pt;
	int n;
};

static int scan_one(uint32_t pid, void *ctx)
{
	struct scan_all_ctx *s = ctx;

	if (process_table__get(s->pt, pid))
		s->n++;
	return 0;
}

int process_table__scan_all(struct process_table *pt)
{
	struct scan_all_ctx s = {pt, 0};
	int err = proc_pids__for_each(scan_one, &s);

	return err ? err : s.n;
}

void process_table__forget_image(struct process_table *pt, struct process *p)
{
	unpublish(pt, p);
	if (p->waiting) {
		unref_files(pt, p->published, p->n_published);
		free(p->published);
		p->published = NULL;
		p->n_published = 0;
		p->waiting = false;
		p->offered_pending = 0;
		pt->n_waiting--;
	}
	unref_files(pt, p->maps, p->n_maps);
	free(p->maps);
	p->maps = NULL;
	p->n_maps = 0;
}

void process_table__mark_exited(struct process_table *pt, uint32_t pid)
{
	struct process *p = hashmap__find(&pt->by_pid, hash_u64(pid), &pid);

	if (p && !p->exited) {
		p->exited = true;
		unpublish(pt, p);
		TELL(pt, exited, p);
	}
}

struct process *process_table__find(const struct process_table *pt, uint32_t pid)
{
	return hashmap__find(&pt->by_pid, hash_u64(pid), &pid);
}

size_t process_table__purge(struct process_table *pt, bool check_alive)
{
	struct process **dead = NULL;
	size_t n = 0, cap = 0;
	void *e;

	for (size_t i = 0; hashmap__next(&pt->by_pid, &i, &e);) {
		struct process *p = e;

		/* An exit event lost in a full ring buffer: the pid no longer exists. */
		if (check_alive && !p->exited && !p->gone && kill((pid_t)p->pid, 0) &&
		    errno == ESRCH) {
			pt->stats.lost_exits++;
			process_table__mark_exited(pt, p->pid);
		}
		if ((!p->exited && !p->gone) || p->waiting)
			continue; /* waiting: its held samples are not named yet */
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct process **tmp = realloc(dead, c * sizeof(*tmp));

			if (!tmp)
				break; /* the rest goes next time */
			dead = tmp;
			cap = c;
		}
		dead[n++] = p;
	}
	/* Removed after the walk: removing moves entries the iteration has not reached. */
	for (size_t i = 0; i < n; i++) {
		struct process *p = dead[i];

		TELL(pt, forget, p);
		hashmap__remove_entry(&pt->by_pid, hash_u64(p->pid), p);
		unref_files(pt, p->maps, p->n_maps);
		unref_files(pt, p->published, p->n_published);
		free(p->maps);
		free(p->published);
		free(p->exec_path);
		free(p);
	}
	free(dead);
	pt->stats.purged += n;
	return n;
}

bool process_table__refresh_if_stale(struct process_table *pt, struct process *p)
{
	if (p->exited || p->gone ||
	    clock__now_ns() - p->refreshed_ns <
		(p->truncated ? REFRESH_TRUNCATED_INTERVAL_NS : REFRESH_MIN_INTERVAL_NS))
		return false;
	process_table__refresh(pt, p);
	return true;
}

const struct process_mapping *process_table__find_mapping(const struct process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < p->maps[mid].start)
			hi = mid;
		else if (addr >= p->maps[mid].end)
			lo = mid + 1;
		else
			return &p->maps[mid];
	}
	return NULL;
}

bool process_table__resolve(struct process_table *pt, struct process *p, uint64_t addr,
			    uint32_t *file_slot, uint64_t *file_addr)
{
	const struct process_mapping *m = process_table__find_mapping(p, addr);
	const struct cached_file *f;
	uint64_t offset;

	if (!m && process_table__refresh_if_stale(pt, p))
		m = process_table__find_mapping(p, addr);
	if (!m) {
		pt->stats.unknown_address++;
		return false;
	}
	f = file_cache__at(pt->files, m->file_slot);
	*file_slot = m->file_slot;
	offset = addr - m->start + m->offset;
	if (f && f->elf && m->has_bias) {
		*file_addr = addr - m->bias;
	} else if (f && f->elf) {
		if (!elf_file__offset_to_vaddr(f->elf, offset, file_addr))
			*file_addr = offset;
	} else if (f && f->inode == 0 && strcmp(f->path, "[vdso]")) {
		*file_addr = addr; /* anonymous code: only the address means anything */
	} else {
		*file_addr = offset;
	}
	return true;
}
