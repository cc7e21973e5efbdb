// SPDX-License-Identifier: Apache-2.0
#include "proc/process_table.h"

#include <ctype.h>
#include <signal.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gelf.h>

#include "elf/elf_file.h"
#include "proc/file_cache.h"
#include "util/file_worker.h"
#include "proc/proc_maps.h"
#include "omniprof/abi.h"
#include "unwind/unwind_maps.h"
#include "util/log.h"
#include "util/clock.h"

/*
 * The LPM value of a file whose open was abandoned (timed out): a table id no
 * table has, so the unwinder uses frame pointers there and does not report
 * the address as unknown again and again.
 */
#define FILE_ID_NO_TABLE (OP_TABLE_ID_ANON - 1)

/* A process whose samples keep missing its maps is re-read at most this often. */
#define REFRESH_MIN_INTERVAL_NS (50ull * 1000 * 1000)
/* ... and one with more mappings than are tracked (its untracked addresses always
 * miss; reading 20,000 lines of maps costs the kernel tens of milliseconds). */
#define REFRESH_TRUNCATED_INTERVAL_NS (5000ull * 1000 * 1000)

static void remove_ranges(struct process_table *pt, uint32_t pid,
			  const struct process_mapping *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (maps[i].range_id)
			unwind_maps__remove_range(pt->unwind, pid, maps[i].start, maps[i].end);
}

static void release_tables(struct process_table *pt, struct process_mapping *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (maps[i].table_id) {
			unwind_maps__release(pt->unwind, maps[i].table_id);
			maps[i].table_id = 0;
		}
}

/* Removes p's mappings from the BPF maps and drops its table references. */
static void unpublish(struct process_table *pt, struct process *p)
{
	struct process_mapping *maps = p->waiting ? p->published : p->maps;
	size_t n = p->waiting ? p->n_published : p->n_maps;

	if (!pt->unwind)
		return;
	remove_ranges(pt, p->pid, maps, n);
	release_tables(pt, maps, n);
	unwind_maps__remove_pid(pt->unwind, p->pid);
}

/*
 * What the LPM trie says about a mapping of file f: its table id (a file with
 * no usable table keeps the id, so the unwinder finds no table and uses frame
 * pointers without asking again), OP_TABLE_ID_ANON for code with no file or no
 * ELF behind it (JIT), 0 for no entry (the file could not be opened: the
 * unwinder reports the address and the maps are read again).
 */
static uint64_t range_id_of(const struct cached_file *f)
{
	if (!f)
		return 0;
	if (f->elf)
		return f->table_id;
	if (f->open_error == -ETIMEDOUT)
		return FILE_ID_NO_TABLE;
	return f->inode == 0 || f->open_error == -ENOEXEC ? OP_TABLE_ID_ANON : 0;
}

static bool same_range(const struct process_mapping *a, const struct process_mapping *b)
{
	return a->start == b->start && a->end == b->end && a->range_id == b->range_id &&
	       a->bias == b->bias;
}

/* Does [start, end) overlap a mapping of maps (sorted) with a table? */
static bool overlaps_table(const struct process_mapping *maps, size_t n, uint64_t start,
			   uint64_t end)
{
	for (size_t i = 0; i < n && maps[i].start < end; i++)
		if (maps[i].range_id && maps[i].end > start)
			return true;
	return false;
}

/*
 * The shared LPM trie is nearly full (or refused an insert): the process
 * holding the most entries loses all of them and unwinds with frame
 * pointers from then on (its pid marker stays, so its samples are walked,
 * not sent as stack copies), so the others keep their tables. True when a
 * process was evicted.
 */
static bool evict_greediest(struct process_table *pt)
{
	uint32_t entries, pid = unwind_maps__greediest_pid(pt->unwind, &entries);
	struct process *p = pid ? process_table__find(pt, pid) : NULL;

	if (!p || p->lpm_evicted)
		return false;
	remove_ranges(pt, pid, p->maps, p->n_maps);
	release_tables(pt, p->maps, p->n_maps);
	for (size_t i = 0; i < p->n_maps; i++)
		p->maps[i].range_id = 0;
	p->lpm_evicted = true;
	pt->unwind->stats.evicted_processes++;
	pt->unwind->stats.evicted_entries += entries;
	pr_warn("pid %u held %u of %u unwind mapping entries: evicted, its stacks use frame "
		"pointers from now on",
		pid, entries, pt->unwind->max_mappings);
	return true;
}

/*
 * Takes a reference on f's table for a mapping of a process whose tables
 * already take *pages delta pages: refused (0, counted) when that is its
 * whole share and the table would have to be built. 0 or the table id.
 */
static uint64_t acquire_within_share(struct process_table *pt, const struct cached_file *f,
				     uint64_t *pages)
{
	uint32_t n = 0;
	bool loaded = unwind_maps__table_loaded(pt->unwind, f->table_id, &n);

	if (!loaded && *pages >= UNWIND_TABLE_PAGES_PER_PROCESS) {
		pt->unwind->stats.tables_refused_share++;
		return 0;
	}
	/* With a file worker every table is built by now; without one it is built here. */
	if (unwind_maps__acquire(pt->unwind, f->table_id, pt->files->worker ? NULL : f->elf)) {
		/* No table (counted there): frame pointers for this file. */
		unwind_maps__release(pt->unwind, f->table_id);
		return 0;
	}
	unwind_maps__table_loaded(pt->unwind, f->table_id, &n);
	*pages += n;
	return f->table_id;
}

/* Inserts m's range; a full trie evicts the greediest process and tries once more. */
static int add_range_evicting(struct process_table *pt, uint32_t pid, struct process_mapping *m)
{
	int err = unwind_maps__add_range(pt->unwind, pid, m->start, m->end, m->range_id, m->bias);

	if ((err == -ENOSPC || err == -E2BIG) && evict_greediest(pt)) {
		struct process *self = process_table__find(pt, pid);

		if (self && self->lpm_evicted)
			return err;
		err =
		    unwind_maps__add_range(pt->unwind, pid, m->start, m->end, m->range_id, m->bias);
	}
	return err;
}

/* An evicted process publishes nothing but its pid marker; its old ranges are gone. */
static void publish_evicted(struct process_table *pt, struct process *p,
			    struct process_mapping *old, size_t n_old)
{
	for (size_t i = 0; i < p->n_maps; i++)
		p->maps[i].table_id = p->maps[i].range_id = 0;
	remove_ranges(pt, p->pid, old, n_old);
	release_tables(pt, old, n_old);
	unwind_maps__add_pid(pt->unwind, p->pid);
	/* Headroom for the next process: the greediest go while the trie is nearly full. */
	while (unwind_maps__over_high_water(pt->unwind) && evict_greediest(pt))
		;
}

/*
 * Takes references on the tables of p's mappings (set in table_id), within
 * the process's share of delta pages (acquire_within_share()).
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
		m->table_id = acquire_within_share(pt, f, table_pages);
	}
}

/*
 * Puts p's new executable file mappings into the BPF maps in place of the old
 * ones, never leaving a moment where a mapping present before and after is
 * missing: new ranges go in first, then old ranges that changed come out (and
 * new ones they overlapped are written again). Tables of the new mappings are
 * acquired before the old ones are released, so a file mapped before and
 * after keeps its loaded table. The pid marker goes in last: until then the
 * unwinder treats the process as unknown rather than as mapped nowhere.
 */
static void publish(struct process_table *pt, struct process *p, struct process_mapping *old,
		    size_t n_old)
{
	uint64_t table_pages = 0; /* of the tables p's mappings took so far */
	bool rewrite = false;
	size_t j = 0;

	if (!pt->unwind)
		return;
	if (p->lpm_evicted) {
		publish_evicted(pt, p, old, n_old);
		return;
	}
	acquire_tables(pt, p, &table_pages);
	for (size_t i = 0; i < p->n_maps && !p->lpm_evicted; i++) {
		struct process_mapping *m = &p->maps[i];
		int err = m->range_id ? add_range_evicting(pt, p->pid, m) : 0;

		if (err) {
			if (m->table_id)
				unwind_maps__release(pt->unwind, m->table_id);
			m->table_id = m->range_id = 0;
		}
	}
	if (p->lpm_evicted) {
		/* p was the greediest: what it still held goes too. */
		publish_evicted(pt, p, old, n_old);
		return;
	}
	/* Both lists are sorted by start: one merge walk finds the unchanged ranges. */
	for (size_t i = 0; i < n_old; i++) {
		if (!old[i].range_id)
			continue;
		while (j < p->n_maps && p->maps[j].start < old[i].start)
			j++;
		if (j < p->n_maps && same_range(&old[i], &p->maps[j]))
			continue;
		unwind_maps__remove_range(pt->unwind, p->pid, old[i].start, old[i].end);
		rewrite |= overlaps_table(p->maps, p->n_maps, old[i].start, old[i].end);
	}
	if (rewrite)
		for (size_t i = 0; i < p->n_maps; i++)
			if (p->maps[i].range_id)
				unwind_maps__add_range(pt->unwind, p->pid, p->maps[i].start,
						       p->maps[i].end, p->maps[i].range_id,
						       p->maps[i].bias);
	release_tables(pt, old, n_old);
	unwind_maps__add_pid(pt->unwind, p->pid);
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
				file_worker__post(pt->files->worker, &j->job);
				ready = false;
			}
			break;
		}
	}
	return ready;
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

size_t process_table__publish_ready(struct process_table *pt, process_ready_fn fn, void *ctx)
{
	struct process **ready = NULL;
	size_t n = 0, cap = 0;
	void *e;

	if (!pt->n_waiting)
		return 0;
	for (size_t i = 0; hashmap__next(&pt->by_pid, &i, &e);) {
		struct process *p = e;

		if (!p->waiting || !try_publish(pt, p))
			continue;
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
		pt->stats.waited++;
		if (!p->waiting)
			pt->n_waiting++;
		p->waiting = true;
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

int process_table__scan_all(struct process_table *pt)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char *end;
		unsigned long pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtoul(de->d_name, &end, 10);
		if (*end || !pid || pid > UINT32_MAX)
			continue;
		if (process_table__get(pt, (uint32_t)pid))
			n++;
	}
	closedir(dir);
	return n;
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
