// SPDX-License-Identifier: Apache-2.0
#include "unwind/user_unwind.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/stack_deltas.h"

/* Enough steps for any 32-bit table (the BPF side searches a page tree,
 * bpf/include/omniprof/unwind/delta_search.h, which finds the same delta:
 * tests/unit/test_delta_pages.c). */
#define USER_UNWIND_SEARCH_STEPS 32

/* The ops of the walk running on this thread: the unwinder's macros take no context. */
static __thread const struct user_unwind_ops *cur_ops;
static __thread struct user_unwind_python *cur_py;

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

static int read_user(void *dst, size_t size, uint64_t addr)
{
	return read_with(cur_ops->read, cur_ops->read_ctx, dst, size, addr);
}

static int read_python(void *dst, size_t size, uint64_t addr)
{
	if (cur_py->read)
		return read_with(cur_py->read, cur_py->read_ctx, dst, size, addr);
	return read_user(dst, size, addr);
}

static void python_stat(uint32_t which)
{
	if (which < OP_PY_STAT__COUNT)
		cur_py->stats[which]++;
}

struct op_walk;
static int python_step(struct op_walk *w, struct op_frame *frame, int res);

#define OP_READ_USER(dst, size, addr) read_user((dst), (size), (addr))
#define OP_FIND_RULE(u, pc, rule)     cur_ops->find_rule(cur_ops->rule_ctx, (u)->pid, (pc), (rule))
#define OP_INTERP_STEP(w, interp, frame, res)                                                      \
	((interp) == OP_INTERP_PYTHON ? python_step((w), (frame), (res)) : (res))
#include "omniprof/unwind/native.h"
#include "omniprof/unwind/walk.h"

/* The Python walker's own reads (interpreter memory) may come from another
 * source than the stack's: macros expand where the functions are defined, so
 * omniprof/unwind/native.h above keeps read_user() and omniprof/interp/python_walk.h gets this one.
 */
#undef OP_READ_USER
#define OP_READ_USER(dst, size, addr) read_python((dst), (size), (addr))
#define OP_PY_STAT(which)	      python_stat(which)
#include "omniprof/interp/python_walk.h"

static __thread struct op_py_walker *cur_walker;

/* python_step() of bpf/python_maps.h: the set-up (the bpf_loop as a loop) the
 * first time the walk meets the eval loop, then op_py_walk_step(). */
static int python_step(struct op_walk *w, struct op_frame *frame, int res)
{
	struct op_py_thread_search search;

	if (!cur_py || !cur_py->proc)
		return res;
	if (op_walk__setup_once(w, OP_INTERP_PYTHON) &&
	    !op_py_search_init(cur_walker, cur_py->proc, &search, cur_py->thread_ptr)) {
		for (int i = 0; i < OP_PY_MAX_THREADS; i++)
			if (op_py_search_step(cur_walker, &search))
				break;
		if (op_py_search_done(cur_walker, &search))
			op_walk__set_ready(w, OP_INTERP_PYTHON);
	}
	if (!op_walk__is_ready(w, OP_INTERP_PYTHON))
		return res;
	return op_py_walk_step(cur_walker, w, frame, res);
}

struct user_unwind_result user_unwind__walk(const struct user_unwind_ops *ops,
					    const struct user_unwind_interp *interp, uint32_t pid,
					    uint64_t pc, uint64_t sp, uint64_t fp,
					    struct op_frame *frames, uint32_t max_frames)
{
	const struct user_unwind_ops *saved = cur_ops;
	struct user_unwind_python *saved_py = cur_py;
	struct op_py_walker *saved_walker = cur_walker;
	struct user_unwind_result res = {0};
	struct op_py_walker walker;
	struct op_walk w;
	int at;

	if (!pc) {
		res.flags = OP_TRACE_F_NO_USER;
		return res;
	}
	cur_ops = ops;
	cur_py = interp ? interp->python : NULL;
	cur_walker = &walker;
	/* walk_user_stack() and walk_one_frame() of bpf/sampler.bpf.c. */
	op_walk__init(&w, pid, pc, sp, fp, interp ? interp->ranges : NULL);
	for (uint32_t index = 0; index <= max_frames; index++)
		if (op_walk__round(&w, index, max_frames, &frames[index < max_frames ? index : 0]))
			break;
	cur_ops = saved;
	cur_py = saved_py;
	cur_walker = saved_walker;
	res.n_frames = w.n;
	res.error = op_walk__error(&w);
	if (res.error) {
		res.flags |= OP_TRACE_F_USER_TRUNCATED;
		at = max_frames ? op_walk__error_at(&w, max_frames, w.n ? &frames[w.n - 1] : NULL)
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

/* One delta as unwind_maps.c loads it: the address relative to the table's base. */
struct file_delta {
	uint32_t addr;
	uint32_t rule; /* index into file_table.rules */
};

/* One file's table as unwind_maps.c loads it: deltas relative to base. */
struct file_table {
	const struct elf_file *ef;
	int error; /* non-zero: no table, frame pointers */
	uint64_t base;
	uint32_t n_deltas;
	struct file_delta *deltas;    /* owned */
	struct op_unwind_rule *rules; /* owned; deltas[i].rule indexes it */
};

struct mapping {
	uint64_t start, end, bias;
	struct file_table *table; /* NULL: anonymous code */
};

struct user_unwind_tables {
	struct file_table **tables; /* owned */
	size_t n_tables, cap_tables;
	struct mapping *maps; /* sorted by start */
	size_t n_maps, cap_maps;
	struct user_unwind_tables_stats stats;
};

int user_unwind_tables__new(struct user_unwind_tables **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void user_unwind_tables__free(struct user_unwind_tables *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_tables; i++) {
		free(t->tables[i]->deltas);
		free(t->tables[i]->rules);
		free(t->tables[i]);
	}
	free(t->tables);
	free(t->maps);
	free(t);
}

const struct user_unwind_tables_stats *user_unwind_tables__stats(const struct user_unwind_tables *t)
{
	return &t->stats;
}

/* Builds ef's table in the loaded form; the same limits as load_table() in unwind_maps.c. */
static int table_build(struct file_table *ft)
{
	struct stack_delta_table t = {0};
	int err;

	err = stack_deltas__build(ft->ef, &t);
	if (err)
		goto cleanup;
	if (!t.n || t.n >= OP_DELTA_PAD ||
	    t.deltas[t.n - 1].addr - t.deltas[0].addr >= OP_DELTA_PAD) {
		err = -E2BIG;
		goto cleanup;
	}
	ft->deltas = malloc(t.n * sizeof(*ft->deltas));
	ft->rules = malloc(t.n * sizeof(*ft->rules));
	if (!ft->deltas || !ft->rules) {
		err = -ENOMEM;
		goto cleanup;
	}
	ft->base = t.deltas[0].addr;
	ft->n_deltas = (uint32_t)t.n;
	/* Rules are not deduplicated here: the lookup result is the same. */
	for (size_t i = 0; i < t.n; i++) {
		ft->deltas[i].addr = (uint32_t)(t.deltas[i].addr - ft->base);
		ft->deltas[i].rule = (uint32_t)i;
		ft->rules[i] = t.deltas[i].rule;
	}
cleanup:
	if (err) {
		free(ft->deltas);
		free(ft->rules);
		ft->deltas = NULL;
		ft->rules = NULL;
		ft->n_deltas = 0;
	}
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
	ft->error = table_build(ft);
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
			  struct file_table *ft)
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
	for (at = t->n_maps; at > 0 && t->maps[at - 1].start > start; at--)
		;
	memmove(&t->maps[at + 1], &t->maps[at], (t->n_maps - at) * sizeof(*t->maps));
	t->maps[at] = (struct mapping){start, end, bias, ft};
	t->n_maps++;
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
	return mapping_insert(t, start, end, bias, ft);
}

int user_unwind_tables__add_anon(struct user_unwind_tables *t, uint64_t start, uint64_t end)
{
	return mapping_insert(t, start, end, 0, NULL);
}

void user_unwind_tables__reset_mappings(struct user_unwind_tables *t)
{
	t->n_maps = 0;
}

static const struct mapping *mapping_find(const struct user_unwind_tables *t, uint64_t pc)
{
	size_t lo = 0, hi = t->n_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->maps[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < t->maps[lo - 1].end ? &t->maps[lo - 1] : NULL;
}

void user_unwind_tables__find_rule(void *ctx, uint32_t pid, uint64_t pc,
				   struct op_unwind_rule *rule)
{
	struct user_unwind_tables *t = ctx;
	const struct mapping *m = mapping_find(t, pc);
	const struct file_table *ft;
	uint32_t lo, hi;
	uint64_t vaddr;

	(void)pid;
	if (!m) {
		t->stats.fp_no_mapping++;
		op_unwind_fp_rule(rule);
		return;
	}
	if (!m->table) {
		t->stats.frames_anon++;
		op_unwind_anon_rule(rule);
		return;
	}
	ft = m->table;
	vaddr = pc - m->bias;
	if (vaddr < ft->base || vaddr - ft->base >= OP_DELTA_PAD)
		goto invalid;
	/* The last delta at or below vaddr, compared in 32 bits as the BPF side does. */
	lo = 0;
	hi = ft->n_deltas;
	for (int i = 0; i < USER_UNWIND_SEARCH_STEPS && lo < hi; i++) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ft->deltas[mid].addr <= (uint32_t)(vaddr - ft->base))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		goto invalid;
	*rule = ft->rules[ft->deltas[lo - 1].rule];
	t->stats.frames_cfi++;
	return;
invalid:
	t->stats.invalid++;
	memset(rule, 0, sizeof(*rule));
	rule->cmd = OP_RULE_INVALID;
}
