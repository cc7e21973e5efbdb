// SPDX-License-Identifier: Apache-2.0
#include "interp/python/python.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "proc/file_cache.h"
#include "interp/python/python_binary.h"
#include "interp/python/python_code.h"
#include "interp/python/python_layout.h"
#include "interp/python/python_lines.h"
#include "interp/python/python_unwind.h"
#include "proc/process_table.h"
#include "util/log.h"

/* What one file is, inspected once per file slot. */
struct python_file {
	uint32_t file_slot;
	int err; /* python_binary__inspect() result: 0 = a supported interpreter */
	struct python_binary bin;
};

struct python_proc {
	uint32_t pid;
	bool published; /* in the BPF map */
	bool running;	/* the process runs this interpreter now (not exited, no exec since) */
	const struct python_layout *layout;
	struct op_py_proc bpf;
};

static bool proc_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct python_proc *)entry)->pid == *(const uint32_t *)key;
}

static void free_code(void *code)
{
	python_code__free(code);
}

static size_t code_bytes(const void *code)
{
	return python_code__bytes(code);
}

void python__init(struct python *py, struct file_cache *files, int procs_fd)
{
	const struct frame_store_limits limits = {
	    .objects_per_process = PYTHON_CODES_PER_PROCESS,
	    .bytes_per_process = PYTHON_CODE_BYTES_PER_PROCESS,
	    .bytes_total = PYTHON_CODE_BYTES_MAX,
	};

	memset(py, 0, sizeof(*py));
	py->files = files;
	py->procs_fd = procs_fd;
	hashmap__init(&py->procs, proc_equal, NULL);
	frame_store__init(&py->codes, &limits, free_code, code_bytes);
}

static void python_unload(void *rt)
{
	struct python *py = rt;

	if (py)
		py->procs_fd = -1;
}

void python__clear(struct python *py)
{
	void *e;

	if (!py)
		return;
	for (size_t i = 0; hashmap__next(&py->procs, &i, &e);)
		free(e);
	hashmap__clear(&py->procs);
	frame_store__clear(&py->codes);
}

/* Per file (interp.c asks once per file slot): is f a supported CPython? */
static int python_inspect_file(void *rt, const struct cached_file *f, void **data)
{
	struct python *py = rt;
	struct python_file *pf;

	*data = NULL;
	if (!f->elf)
		return -ENOENT;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return -ENOMEM;
	pf->file_slot = f->slot;
	pf->err = python_binary__inspect(f->elf, f->path, &pf->bin);
	if (pf->err == -ENOTSUP) {
		py->stats.unsupported++;
		pr_warn("%s: CPython %u.%u is not supported: its frames show as native code",
			f->path, pf->bin.major, pf->bin.minor);
	} else if (!pf->err) {
		if (pf->bin.cold_from_cfi)
			py->stats.cold_from_cfi++;
		pr_debug("%s: CPython %u.%u, eval loop in %zu range(s)%s", f->path, pf->bin.major,
			 pf->bin.minor, pf->bin.n_eval,
			 pf->bin.cold_from_cfi ? " (.cold part found from CFI)" : "");
	}
	if (pf->err) {
		int err = pf->err;

		free(pf);
		return err;
	}
	*data = pf;
	return 0;
}

static void python_free_file(void *rt, void *data)
{
	(void)rt;
	free(data);
}

static void unpublish(struct python *py, struct python_proc *pp)
{
	if (pp->published && py->procs_fd >= 0)
		bpf_map_delete_elem(py->procs_fd, &pp->pid);
	pp->published = false;
}

/* p no longer runs CPython (exited, exec'd): kept, unpublished, so the frames seen are named. */
static void python_detach(void *rt, const struct process *p)
{
	struct python *py = rt;
	uint32_t pid = p->pid;
	struct python_proc *pp = hashmap__find(&py->procs, hash_u64(pid), &pid);

	if (pp) {
		unpublish(py, pp);
		pp->running = false;
	}
}

/* p maps the interpreter file data in m: publishes its py_procs entry. */
static int python_attach(void *rt, const struct process *p, const struct process_mapping *m,
			 const void *data, struct interp_range *ranges, size_t *n_ranges)
{
	struct python *py = rt;
	const struct python_file *pf = data;
	uint32_t pid = p->pid;
	uint64_t h = hash_u64(pid);
	struct python_proc *pp = hashmap__find(&py->procs, h, &pid);
	struct op_interp_proc eval;
	struct op_py_proc proc;

	python_binary__proc_info(&pf->bin, m->bias, &proc);
	/* The eval loop's parts: where the walk hands frames to python_walk.h's step
	 * (the replay suite computes them with the same function). */
	python_binary__interp_ranges(&pf->bin, m->bias, &eval);
	*n_ranges = 0;
	for (size_t r = 0; r < OP_INTERP_MAX_RANGES; r++) {
		if (eval.ranges[r].start >= eval.ranges[r].end)
			continue;
		ranges[(*n_ranges)++] = (struct interp_range){
		    .start = eval.ranges[r].start, .end = eval.ranges[r].end, .flags = 0};
	}
	if (!pp) {
		pp = calloc(1, sizeof(*pp));
		if (!pp || hashmap__insert(&py->procs, h, pp)) {
			free(pp);
			return -ENOMEM;
		}
		pp->pid = pid;
		py->stats.processes++;
	} else if (pp->published && !memcmp(&pp->bpf, &proc, sizeof(proc))) {
		return 0;
	}
	pp->layout = pf->bin.layout;
	pp->bpf = proc;
	pp->running = true;
	if (py->procs_fd < 0)
		return 0;
	if (bpf_map_update_elem(py->procs_fd, &pid, &proc, BPF_ANY)) {
		py->stats.map_errors++;
		pr_debug("pid %u: cannot publish its Python interpreter: %s", pid, strerror(errno));
		return 0;
	}
	pp->published = true;
	return 0;
}

_Static_assert(sizeof(struct python_unwind) <= INTERP_WALK_MAX_SIZE, "a copy's Python walk");

/* pid's `py_procs` value while it runs CPython, else NULL (stack copies walk with it). */
static const void *python_walk_state(const void *rt, uint32_t pid)
{
	const struct python *py = rt;
	const struct python_proc *pp = hashmap__find(&py->procs, hash_u64(pid), &pid);

	/* Entries stay after exit or exec, to name frames already seen. */
	return pp && pp->running ? &pp->bpf : NULL;
}

size_t python__end_interval(struct python *py, const struct process_table *pt)
{
	struct python_proc **gone = NULL;
	size_t n = 0, cap = 0, held;
	void *e;

	held = frame_store__end_interval(&py->codes, pt);
	/* Processes that left: their interpreter entry goes too (unpublished at exit). */
	for (size_t i = 0; hashmap__next(&py->procs, &i, &e);) {
		struct python_proc *pp = e;
		const struct process *p = process_table__find(pt, pp->pid);

		if (p && !p->exited)
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct python_proc **tmp = realloc(gone, c * sizeof(*tmp));

			if (!tmp)
				break;
			gone = tmp;
			cap = c;
		}
		gone[n++] = pp;
	}
	for (size_t i = 0; i < n; i++) {
		unpublish(py, gone[i]);
		hashmap__remove_entry(&py->procs, hash_u64(gone[i]->pid), gone[i]);
		free(gone[i]);
	}
	free(gone);
	return held;
}

size_t python__codes_held(const struct python *py, uint32_t pid)
{
	return frame_store__held(&py->codes, pid);
}

/*
 * May one more code object of pid be read? Not while its process, or all
 * processes together, hold their byte budget (the objects are freed at an
 * interval's end, when no sample still names them).
 */
static bool budget_allows(struct python *py, uint32_t pid)
{
	if (frame_store__budget_allows(&py->codes, pid))
		return true;
	if (!py->stats.over_budget++)
		pr_warn("pid %u: Python code objects hold %zu bytes (all processes: %zu): new ones "
			"are not read until the budget frees up",
			pid, frame_store__proc_bytes(&py->codes, pid), py->codes.bytes);
	return false;
}

uint32_t python__resolve(struct python *py, uint32_t pid, uint64_t code_addr, uint64_t fingerprint)
{
	struct python_proc *pp;
	struct python_code *code;
	struct remote_memory mem;
	bool reused;
	uint32_t id;
	int err;

	if (!code_addr)
		return 0;
	if (frame_store__find(&py->codes, pid, code_addr, fingerprint, &id, &reused))
		return id;
	pp = hashmap__find(&py->procs, hash_u64(pid), &pid);
	if (!pp)
		return 0;
	if (reused)
		py->stats.code_reused++;
	if (!budget_allows(py, pid))
		return 0;
	mem = interp_env__memory(&py->env, pid);
	err = python_code__read_from(&mem, pp->layout, code_addr, fingerprint, &code);
	if (err) {
		py->stats.code_errors++;
		return 0;
	}
	py->stats.codes++;
	py->stats.names_cut += !!(code->cut & (PYTHON_CODE_CUT_NAME | PYTHON_CODE_CUT_FILENAME));
	py->stats.lines_cut += !!(code->cut & PYTHON_CODE_CUT_LINES);
	/* A code object another one replaced at this address goes when the interval ends. */
	return frame_store__add(&py->codes, pid, code_addr, fingerprint, code);
}

bool python__describe(const struct python *py, uint32_t id, uint32_t offset, const char **name,
		      const char **filename, int64_t *line)
{
	const struct python_code *c = py ? frame_store__get(&py->codes, id) : NULL;

	if (!c) {
		*name = "[unknown Python code]";
		*filename = "";
		*line = 0;
		return false;
	}
	*name = c->name;
	*filename = c->filename;
	*line = python_lines__find(c->line_kind, c->lines, c->n_lines, c->firstlineno, offset);
	return true;
}

static void python_read_bpf_counters(void *rt, interp_read_percpu_fn read, void *ctx)
{
	struct python *py = rt;

	read(ctx, "py_stats", py->bpf_stats, OP_PY_STAT__COUNT);
}

/* `record -v`'s Python lines: the BPF side's (enum op_py_stat), then the host's. */
#define PYTHON_COUNTERS 20
static size_t python_counters(const void *rt, struct interp_counter *out)
{
	static const char *const bpf_names[OP_PY_STAT__COUNT] = {
	    [OP_PY_STAT_WALKS] = "python: samples whose walk met the eval loop",
	    [OP_PY_STAT_NO_THREAD] = "python: thread without a thread state",
	    [OP_PY_STAT_NO_FRAME] = "python: thread state without a frame",
	    [OP_PY_STAT_FRAMES] = "python: frames walked in BPF",
	    [OP_PY_STAT_READ_ERR] = "python: unreadable interpreter frames",
	    [OP_PY_STAT_EVAL_NO_FRAME] = "python: eval loop without a Python frame",
	    [OP_PY_STAT_FIELD_READS] = "python: frames read field by field",
	};
	const struct python *py = rt;
	const struct interp_counter host[] = {
	    {"python: interpreters found (processes)", py->stats.processes},
	    {"python: unsupported interpreters", py->stats.unsupported},
	    {"python: eval .cold parts found from CFI", py->stats.cold_from_cfi},
	    {"python: py_procs updates that failed", py->stats.map_errors},
	    {"python: code objects read", py->stats.codes},
	    {"python: code object addresses reused", py->stats.code_reused},
	    {"python: code objects unreadable", py->stats.code_errors},
	    {"python: code objects forgotten", py->codes.stats.evicted},
	    {"python: names cut (PYTHON_STR_MAX_CHARS)", py->stats.names_cut},
	    {"python: line tables cut (64 KiB)", py->stats.lines_cut},
	    {"python: frames not named (byte budget)", py->stats.over_budget},
	    {"python: code object bytes peak", py->codes.stats.bytes_peak},
	    {"python: code object bytes now", py->codes.bytes},
	};
	size_t n = 0;

	_Static_assert(OP_PY_STAT__COUNT + sizeof(host) / sizeof(host[0]) <= PYTHON_COUNTERS,
		       "PYTHON_COUNTERS");
	for (int i = 0; i < OP_PY_STAT__COUNT; i++)
		out[n++] = (struct interp_counter){bpf_names[i], py->bpf_stats[i]};
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		out[n++] = host[i];
	return n;
}

static int python_new_rt(const struct interp_env *env, void **rt)
{
	struct python *py = malloc(sizeof(*py));

	if (!py)
		return -ENOMEM;
	python__init(py, env->files, env->map_fd ? env->map_fd(env->ctx, "py_procs") : -1);
	py->env = *env;
	*rt = py;
	return 0;
}

static void python_free_rt(void *rt)
{
	python__clear(rt);
	free(rt);
}

static uint32_t python_resolve(void *rt, uint32_t pid, const struct op_frame *f)
{
	/* addr: the code object; data: its fingerprint (omniprof/interp/python_abi.h). */
	return python__resolve(rt, pid, f->addr, f->data);
}

static void python_describe(const void *rt, uint32_t id, uint64_t offset, const char **name,
			    const char **filename, int64_t *line)
{
	python__describe(rt, id, (uint32_t)offset, name, filename, line);
}

/* co_firstlineno of code object id (0: unknown). */
static int64_t python_start_line(const void *rt, uint32_t id)
{
	const struct python_code *c =
	    rt ? frame_store__get(&((const struct python *)rt)->codes, id) : NULL;

	return c && c->firstlineno > 0 ? c->firstlineno : 0;
}

static size_t python_end_interval(void *rt, const struct process_table *pt)
{
	return python__end_interval(rt, pt);
}

static size_t python_held(const void *rt, uint32_t pid)
{
	return python__codes_held(rt, pid);
}

/* Every CPython defines its eval loop (python_binary__inspect rejects a file without it). */
static const char *const python_file_markers[] = {"_PyEval_EvalFrameDefault", NULL};

const struct interp_ops python_interp_ops = {
    .name = "python",
    .kind = OP_FRAME_PYTHON,
    .interp = OP_INTERP_PYTHON,
    .unwind_error = OP_UNWIND_ERR_INTERP,
    .unwind_error_text = "[unwind stopped: unreadable Python frame]",
    .max_counters = PYTHON_COUNTERS,
    .new_rt = python_new_rt,
    .free_rt = python_free_rt,
    .unload = python_unload,
    .file_markers = python_file_markers,
    .inspect_file = python_inspect_file,
    .free_file = python_free_file,
    .attach = python_attach,
    .detach = python_detach,
    .walk_state = python_walk_state,
    .walk_size = sizeof(struct python_unwind),
    .walk_begin = python_unwind__walk_begin,
    .walk_end = python_unwind__walk_end,
    .resolve = python_resolve,
    .describe = python_describe,
    .start_line = python_start_line,
    .end_interval = python_end_interval,
    .held = python_held,
    .read_bpf_counters = python_read_bpf_counters,
    .counters = python_counters,
};
