// SPDX-License-Identifier: Apache-2.0
#include "interp/php/php.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "interp/php/php_binary.h"
#include "interp/php/php_func.h"
#include "interp/php/php_layout.h"
#include "interp/php/php_unwind.h"
#include "proc/file_cache.h"
#include "proc/process_table.h"
#include "proc/remote_memory.h"
#include "util/log.h"

struct php_file {
	struct php_binary bin;
};

#define PHP_JIT_MAX_RANGES 4

struct php_proc {
	uint32_t pid;
	bool published;
	bool running;
	const struct php_layout *layout;
	struct op_php_proc bpf;
	/*
	 * OPcache's JIT buffer as last seen executable. OPcache makes it
	 * writable (not executable) while it compiles: a maps read then does
	 * not list it, but it stays where it is, so its range is kept.
	 */
	struct interp_range jit[PHP_JIT_MAX_RANGES];
	size_t n_jit;
};

static bool proc_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct php_proc *)entry)->pid == *(const uint32_t *)key;
}

static void free_func(void *f)
{
	php_func__free(f);
}

static size_t func_bytes(const void *f)
{
	return php_func__bytes(f);
}

void php__init(struct php *php, struct file_cache *files, int procs_fd)
{
	const struct frame_store_limits limits = {
	    .objects_per_process = PHP_FUNCS_PER_PROCESS,
	    .bytes_per_process = PHP_FUNC_BYTES_PER_PROCESS,
	    .bytes_total = PHP_FUNC_BYTES_MAX,
	};

	memset(php, 0, sizeof(*php));
	php->files = files;
	php->procs_fd = procs_fd;
	hashmap__init(&php->procs, proc_equal, NULL);
	frame_store__init(&php->funcs, &limits, free_func, func_bytes);
}

void php__clear(struct php *php)
{
	void *e;

	if (!php)
		return;
	for (size_t i = 0; hashmap__next(&php->procs, &i, &e);)
		free(e);
	hashmap__clear(&php->procs);
	frame_store__clear(&php->funcs);
}

static void php_unload(void *rt)
{
	struct php *php = rt;

	if (php)
		php->procs_fd = -1;
}

static int php_inspect_file(void *rt, const struct cached_file *f, void **data)
{
	struct php *php = rt;
	struct php_file *pf;
	int err;

	*data = NULL;
	if (!f->elf)
		return -ENOENT;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return -ENOMEM;
	err = php_binary__inspect(f->elf, &pf->bin);
	if (err == -ENOTSUP) {
		php->stats.unsupported++;
		pr_warn("%s: this PHP (%u.%u, or a ZTS build) is not supported: its frames show as "
			"native code",
			f->path, pf->bin.major, pf->bin.minor);
	} else if (!err) {
		pr_debug("%s: PHP %u.%u, VM in %zu range(s)%s, current_execute_data at +%#x%s",
			 f->path, pf->bin.major, pf->bin.minor, pf->bin.n_vm,
			 pf->bin.vm_regs ? " with global registers" : "", pf->bin.eg_offset,
			 pf->bin.eg_from_code ? " (from zend_is_executing)" : "");
	}
	if (err) {
		free(pf);
		return err;
	}
	*data = pf;
	return 0;
}

static void php_free_file(void *rt, void *data)
{
	(void)rt;
	free(data);
}

static void unpublish(struct php *php, struct php_proc *pp)
{
	if (pp->published && php->procs_fd >= 0)
		bpf_map_delete_elem(php->procs_fd, &pp->pid);
	pp->published = false;
}

static void php_detach(void *rt, const struct process *p)
{
	struct php *php = rt;
	uint32_t pid = p->pid;
	struct php_proc *pp = hashmap__find(&php->procs, hash_u64(pid), &pid);

	if (pp) {
		unpublish(php, pp);
		pp->running = false;
	}
}

/* Publishes pid's state (kept for naming after it exits). NULL on ENOMEM. */
static struct php_proc *publish(struct php *php, uint32_t pid, const struct php_layout *layout,
				const struct op_php_proc *state)
{
	uint64_t h = hash_u64(pid);
	struct php_proc *pp = hashmap__find(&php->procs, h, &pid);

	if (!pp) {
		pp = calloc(1, sizeof(*pp));
		if (!pp || hashmap__insert(&php->procs, h, pp)) {
			free(pp);
			return NULL;
		}
		pp->pid = pid;
		php->stats.processes++;
	} else if (pp->published && pp->running && !memcmp(&pp->bpf, state, sizeof(*state))) {
		return pp;
	}
	pp->layout = layout;
	pp->bpf = *state;
	pp->running = true;
	if (php->procs_fd < 0)
		return pp;
	if (bpf_map_update_elem(php->procs_fd, &pid, state, BPF_ANY)) {
		php->stats.map_errors++;
		pr_debug("pid %u: cannot publish its PHP engine: %s", pid, strerror(errno));
		return pp;
	}
	pp->published = true;
	return pp;
}

const struct op_php_proc *php__attach_binary(struct php *php, uint32_t pid,
					     const struct php_binary *bin, uint64_t bias)
{
	struct op_php_proc state;
	struct php_proc *pp;

	php_binary__proc_info(bin, bias, &state);
	pp = publish(php, pid, bin->layout, &state);
	return pp ? &pp->bpf : NULL;
}

/*
 * OPcache's JIT buffer: the executable part of its shared memory, an
 * anonymous shared mapping that /proc/PID/maps names "/dev/zero (deleted)".
 * Other anonymous code (PCRE's JIT) is private memory with no name: not it.
 */
static bool is_jit_buffer(const struct php *php, const struct process_mapping *m)
{
	const struct cached_file *f = php->files ? file_cache__at(php->files, m->file_slot) : NULL;

	return f && f->path && !strncmp(f->path, "/dev/zero", 9);
}

/* The JIT buffer's ranges among p's executable mappings, merged. How many. */
static size_t find_jit(const struct php *php, const struct process *p, struct interp_range *jit)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_maps; i++) {
		const struct process_mapping *jm = &p->maps[i];

		if (!is_jit_buffer(php, jm))
			continue;
		if (n && jit[n - 1].end == jm->start) {
			jit[n - 1].end = jm->end;
			continue;
		}
		if (n == PHP_JIT_MAX_RANGES)
			break;
		jit[n++] = (struct interp_range){
		    .start = jm->start, .end = jm->end, .flags = OP_INTERP_RANGE_F_UNWINDS};
	}
	return n;
}

static int php_attach(void *rt, const struct process *p, const struct process_mapping *m,
		      const void *data, struct interp_range *ranges, size_t *n_ranges)
{
	struct php *php = rt;
	const struct php_file *pf = data;
	struct interp_range jit[PHP_JIT_MAX_RANGES];
	const struct op_php_proc *state;
	struct php_proc *pp;
	size_t n = 0, n_jit;

	for (size_t r = 0; r < pf->bin.n_vm; r++)
		ranges[n++] = (struct interp_range){.start = pf->bin.vm[r].start + m->bias,
						    .end = pf->bin.vm[r].end + m->bias,
						    .flags = 0};
	state = php__attach_binary(php, p->pid, &pf->bin, m->bias);
	if (!state)
		return -ENOMEM;
	pp = hashmap__find(&php->procs, hash_u64(p->pid), &p->pid);
	n_jit = find_jit(php, p, jit);
	if (n_jit) {
		if (n_jit != pp->n_jit || memcmp(jit, pp->jit, n_jit * sizeof(jit[0])))
			php->stats.jit_ranges++;
		memcpy(pp->jit, jit, n_jit * sizeof(jit[0]));
		pp->n_jit = n_jit;
	}
	/* JIT code runs on execute_ex's frame: without its body's pc it cannot be unwound. */
	for (size_t i = 0; pf->bin.vm_body_pc && i < pp->n_jit && n < INTERP_MAX_RANGES; i++)
		ranges[n++] = pp->jit[i];
	*n_ranges = n;
	return 0;
}

_Static_assert(sizeof(struct php_unwind) <= INTERP_WALK_MAX_SIZE, "a copy's PHP walk");

static const void *php_walk_state(const void *rt, uint32_t pid)
{
	const struct php *php = rt;
	const struct php_proc *pp = hashmap__find(&php->procs, hash_u64(pid), &pid);

	return pp && pp->running ? &pp->bpf : NULL;
}

static size_t php_end_interval(void *rt, const struct process_table *pt)
{
	struct php *php = rt;
	struct php_proc **gone = NULL;
	size_t n = 0, cap = 0, held;
	void *e;

	held = frame_store__end_interval(&php->funcs, pt);
	for (size_t i = 0; hashmap__next(&php->procs, &i, &e);) {
		struct php_proc *pp = e;
		const struct process *p = process_table__find(pt, pp->pid);

		if (p && !p->exited)
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct php_proc **tmp = realloc(gone, c * sizeof(*tmp));

			if (!tmp)
				break;
			gone = tmp;
			cap = c;
		}
		gone[n++] = pp;
	}
	for (size_t i = 0; i < n; i++) {
		unpublish(php, gone[i]);
		hashmap__remove_entry(&php->procs, hash_u64(gone[i]->pid), gone[i]);
		free(gone[i]);
	}
	free(gone);
	return held;
}

static size_t php_held(const void *rt, uint32_t pid)
{
	return frame_store__held(&((const struct php *)rt)->funcs, pid);
}

uint32_t php__resolve(struct php *php, uint32_t pid, uint64_t func, uint64_t fingerprint)
{
	struct remote_memory mem;
	struct php_proc *pp;
	struct php_func *f;
	bool reused;
	uint32_t id;
	int err;

	if (!func)
		return 0;
	if (frame_store__find(&php->funcs, pid, func, fingerprint, &id, &reused))
		return id;
	pp = hashmap__find(&php->procs, hash_u64(pid), &pid);
	if (!pp)
		return 0;
	if (reused)
		php->stats.reused++;
	if (!frame_store__budget_allows(&php->funcs, pid)) {
		if (!php->stats.over_budget++)
			pr_warn("pid %u: PHP function names hold their byte budget: new ones are "
				"not read until it frees up",
				pid);
		return 0;
	}
	mem = interp_env__memory(&php->env, pid);
	err = php_func__read(&mem, pp->layout, func, fingerprint, &f);
	if (err) {
		php->stats.errors++;
		return 0;
	}
	php->stats.funcs++;
	php->stats.names_cut += f->cut;
	return frame_store__add(&php->funcs, pid, func, fingerprint, f);
}

bool php__describe(const struct php *php, uint32_t id, uint64_t line, const char **name,
		   const char **filename, int64_t *out_line)
{
	const struct php_func *f = php ? frame_store__get(&php->funcs, id) : NULL;

	if (!f) {
		*name = "[unknown PHP function]";
		*filename = "";
		*out_line = 0;
		return false;
	}
	*name = f->name;
	*filename = f->filename;
	*out_line = f->internal ? 0 : (int64_t)(line & OP_PHP_AUX_LINE);
	return true;
}

static uint32_t php_resolve(void *rt, uint32_t pid, const struct op_frame *f)
{
	/* addr: the zend_function; data: its function_name (omniprof/interp/php_abi.h). */
	return php__resolve(rt, pid, f->addr, f->data);
}

static void php_describe(const void *rt, uint32_t id, uint64_t offset, const char **name,
			 const char **filename, int64_t *line)
{
	php__describe(rt, id, offset, name, filename, line);
}

/* The flame-graph tools' mark for JIT-compiled code: the frame ran in OPcache's JIT buffer. */
static const char *php_folded_suffix(uint64_t offset)
{
	return offset & OP_PHP_AUX_JIT ? "_[j]" : "";
}

static void php_read_bpf_counters(void *rt, interp_read_percpu_fn read, void *ctx)
{
	struct php *php = rt;

	read(ctx, "php_stats", php->bpf_stats, OP_PHP_STAT__COUNT);
}

#define PHP_COUNTERS 20
static size_t php_counters(const void *rt, struct interp_counter *out)
{
	static const char *const bpf_names[OP_PHP_STAT__COUNT] = {
	    [OP_PHP_STAT_WALKS] = "php: samples whose walk met the VM",
	    [OP_PHP_STAT_NO_FRAME] = "php: no PHP frame running",
	    [OP_PHP_STAT_FRAMES] = "php: frames walked in BPF",
	    [OP_PHP_STAT_READ_ERR] = "php: unreadable frames",
	    [OP_PHP_STAT_VM_NO_FRAME] = "php: execute_ex without a PHP frame",
	    [OP_PHP_STAT_JIT] = "php: JIT code frames unwound",
	    [OP_PHP_STAT_NO_LINE] = "php: frames without a readable opline",
	    [OP_PHP_STAT_LEAF_REG] = "php: leaf lines from the VM's opline register",
	};
	const struct php *php = rt;
	const struct interp_counter host[] = {
	    {"php: engines found (processes)", php->stats.processes},
	    {"php: unsupported binaries", php->stats.unsupported},
	    {"php: php_procs updates that failed", php->stats.map_errors},
	    {"php: JIT buffers found", php->stats.jit_ranges},
	    {"php: functions read", php->stats.funcs},
	    {"php: function addresses reused", php->stats.reused},
	    {"php: functions unreadable", php->stats.errors},
	    {"php: names cut", php->stats.names_cut},
	    {"php: frames not named (byte budget)", php->stats.over_budget},
	    {"php: function bytes now", php->funcs.bytes},
	};
	size_t n = 0;

	_Static_assert(OP_PHP_STAT__COUNT + sizeof(host) / sizeof(host[0]) <= PHP_COUNTERS,
		       "PHP_COUNTERS");
	for (int i = 0; i < OP_PHP_STAT__COUNT; i++)
		out[n++] = (struct interp_counter){bpf_names[i], php->bpf_stats[i]};
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		out[n++] = host[i];
	return n;
}

static int php_new_rt(const struct interp_env *env, void **rt)
{
	struct php *php = malloc(sizeof(*php));

	if (!php)
		return -ENOMEM;
	php__init(php, env->files, env->map_fd ? env->map_fd(env->ctx, "php_procs") : -1);
	php->env = *env;
	*rt = php;
	return 0;
}

static void php_free_rt(void *rt)
{
	php__clear(rt);
	free(rt);
}

/* Every PHP exports execute_ex (php_binary__inspect rejects a file without it). */
static const char *const php_file_markers[] = {"execute_ex", NULL};

const struct interp_ops php_interp_ops = {
    .name = "php",
    .kind = OP_FRAME_PHP,
    .interp = OP_INTERP_PHP,
    .unwind_error = OP_UNWIND_ERR_PHP,
    .unwind_error_text = "[unwind stopped: unreadable PHP frame]",
    .max_counters = PHP_COUNTERS,
    .new_rt = php_new_rt,
    .free_rt = php_free_rt,
    .unload = php_unload,
    .file_markers = php_file_markers,
    .inspect_file = php_inspect_file,
    .free_file = php_free_file,
    .attach = php_attach,
    .detach = php_detach,
    .walk_state = php_walk_state,
    .walk_size = sizeof(struct php_unwind),
    .walk_begin = php_unwind__walk_begin,
    .walk_end = php_unwind__walk_end,
    .resolve = php_resolve,
    .describe = php_describe,
    .folded_suffix = php_folded_suffix,
    .end_interval = php_end_interval,
    .held = php_held,
    .read_bpf_counters = php_read_bpf_counters,
    .counters = php_counters,
};
