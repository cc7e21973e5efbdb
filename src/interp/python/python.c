// SPDX-License-Identifier: Apache-2.0
#include "interp/python/python.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "proc/file_cache.h"
#include "unwind/interp_ranges.h"
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
	struct op_interp_proc ranges; /* its eval loop's, in interp_procs */
};

struct code_key {
	uint32_t pid;
	uint64_t addr;
	uint64_t fingerprint;
	uint32_t id;
	uint64_t used; /* py->interval when a sample last named it */
};

static bool file_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct python_file *)entry)->file_id == *(const uint32_t *)key;
}

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

void python__init(struct python *py, struct file_cache *files, int procs_fd, int interp_fd)
{
	memset(py, 0, sizeof(*py));
	py->files = files;
	py->procs_fd = procs_fd;
	py->interp_fd = interp_fd;
	hashmap__init(&py->binaries, file_equal, NULL);
	hashmap__init(&py->procs, proc_equal, NULL);
	hashmap__init(&py->code_keys, code_key_equal, NULL);
}

void python__detach(struct python *py)
{
	if (py) {
		py->procs_fd = -1;
		py->interp_fd = -1;
	}
}

void python__clear(struct python *py)
{
	void *e;

	if (!py)
		return;
	for (size_t i = 0; hashmap__next(&py->binaries, &i, &e);)
		free(e);
	for (size_t i = 0; hashmap__next(&py->procs, &i, &e);)
		free(e);
	for (size_t i = 0; hashmap__next(&py->code_keys, &i, &e);)
		free(e);
	hashmap__clear(&py->binaries);
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

/* The inspection of file id (done on first sight), NULL on ENOMEM. */
static const struct python_file *file_info(struct python *py, uint32_t file_id)
{
	uint64_t h = hash_u64(file_id);
	struct python_file *pf = hashmap__find(&py->binaries, h, &file_id);
	const struct cached_file *f;

	if (pf)
		return pf;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return NULL;
	pf->file_id = file_id;
	f = file_cache__at(py->files, file_id);
	pf->err = f && f->elf ? python_binary__inspect(f->elf, f->path, &pf->bin) : -ENOENT;
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
	if (hashmap__insert(&py->binaries, h, pf)) {
		free(pf);
		return NULL;
	}
	return pf;
}

static void unpublish(struct python *py, struct python_proc *pp)
{
	if (pp->published && py->procs_fd >= 0) {
		bpf_map_delete_elem(py->procs_fd, &pp->pid);
		interp_procs__remove(py->interp_fd, pp->pid);
	}
	pp->published = false;
}

/* Finds p's interpreter among its executable mappings; true with *out filled. */
static bool find_interpreter(struct python *py, const struct process *p, struct op_py_proc *out,
			     struct op_interp_proc *ranges, const struct python_layout **layout)
{
	for (size_t i = 0; i < p->n_maps; i++) {
		const struct process_mapping *m = &p->maps[i];
		const struct python_file *pf;

		if (!m->has_bias)
			continue;
		pf = file_info(py, m->file_id);
		if (!pf || pf->err)
			continue;
		python_binary__proc_info(&pf->bin, m->bias, out);
		python_binary__interp_ranges(&pf->bin, m->bias, ranges);
		*layout = pf->bin.layout;
		return true;
	}
	return false;
}

void python__process_changed(void *ctx, const struct process *p)
{
	struct python *py = ctx;
	uint32_t pid = p->pid;
	uint64_t h = hash_u64(pid);
	struct python_proc *pp = hashmap__find(&py->procs, h, &pid);
	const struct python_layout *layout = NULL;
	struct op_interp_proc ranges;
	struct op_py_proc proc;

	if (p->exited || !find_interpreter(py, p, &proc, &ranges, &layout)) {
		/* Kept (unpublished) so the frames already seen are still named. */
		if (pp) {
			unpublish(py, pp);
			pp->running = false;
		}
		return;
	}
	if (!pp) {
		pp = calloc(1, sizeof(*pp));
		if (!pp || hashmap__insert(&py->procs, h, pp)) {
			free(pp);
			return;
		}
		pp->pid = pid;
		py->stats.processes++;
	} else if (pp->published && !memcmp(&pp->bpf, &proc, sizeof(proc)) &&
		   !memcmp(&pp->ranges, &ranges, sizeof(ranges))) {
		return;
	}
	pp->layout = layout;
	pp->bpf = proc;
	pp->ranges = ranges;
	pp->running = true;
	if (py->procs_fd < 0)
		return;
	/* The walk hands frames to Python only through interp_procs: py_procs first,
	 * so the step finds the interpreter when the ranges appear. */
	if (bpf_map_update_elem(py->procs_fd, &pid, &proc, BPF_ANY) ||
	    interp_procs__publish(py->interp_fd, pid, &ranges)) {
		py->stats.map_errors++;
		pr_debug("pid %u: cannot publish its Python interpreter: %s", pid, strerror(errno));
		return;
	}
	pp->published = true;
}

const struct op_py_proc *python__proc(const struct python *py, uint32_t pid)
{
	const struct python_proc *pp = hashmap__find(&py->procs, hash_u64(pid), &pid);

	/* Entries stay after exit or exec, to name frames already seen. */
	return pp && pp->running ? &pp->bpf : NULL;
}

const struct op_interp_proc *python__ranges(const struct python *py, uint32_t pid)
{
	const struct python_proc *pp = hashmap__find(&py->procs, hash_u64(pid), &pid);

	return pp && pp->running ? &pp->ranges : NULL;
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

void python__forget_file(struct python *py, uint32_t file_id)
{
	struct python_file *pf = hashmap__remove(&py->binaries, hash_u64(file_id), &file_id);

	free(pf);
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

void python__print_counters(const struct python *py, const uint64_t *bpf, FILE *f)
{
	static const char *const names[OP_PY_STAT__COUNT] = {
	    [OP_PY_STAT_WALKS] = "python: samples whose walk met the eval loop",
	    [OP_PY_STAT_NO_THREAD] = "python: thread without a thread state",
	    [OP_PY_STAT_NO_FRAME] = "python: thread state without a frame",
	    [OP_PY_STAT_FRAMES] = "python: frames walked in BPF",
	    [OP_PY_STAT_READ_ERR] = "python: unreadable interpreter frames",
	    [OP_PY_STAT_EVAL_NO_FRAME] = "python: eval loop without a Python frame",
	    [OP_PY_STAT_FIELD_READS] = "python: frames read field by field",
	};
	const struct {
		const char *name;
		uint64_t value;
	} host[] = {
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

	for (int i = 0; i < OP_PY_STAT__COUNT; i++)
		fprintf(f, "  %-40s %llu\n", names[i], (unsigned long long)bpf[i]);
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		fprintf(f, "  %-40s %llu\n", host[i].name, (unsigned long long)host[i].value);
}
