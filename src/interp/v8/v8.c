// SPDX-License-Identifier: Apache-2.0
#include "interp/v8/v8.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "interp/v8/v8_binary.h"
#include "interp/v8/v8_code.h"
#include "interp/v8/v8_unwind.h"
#include "proc/file_cache.h"
#include "proc/process_table.h"
#include "proc/remote_memory.h"
#include "util/clock.h"
#include "util/log.h"

struct v8_file {
	struct v8_binary bin;
};

struct v8_proc {
	uint32_t pid;
	bool published;
	bool running;
	const struct v8_file *file; /* valid while attached (the file cache keeps it) */
	struct v8_layout layout;    /* a copy: frames are named after the file is gone */
	uint64_t stream_map;	    /* its InstructionStream map, once seen */
	struct op_v8_proc bpf;
};

static bool proc_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct v8_proc *)entry)->pid == *(const uint32_t *)key;
}

static void free_code(void *code)
{
	v8_code__free(code);
}

static size_t code_bytes(const void *code)
{
	return v8_code__bytes(code);
}

static int v8_new_rt(const struct interp_env *env, void **rt)
{
	const struct frame_store_limits limits = {
	    .objects_per_process = V8_CODES_PER_PROCESS,
	    .bytes_per_process = V8_CODE_BYTES_PER_PROCESS,
	    .bytes_total = V8_CODE_BYTES_MAX,
	};
	struct v8 *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v->files = env->files;
	v->memory = env->memory;
	v->memory_ctx = env->memory_ctx;
	v->procs_fd = env->map_fd ? env->map_fd(env->ctx, "v8_procs") : -1;
	hashmap__init(&v->procs, proc_equal, NULL);
	v8_scripts__init(&v->scripts);
	frame_store__init(&v->codes, &limits, free_code, code_bytes);
	*rt = v;
	return 0;
}

static void v8_free_rt(void *rt)
{
	struct v8 *v = rt;
	void *e;

	if (!v)
		return;
	for (size_t i = 0; hashmap__next(&v->procs, &i, &e);)
		free(e);
	hashmap__clear(&v->procs);
	v8_scripts__clear(&v->scripts, 0, true);
	frame_store__clear(&v->codes);
	free(v);
}

static void v8_unload(void *rt)
{
	struct v8 *v = rt;

	if (v)
		v->procs_fd = -1;
}

static int v8_inspect_file(void *rt, const struct cached_file *f, void **data)
{
	struct v8 *v = rt;
	struct v8_file *vf;
	int err;

	*data = NULL;
	if (!f->elf)
		return -ENOENT;
	vf = calloc(1, sizeof(*vf));
	if (!vf)
		return -ENOMEM;
	err = v8_binary__inspect(f->elf, &vf->bin);
	if (err) {
		if (err == -ENOTSUP) {
			v->stats.unsupported++;
			pr_warn("%s: V8 metadata (%u v8dbg_* symbols) this build cannot use: its "
				"JavaScript frames show as native code",
				f->path, vf->bin.symbols);
		}
		free(vf);
		return err;
	}
	pr_debug("%s: V8, %u v8dbg_* symbols, builtins at 0x%llx (%llu bytes)", f->path,
		 vf->bin.symbols, (unsigned long long)vf->bin.blob_vaddr,
		 (unsigned long long)vf->bin.blob_size);
	*data = vf;
	return 0;
}

static void v8_free_file(void *rt, void *data)
{
	(void)rt;
	free(data);
}

static void unpublish(struct v8 *v, struct v8_proc *vp)
{
	if (vp->published && v->procs_fd >= 0)
		bpf_map_delete_elem(v->procs_fd, &vp->pid);
	vp->published = false;
}

static void v8_detach(void *rt, const struct process *p)
{
	struct v8 *v = rt;
	uint32_t pid = p->pid;
	struct v8_proc *vp = hashmap__find(&v->procs, hash_u64(pid), &pid);

	if (vp) {
		unpublish(v, vp);
		vp->running = false;
	}
}

static int v8_attach(void *rt, const struct process *p, const struct process_mapping *m,
		     const void *data, struct interp_range *ranges, size_t *n_ranges)
{
	struct v8 *v = rt;
	const struct v8_file *vf = data;
	uint32_t pid = p->pid;
	uint64_t h = hash_u64(pid);
	struct v8_proc *vp = hashmap__find(&v->procs, h, &pid);
	uint64_t starts[INTERP_MAX_RANGES], ends[INTERP_MAX_RANGES];
	struct op_v8_proc proc;
	bool *anon = calloc(p->n_maps + 1, sizeof(*anon));
	size_t n;

	if (!anon)
		return -ENOMEM;
	/* JIT code: executable mappings of no file. */
	for (size_t i = 0; i < p->n_maps; i++) {
		const struct cached_file *f = file_cache__at(v->files, p->maps[i].file_slot);

		anon[i] = f && !f->elf && !strncmp(f->path, "[anon", 5);
	}
	n = v8_binary__proc_info(&vf->bin, p, anon, m->file_slot, &proc, starts, ends,
				 INTERP_MAX_RANGES);
	free(anon);
	pr_debug("pid %u: V8 attached, %zu code range(s)", pid, n);
	*n_ranges = 0;
	for (size_t r = 0; r < n; r++)
		ranges[(*n_ranges)++] = (struct interp_range){
		    .start = starts[r], .end = ends[r], .flags = OP_INTERP_RANGE_F_UNWINDS};
	if (!vp) {
		vp = calloc(1, sizeof(*vp));
		if (!vp || hashmap__insert(&v->procs, h, vp)) {
			free(vp);
			return -ENOMEM;
		}
		vp->pid = pid;
		v->stats.processes++;
	} else if (vp->published && !memcmp(&vp->bpf, &proc, sizeof(proc))) {
		return 0;
	}
	vp->file = vf;
	vp->layout = vf->bin.layout;
	vp->bpf = proc;
	vp->running = true;
	if (v->procs_fd < 0)
		return 0;
	if (bpf_map_update_elem(v->procs_fd, &pid, &proc, BPF_ANY)) {
		v->stats.map_errors++;
		pr_debug("pid %u: cannot publish its V8 state: %s", pid, strerror(errno));
		return 0;
	}
	vp->published = true;
	return 0;
}

_Static_assert(sizeof(struct v8_unwind) <= INTERP_WALK_MAX_SIZE, "a copy's V8 walk");

static const void *v8_walk_state(const void *rt, uint32_t pid)
{
	const struct v8 *v = rt;
	const struct v8_proc *vp = hashmap__find(&v->procs, hash_u64(pid), &pid);

	return vp && vp->running ? &vp->bpf : NULL;
}

static bool budget_allows(struct v8 *v, uint32_t pid)
{
	if (frame_store__budget_allows(&v->codes, pid))
		return true;
	if (!v->stats.over_budget++)
		pr_warn("pid %u: V8 frame objects hold %zu bytes (all processes: %zu): new ones "
			"are not read until the budget frees up",
			pid, frame_store__proc_bytes(&v->codes, pid), v->codes.bytes);
	return false;
}

static uint32_t v8_resolve(void *rt, uint32_t pid, const struct op_frame *f)
{
	struct v8 *v = rt;
	uint32_t kind = OP_V8_AUX_KIND(f->aux), id;
	struct v8_proc *vp;
	struct v8_code *code = NULL;
	uint64_t t0;
	struct remote_memory mem;
	struct v8_code_ctx cc;
	bool reused, found;
	int err;

	if (kind != OP_V8_FRAME_INTERPRETED && kind != OP_V8_FRAME_JIT)
		return 0; /* stub frames are named by their kind (describe) */
	if (!f->addr || !f->data)
		return 0;
	found = frame_store__find(&v->codes, pid, f->addr, f->data, &id, &reused);
	vp = hashmap__find(&v->procs, hash_u64(pid), &pid);
	if (!vp)
		return found ? id : 0;
	mem = v->memory ? v->memory(v->memory_ctx, pid) : remote_memory__live(pid);
	cc = (struct v8_code_ctx){.mem = &mem,
				  .layout = &vp->layout,
				  .scripts = &v->scripts,
				  .pid = pid,
				  .stats = &v->stats,
				  .stream_map = &vp->stream_map};
	/* A JIT frame's line is its code object's: recompiled at the same pc, read again. */
	if (found) {
		const struct v8_code *c = frame_store__get(&v->codes, id);

		if (!c || v8_code__current(&cc, c))
			return id;
		v->stats.recompiled++;
	}
	if (reused)
		v->stats.code_reused++;
	if (!budget_allows(v, pid))
		return 0;
	t0 = clock__now_ns();
	if (kind == OP_V8_FRAME_INTERPRETED)
		err = v8_code__read_interpreted(&cc, f->addr, f->data, &code);
	else
		err = v8_code__read_jit(&cc, f->addr, f->data, &code);
	v->stats.read_ns += clock__now_ns() - t0;
	if (err) {
		v->stats.code_errors++;
		return 0;
	}
	v->stats.codes++;
	return frame_store__add(&v->codes, pid, f->addr, f->data, code);
}

static void v8_describe(const void *rt, uint32_t id, uint64_t offset, const char **name,
			const char **filename, int64_t *line)
{
	const struct v8 *v = rt;
	const struct v8_code *c = v ? frame_store__get(&v->codes, id) : NULL;

	*filename = "";
	*line = 0;
	if (!c) {
		*name = OP_V8_AUX_KIND(offset) == OP_V8_FRAME_STUB ? "[V8 stub frame]"
								   : "[unknown V8 frame]";
		return;
	}
	v8_code__describe(c, (uint32_t)offset, name, filename, line);
}

static bool v8_describe_inline(const void *rt, uint32_t id, uint64_t offset, uint32_t index,
			       const char **name, const char **filename, int64_t *line)
{
	const struct v8 *v = rt;
	const struct v8_code *c = v ? frame_store__get(&v->codes, id) : NULL;

	return c && v8_code__describe_inline(c, (uint32_t)offset, index, name, filename, line);
}

static size_t v8_end_interval(void *rt, const struct process_table *pt)
{
	struct v8 *v = rt;
	struct v8_proc **gone = NULL;
	size_t n = 0, cap = 0, held;
	void *e;

	held = frame_store__end_interval(&v->codes, pt);
	for (size_t i = 0; hashmap__next(&v->procs, &i, &e);) {
		struct v8_proc *vp = e;
		const struct process *p = process_table__find(pt, vp->pid);

		if (p && !p->exited)
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct v8_proc **tmp = realloc(gone, c * sizeof(*tmp));

			if (!tmp)
				break;
			gone = tmp;
			cap = c;
		}
		gone[n++] = vp;
	}
	for (size_t i = 0; i < n; i++) {
		unpublish(v, gone[i]);
		v8_scripts__clear(&v->scripts, gone[i]->pid, false);
		hashmap__remove_entry(&v->procs, hash_u64(gone[i]->pid), gone[i]);
		free(gone[i]);
	}
	free(gone);
	return held;
}

static size_t v8_held(const void *rt, uint32_t pid)
{
	const struct v8 *v = rt;

	return frame_store__held(&v->codes, pid);
}

static void v8_read_bpf_counters(void *rt, interp_read_percpu_fn read, void *ctx)
{
	struct v8 *v = rt;

	read(ctx, "v8_stats", v->bpf_stats, OP_V8_STAT__COUNT);
}

#define V8_COUNTERS 21
static size_t v8_counters(const void *rt, struct interp_counter *out)
{
	static const char *const bpf_names[OP_V8_STAT__COUNT] = {
	    [OP_V8_STAT_FRAMES] = "v8: frames walked in BPF",
	    [OP_V8_STAT_INTERPRETED] = "v8: interpreted frames",
	    [OP_V8_STAT_JIT] = "v8: JIT frames",
	    [OP_V8_STAT_STUB] = "v8: stub frames in JIT code",
	    [OP_V8_STAT_READ_ERR] = "v8: unreadable frames",
	    [OP_V8_STAT_NO_PROC] = "v8: V8 code without its process state",
	};
	const struct v8 *v = rt;
	const struct interp_counter host[] = {
	    {"v8: processes found", v->stats.processes},
	    {"v8: unsupported binaries", v->stats.unsupported},
	    {"v8: v8_procs updates that failed", v->stats.map_errors},
	    {"v8: frame objects read", v->stats.codes},
	    {"v8: frame object addresses reused", v->stats.code_reused},
	    {"v8: frame objects unreadable", v->stats.code_errors},
	    {"v8: bytecode no longer its function's", v->stats.mismatches},
	    {"v8: frames named without a line", v->stats.no_lines},
	    {"v8: Maglev frames from translations", v->stats.maglev_translations},
	    {"v8: JIT code recompiled at a frame's pc", v->stats.recompiled},
	    {"v8: scripts' line ends computed", v->stats.scripts},
	    {"v8: frames not named (byte budget)", v->stats.over_budget},
	    {"v8: frame object bytes now", v->codes.bytes},
	    {"v8: ns reading frame objects", v->stats.read_ns},
	};
	size_t n = 0;

	_Static_assert(OP_V8_STAT__COUNT + sizeof(host) / sizeof(host[0]) <= V8_COUNTERS,
		       "V8_COUNTERS");
	for (int i = 0; i < OP_V8_STAT__COUNT; i++)
		out[n++] = (struct interp_counter){bpf_names[i], v->bpf_stats[i]};
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		out[n++] = host[i];
	return n;
}

/* A V8 omniprof reads has its v8dbg_* metadata (v8_binary__inspect rejects a file without one). */
static const char *const v8_file_markers[] = {"v8dbg_*", NULL};

const struct interp_ops v8_interp_ops = {
    .name = "v8",
    .kind = OP_FRAME_V8,
    .interp = OP_INTERP_V8,
    .unwind_error = OP_UNWIND_ERR_V8,
    .unwind_error_text = "[unwind stopped: unreadable V8 frame]",
    .max_counters = V8_COUNTERS,
    .new_rt = v8_new_rt,
    .free_rt = v8_free_rt,
    .unload = v8_unload,
    .file_markers = v8_file_markers,
    .inspect_file = v8_inspect_file,
    .free_file = v8_free_file,
    .attach = v8_attach,
    .detach = v8_detach,
    .walk_state = v8_walk_state,
    .walk_size = sizeof(struct v8_unwind),
    .walk_begin = v8_unwind__walk_begin,
    .walk_end = v8_unwind__walk_end,
    .resolve = v8_resolve,
    .describe = v8_describe,
    .describe_inline = v8_describe_inline,
    .end_interval = v8_end_interval,
    .held = v8_held,
    .read_bpf_counters = v8_read_bpf_counters,
    .counters = v8_counters,
};
