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
#include "proc/process_table.h"
#include "util/log.h"

/* What one file is, inspected once per file id. */
struct python_file {
	uint32_t file_id;
	int err; /* python_binary__inspect() result: 0 = a supported interpreter */
	struct python_binary bin;
};

struct python_proc {
	uint32_t pid;
	bool published;	   /* in the BPF map */
	bool running;	   /* the process runs this interpreter now (not exited, no exec since) */
	size_t n_codes;	   /* code objects held (counted by python__end_interval) */
	size_t code_bytes; /* their bytes: added as read, recounted by python__end_interval */
	const struct python_layout *layout;
	struct op_py_proc bpf;
};

struct code_key {
	uint32_t pid;
	uint64_t addr;
	uint64_t fingerprint;
	uint32_t id;
	uint64_t used; /* py->interval when a sample last named it */
};

static bool proc_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct python_proc *)entry)->pid == *(const uint32_t *)key;
}

static bool code_key_equal(const void *entry, const void *key, void *ctx)
{
	const struct code_key *a = entry, *b = key;

	(void)ctx;
	return a->pid == b->pid && a->addr == b->addr;
}

static uint64_t code_key_hash(uint32_t pid, uint64_t addr)
{
	return hash_u64(addr ^ hash_u64(pid));
}

void python__init(struct python *py, struct file_cache *files, int procs_fd)
{
	memset(py, 0, sizeof(*py));
	py->files = files;
	py->procs_fd = procs_fd;
	hashmap__init(&py->procs, proc_equal, NULL);
	hashmap__init(&py->code_keys, code_key_equal, NULL);
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
	for (size_t i = 0; hashmap__next(&py->code_keys, &i, &e);)
		free(e);
	hashmap__clear(&py->procs);
	hashmap__clear(&py->code_keys);
	for (size_t i = 0; i < py->n_codes; i++)
		python_code__free(py->codes[i]);
	free(py->codes);
	free(py->free_codes);
	free(py->retired);
	py->retired = NULL;
	py->n_retired = py->cap_retired = 0;
	py->codes = NULL;
	py->free_codes = NULL;
	py->n_codes = py->cap_codes = py->n_free_codes = py->cap_free_codes = 0;
	py->live_codes = 0;
	py->code_bytes = 0;
}

/* Per file (interp.c asks once per file id): is f a supported CPython? */
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
	pf->file_id = f->id;
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
	struct op_py_proc proc;

	python_binary__proc_info(&pf->bin, m->bias, &proc);
	*n_ranges = 0;
	for (size_t r = 0; r < OP_PY_MAX_RANGES && *n_ranges < INTERP_MAX_RANGES; r++) {
		if (proc.eval[r].start >= proc.eval[r].end)
			continue;
		ranges[*n_ranges].start = proc.eval[r].start;
		ranges[(*n_ranges)++].end = proc.eval[r].end;
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

/* pid's `py_procs` value while it runs CPython, else NULL (stack copies walk with it). */
static const void *python_walk_state(const void *rt, uint32_t pid)
{
	const struct python *py = rt;
	const struct python_proc *pp = hashmap__find(&py->procs, hash_u64(pid), &pid);

	/* Entries stay after exit or exec, to name frames already seen. */
	return pp && pp->running ? &pp->bpf : NULL;
}

static uint32_t add_code(struct python *py, struct python_code *code)
{
	size_t bytes = python_code__bytes(code);

	py->code_bytes += bytes;
	if (py->code_bytes > py->stats.bytes_peak)
		py->stats.bytes_peak = py->code_bytes;
	if (py->n_free_codes) {
		uint32_t id = py->free_codes[--py->n_free_codes];

		py->codes[id - 1] = code;
		py->live_codes++;
		return id;
	}
	if (py->n_codes == py->cap_codes) {
		size_t cap = py->cap_codes ? py->cap_codes * 2 : 256;
		struct python_code **tmp = realloc(py->codes, cap * sizeof(*tmp));

		if (!tmp) {
			py->code_bytes -= bytes;
			return 0;
		}
		py->codes = tmp;
		py->cap_codes = cap;
	}
	py->codes[py->n_codes++] = code;
	py->live_codes++;
	return (uint32_t)py->n_codes;
}

/* Frees code object id; its id goes to the next new one. */
static void free_code(struct python *py, uint32_t id)
{
	if (!id || id > py->n_codes || !py->codes[id - 1])
		return;
	if (py->n_free_codes == py->cap_free_codes) {
		size_t cap = py->cap_free_codes ? py->cap_free_codes * 2 : 256;
		uint32_t *tmp = realloc(py->free_codes, cap * sizeof(*tmp));

		if (!tmp)
			return; /* kept: freed at the end */
		py->free_codes = tmp;
		py->cap_free_codes = cap;
	}
	py->code_bytes -= python_code__bytes(py->codes[id - 1]);
	python_code__free(py->codes[id - 1]);
	py->codes[id - 1] = NULL;
	py->free_codes[py->n_free_codes++] = id;
	py->live_codes--;
	py->stats.codes_evicted++;
}

/* Queues id to be freed by python__end_interval(). 0, or -ENOMEM (not queued). */
static int retire_code(struct python *py, uint32_t id)
{
	if (py->n_retired == py->cap_retired) {
		size_t cap = py->cap_retired ? py->cap_retired * 2 : 64;
		uint32_t *tmp = realloc(py->retired, cap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		py->retired = tmp;
		py->cap_retired = cap;
	}
	py->retired[py->n_retired++] = id;
	return 0;
}

static bool code_key_stale(const struct python *py, const struct code_key *k,
			   const struct process_table *pt, bool over_cap)
{
	const struct process *p = process_table__find(pt, k->pid);

	if (!p || p->exited)
		return true;
	return over_cap && k->used != py->interval;
}

size_t python__end_interval(struct python *py, const struct process_table *pt)
{
	struct code_key **drop = NULL;
	size_t n = 0, cap = 0;
	void *e;

	for (size_t i = 0; i < py->n_retired; i++)
		free_code(py, py->retired[i]);
	py->n_retired = 0;
	/* Per process: how many code objects it holds and their bytes. */
	for (size_t i = 0; hashmap__next(&py->procs, &i, &e);) {
		((struct python_proc *)e)->n_codes = 0;
		((struct python_proc *)e)->code_bytes = 0;
	}
	for (size_t i = 0; hashmap__next(&py->code_keys, &i, &e);) {
		struct code_key *k = e;
		struct python_proc *pp = hashmap__find(&py->procs, hash_u64(k->pid), &k->pid);

		if (pp) {
			pp->n_codes++;
			if (k->id && k->id <= py->n_codes)
				pp->code_bytes += python_code__bytes(py->codes[k->id - 1]);
		}
	}
	for (size_t i = 0; hashmap__next(&py->code_keys, &i, &e);) {
		struct code_key *k = e;
		struct python_proc *pp = hashmap__find(&py->procs, hash_u64(k->pid), &k->pid);
		bool over_cap = !pp || pp->n_codes > PYTHON_CODES_PER_PROCESS ||
				pp->code_bytes > PYTHON_CODE_BYTES_PER_PROCESS ||
				py->code_bytes > PYTHON_CODE_BYTES_MAX;

		if (!code_key_stale(py, k, pt, over_cap))
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 256;
			struct code_key **tmp = realloc(drop, c * sizeof(*tmp));

			if (!tmp)
				break;
			drop = tmp;
			cap = c;
		}
		drop[n++] = k;
	}
	for (size_t i = 0; i < n; i++) {
		hashmap__remove_entry(&py->code_keys, code_key_hash(drop[i]->pid, drop[i]->addr),
				      drop[i]);
		free_code(py, drop[i]->id);
		free(drop[i]);
	}
	free(drop);
	/* Processes that left: their interpreter entry goes too (unpublished at exit). */
	n = 0;
	cap = 0;
	{
		struct python_proc **gone = NULL;

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
	}
	py->interval++;
	return py->live_codes;
}

size_t python__codes_held(const struct python *py, uint32_t pid)
{
	size_t n = 0;
	void *e;

	for (size_t i = 0; hashmap__next(&py->code_keys, &i, &e);)
		n += ((const struct code_key *)e)->pid == pid;
	return n;
}

/*
 * May one more code object of pp be read? Not while its process, or all
 * processes together, hold their byte budget (the objects are freed at an
 * interval's end, when no sample still names them).
 */
static bool budget_allows(struct python *py, const struct python_proc *pp)
{
	if (pp->code_bytes < PYTHON_CODE_BYTES_PER_PROCESS &&
	    py->code_bytes < PYTHON_CODE_BYTES_MAX)
		return true;
	if (!py->stats.over_budget++)
		pr_warn("pid %u: Python code objects hold %zu bytes (all processes: %zu): new ones "
			"are not read until the budget frees up",
			pp->pid, pp->code_bytes, py->code_bytes);
	return false;
}

uint32_t python__resolve(struct python *py, uint32_t pid, uint64_t code_addr, uint64_t fingerprint)
{
	struct code_key key = {.pid = pid, .addr = code_addr}, *k;
	uint64_t h = code_key_hash(pid, code_addr);
	struct python_proc *pp;
	struct python_code *code;
	int err;

	if (!code_addr)
		return 0;
	k = hashmap__find(&py->code_keys, h, &key);
	if (k && k->fingerprint == fingerprint) {
		k->used = py->interval;
		return k->id;
	}
	pp = hashmap__find(&py->procs, hash_u64(pid), &pid);
	if (!pp)
		return 0;
	if (k)
		py->stats.code_reused++;
	if (!budget_allows(py, pp))
		return 0;
	err = python_code__read(pid, pp->layout, code_addr, fingerprint, &code);
	if (err) {
		py->stats.code_errors++;
		return 0;
	}
	py->stats.codes++;
	py->stats.names_cut += !!(code->cut & (PYTHON_CODE_CUT_NAME | PYTHON_CODE_CUT_FILENAME));
	py->stats.lines_cut += !!(code->cut & PYTHON_CODE_CUT_LINES);
	pp->code_bytes += python_code__bytes(code);
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k || hashmap__insert(&py->code_keys, h, k)) {
			free(k);
			python_code__free(code);
			return 0;
		}
		k->pid = pid;
		k->addr = code_addr;
	}
	/* The address holds another code object now: samples of this interval may
	 * still name the old one, so it goes when the interval ends. */
	if (k->id && retire_code(py, k->id))
		free_code(py, k->id);
	k->fingerprint = fingerprint;
	k->used = py->interval;
	k->id = add_code(py, code);
	if (!k->id)
		python_code__free(code);
	return k->id;
}

bool python__describe(const struct python *py, uint32_t id, uint32_t offset, const char **name,
		      const char **filename, int64_t *line)
{
	const struct python_code *c = py && id && id <= py->n_codes ? py->codes[id - 1] : NULL;

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
	    [OP_PY_STAT_WALKS] = "python: samples of Python processes",
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
	    {"python: code objects forgotten", py->stats.codes_evicted},
	    {"python: names cut (PYTHON_STR_MAX_CHARS)", py->stats.names_cut},
	    {"python: line tables cut (64 KiB)", py->stats.lines_cut},
	    {"python: frames not named (byte budget)", py->stats.over_budget},
	    {"python: code object bytes peak", py->stats.bytes_peak},
	    {"python: code object bytes now", py->code_bytes},
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
	/* addr: the code object; file_id: its fingerprint (omniprof/interp/python_abi.h). */
	return python__resolve(rt, pid, f->addr, f->file_id);
}

static void python_describe(const void *rt, uint32_t id, uint64_t offset, const char **name,
			    const char **filename, int64_t *line)
{
	python__describe(rt, id, (uint32_t)offset, name, filename, line);
}

static size_t python_end_interval(void *rt, const struct process_table *pt)
{
	return python__end_interval(rt, pt);
}

static size_t python_held(const void *rt, uint32_t pid)
{
	return python__codes_held(rt, pid);
}

const struct interp_ops python_interp_ops = {
    .name = "python",
    .kind = OP_FRAME_PYTHON,
    .max_counters = PYTHON_COUNTERS,
    .new_rt = python_new_rt,
    .free_rt = python_free_rt,
    .unload = python_unload,
    .inspect_file = python_inspect_file,
    .free_file = python_free_file,
    .attach = python_attach,
    .detach = python_detach,
    .walk_state = python_walk_state,
    .resolve = python_resolve,
    .describe = python_describe,
    .end_interval = python_end_interval,
    .held = python_held,
    .read_bpf_counters = python_read_bpf_counters,
    .counters = python_counters,
};
