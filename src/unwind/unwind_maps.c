// SPDX-License-Identifier: Apache-2.0
#include "unwind/unwind_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "elf/elf_file.h"
#include "elf/file_id.h"
#include "unwind/stack_deltas.h"
#include "omniprof/abi.h"
#include "unwind/delta_pages.h"
#include "unwind/go_deltas.h"
#include "elf/gopclntab.h"
#include "unwind/table_cache.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/memory.h"

struct rule_entry {
	struct op_unwind_rule rule;
	uint32_t index;
};

/* Pages per chunk: 6 MiB of kernel memory, up to a million deltas, enough for a
 * typical host's libraries. Chunk space is counted in pages. */
#define CHUNK_PAGES (1u << 12)
/*
 * Tables no process uses stay loaded while their space is not needed: the
 * chunks are allocated anyway (they never shrink), so keeping them costs no
 * memory, and a table is unloaded (oldest first) when a new one needs room
 * before a chunk is added. At most this many unused tables (table_info
 * entries).
 */
#define UNUSED_TABLES_MAX 4096
/*
 * Delta pages (1.5 KiB each) the chunks may grow to before unused tables are
 * unloaded to make room: 24 MiB of kernel memory, four times what a clang
 * process's tables take (6,000 pages with libLLVM and libclang-cpp).
 */
#define UNUSED_KEEP_PAGES (1u << 14)

struct loaded_table {
	uint64_t id;
	/* In the list of loaded tables no process uses (refs 0), oldest first. */
	struct list_node unused_node;
	bool unused;
	uint64_t base;		   /* ELF vaddr the deltas' 32-bit offsets start from */
	struct op_table_info info; /* as published in table_info */
	uint32_t refs;
	uint32_t n_deltas;
	uint32_t n_pages;
	uint32_t chunk;
	uint32_t offset;       /* first page */
	int error;	       /* non-zero: building failed, nothing loaded */
	bool building;	       /* a build job is out (refs 0, nothing loaded) */
	bool fresh;	       /* built for waiting processes: their first acquire is no reuse */
	bool reopen;	       /* its file could not be opened: build it again (UNKNOWN) */
	uint8_t open_failures; /* builds that could not open the file */
	const struct file_job *job; /* while building: its job (file_worker__promote) */
};

static bool rule_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return !memcmp(&((const struct rule_entry *)entry)->rule, key,
		       sizeof(struct op_unwind_rule));
}

static bool table_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct loaded_table *)entry)->id == *(const uint64_t *)key;
}

/* LPM entries one pid holds (unwind_maps.pid_entries). */
struct lpm_pid {
	uint32_t pid;
	uint32_t entries;
};

static bool lpm_pid_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct lpm_pid *)entry)->pid == *(const uint32_t *)key;
}

void unwind_maps__init(struct unwind_maps *um, int mappings_fd, int tables_fd, int info_fd,
		       int rules_fd, uint32_t max_rules)
{
	memset(um, 0, sizeof(*um));
	um->mappings_fd = mappings_fd;
	um->tables_fd = tables_fd;
	um->info_fd = info_fd;
	um->rules_fd = rules_fd;
	um->max_rules = max_rules;
	hashmap__init(&um->rules, rule_equal, NULL);
	hashmap__init(&um->tables, table_equal, NULL);
	hashmap__init(&um->pid_entries, lpm_pid_equal, NULL);
	list__init(&um->unused);
	um->unused_budget = UINT64_MAX;
	unwind_maps__set_capacity(um, 1u << 20); /* exe_mappings' size in sampler.bpf.c */
}

void unwind_maps__set_generation(struct unwind_maps *um, uint64_t *gen)
{
	um->gen = gen;
}

/* After a change to the trie or table_info: the walks' kept mappings are looked up again
 * (bpf/sampler.bpf.c walk_scratch__reset). The syscall that made the change is behind us. */
static void maps_changed(struct unwind_maps *um)
{
	if (um->gen)
		__atomic_fetch_add(um->gen, 1, __ATOMIC_SEQ_CST);
}

static void fde_memo__free(struct unwind_fde_memo *m);

void unwind_maps__clear(struct unwind_maps *um)
{
	void *e;

	if (!um)
		return;
	for (size_t i = 0; hashmap__next(&um->rules, &i, &e);)
		free(e);
	for (size_t i = 0; hashmap__next(&um->tables, &i, &e);)
		free(e);
	for (size_t i = 0; hashmap__next(&um->pid_entries, &i, &e);)
		free(e);
	hashmap__clear(&um->rules);
	hashmap__clear(&um->tables);
	hashmap__clear(&um->pid_entries);
	for (uint32_t i = 0; i < um->n_chunks; i++) {
		free(um->chunks[i].free);
		close(um->chunks[i].fd);
	}
	um->n_chunks = 0;
	list__init(&um->unused);
	table_cache__put(um->cache);
	um->cache = NULL;
	free(um->rule_memo);
	um->rule_memo = NULL;
	fde_memo__free(um->fde_memo);
	um->fde_memo = NULL;
}

struct unwind_rule_memo {
	uint64_t table_id; /* 0: empty (no table has id 0) */
	uint64_t vaddr;
	struct op_unwind_rule rule;
};

static size_t rule_memo_slot(uint64_t table_id, uint64_t vaddr)
{
	return (size_t)(hash_u64(table_id ^ (vaddr * 0x9e3779b97f4a7c15ull)) &
			(UNWIND_RULE_MEMO_SIZE - 1));
}

bool unwind_maps__rule_cached(const struct unwind_maps *um, uint64_t table_id, uint64_t vaddr,
			      struct op_unwind_rule *rule)
{
	const struct unwind_rule_memo *e;

	if (!um || !um->rule_memo || !table_id)
		return false;
	e = &um->rule_memo[rule_memo_slot(table_id, vaddr)];
	if (e->table_id != table_id || e->vaddr != vaddr)
		return false;
	*rule = e->rule;
	return true;
}

void unwind_maps__rule_remember(struct unwind_maps *um, uint64_t table_id, uint64_t vaddr,
				const struct op_unwind_rule *rule)
{
	struct unwind_rule_memo *e;

	if (!um || !table_id)
		return;
	if (!um->rule_memo) {
		um->rule_memo = calloc(UNWIND_RULE_MEMO_SIZE, sizeof(*um->rule_memo));
		if (!um->rule_memo)
			return; /* looked up in the maps each time, as before */
	}
	e = &um->rule_memo[rule_memo_slot(table_id, vaddr)];
	e->table_id = table_id;
	e->vaddr = vaddr;
	e->rule = *rule;
}

/*
 * A Go file's .gopclntab read for copies (issue 17): the table read through
 * go_pread (its function table from memory when read whole).
 */
struct go_file {
	struct go_index gi;
	struct gopclntab *t; /* reads through rd */
	struct go_reader {
		const struct elf_file *ef; /* set before each use */
		uint64_t base, size;	   /* the section's offset and size */
		const uint8_t *functab;	   /* its function table read whole, or NULL */
		uint64_t functab_off, functab_len;
		uint32_t reads; /* preads of this lookup */
	} rd;
	uint8_t *functab; /* owned */
};

struct unwind_fde_memo {
	struct {
		uint64_t table_id; /* 0: empty */
		int err;	   /* stack_deltas__fde_index()'s */
		struct fde_index ix;
		uint8_t *table;	    /* its search table read whole (owned), or NULL */
		struct go_file *go; /* a Go file: read from .gopclntab (owned), or NULL */
	} files[UNWIND_FDE_FILES];
	size_t table_bytes; /* of the tables read whole (search tables, Go function tables) */
	struct {
		uint64_t table_id; /* 0: empty */
		bool go;	   /* a Go function's rows: OP_RULE_INVALID there is no answer */
		struct fde_rows rows;
	} fdes[UNWIND_FDE_SLOTS];
	uint32_t next_file, next_fde; /* replaced in turn */
};

static void go_file__free(struct go_file *g)
{
	if (!g)
		return;
	gopclntab__free(g->t);
	free(g->functab);
	free(g);
}

static void fde_memo__free(struct unwind_fde_memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < UNWIND_FDE_SLOTS; i++)
		fde_rows__free(&m->fdes[i].rows);
	for (size_t i = 0; i < UNWIND_FDE_FILES; i++) {
		free(m->files[i].table);
		go_file__free(m->files[i].go);
	}
	free(m);
}

/*
 * The sampling thread never waits for a file: only what the page cache holds
 * (the open job just read these sections to hash them) is read; the rest, or
 * a file system that cannot say (a FUSE server may never answer), gives no
 * rule now and the copy waits for the table on the file worker.
 */
static int pread_nowait(const struct elf_file *ef, uint64_t off, void *buf, size_t len)
{
	ssize_t n;

	if (off > ef->size || len > ef->size - off)
		return -ERANGE;
	n = preadv2(ef->fd, &(struct iovec){.iov_base = buf, .iov_len = len}, 1, (off_t)off,
		    RWF_NOWAIT);
	if (n < 0)
		return errno == EOPNOTSUPP ? -EAGAIN : -errno; /* "cannot say": try again later */
	return n == (ssize_t)len ? 0 : -EIO;
}

/* The reads of stack_deltas__fde_rows: the search table from its copy when read whole. */
struct fde_reader {
	const struct elf_file *ef;
	const struct fde_index *ix;
	const uint8_t *table;
};

static int fde_pread(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct fde_reader *rd = ctx;
	uint64_t table_len = (uint64_t)rd->ix->count * 8;

	if (rd->table && off >= rd->ix->table_off && len <= table_len &&
	    off - rd->ix->table_off <= table_len - len) {
		memcpy(buf, rd->table + (off - rd->ix->table_off), len);
		return 0;
	}
	return pread_nowait(rd->ef, off, buf, len);
}

/* Whole-file reads (Go's section headers). */
static int file_pread(void *ctx, uint64_t off, void *buf, size_t len)
{
	return pread_nowait(ctx, off, buf, len);
}

/* Reads of one Go rule at most: a function table probed in the file, a record, a name, its
 * pcsp table and the next function's (a few windows each when nothing is in memory). */
#define GO_RULE_MAX_READS 48

/* The reads of a Go file's table, at offsets into .gopclntab (bounded by it). */
static int go_pread(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct go_reader *rd = ctx;

	if (off > rd->size || len > rd->size - off)
		return -ERANGE;
	if (rd->functab && off >= rd->functab_off && len <= rd->functab_len &&
	    off - rd->functab_off <= rd->functab_len - len) {
		memcpy(buf, rd->functab + (off - rd->functab_off), len);
		return 0;
	}
	if (++rd->reads > GO_RULE_MAX_READS)
		return -E2BIG;
	return pread_nowait(rd->ef, rd->base + off, buf, len);
}

/*
 * Opens ef's .gopclntab for one rule at a time into *out (free with
 * go_file__free), its function table read whole while the files' tables
 * read whole stay within UNWIND_FDE_TABLE_MAX (*table_bytes). 0, -ENOENT
 * (not a Go file), or -errno.
 */
static int go_file__open(const struct elf_file *ef, size_t *table_bytes, struct go_file **out)
{
	struct go_file *g;
	uint64_t off, len;
	int err;

	*out = NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	err = go_deltas__index_read(file_pread, (void *)ef, ef->size, &g->gi);
	if (err)
		goto cleanup;
	g->rd = (struct go_reader){.ef = ef, .base = g->gi.off, .size = g->gi.size};
	err = gopclntab__open_read(go_pread, &g->rd, g->gi.size, g->gi.text_addr, &g->t);
	if (err)
		goto cleanup;
	gopclntab__functab(g->t, &off, &len);
	/* gofmt's: 35 KiB; its binary search is then no pread a probe. */
	if (len <= UNWIND_FDE_TABLE_MAX - *table_bytes && *table_bytes <= UNWIND_FDE_TABLE_MAX) {
		g->functab = malloc(len);
		if (g->functab && !pread_nowait(ef, g->gi.off + off, g->functab, len)) {
			g->rd.functab = g->functab;
			g->rd.functab_off = off;
			g->rd.functab_len = len;
			*table_bytes += len;
		} else {
			free(g->functab);
			g->functab = NULL;
		}
	}
	*out = g;
	return 0;
cleanup:
	go_file__free(g);
	return err;
}

static size_t files_slot(const struct unwind_fde_memo *m, uint64_t table_id)
{
	for (size_t i = 0; i < UNWIND_FDE_FILES; i++)
		if (m->files[i].table_id == table_id)
			return i;
	return UNWIND_FDE_FILES;
}

bool unwind_maps__fde_file_is_go(const struct unwind_maps *um, uint64_t table_id)
{
	size_t i;

	if (!um || !um->fde_memo || !table_id)
		return false;
	i = files_slot(um->fde_memo, table_id);
	return i < UNWIND_FDE_FILES && um->fde_memo->files[i].go;
}

/* Keeps rows (taken) in the next FDE slot when small enough; else frees them. */
static void fde_memo__keep(struct unwind_fde_memo *m, uint64_t table_id, bool go,
			   struct fde_rows *rows)
{
	uint32_t slot;

	if (rows->n > UNWIND_FDE_MAX_ROWS) {
		fde_rows__free(rows);
		return;
	}
	slot = m->next_fde++ % UNWIND_FDE_SLOTS;
	fde_rows__free(&m->fdes[slot].rows);
	m->fdes[slot].table_id = table_id;
	m->fdes[slot].go = go;
	m->fdes[slot].rows = *rows;
	*rows = (struct fde_rows){0};
}

/* The rule of a Go file's function at vaddr (see unwind_maps__fde_rule). */
static int go_rule(struct unwind_maps *um, struct go_file *g, uint64_t table_id,
		   const struct elf_file *ef, uint64_t vaddr, struct op_unwind_rule *rule)
{
	const struct op_unwind_rule *r;
	struct fde_rows rows;
	int err;

	g->rd.ef = ef;
	g->rd.reads = 0;
	err = go_deltas__func_rows(g->t, vaddr, &rows);
	if (err)
		return err;
	r = fde_rows__rule(&rows, vaddr);
	err = r && r->cmd != OP_RULE_INVALID ? UNWIND_GO_READ : -ENOENT;
	if (err == UNWIND_GO_READ) {
		*rule = *r;
		unwind_maps__rule_remember(um, table_id, vaddr, rule);
	}
	fde_memo__keep(um->fde_memo, table_id, true, &rows);
	return err;
}

int unwind_maps__fde_rule(struct unwind_maps *um, uint64_t table_id, const struct elf_file *ef,
			  uint64_t vaddr, struct op_unwind_rule *rule)
{
	struct unwind_fde_memo *m;
	const struct op_unwind_rule *r;
	const struct fde_index *ix = NULL;
	const uint8_t *table = NULL;
	struct go_file *go = NULL;
	struct fde_reader rd;
	struct fde_rows rows;
	uint32_t slot;
	size_t fi;
	int err;

	if (!um || !table_id)
		return -EINVAL;
	if (unwind_maps__rule_cached(um, table_id, vaddr, rule))
		return unwind_maps__fde_file_is_go(um, table_id) ? UNWIND_GO_REMEMBERED
								 : UNWIND_FDE_REMEMBERED;
	if (!um->fde_memo) {
		um->fde_memo = calloc(1, sizeof(*um->fde_memo));
		if (!um->fde_memo)
			return -ENOMEM;
	}
	m = um->fde_memo;
	/* Linear scans: a few hundred compares against the reads they save. */
	for (size_t i = 0; i < UNWIND_FDE_SLOTS; i++) {
		if (m->fdes[i].table_id == table_id &&
		    (r = fde_rows__rule(&m->fdes[i].rows, vaddr))) {
			/* In Go's rows, a run the build leaves to CFI. */
			if (m->fdes[i].go && r->cmd == OP_RULE_INVALID)
				return -ENOENT;
			*rule = *r;
			unwind_maps__rule_remember(um, table_id, vaddr, rule);
			return m->fdes[i].go ? UNWIND_GO_REMEMBERED : UNWIND_FDE_REMEMBERED;
		}
	}
	fi = files_slot(m, table_id);
	if (fi < UNWIND_FDE_FILES) {
		if (m->files[fi].err)
			return m->files[fi].err;
		ix = &m->files[fi].ix;
		table = m->files[fi].table;
		go = m->files[fi].go;
	}
	if (!ix) {
		if (!ef || ef->fd < 0)
			return -EBADF;
		slot = m->next_file++ % UNWIND_FDE_FILES;
		m->table_bytes -= m->files[slot].table ? (size_t)m->files[slot].ix.count * 8 : 0;
		m->table_bytes -= m->files[slot].go && m->files[slot].go->functab
				      ? (size_t)m->files[slot].go->rd.functab_len
				      : 0;
		free(m->files[slot].table);
		m->files[slot].table = NULL;
		go_file__free(m->files[slot].go);
		m->files[slot].go = NULL;
		rd = (struct fde_reader){.ef = ef, .ix = &m->files[slot].ix};
		err = stack_deltas__fde_index_read(fde_pread, &rd, ef->size, &m->files[slot].ix);
		/*
		 * A Go file (the FDE path refuses it: .gopclntab wins in its table) is
		 * read one function at a time from .gopclntab; a file that is not Go
		 * keeps the FDE path's answer.
		 */
		if (err == -EOPNOTSUPP) {
			int gerr = go_file__open(ef, &m->table_bytes, &m->files[slot].go);

			if (gerr != -ENOENT)
				err = gerr;
		}
		m->files[slot].table_id = table_id;
		/* Passing errors (not in the page cache yet, memory) are not remembered. */
		m->files[slot].err = err == -ENOMEM || err == -EIO || err == -EAGAIN ? 0 : err;
		if (err) {
			if (!m->files[slot].err)
				m->files[slot].table_id = 0; /* passing: try again next time */
			return err;
		}
		ix = &m->files[slot].ix;
		go = m->files[slot].go;
		/*
		 * The search table read once, when it fits (libLLVM-14's: 0.7 MiB): its
		 * binary search is then no pread a probe. Else probed in the file.
		 */
		if (!go && (size_t)ix->count * 8 <= UNWIND_FDE_TABLE_MAX - m->table_bytes &&
		    m->table_bytes <= UNWIND_FDE_TABLE_MAX) {
			uint8_t *t = malloc((size_t)ix->count * 8);
			struct fde_reader direct = {.ef = ef, .ix = ix};

			if (t && !fde_pread(&direct, ix->table_off, t, (size_t)ix->count * 8)) {
				m->files[slot].table = t;
				m->table_bytes += (size_t)ix->count * 8;
				table = t;
			} else {
				free(t);
			}
		}
	}
	if (!ef || ef->fd < 0)
		return -EBADF;
	if (go)
		return go_rule(um, go, table_id, ef, vaddr, rule);
	rd = (struct fde_reader){.ef = ef, .ix = ix, .table = table};
	err = stack_deltas__fde_rows(ix, fde_pread, &rd, vaddr, &rows);
	if (err)
		return err;
	r = fde_rows__rule(&rows, vaddr);
	if (!r) {
		fde_rows__free(&rows);
		return -ENOENT;
	}
	*rule = *r;
	unwind_maps__rule_remember(um, table_id, vaddr, rule);
	fde_memo__keep(m, table_id, false, &rows);
	return UNWIND_FDE_READ;
}

void unwind_maps__set_table_cache(struct unwind_maps *um, struct table_cache *cache)
{
	table_cache__put(um->cache);
	um->cache = table_cache__get(cache);
}

static int extent_insert(struct delta_chunk *c, size_t at, struct delta_extent e)
{
	if (array__grow(c->free, c->cap_free, c->n_free))
		return -ENOMEM;
	memmove(&c->free[at + 1], &c->free[at], (c->n_free - at) * sizeof(*c->free));
	c->free[at] = e;
	c->n_free++;
	return 0;
}

/* Adds a chunk of at least n pages to the outer array (the one RCU wait). */
static int chunk_add(struct unwind_maps *um, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP);
	struct delta_chunk *c;
	uint32_t idx = um->n_chunks, size = n > CHUNK_PAGES ? n : CHUNK_PAGES;
	int fd, err = 0;

	if (idx >= OP_MAX_DELTA_CHUNKS)
		return -ENOSPC;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "op_deltas", sizeof(uint32_t),
			    sizeof(struct op_delta_page), size, &opts);
	if (fd < 0)
		return -errno;
	c = &um->chunks[idx];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->size = size;
	if (bpf_map_update_elem(um->tables_fd, &idx, &fd, BPF_ANY))
		err = -errno;
	if (!err)
		err = extent_insert(c, 0, (struct delta_extent){0, size});
	if (err) {
		close(fd);
		return err;
	}
	um->n_chunks++;
	um->stats.chunk_pages += size;
	return 0;
}

static void deltas_free(struct unwind_maps *um, uint32_t chunk, uint32_t offset, uint32_t n);
static bool evict_oldest_unused(struct unwind_maps *um);

/* First fit over every chunk; tables no process uses are unloaded to make
 * room (oldest first) before a chunk is added. */
static int deltas_alloc(struct unwind_maps *um, uint32_t n, uint32_t *chunk, uint32_t *offset)
{
	for (int attempt = 0; attempt < 2; attempt++) {
	retry:
		for (uint32_t ci = 0; ci < um->n_chunks; ci++) {
			struct delta_chunk *c = &um->chunks[ci];

			for (size_t i = 0; i < c->n_free; i++) {
				struct delta_extent *e = &c->free[i];

				if (e->len < n)
					continue;
				*chunk = ci;
				*offset = e->offset;
				e->offset += n;
				e->len -= n;
				if (!e->len) {
					memmove(e, e + 1, (c->n_free - i - 1) * sizeof(*e));
					c->n_free--;
				}
				return 0;
			}
		}
		/* Below the floor a chunk is added rather than an unused table unloaded:
		 * in a compiler loop the previous compiler's libLLVM is the oldest unused
		 * table when the next one's small libraries need room, and rebuilding it
		 * costs the next compiler its first second. */
		if (attempt == 0 && um->stats.chunk_pages + n > UNUSED_KEEP_PAGES &&
		    evict_oldest_unused(um))
			goto retry;
		if (attempt == 0) {
			int err = chunk_add(um, n);

			if (err)
				return err;
		}
	}
	return -ENOSPC;
}

static void deltas_free(struct unwind_maps *um, uint32_t chunk, uint32_t offset, uint32_t n)
{
	struct delta_chunk *c = &um->chunks[chunk];
	size_t i = 0;

	while (i < c->n_free && c->free[i].offset < offset)
		i++;
	/* Merge with the neighbours where they touch; insert otherwise. */
	if (i > 0 && c->free[i - 1].offset + c->free[i - 1].len == offset) {
		c->free[i - 1].len += n;
		if (i < c->n_free && offset + n == c->free[i].offset) {
			c->free[i - 1].len += c->free[i].len;
			memmove(&c->free[i], &c->free[i + 1],
				(c->n_free - i - 1) * sizeof(*c->free));
			c->n_free--;
		}
		return;
	}
	if (i < c->n_free && offset + n == c->free[i].offset) {
		c->free[i].offset = offset;
		c->free[i].len += n;
		return;
	}
	if (extent_insert(c, i, (struct delta_extent){offset, n}))
		pr_warn("out of memory: %u stack deltas leak until exit", n);
}

/* The shared index of rule, adding it to the rule map when new. UINT32_MAX when full
 * (indexes are 16 bits in the delta pages). */
static uint32_t rule_index(struct unwind_maps *um, const struct op_unwind_rule *rule)
{
	uint64_t h = hash_bytes(rule, sizeof(*rule), 0);
	struct rule_entry *e = hashmap__find(&um->rules, h, rule);

	if (e)
		return e->index;
	if (um->stats.rules >= um->max_rules || um->stats.rules >= OP_MAX_RULES)
		return UINT32_MAX;
	e = malloc(sizeof(*e));
	if (!e)
		return UINT32_MAX;
	e->rule = *rule;
	e->index = (uint32_t)um->stats.rules;
	if (bpf_map_update_elem(um->rules_fd, &e->index, rule, BPF_ANY) ||
	    hashmap__insert(&um->rules, h, e)) {
		free(e);
		return UINT32_MAX;
	}
	um->stats.rules++;
	return e->index;
}

/*
 * Rule indexes remembered by the rule's 8 bytes while one table loads: a table
 * has a few hundred distinct rules for up to millions of deltas, and hashing
 * and comparing each delta's rule against the shared map was a fifth of a
 * load's CPU. An entry never goes stale (a rule keeps its index while the maps
 * live). Direct mapped; a collision only costs the shared map's lookup.
 */
#define RULE_MEMO_SLOTS 256

struct rule_memo {
	uint64_t key;
	uint32_t index; /* UINT32_MAX: empty */
};

_Static_assert(sizeof(struct op_unwind_rule) == sizeof(uint64_t), "rule memo key");

static uint32_t rule_index_memo(struct unwind_maps *um, struct rule_memo memo[RULE_MEMO_SLOTS],
				const struct op_unwind_rule *rule)
{
	struct rule_memo *m;
	uint64_t key;

	memcpy(&key, rule, sizeof(key));
	m = &memo[(key * 0x9e3779b97f4a7c15ull) >> 56]; /* the top 8 bits: 256 slots */
	if (m->index != UINT32_MAX && m->key == key)
		return m->index;
	m->key = key;
	m->index = rule_index(um, rule);
	return m->index;
}

/*
 * Lays out the n deltas of *bufp (owned: realloc'ed when too small, *bufp
 * updated) as the last level of their page tree, n_leaves pages
 * (delta_pages.h) from its start, in their own bytes. 0, or -ENOSPC when the
 * rule array is full (the bytes are then no table any more), -ENOMEM.
 *
 * In place (issue 22): the deltas (16 bytes each) and a 32-bit addr and
 * 16-bit rule copy of them (6), then the copy and the pages (6), were held,
 * 22 bytes a delta at the worst (libLLVM-14's 949k deltas: 20 MiB of heap), 16
 * now: the pages are the table's load form already, the copy was only their
 * input; and the load faults in no new memory (the pages were a fresh mapping:
 * a large table's load took 40% less CPU without them). Leaf p (1536 bytes at
 * 1536p) is made on the stack from deltas 256p.. (at 4096p..) and then
 * written over bytes whose deltas were all read; every access to the buffer
 * goes through memcpy, since its bytes change type under the loop. A table of
 * fewer than 96 deltas has fewer bytes than its one page: grown first.
 */
static int leaves_in_place(struct unwind_maps *um, struct stack_delta **bufp, size_t n,
			   uint32_t n_leaves, uint64_t base)
{
	const size_t leaf_bytes = (size_t)n_leaves * sizeof(struct op_delta_page);
	unsigned char *b = (unsigned char *)*bufp, *resized;
	struct rule_memo memo[RULE_MEMO_SLOTS];

	if (n * sizeof(struct stack_delta) < leaf_bytes) {
		resized = realloc(b, leaf_bytes);
		if (!resized)
			return -ENOMEM;
		*bufp = (struct stack_delta *)(void *)resized;
		b = resized;
	}
	for (size_t i = 0; i < RULE_MEMO_SLOTS; i++)
		memo[i].index = UINT32_MAX;
	for (uint32_t p = 0; p < n_leaves; p++) {
		const size_t first = (size_t)p * OP_PAGE_DELTAS;
		const size_t k = n - first < OP_PAGE_DELTAS ? n - first : OP_PAGE_DELTAS;
		struct op_delta_page page;

		for (size_t s = 0; s < k; s++) {
			struct stack_delta d;
			uint32_t r;

			memcpy(&d, b + (first + s) * sizeof(d), sizeof(d));
			r = rule_index_memo(um, memo, &d.rule);
			if (r == UINT32_MAX) {
				um->stats.map_full++;
				return -ENOSPC;
			}
			page.addr[s] = (uint32_t)(d.addr - base);
			page.rule[s] = (uint16_t)r;
		}
		delta_pages__pad(&page, k);
		memcpy(b + (size_t)p * sizeof(page), &page, sizeof(page));
	}
	/* Not shrunk: nothing large is allocated before it is freed, and a large
	 * block is a mapping of its own, whose mremap() costs a TLB flush. */
	return 0;
}

/* Writes n pages under keys into chunk_fd. 0 or -errno. */
static int write_pages(int chunk_fd, uint32_t *keys, const struct op_delta_page *pages, uint32_t n)
{
	uint32_t count = n;

	if (!n || !bpf_map_update_batch(chunk_fd, keys, pages, &count, NULL))
		return 0;
	/* Older kernels: one at a time. */
	for (uint32_t i = 0; i < n; i++)
		if (bpf_map_update_elem(chunk_fd, &keys[i], &pages[i], BPF_ANY))
			return -errno;
	return 0;
}

/*
 * Writes a table's pages into the chunk space allocated for it (n_pages from
 * info->chunk's page offset; its leaves: n_leaves pages for n deltas, the
 * last level, already laid out with shared rule ids), the levels above first,
 * then publishes info under id and fills lt. 0 or -errno (the caller frees
 * the space).
 */
static int publish_pages(struct unwind_maps *um, uint64_t id, const struct op_delta_page *leaves,
			 size_t n, uint32_t n_pages, uint32_t offset, struct op_table_info *info,
			 struct loaded_table *lt)
{
	const uint32_t n_leaves = (uint32_t)((n + OP_PAGE_DELTAS - 1) / OP_PAGE_DELTAS);
	struct op_delta_page *upper = NULL;
	uint32_t *keys = NULL;
	int chunk_fd, err;

	/* The levels above (1/256 of the leaves) come first in the chunk. */
	if (n_pages > n_leaves) {
		upper = malloc((size_t)(n_pages - n_leaves) * sizeof(*upper));
		if (!upper) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	keys = malloc((size_t)n_pages * sizeof(*keys));
	if (!keys) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = delta_pages__build_upper(leaves, n, offset, upper, info);
	if (err)
		goto cleanup;
	for (uint32_t i = 0; i < n_pages; i++)
		keys[i] = offset + i;
	chunk_fd = um->chunks[info->chunk].fd;
	err = write_pages(chunk_fd, keys, upper, n_pages - n_leaves);
	if (!err)
		err = write_pages(chunk_fd, keys + (n_pages - n_leaves), leaves, n_leaves);
	if (err)
		goto cleanup;
	/* Published last: the unwinder sees a table only once it is complete. */
	if (bpf_map_update_elem(um->info_fd, &id, info, BPF_ANY)) {
		err = -errno;
		if (err == -E2BIG || err == -ENOSPC)
			um->stats.map_full++;
		goto cleanup;
	}
	lt->base = info->base;
	lt->info = *info;
	lt->n_deltas = (uint32_t)n;
	lt->n_pages = n_pages;
	lt->chunk = info->chunk;
	lt->offset = offset;
cleanup:
	free(keys);
	free(upper);
	return err;
}

/*
 * Loads the built table *tp under id. Its deltas become its pages' last level
 * in their own bytes (leaves_in_place), so *tp is emptied once that starts
 * (its deltas freed here); a failure before leaves it as it was. 0 or -errno.
 */
static int load_built(struct unwind_maps *um, uint64_t id, struct stack_delta_table *tp,
		      struct loaded_table *lt)
{
	const struct stack_delta_table t = *tp;
	struct op_table_info info = {0};
	uint32_t n_pages = 0, n_leaves, levels, offset = 0;
	struct stack_delta *buf = NULL;
	bool allocated = false;
	int err;

	/* Deltas hold 32-bit offsets from the first address (OP_DELTA_PAD excluded). */
	if (!t.n || t.n >= OP_DELTA_PAD ||
	    t.deltas[t.n - 1].addr - t.deltas[0].addr >= OP_DELTA_PAD) {
		err = -E2BIG;
		goto cleanup;
	}
	n_pages = delta_pages__count(t.n, &levels);
	n_leaves = (uint32_t)((t.n + OP_PAGE_DELTAS - 1) / OP_PAGE_DELTAS);
	info.base = t.deltas[0].addr;
	err = deltas_alloc(um, n_pages, &info.chunk, &offset);
	if (err) {
		um->stats.map_full++;
		goto cleanup;
	}
	allocated = true;
	/* Its bytes are ours from here: laid out anew, freed at the end. */
	buf = tp->deltas;
	tp->deltas = NULL;
	tp->n = 0;
	err = leaves_in_place(um, &buf, t.n, n_leaves, info.base);
	if (!err)
		err = publish_pages(um, id, (const struct op_delta_page *)(void *)buf, t.n, n_pages,
				    offset, &info, lt);
	if (!err)
		allocated = false;
cleanup:
	if (allocated)
		deltas_free(um, info.chunk, offset, n_pages);
	free(buf);
	return err;
}

/*
 * Loads a table read back in leaf form (table_cache__load_leaves) under id:
 * its local rule indexes become shared ids in place, asked for in local
 * order (the order of their first deltas), so the shared rule array and the
 * pages end as load_built() of the same deltas leaves them, bit for bit
 * (test_unwind_maps). l is freed. 0 or -errno, the errors load_built() gives.
 */
static int load_leaves(struct unwind_maps *um, uint64_t id, struct delta_leaves *l,
		       struct loaded_table *lt)
{
	struct op_table_info info = {0};
	uint32_t n_pages = 0, levels, offset = 0;
	uint16_t *map = NULL;
	bool allocated = false;
	int err;

	if (!l->n || l->n >= OP_DELTA_PAD || l->too_wide) {
		err = -E2BIG;
		goto cleanup;
	}
	n_pages = delta_pages__count(l->n, &levels);
	info.base = l->base;
	err = deltas_alloc(um, n_pages, &info.chunk, &offset);
	if (err) {
		um->stats.map_full++;
		goto cleanup;
	}
	allocated = true;
	map = malloc((size_t)(l->n_rules ? l->n_rules : 1) * sizeof(*map));
	if (!map) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (uint32_t i = 0; i < l->n_rules; i++) {
		uint32_t r = rule_index(um, &l->rules[i]);

		if (r == UINT32_MAX) {
			um->stats.map_full++;
			err = -ENOSPC;
			goto cleanup;
		}
		map[i] = (uint16_t)r;
	}
	/* A rule past OP_MAX_RULES distinct ones would have found the array full. */
	if (l->rules_full) {
		um->stats.map_full++;
		err = -ENOSPC;
		goto cleanup;
	}
	/* The deltas' slots only: the last leaf's padding keeps rule 0. */
	for (size_t i = 0; i < l->n; i++) {
		uint16_t *rule = &l->pages[i / OP_PAGE_DELTAS].rule[i % OP_PAGE_DELTAS];

		*rule = map[*rule];
	}
	err = publish_pages(um, id, l->pages, l->n, n_pages, offset, &info, lt);
	if (!err)
		allocated = false;
cleanup:
	if (allocated)
		deltas_free(um, info.chunk, offset, n_pages);
	free(map);
	delta_leaves__free(l);
	return err;
}

/* Builds ef's table and loads it under id. 0 or -errno. */
/*
 * A table is loaded under id only when it was built from the bytes id names:
 * the file may have been rewritten since its id was computed (by its owner,
 * while the build waited for the worker), and a table built from other CFI
 * must never serve the processes that map the file id stands for.
 */
static int check_id(struct unwind_maps *um, uint64_t id, const struct stack_delta_stats *stats,
		    const uint8_t *table_id)
{
	um->stats.cfi_bad_entries += stats->bad_entries;
	if (!table_id || file_id__from_htlhash(table_id) != id) {
		um->stats.tables_changed++;
		return -ESTALE;
	}
	return 0;
}

static int check_built(struct unwind_maps *um, uint64_t id, const struct stack_delta_table *t)
{
	return check_id(um, id, &t->stats, t->has_id ? t->id : NULL);
}

static int load_table(struct unwind_maps *um, uint64_t id, const struct elf_file *ef,
		      struct loaded_table *lt)
{
	struct stack_delta_table t = {0};
	uint64_t start = clock__now_ns();
	int err;

	err = stack_deltas__build(ef, &t);
	um->stats.build_ns += clock__now_ns() - start;
	if (!err)
		err = check_built(um, id, &t);
	if (!err)
		err = load_built(um, id, &t, lt);
	stack_delta_table__free(&t);
	return err;
}

/* Counts a table that was just loaded (or failed) into lt. */
static void count_load(struct unwind_maps *um, struct loaded_table *lt, const char *path)
{
	/* -vv: which file got which table (the id is a hash of the table's inputs). */
	pr_debug("table %016llx for %s: %s", (unsigned long long)lt->id, path,
		 lt->error ? strerror(-lt->error) : "loaded");
	if (lt->error) {
		um->stats.tables_failed++;
		if (lt->error != -ENOENT)
			pr_info("no unwind table for %s: %s (frame pointers are used)", path,
				strerror(-lt->error));
		return;
	}
	um->stats.tables_loaded++;
	um->stats.deltas_loaded += lt->n_deltas;
	um->stats.pages_loaded += lt->n_pages;
	if (um->stats.deltas_loaded > um->stats.deltas_peak)
		um->stats.deltas_peak = um->stats.deltas_loaded;
	if (um->stats.pages_loaded > um->stats.pages_peak)
		um->stats.pages_peak = um->stats.pages_loaded;
}

/* Appends lt to the tables no process uses (newest last: the oldest go first). */
static void unused_push(struct unwind_maps *um, struct loaded_table *lt)
{
	lt->unused = true;
	list__add_tail(&um->unused, &lt->unused_node);
	um->stats.deltas_unused += lt->n_deltas;
	um->n_unused++;
}

static void unused_unlink(struct unwind_maps *um, struct loaded_table *lt)
{
	list__del(&lt->unused_node);
	lt->unused = false;
	um->stats.deltas_unused -= lt->n_deltas;
	um->n_unused--;
}

int unwind_maps__acquire(struct unwind_maps *um, uint64_t id, const struct elf_file *ef)
{
	uint64_t h = hash_u64(id);
	struct loaded_table *lt = hashmap__find(&um->tables, h, &id);

	if (!lt) {
		lt = calloc(1, sizeof(*lt));
		if (!lt)
			return -ENOMEM;
		lt->id = id;
		if (hashmap__insert(&um->tables, h, lt)) {
			free(lt);
			return -ENOMEM;
		}
		lt->error = ef ? load_table(um, id, ef, lt) : -ENOENT;
		count_load(um, lt, ef ? ef->path : "?");
	}
	if (lt->building) {
		/* Not loaded yet: frame pointers meanwhile (callers wait for READY). */
		lt->refs++;
		return -EAGAIN;
	}
	if (!lt->refs++ && lt->unused) {
		/* Loaded and unused: used again without a rebuild. */
		unused_unlink(um, lt);
		um->stats.cache_hits += !lt->fresh;
		lt->fresh = false;
	}
	return lt->error;
}

static void unload(struct unwind_maps *um, struct loaded_table *lt)
{
	if (!lt->error) {
		/* Unpublish, then reuse the space: a sample already past the lookup may read
		 * a newer table's deltas once, at worst one odd frame, never a fault. */
		bpf_map_delete_elem(um->info_fd, &lt->id);
		/* Before the space is reused: no walk keeps this table's info past it. */
		maps_changed(um);
		deltas_free(um, lt->chunk, lt->offset, lt->n_pages);
		um->stats.tables_unloaded++;
		um->stats.deltas_loaded -= lt->n_deltas;
		um->stats.pages_loaded -= lt->n_pages;
	}
	hashmap__remove(&um->tables, hash_u64(lt->id), &lt->id);
	free(lt);
}

static bool evict_oldest_unused(struct unwind_maps *um)
{
	struct list_node *oldest = list__first(&um->unused);
	struct loaded_table *lt;

	if (!oldest)
		return false;
	lt = list_entry(oldest, struct loaded_table, unused_node);
	unused_unlink(um, lt);
	unload(um, lt);
	return true;
}

void unwind_maps__release(struct unwind_maps *um, uint64_t id)
{
	struct loaded_table *lt = hashmap__find(&um->tables, hash_u64(id), &id);

	if (!lt || --lt->refs || lt->building)
		return;
	if (lt->error) {
		/* A build that timed out is not tried again (each try may strand a thread). */
		if (lt->error != -ETIMEDOUT)
			unload(um, lt);
		return;
	}
	/*
	 * Kept loaded: the same programs start again and again (a build runs cc1,
	 * as and ld hundreds of times; clang maps 2M deltas of LLVM), and
	 * rebuilding their tables each time would stall the reader. The oldest
	 * unused go first when the space is needed (see UNUSED_TABLES_MAX).
	 */
	unused_push(um, lt);
	while ((um->stats.deltas_unused > um->unused_budget || um->n_unused > UNUSED_TABLES_MAX) &&
	       evict_oldest_unused(um))
		;
}

bool unwind_maps__table_loaded(const struct unwind_maps *um, uint64_t id, uint32_t *pages)
{
	const struct loaded_table *lt = hashmap__find(&um->tables, hash_u64(id), &id);

	*pages = lt && !lt->error ? lt->n_pages : 0;
	return lt && !lt->error;
}

const struct file_job *unwind_maps__build_job_of(const struct unwind_maps *um, uint64_t id)
{
	const struct loaded_table *lt = hashmap__find(&um->tables, hash_u64(id), &id);

	return lt && lt->building ? lt->job : NULL;
}

enum unwind_table_state unwind_maps__table_state(const struct unwind_maps *um, uint64_t id)
{
	const struct loaded_table *lt = hashmap__find(&um->tables, hash_u64(id), &id);

	if (!lt || lt->reopen)
		return UNWIND_TABLE_UNKNOWN;
	return lt->building ? UNWIND_TABLE_BUILDING : UNWIND_TABLE_READY;
}

/* Builds whose estimated heap reaches this trim the heap when done. */
#define UNWIND_TRIM_AFTER_BYTES (4u << 20)

/* On the file worker: opens, reads and parses the file, touches nothing shared. */
static void build_job_run(struct file_job *job)
{
	struct table_build_job *j = (struct table_build_job *)job;
	struct elf_file ef = {.path = j->src.path, .size = j->src.size};

	uint8_t id[STACK_DELTAS_ID_LEN];
	size_t cost = 0;
	bool cached;

	ef.fd = j->src.open(j->src.ctx);
	if (ef.fd < 0) {
		job->err = ef.fd;
		j->open_failed = true;
		return;
	}
	/* The id of the bytes open now (one read of the CFI sections): a table cached
	 * under it was built from these very bytes. */
	cached = j->cache && !stack_deltas__table_id(&ef, id);
	/*
	 * A table read back reserves its size (issue 22): at a warm start the
	 * whole machine's tables were read back at once, 13.5-37 MiB of heap on
	 * the two threads beside the finished ones waiting; now the reads in
	 * flight share the builds' FILE_WORKER_RESERVE_BYTES (a larger one runs
	 * alone), and a read that does not fit is put back as a build is.
	 */
	if (cached) {
		size_t bytes = (size_t)table_cache__load_leaves_bytes(j->cache, id);

		if (bytes && !file_job__reserve(job, bytes))
			goto cleanup;
		if (!table_cache__load_leaves(j->cache, id, &j->leaves, &j->leaves_stats)) {
			memcpy(j->leaves_id, id, sizeof(id));
			j->from_cache = true;
			job->err = 0;
			goto cleanup;
		}
	}
	/* Two large builds at once made the profiler's peak: a large one waits its
	 * turn (run again from the start later; the thread goes on with other
	 * jobs). */
	cost = stack_deltas__build_cost(&ef);
	if (!file_job__reserve(job, cost))
		goto cleanup;
	job->err = stack_deltas__build(&ef, &j->table);
	/* Stored under the id the build computed (the bytes it parsed). A store that
	 * fails costs the next run a build, nothing else. */
	if (cached && !job->err && j->table.has_id)
		table_cache__store(j->cache, &j->table);
	/*
	 * The build's free heap stays in this thread's arena up to the trim
	 * threshold; a large build is rare, so trimming after each is cheap.
	 */
	if (cost >= UNWIND_TRIM_AFTER_BYTES)
		memory__trim();
cleanup:
	job->bytes = j->table.n * sizeof(*j->table.deltas) + delta_leaves__bytes(j->leaves.n) +
		     (size_t)j->leaves.n_rules * sizeof(*j->leaves.rules);
	close(ef.fd);
}

static void table_source__clear(struct table_source *src)
{
	free(src->path);
	if (src->free)
		src->free(src->ctx);
	memset(src, 0, sizeof(*src));
}

static void build_job_free(struct file_job *job)
{
	struct table_build_job *j = (struct table_build_job *)job;

	if (!j)
		return;
	stack_delta_table__free(&j->table);
	delta_leaves__free(&j->leaves);
	table_source__clear(&j->src);
	table_cache__put(j->cache);
	free(j);
}

struct table_build_job *unwind_maps__build_job(struct unwind_maps *um, uint64_t id,
					       struct table_source *src)
{
	struct table_build_job *j = calloc(1, sizeof(*j));
	struct loaded_table *lt = calloc(1, sizeof(*lt)), *old;
	uint64_t h = hash_u64(id);

	if (!j || !lt)
		goto enomem;
	j->job.kind = FILE_JOB_BUILD;
	j->job.run = build_job_run;
	j->job.free = build_job_free;
	j->job.timeout_ms = UNWIND_BUILD_TIMEOUT_MS;
	j->table_id = id;
	j->cache = table_cache__get(um->cache);
	j->src = *src;
	memset(src, 0, sizeof(*src));
	old = hashmap__find(&um->tables, h, &id);
	if (old && old->reopen) {
		/* Its file could not be opened last time: through this source now. */
		free(lt);
		old->reopen = false;
		old->error = 0;
		old->building = true;
		old->job = &j->job;
		um->stats.builds_posted++;
		return j;
	}
	lt->id = id;
	lt->building = true;
	lt->job = &j->job;
	if (hashmap__insert(&um->tables, h, lt))
		goto enomem;
	um->stats.builds_posted++;
	return j;
enomem:
	free(lt);
	if (j)
		build_job_free(&j->job);
	table_source__clear(src);
	return NULL;
}

void unwind_maps__finish_build(struct unwind_maps *um, struct table_build_job *j, bool abandoned)
{
	uint64_t id = j->table_id;
	struct loaded_table *lt = hashmap__find(&um->tables, hash_u64(id), &id);

	if (!lt || !lt->building)
		return;
	lt->building = false;
	lt->job = NULL;
	if (abandoned) {
		lt->error = -ETIMEDOUT;
		um->stats.builds_timed_out++;
		pr_warn("%s: building its unwind table took over the timeout, abandoned "
			"(frame pointers are used)",
			j->src.path);
	} else {
		if (j->from_cache) {
			um->stats.cache_reads++;
			um->stats.cache_read_ns += j->job.run_ns;
		} else {
			um->stats.build_ns += j->job.run_ns;
		}
		if (j->job.err)
			lt->error = j->job.err;
		else if (j->from_cache)
			lt->error = check_id(um, id, &j->leaves_stats, j->leaves_id);
		else
			lt->error = check_built(um, id, &j->table);
		if (!lt->error)
			lt->error = j->from_cache ? load_leaves(um, id, &j->leaves, lt)
						  : load_built(um, id, &j->table, lt);
		/* Opened through a process that exited meanwhile: not a failure of the
		 * file. Built again for the next process that waits for it (bounded). */
		if (j->open_failed && ++lt->open_failures < UNWIND_BUILD_REOPEN_TRIES) {
			lt->reopen = true;
			um->stats.builds_reopened++;
			pr_debug("%s: could not be opened for its table (%s), built again later",
				 j->src.path, strerror(-lt->error));
			return;
		}
	}
	count_load(um, lt, j->src.path);
	/* Built for processes that wait for it: they acquire it next. Until then it
	 * is an unused table (unloaded first when room is needed), or a failure kept. */
	if (!lt->error && !lt->refs) {
		unused_push(um, lt);
		lt->fresh = true;
	}
}

/* A page of a chunk read back from the kernel, for the shared delta search. */
struct page_reader {
	int fd;
	int err;
	struct op_delta_page page;
};

static const struct op_delta_page *page_read(struct page_reader *r, uint32_t index)
{
	if (bpf_map_lookup_elem(r->fd, &index, &r->page)) {
		r->err = -errno;
		return NULL;
	}
	return &r->page;
}

#define OP_DELTA_PAGE(chunk, index) page_read((chunk), (index))
#include "omniprof/unwind/delta_search.h"

const struct op_table_info *unwind_maps__table_info(const struct unwind_maps *um, uint64_t table_id)
{
	const struct loaded_table *lt = hashmap__find(&um->tables, hash_u64(table_id), &table_id);

	return lt && !lt->error && !lt->building ? &lt->info : NULL;
}

int unwind_maps__lookup_rule(const struct unwind_maps *um, uint64_t id, uint64_t vaddr,
			     struct op_unwind_rule *rule)
{
	const struct loaded_table *lt = hashmap__find(&um->tables, hash_u64(id), &id);
	struct page_reader *r;
	uint32_t index;
	int err = 0;

	if (!lt || lt->error)
		return -ENOENT;
	memset(rule, 0, sizeof(*rule));
	rule->cmd = OP_RULE_INVALID;
	if (vaddr < lt->base || vaddr - lt->base >= OP_DELTA_PAD)
		return 0;
	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = um->chunks[lt->chunk].fd;
	r->err = 0;
	/* The same search as the BPF side, over the same bytes (read back from the map). */
	if (!op_delta_table__find(&lt->info, r, (uint32_t)(vaddr - lt->base), &index) &&
	    bpf_map_lookup_elem(um->rules_fd, &index, rule))
		err = -errno;
	if (r->err)
		err = r->err;
	free(r);
	return err;
}

/* ---- LPM entries and their per-pid budget ------------------------------------ */

void unwind_maps__set_capacity(struct unwind_maps *um, uint32_t max_mappings)
{
	um->max_mappings = max_mappings;
	um->pid_budget = max_mappings / UNWIND_LPM_PID_SHARE;
	if (um->pid_budget < UNWIND_LPM_PID_MIN)
		um->pid_budget = UNWIND_LPM_PID_MIN;
}

bool unwind_maps__over_high_water(const struct unwind_maps *um)
{
	return um->stats.mapping_entries > (uint64_t)um->max_mappings / 8 * 7;
}

uint32_t unwind_maps__greediest_pid(const struct unwind_maps *um, uint32_t *entries)
{
	uint32_t pid = 0, most = 0;
	void *e;

	for (size_t i = 0; hashmap__next(&um->pid_entries, &i, &e);) {
		const struct lpm_pid *lp = e;

		if (lp->entries > most) {
			most = lp->entries;
			pid = lp->pid;
		}
	}
	*entries = most;
	return pid;
}

uint32_t unwind_maps__pid_entries(const struct unwind_maps *um, uint32_t pid)
{
	const struct lpm_pid *lp = hashmap__find(&um->pid_entries, hash_u64(pid), &pid);

	return lp ? lp->entries : 0;
}

/* pid's count, created at 0 when create; NULL when absent (or ENOMEM). */
static struct lpm_pid *lpm_pid_get(struct unwind_maps *um, uint32_t pid, bool create)
{
	uint64_t h = hash_u64(pid);
	struct lpm_pid *lp = hashmap__find(&um->pid_entries, h, &pid);

	if (lp || !create)
		return lp;
	lp = calloc(1, sizeof(*lp));
	if (!lp)
		return NULL;
	lp->pid = pid;
	if (hashmap__insert(&um->pid_entries, h, lp)) {
		free(lp);
		return NULL;
	}
	return lp;
}

static void lpm_pid_sub(struct unwind_maps *um, uint32_t pid, uint32_t n)
{
	struct lpm_pid *lp = lpm_pid_get(um, pid, false);

	if (!lp)
		return;
	lp->entries -= n < lp->entries ? n : lp->entries;
	if (!lp->entries) {
		hashmap__remove_entry(&um->pid_entries, hash_u64(pid), lp);
		free(lp);
	}
}

/* The largest power-of-two aligned block starting at start that fits in [start, end). */
static int block_bits(uint64_t start, uint64_t end)
{
	int bits = start ? __builtin_ctzll(start) : 63;

	while (bits > 0 &&
	       (bits >= 64 || start + (1ull << bits) > end || start + (1ull << bits) < start))
		bits--;
	return bits;
}

static struct op_mapping_key block_key(uint32_t pid, uint64_t start, int bits)
{
	struct op_mapping_key key;

	key.prefixlen = 32 + 64 - (uint32_t)bits;
	key.pid = pid;
	key.addr_be = __builtin_bswap64(start);
	return key;
}

/* Blocks of [start, end): at most 2 x 64 (up, then down the powers of two). */
#define RANGE_BLOCKS_MAX 128

/* The kernel's ENOTSUPP (not in userspace headers): a map type without batch operations. */
#define LPM_ENOTSUPP 524

/*
 * The keys of the blocks of [start, end) of pid into keys (RANGE_BLOCKS_MAX of
 * them). Returns their count, or RANGE_BLOCKS_MAX + 1 when there are more.
 */
static uint32_t range_keys(uint32_t pid, uint64_t start, uint64_t end,
			   struct op_mapping_key keys[RANGE_BLOCKS_MAX])
{
	uint32_t n = 0;

	while (start < end) {
		int bits = block_bits(start, end);

		if (n == RANGE_BLOCKS_MAX)
			return RANGE_BLOCKS_MAX + 1;
		keys[n++] = block_key(pid, start, bits);
		start += 1ull << bits;
	}
	return n;
}

/* Does err (of a batch call that did nothing) say the kernel has no batch operations? */
static bool batch_unsupported(int err, uint32_t done)
{
	return !done && (err == -EINVAL || err == -EOPNOTSUPP || err == -LPM_ENOTSUPP);
}

/*
 * Deletes keys[0..n) from the trie, absent ones skipped; returns how many were
 * there. One syscall per range instead of one per block (a short-lived
 * process's ranges are written at its exec and withdrawn at its exit: on a
 * host running compilers, thousands of entries a second, each a syscall). The
 * kernel's batch stops at a key it cannot delete: the next batch starts past it.
 */
static uint32_t delete_keys(struct unwind_maps *um, const struct op_mapping_key *keys, uint32_t n)
{
	uint32_t deleted = 0, at = 0;

	while (at < n && !um->lpm_no_batch) {
		uint32_t count = n - at;
		int err =
		    bpf_map_delete_batch(um->mappings_fd, &keys[at], &count, NULL) ? -errno : 0;

		if (count > n - at)
			count = n - at;
		if (err && batch_unsupported(err, count) && !deleted && !at) {
			um->lpm_no_batch = true;
			break;
		}
		deleted += count;
		at += count;
		if (!err)
			return deleted;
		at++; /* the key refused: absent */
	}
	for (; at < n; at++)
		if (!bpf_map_delete_elem(um->mappings_fd, &keys[at]))
			deleted++;
	return deleted;
}

static void remove_blocks(struct unwind_maps *um, uint32_t pid, uint64_t start, uint64_t end)
{
	struct op_mapping_key keys[RANGE_BLOCKS_MAX];
	uint32_t removed = 0, n = range_keys(pid, start, end, keys);

	if (n <= RANGE_BLOCKS_MAX) {
		removed = delete_keys(um, keys, n);
		um->stats.mapping_entries -= removed;
		lpm_pid_sub(um, pid, removed);
		return;
	}
	while (start < end) {
		int bits = block_bits(start, end);
		struct op_mapping_key key = block_key(pid, start, bits);

		if (!bpf_map_delete_elem(um->mappings_fd, &key)) {
			um->stats.mapping_entries--;
			removed++;
		}
		start += 1ull << bits;
	}
	lpm_pid_sub(um, pid, removed);
}

/* A range refused with err: counted by its reason. */
static void count_refused(struct unwind_maps *um, int err)
{
	if (err == -EDQUOT)
		um->stats.refused_pid_budget++;
	else if (err == -ENOSPC || err == -E2BIG)
		um->stats.refused_map_full++;
	um->stats.map_full += err == -ENOSPC || err == -E2BIG;
}

/*
 * Writes the blocks of [start, end): entries already there are updated
 * (a re-read writes unchanged ranges again) and cost no budget; new ones
 * are taken from pid's budget. A failure takes back this call's new entries.
 */
static int insert_blocks(struct unwind_maps *um, uint32_t pid, uint64_t start, uint64_t end,
			 const struct op_mapping_value *value)
{
	struct op_mapping_key added[RANGE_BLOCKS_MAX];
	struct lpm_pid *lp = lpm_pid_get(um, pid, true);
	uint32_t n_added = 0;
	int err = 0;

	if (!lp)
		return -ENOMEM;
	while (start < end && !err) {
		int bits = block_bits(start, end);
		struct op_mapping_key key = block_key(pid, start, bits);

		start += 1ull << bits;
		if (lp->entries + n_added < um->pid_budget && n_added < RANGE_BLOCKS_MAX) {
			if (!bpf_map_update_elem(um->mappings_fd, &key, value, BPF_NOEXIST)) {
				added[n_added++] = key;
				continue;
			}
			if (errno != EEXIST) {
				err = -errno;
				break;
			}
		}
		if (!bpf_map_update_elem(um->mappings_fd, &key, value, BPF_EXIST))
			continue;
		err = errno == ENOENT ? -EDQUOT : -errno;
	}
	if (err) {
		delete_keys(um, added, n_added);
		n_added = 0;
		count_refused(um, err);
	}
	lp->entries += n_added;
	um->stats.mapping_entries += n_added;
	if (!lp->entries) {
		hashmap__remove_entry(&um->pid_entries, hash_u64(pid), lp);
		free(lp);
	}
	return err;
}

int unwind_maps__add_range(struct unwind_maps *um, uint32_t pid, uint64_t start, uint64_t end,
			   uint64_t table_id, uint64_t bias)
{
	struct op_mapping_value v = {
	    .table_id = table_id, .bias = bias, .start = start, .end = end};
	int err = insert_blocks(um, pid, start, end, &v);

	/* Entries already there may have been rewritten. */
	maps_changed(um);
	return err;
}

/*
 * As insert_blocks, for a range none of whose blocks is in the trie: all of
 * them in one batch (the kernel's batch update knows no BPF_NOEXIST, so only
 * a range known to be new can be counted this way). A range past pid's budget
 * or of more blocks than RANGE_BLOCKS_MAX goes block by block, as before.
 */
static int insert_new_blocks(struct unwind_maps *um, uint32_t pid, uint64_t start, uint64_t end,
			     const struct op_mapping_value *value)
{
	struct op_mapping_value values[RANGE_BLOCKS_MAX];
	struct op_mapping_key keys[RANGE_BLOCKS_MAX];
	uint32_t n = range_keys(pid, start, end, keys), count;
	struct lpm_pid *lp;
	int err;

	if (um->lpm_no_batch || n > RANGE_BLOCKS_MAX || !n)
		return insert_blocks(um, pid, start, end, value);
	lp = lpm_pid_get(um, pid, true);
	if (!lp)
		return -ENOMEM;
	/* insert_blocks takes a block while entries + added < budget. */
	if (lp->entries + n > um->pid_budget)
		return insert_blocks(um, pid, start, end, value);
	for (uint32_t i = 0; i < n; i++)
		values[i] = *value;
	count = n;
	err = bpf_map_update_batch(um->mappings_fd, keys, values, &count, NULL) ? -errno : 0;
	if (count > n)
		count = n;
	if (err && batch_unsupported(err, count)) {
		um->lpm_no_batch = true;
		return insert_blocks(um, pid, start, end, value);
	}
	if (err) {
		/* A refused range leaves none of its new entries behind. */
		delete_keys(um, keys, count);
		count_refused(um, err);
		if (!lp->entries) {
			hashmap__remove_entry(&um->pid_entries, hash_u64(pid), lp);
			free(lp);
		}
		return err;
	}
	lp->entries += n;
	um->stats.mapping_entries += n;
	return 0;
}

int unwind_maps__add_new_range(struct unwind_maps *um, uint32_t pid, uint64_t start, uint64_t end,
			       uint64_t table_id, uint64_t bias)
{
	struct op_mapping_value v = {
	    .table_id = table_id, .bias = bias, .start = start, .end = end};
	int err = insert_new_blocks(um, pid, start, end, &v);

	/* A refused range's entries were there for a moment. */
	maps_changed(um);
	return err;
}

void unwind_maps__remove_range(struct unwind_maps *um, uint32_t pid, uint64_t start, uint64_t end)
{
	remove_blocks(um, pid, start, end);
	maps_changed(um);
}

int unwind_maps__add_pid(struct unwind_maps *um, uint32_t pid, uint64_t flags)
{
	struct op_mapping_key key = {.prefixlen = 32, .pid = pid};
	struct op_mapping_value v = {.bias = flags};

	if (bpf_map_update_elem(um->mappings_fd, &key, &v, BPF_ANY))
		return -errno;
	maps_changed(um);
	return 0;
}

void unwind_maps__remove_pid(struct unwind_maps *um, uint32_t pid)
{
	struct op_mapping_key key = {.prefixlen = 32, .pid = pid};

	bpf_map_delete_elem(um->mappings_fd, &key);
	maps_changed(um);
}
