// SPDX-License-Identifier: Apache-2.0
#include "unwind/user_unwind.h"

#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "omniprof/unwind/lookup_cache.h"
#include "unwind/delta_pages.h"
#include "unwind/stack_deltas.h"

/* bpf_probe_read_user's contract: the destination is zeroed on failure. */
static int read_with(int (*read)(void *, void *, size_t, uint64_t), void *ctx, void *dst,
		     size_t size, uint64_t addr)
{
	if (read(ctx, dst, size, addr)) {
		memset(dst, 0, size);
		return -14; /* -EFAULT */
	}
	return 0;
}

struct user_walk;
struct op_unwinder;
struct op_walk;

static int runtime_step(struct op_walk *w, uint32_t interp, struct op_frame *frame, int res);

/* The walk's context is the struct user_walk the unwinder is embedded in:
 * the shared headers' macros pass it along. */
#define OP_READ_USER(u, dst, size, addr)      user_unwind__read((u), (dst), (size), (addr))
#define OP_FIND_RULE(u, pc, rule)	      user_unwind__find_rule((u), (pc), (rule))
#define OP_READ_FSBASE(u)		      user_unwind__fsbase(u)
#define OP_INTERP_STEP(w, interp, frame, res) runtime_step((w), (interp), (frame), (res))
#include "omniprof/unwind/native.h"
#include "omniprof/unwind/walk.h"

struct user_walk {
	struct op_walk w;
	const struct user_unwind_ops *ops;
	const struct user_unwind_interp *interp; /* NULL: a native walk */
	uint64_t fsbase;			 /* 0: unknown */
};

#define user_walk_of(ptr, member)                                                                  \
	((struct user_walk *)((uintptr_t)(ptr)-offsetof(struct user_walk, member)))

int user_unwind__read(struct op_unwinder *u, void *dst, size_t size, uint64_t addr)
{
	const struct user_unwind_ops *ops = user_walk_of(u, w.u)->ops;

	return read_with(ops->read, ops->read_ctx, dst, size, addr);
}

uint64_t user_unwind__fsbase(struct op_unwinder *u)
{
	return user_walk_of(u, w.u)->fsbase;
}

void user_unwind__find_rule(struct op_unwinder *u, uint64_t pc, struct op_unwind_rule *rule)
{
	const struct user_unwind_ops *ops = user_walk_of(u, w.u)->ops;

	ops->find_rule(ops->rule_ctx, u->pid, pc, rule);
}

/* OP_INTERP_STEP: the runtime's own step, as sampler.bpf.c calls its global function. */
static int runtime_step(struct op_walk *w, uint32_t interp, struct op_frame *frame, int res)
{
	const struct user_unwind_interp *in = user_walk_of(w, w)->interp;

	if (!in || interp >= OP_INTERP__COUNT || !in->runtimes[interp].step)
		return res;
	return in->runtimes[interp].step(in->runtimes[interp].ctx, w, frame, res);
}

struct user_unwind_result user_unwind__walk(const struct user_unwind_ops *ops,
					    const struct user_unwind_interp *interp, uint32_t pid,
					    uint64_t pc, uint64_t sp, uint64_t fp,
					    struct op_frame *frames, uint32_t max_frames)
{
	return user_unwind__walk_tls(ops, interp, pid, pc, sp, fp, 0, frames, max_frames);
}

struct user_unwind_result user_unwind__walk_tls(const struct user_unwind_ops *ops,
						const struct user_unwind_interp *interp,
						uint32_t pid, uint64_t pc, uint64_t sp, uint64_t fp,
						uint64_t fsbase, struct op_frame *frames,
						uint32_t max_frames)
{
	struct user_unwind_regs regs = {.pc = pc, .sp = sp, .fp = fp, .fsbase = fsbase};

	return user_unwind__walk_regs(ops, interp, pid, &regs, frames, max_frames);
}

struct user_unwind_result user_unwind__walk_regs(const struct user_unwind_ops *ops,
						 const struct user_unwind_interp *interp,
						 uint32_t pid, const struct user_unwind_regs *regs,
						 struct op_frame *frames, uint32_t max_frames)
{
	struct user_unwind_result res = {0};
	struct user_walk uw;
	struct op_walk *w = &uw.w;
	int at;

	if (!regs->pc) {
		res.flags = OP_TRACE_F_NO_USER;
		return res;
	}
	uw.ops = ops;
	uw.interp = interp;
	uw.fsbase = regs->fsbase;
	/* walk_user_stack() and walk_one_frame() of bpf/sampler.bpf.c. */
	op_walk__init(w, pid, regs->pc, regs->sp, regs->fp, interp ? interp->ranges : NULL);
	if (regs->has_bx)
		op_unwinder__set_bx(&w->u, regs->bx);
	for (uint32_t index = 0; index <= max_frames; index++)
		if (op_walk__round(w, index, max_frames, &frames[index < max_frames ? index : 0]))
			break;
	res.n_frames = w->n;
	res.error = op_walk__error(w);
	if (res.error) {
		res.flags |= OP_TRACE_F_USER_TRUNCATED;
		at = max_frames ? op_walk__error_at(w, max_frames, w->n ? &frames[w->n - 1] : NULL)
				: -1;
		if (at >= 0) {
			op_frame__set_error(&frames[at], res.error);
			res.n_frames = (uint32_t)at + 1;
		}
	}
	return res;
}

struct user_unwind_result user_unwind__run(const struct user_unwind_ops *ops, uint32_t pid,
					   uint64_t pc, uint64_t sp, uint64_t fp,
					   struct op_frame *frames, uint32_t max_frames)
{
	return user_unwind__walk(ops, NULL, pid, pc, sp, fp, frames, max_frames);
}

/* ---- the in-memory rule source ------------------------------------------- */

/*
 * Storage for omniprof/unwind/lookup.h in memory, in the layout the agent
 * loads into the BPF maps: each file's deltas as a page tree
 * (delta_pages__build, one chunk per table), rules deduplicated into one
 * array of 16-bit indexes, mappings as their LPM values would be.
 */
struct file_table {
	const struct elf_file *ef;
	int error; /* non-zero: no table, frame pointers */
	struct op_table_info info;
	uint32_t n_pages;
	struct op_delta_page *pages; /* owned */
};

struct mapping {
	struct op_mapping_value v; /* table_id: index in tables + 1, or OP_TABLE_ID_ANON */
};

#define RULE_SLOTS (2 * OP_MAX_RULES) /* open addressing, at most half full */

struct user_unwind_tables {
	struct file_table **tables; /* owned */
	size_t n_tables, cap_tables;
	struct mapping *maps; /* sorted by start */
	size_t n_maps, cap_maps;
	struct op_unwind_rule *rules; /* owned, OP_MAX_RULES */
	uint32_t n_rules;
	uint32_t *rule_slots;	      /* owned: index + 1 of the rule hashed there, 0: free */
	struct op_lookup_cache cache; /* reset when the mappings change */
	struct user_unwind_tables_stats stats;
};

int user_unwind_tables__new(struct user_unwind_tables **out)
{
	struct user_unwind_tables *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->rules = calloc(OP_MAX_RULES, sizeof(*t->rules));
	t->rule_slots = calloc(RULE_SLOTS, sizeof(*t->rule_slots));
	if (!t->rules || !t->rule_slots) {
		user_unwind_tables__free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void user_unwind_tables__free(struct user_unwind_tables *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_tables; i++) {
		free(t->tables[i]->pages);
		free(t->tables[i]);
	}
	free(t->tables);
	free(t->maps);
	free(t->rules);
	free(t->rule_slots);
	free(t);
}

const struct user_unwind_tables_stats *user_unwind_tables__stats(const struct user_unwind_tables *t)
{
	return &t->stats;
}

/* The index of rule r in t->rules, added when new; -ENOSPC when full. */
static int rule_index(struct user_unwind_tables *t, const struct op_unwind_rule *r)
{
	uint64_t key;
	uint32_t slot;

	memcpy(&key, r, sizeof(key));
	slot = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) % RULE_SLOTS;
	for (;; slot = (slot + 1) % RULE_SLOTS) {
		uint32_t at = t->rule_slots[slot];

		if (!at)
			break;
		if (!memcmp(&t->rules[at - 1], r, sizeof(*r)))
			return (int)(at - 1);
	}
	if (t->n_rules >= OP_MAX_RULES)
		return -ENOSPC;
	t->rules[t->n_rules] = *r;
	t->rule_slots[slot] = ++t->n_rules;
	return (int)(t->n_rules - 1);
}

/* Builds ef's table in the loaded form; the same limits as load_built() in unwind_maps.c. */
static int table_build(struct user_unwind_tables *ut, struct file_table *ft, uint32_t chunk)
{
	struct stack_delta_table t = {0};
	uint32_t *addr = NULL, levels;
	uint16_t *rule = NULL;
	int err, r;

	err = stack_deltas__build(ft->ef, &t);
	if (err)
		goto cleanup;
	if (!t.n || t.n >= OP_DELTA_PAD ||
	    t.deltas[t.n - 1].addr - t.deltas[0].addr >= OP_DELTA_PAD) {
		err = -E2BIG;
		goto cleanup;
	}
	ft->n_pages = delta_pages__count(t.n, &levels);
	addr = malloc(t.n * sizeof(*addr));
	rule = malloc(t.n * sizeof(*rule));
	ft->pages = calloc(ft->n_pages, sizeof(*ft->pages));
	if (!addr || !rule || !ft->pages) {
		err = -ENOMEM;
		goto cleanup;
	}
	ft->info.base = t.deltas[0].addr;
	ft->info.chunk = chunk;
	for (size_t i = 0; i < t.n; i++) {
		r = rule_index(ut, &t.deltas[i].rule);
		if (r < 0) {
			err = r;
			goto cleanup;
		}
		addr[i] = (uint32_t)(t.deltas[i].addr - ft->info.base);
		rule[i] = (uint16_t)r;
	}
	err = delta_pages__build(addr, rule, t.n, 0, ft->pages, &ft->info);
cleanup:
	if (err) {
		free(ft->pages);
		ft->pages = NULL;
		ft->n_pages = 0;
	}
	free(addr);
	free(rule);
	stack_delta_table__free(&t);
	return err;
}

/* ef's table, built on first use; NULL on ENOMEM. */
static struct file_table *table_get(struct user_unwind_tables *t, const struct elf_file *ef)
{
	struct file_table *ft;

	for (size_t i = 0; i < t->n_tables; i++)
		if (t->tables[i]->ef == ef)
			return t->tables[i];
	if (t->n_tables == t->cap_tables) {
		size_t cap = t->cap_tables ? 2 * t->cap_tables : 16;
		struct file_table **tables = realloc(t->tables, cap * sizeof(*tables));

		if (!tables)
			return NULL;
		t->tables = tables;
		t->cap_tables = cap;
	}
	ft = calloc(1, sizeof(*ft));
	if (!ft)
		return NULL;
	ft->ef = ef;
	ft->error = table_build(t, ft, (uint32_t)t->n_tables);
	if (ft->error == -ENOMEM) {
		free(ft);
		return NULL;
	}
	if (ft->error)
		t->stats.tables_failed++;
	else
		t->stats.tables_built++;
	t->tables[t->n_tables++] = ft;
	return ft;
}

static int mapping_insert(struct user_unwind_tables *t, uint64_t start, uint64_t end, uint64_t bias,
			  uint64_t table_id)
{
	size_t at;

	if (t->n_maps == t->cap_maps) {
		size_t cap = t->cap_maps ? 2 * t->cap_maps : 32;
		struct mapping *maps = realloc(t->maps, cap * sizeof(*maps));

		if (!maps)
			return -ENOMEM;
		t->maps = maps;
		t->cap_maps = cap;
	}
	for (at = t->n_maps; at > 0 && t->maps[at - 1].v.start > start; at--)
		;
	memmove(&t->maps[at + 1], &t->maps[at], (t->n_maps - at) * sizeof(*t->maps));
	t->maps[at].v = (struct op_mapping_value){
	    .table_id = table_id, .bias = bias, .start = start, .end = end};
	t->n_maps++;
	op_lookup_cache__reset(&t->cache);
	return 0;
}

int user_unwind_tables__add(struct user_unwind_tables *t, uint64_t start, uint64_t end,
			    uint64_t bias, const struct elf_file *ef)
{
	struct file_table *ft = ef ? table_get(t, ef) : NULL;

	if (ef && !ft)
		return -ENOMEM;
	if (!ft)
		return -ENOENT;
	if (ft->error)
		return ft->error; /* like the agent: no table, frame pointers */
	return mapping_insert(t, start, end, bias, ft->info.chunk + 1ull);
}

int user_unwind_tables__add_anon(struct user_unwind_tables *t, uint64_t start, uint64_t end)
{
	return mapping_insert(t, start, end, 0, OP_TABLE_ID_ANON);
}

void user_unwind_tables__reset_mappings(struct user_unwind_tables *t)
{
	t->n_maps = 0;
	op_lookup_cache__reset(&t->cache);
}

/* OP_LOOKUP_MAPPING: the mapping holding pc, else the pid's marker (one
 * process per rule source: it is known). */
static const struct op_mapping_value *tables_mapping(const struct user_unwind_tables *t,
						     uint64_t pc)
{
	static const struct op_mapping_value marker;
	size_t lo = 0, hi = t->n_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->maps[mid].v.start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < t->maps[lo - 1].v.end ? &t->maps[lo - 1].v : &marker;
}

static const struct op_table_info *tables_info(const struct user_unwind_tables *t, uint64_t id)
{
	return id && id <= t->n_tables && !t->tables[id - 1]->error ? &t->tables[id - 1]->info
								    : NULL;
}

static const struct file_table *tables_chunk(const struct user_unwind_tables *t, uint32_t chunk)
{
	return chunk < t->n_tables ? t->tables[chunk] : NULL;
}

static const struct op_delta_page *tables_page(const struct file_table *ft, uint32_t index)
{
	return index < ft->n_pages ? &ft->pages[index] : NULL;
}

#define OP_LOOKUP_MAPPING(ctx, pid, pc) tables_mapping((ctx), (pc))
#define OP_LOOKUP_TABLE(ctx, id)	tables_info((ctx), (id))
#define OP_LOOKUP_CHUNK(ctx, chunk)	((void *)tables_chunk((ctx), (chunk)))
#define OP_LOOKUP_RULE(ctx, index)                                                                 \
	((index) < ((struct user_unwind_tables *)(ctx))->n_rules                                   \
	     ? &((struct user_unwind_tables *)(ctx))->rules[(index)]                               \
	     : NULL)
#define OP_DELTA_PAGE(chunk, index) tables_page((chunk), (index))
#include "omniprof/unwind/lookup.h"

void user_unwind_tables__find_rule(void *ctx, uint32_t pid, uint64_t pc,
				   struct op_unwind_rule *rule)
{
	struct user_unwind_tables *t = ctx;
	const struct op_mapping_value *m;

	switch (op_lookup__rule(t, &t->cache, pid, pc, rule, &m)) {
	case OP_LOOKUP_CFI:
		t->stats.frames_cfi++;
		break;
	case OP_LOOKUP_INVALID:
		t->stats.invalid++;
		break;
	case OP_LOOKUP_ANON:
		t->stats.frames_anon++;
		break;
	default:
		t->stats.fp_no_mapping++;
		break;
	}
}
