// SPDX-License-Identifier: Apache-2.0
#include "interp/ruby/ruby.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "interp/frame_store.h"
#include "interp/ruby/ruby_binary.h"
#include "interp/ruby/ruby_iseq.h"
#include "interp/ruby/ruby_layout.h"
#include "interp/ruby/ruby_unwind.h"
#include "omniprof/interp/ruby_abi.h"
#include "proc/file_cache.h"
#include "proc/process_table.h"
#include "proc/remote_memory.h"
#include "util/hashmap.h"
#include "util/log.h"

struct ruby_stats {
	uint64_t processes;   /* processes found running a supported CRuby */
	uint64_t unsupported; /* VMs this build has no layout for (or no ruby_current_ec) */
	uint64_t no_symbols;  /* VMs whose global_symbols was not found: names not qualified */
	uint64_t map_errors;  /* rb_procs updates that failed */
	uint64_t tls_pending; /* initial-exec TLS offsets not readable (yet) at attach */
	uint64_t iseqs;	      /* iseqs and method entries read */
	uint64_t reused;      /* an address found holding another iseq */
	uint64_t errors;      /* iseqs that could not be read */
	uint64_t over_budget; /* frames not named: a byte budget was full */
	uint64_t read_ns;     /* time spent reading iseqs and method entries (the naming cost) */
};

struct ruby {
	struct file_cache *files;
	struct interp_env env;	  /* its memory reads (interp_env__memory) */
	int procs_fd;		  /* the rb_procs BPF map, -1: none */
	struct hashmap procs;	  /* pid -> struct ruby_proc */
	struct frame_store iseqs; /* struct ruby_iseq */
	struct ruby_stats stats;
	uint64_t bpf_stats[OP_RB_STAT__COUNT];
};

struct ruby_proc {
	uint32_t pid;
	bool published; /* in the BPF map */
	bool running;	/* runs this VM now (not exited, no exec since) */
	const struct ruby_layout *layout;
	struct ruby_roots roots; /* absolute */
	struct op_rb_proc bpf;
};

static bool proc_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct ruby_proc *)entry)->pid == *(const uint32_t *)key;
}

static void free_iseq(void *obj)
{
	ruby_iseq__free(obj);
}

static size_t iseq_bytes(const void *obj)
{
	return ((const struct ruby_iseq *)obj)->bytes;
}

static int ruby_new_rt(const struct interp_env *env, void **rt)
{
	const struct frame_store_limits limits = {
	    .objects_per_process = RUBY_ISEQS_PER_PROCESS,
	    .bytes_per_process = RUBY_ISEQ_BYTES_PER_PROCESS,
	    .bytes_total = RUBY_ISEQ_BYTES_MAX,
	};
	struct ruby *rb = calloc(1, sizeof(*rb));

	if (!rb)
		return -ENOMEM;
	rb->files = env->files;
	rb->env = *env;
	rb->procs_fd = env->map_fd ? env->map_fd(env->ctx, "rb_procs") : -1;
	hashmap__init(&rb->procs, proc_equal, NULL);
	frame_store__init(&rb->iseqs, &limits, free_iseq, iseq_bytes);
	*rt = rb;
	return 0;
}

static void ruby_free_rt(void *rt)
{
	struct ruby *rb = rt;
	void *e;

	if (!rb)
		return;
	for (size_t i = 0; hashmap__next(&rb->procs, &i, &e);)
		free(e);
	hashmap__clear(&rb->procs);
	frame_store__clear(&rb->iseqs);
	free(rb);
}

static void ruby_unload(void *rt)
{
	struct ruby *rb = rt;

	if (rb)
		rb->procs_fd = -1;
}

/* Per file (interp.c asks once per file slot): is f a supported CRuby VM? */
static int ruby_inspect_file(void *rt, const struct cached_file *f, void **data)
{
	struct ruby *rb = rt;
	struct ruby_binary *bin;
	int err;

	*data = NULL;
	if (!f->elf)
		return -ENOENT;
	bin = calloc(1, sizeof(*bin));
	if (!bin)
		return -ENOMEM;
	err = ruby_binary__inspect(f->elf, bin);
	if (err == -ENOTSUP) {
		rb->stats.unsupported++;
		pr_warn("%s: CRuby %u.%u is not supported: its frames show as native code", f->path,
			bin->major, bin->minor);
	} else if (!err) {
		if (!bin->global_symbols)
			rb->stats.no_symbols++;
		pr_debug("%s: CRuby %u.%u.%u, rb_vm_exec at %#llx, global_symbols %s", f->path,
			 bin->major, bin->minor, bin->teeny, (unsigned long long)bin->vm_exec,
			 bin->global_symbols ? "found" : "not found (names not qualified)");
	}
	if (err) {
		free(bin);
		return err;
	}
	*data = bin;
	return 0;
}

static void ruby_free_file(void *rt, void *data)
{
	(void)rt;
	free(data);
}

static void unpublish(struct ruby *rb, struct ruby_proc *rp)
{
	if (rp->published && rb->procs_fd >= 0)
		bpf_map_delete_elem(rb->procs_fd, &rp->pid);
	rp->published = false;
}

/* p no longer runs CRuby: kept, unpublished, so the frames already seen are named. */
static void ruby_detach(void *rt, const struct process *p)
{
	struct ruby *rb = rt;
	uint32_t pid = p->pid;
	struct ruby_proc *rp = hashmap__find(&rb->procs, hash_u64(pid), &pid);

	if (rp) {
		unpublish(rb, rp);
		rp->running = false;
	}
}

size_t ruby__jit_ranges(const struct ruby_exec_map *maps, size_t n, struct interp_range *out,
			size_t max)
{
	size_t k = 0;
	bool open = false; /* out[k - 1] may take the next anonymous mapping */

	for (size_t i = 0; i < n; i++) {
		uint64_t reach;

		if (!maps[i].anon || maps[i].end <= maps[i].start) {
			open = false;
			continue;
		}
		if (open && maps[i].start >= out[k - 1].start) {
			if (maps[i].end > out[k - 1].end)
				out[k - 1].end = maps[i].end;
		} else if (k < max) {
			out[k++] = (struct interp_range){.start = maps[i].start,
							 .end = maps[i].end,
							 .flags = OP_INTERP_RANGE_F_UNWINDS};
			open = true;
		} else {
			break;
		}
		/* The region's pages not executable yet: up to the span, short of
		 * the next executable mapping (the maps need not be sorted). */
		reach = out[k - 1].start + RUBY_JIT_SPAN;
		for (size_t j = 0; j < n; j++)
			if (!maps[j].anon && maps[j].start >= maps[i].end && maps[j].start < reach)
				reach = maps[j].start;
		if (reach > out[k - 1].end)
			out[k - 1].end = reach;
	}
	return k;
}

static int ruby_attach(void *rt, const struct process *p, const struct process_mapping *m,
		       const void *data, struct interp_range *ranges, size_t *n_ranges)
{
	struct ruby *rb = rt;
	const struct ruby_binary *bin = data;
	uint32_t pid = p->pid;
	uint64_t h = hash_u64(pid);
	struct ruby_proc *rp = hashmap__find(&rb->procs, h, &pid);
	struct op_rb_proc proc;
	struct ruby_binary ie;
	int err;

	if (bin->tpoff_slot) {
		struct remote_memory mem = interp_env__memory(&rb->env, pid);

		/* Initial-exec TLS: the distance the dynamic linker wrote into the GOT. */
		ie = *bin;
		err = ruby_binary__read_tp_offset(bin, &mem, m->bias, &ie.tp_offset);
		if (err) {
			rb->stats.tls_pending++;
			pr_debug("pid %u: ruby_current_ec's TLS offset not readable yet: %s", pid,
				 strerror(-err));
			return 0;
		}
		bin = &ie;
	}
	ruby_binary__proc_info(bin, m->bias, &proc);
	/* Each entry from C into the VM is one rb_vm_exec frame: where the walk hands over. */
	ranges[0] = (struct interp_range){.start = bin->vm_exec + m->bias,
					  .end = bin->vm_exec + bin->vm_exec_size + m->bias,
					  .flags = 0};
	*n_ranges = 1;
	/*
	 * YJIT (3.1+) writes its code into anonymous executable memory, with
	 * no unwind tables and no frame pointer: such ranges are Ruby's to
	 * unwind (the walker marks the frame and gives the rest of the Ruby
	 * stack). The process's only anonymous executable code in practice
	 * (libffi's closures use a file-backed trampoline table on Debian).
	 */
	if (bin->major * 100 + bin->minor >= 301) {
		struct ruby_exec_map *maps = calloc(p->n_maps ? p->n_maps : 1, sizeof(*maps));

		if (!maps)
			return -ENOMEM;
		for (size_t i = 0; i < p->n_maps; i++) {
			const struct cached_file *f =
			    file_cache__at(rb->files, p->maps[i].file_slot);

			maps[i] =
			    (struct ruby_exec_map){p->maps[i].start, p->maps[i].end,
						   f && !f->elf && !strncmp(f->path, "[anon", 5)};
		}
		*n_ranges += ruby__jit_ranges(maps, p->n_maps, ranges + *n_ranges,
					      INTERP_MAX_RANGES - *n_ranges);
		free(maps);
	}
	if (!rp) {
		rp = calloc(1, sizeof(*rp));
		if (!rp || hashmap__insert(&rb->procs, h, rp)) {
			free(rp);
			return -ENOMEM;
		}
		rp->pid = pid;
		rb->stats.processes++;
	} else if (rp->published && !memcmp(&rp->bpf, &proc, sizeof(proc))) {
		return 0;
	}
	rp->layout = bin->layout;
	rp->roots.global_symbols = bin->global_symbols ? bin->global_symbols + m->bias : 0;
	rp->roots.current_vm_ptr = bin->current_vm_ptr ? bin->current_vm_ptr + m->bias : 0;
	rp->bpf = proc;
	rp->running = true;
	if (rb->procs_fd < 0)
		return 0;
	if (bpf_map_update_elem(rb->procs_fd, &pid, &proc, BPF_ANY)) {
		rb->stats.map_errors++;
		pr_debug("pid %u: cannot publish its Ruby VM: %s", pid, strerror(errno));
		return 0;
	}
	rp->published = true;
	return 0;
}

_Static_assert(sizeof(struct ruby_unwind) <= INTERP_WALK_MAX_SIZE, "a copy's Ruby walk");

static const void *ruby_walk_state(const void *rt, uint32_t pid)
{
	const struct ruby *rb = rt;
	const struct ruby_proc *rp = hashmap__find(&rb->procs, hash_u64(pid), &pid);

	return rp && rp->running ? &rp->bpf : NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define JIT_KEY 1 /* the frame store's address for YJIT's code: no object is at 1 */

static bool budget_allows(struct ruby *rb, uint32_t pid)
{
	if (frame_store__budget_allows(&rb->iseqs, pid))
		return true;
	if (!rb->stats.over_budget++)
		pr_warn("pid %u: Ruby frame names hold %zu bytes (all processes: %zu): new ones "
			"are not read until the budget frees up",
			pid, frame_store__proc_bytes(&rb->iseqs, pid), rb->iseqs.bytes);
	return false;
}

/*
 * A marker's one entry per process: YJIT's code ("[YJIT code]", its pcs are
 * not told apart; key JIT_KEY) or a stack copy's Ruby frames read after the
 * sample (key OP_RB_LATE_ADDR).
 */
static uint32_t resolve_marker(struct ruby *rb, uint32_t pid, uint64_t key, uint64_t data,
			       const char *name)
{
	struct ruby_iseq *is;
	uint32_t id;
	bool reused;

	if (frame_store__find(&rb->iseqs, pid, key, data, &id, &reused))
		return id;
	is = calloc(1, sizeof(*is));
	if (!is)
		return 0;
	is->name = strdup(name);
	is->path = strdup("");
	if (!is->name || !is->path) {
		ruby_iseq__free(is);
		return 0;
	}
	is->bytes = sizeof(*is) + strlen(name) + 1;
	return frame_store__add(&rb->iseqs, pid, key, data, is);
}

/* addr: the iseq or method entry; data: its fingerprint (omniprof/interp/ruby_abi.h). */
static uint32_t ruby_resolve(void *rt, uint32_t pid, const struct op_frame *f)
{
	struct ruby *rb = rt;
	struct remote_memory mem = interp_env__memory(&rb->env, pid);
	struct ruby_proc *rp;
	struct ruby_iseq *is;
	bool reused;
	uint32_t id;
	uint64_t t0;
	int err;

	if (!f->addr)
		return 0;
	if (f->data == OP_RB_DATA_JIT)
		return resolve_marker(rb, pid, JIT_KEY, OP_RB_DATA_JIT, "[YJIT code]");
	if (f->data == OP_RB_DATA_LATE)
		return resolve_marker(rb, pid, OP_RB_LATE_ADDR, OP_RB_DATA_LATE,
				      "[Ruby frames read after the sample]");
	if (frame_store__find(&rb->iseqs, pid, f->addr, f->data, &id, &reused))
		return id;
	rp = hashmap__find(&rb->procs, hash_u64(pid), &pid);
	if (!rp)
		return 0;
	if (reused)
		rb->stats.reused++;
	if (!budget_allows(rb, pid))
		return 0;
	t0 = now_ns();
	if (f->data & OP_RB_DATA_CFUNC)
		err = ruby_iseq__read_cfunc(&mem, rp->layout, &rp->roots, f->addr,
					    f->data & ~OP_RB_DATA_CFUNC, &is);
	else
		err = ruby_iseq__read(&mem, rp->layout, &rp->roots, f->addr, f->data, &is);
	rb->stats.read_ns += now_ns() - t0;
	if (err) {
		rb->stats.errors++;
		return 0;
	}
	rb->stats.iseqs++;
	return frame_store__add(&rb->iseqs, pid, f->addr, f->data, is);
}

static void ruby_describe(const void *rt, uint32_t id, uint64_t offset, const char **name,
			  const char **filename, int64_t *line)
{
	const struct ruby *rb = rt;
	const struct ruby_iseq *is = rb ? frame_store__get(&rb->iseqs, id) : NULL;

	if (!is) {
		*name = "[unknown Ruby code]";
		*filename = "";
		*line = 0;
		return;
	}
	*name = is->name;
	*filename = is->path;
	*line = ruby_iseq__line(is, (uint32_t)offset);
}

static size_t ruby_end_interval(void *rt, const struct process_table *pt)
{
	struct ruby *rb = rt;
	size_t held = frame_store__end_interval(&rb->iseqs, pt);
	void *e;

	/* Processes that left: their entry goes too (unpublished at exit). */
	for (size_t i = 0; hashmap__next(&rb->procs, &i, &e);) {
		struct ruby_proc *rp = e;
		const struct process *p = process_table__find(pt, rp->pid);

		if (p && !p->exited)
			continue;
		unpublish(rb, rp);
		hashmap__remove_entry(&rb->procs, hash_u64(rp->pid), rp);
		free(rp);
		i = 0; /* the table changed under the iterator: start over */
	}
	return held;
}

static size_t ruby_held(const void *rt, uint32_t pid)
{
	return frame_store__held(&((const struct ruby *)rt)->iseqs, pid);
}

static void ruby_read_bpf_counters(void *rt, interp_read_percpu_fn read, void *ctx)
{
	struct ruby *rb = rt;

	read(ctx, "rb_stats", rb->bpf_stats, OP_RB_STAT__COUNT);
}

#define RUBY_COUNTERS 20
static size_t ruby_counters(const void *rt, struct interp_counter *out)
{
	static const char *const bpf_names[OP_RB_STAT__COUNT] = {
	    [OP_RB_STAT_WALKS] = "ruby: samples whose walk met the VM loop",
	    [OP_RB_STAT_NO_EC] = "ruby: thread without an execution context",
	    [OP_RB_STAT_FRAMES] = "ruby: Ruby frames walked in BPF",
	    [OP_RB_STAT_CFUNCS] = "ruby: C function frames walked in BPF",
	    [OP_RB_STAT_READ_ERR] = "ruby: unreadable control frames",
	    [OP_RB_STAT_LOOP_NO_FRAME] = "ruby: VM loop without a control frame",
	    [OP_RB_STAT_SKIPPED] = "ruby: control frames not shown",
	    [OP_RB_STAT_JIT] = "ruby: YJIT code frames",
	};
	const struct ruby *rb = rt;
	const struct interp_counter host[] = {
	    {"ruby: VMs found (processes)", rb->stats.processes},
	    {"ruby: unsupported VMs", rb->stats.unsupported},
	    {"ruby: VMs without global_symbols (unqualified)", rb->stats.no_symbols},
	    {"ruby: initial-exec TLS offsets not readable at attach", rb->stats.tls_pending},
	    {"ruby: rb_procs updates that failed", rb->stats.map_errors},
	    {"ruby: iseqs and method entries read", rb->stats.iseqs},
	    {"ruby: iseq addresses reused", rb->stats.reused},
	    {"ruby: iseqs unreadable", rb->stats.errors},
	    {"ruby: ns reading iseqs", rb->stats.read_ns},
	    {"ruby: frames not named (byte budget)", rb->stats.over_budget},
	    {"ruby: iseqs forgotten", rb->iseqs.stats.evicted},
	    {"ruby: iseq bytes now", rb->iseqs.bytes},
	};
	size_t n = 0;

	_Static_assert(OP_RB_STAT__COUNT + sizeof(host) / sizeof(host[0]) <= RUBY_COUNTERS,
		       "RUBY_COUNTERS");
	for (int i = 0; i < OP_RB_STAT__COUNT; i++)
		out[n++] = (struct interp_counter){bpf_names[i], rb->bpf_stats[i]};
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		out[n++] = host[i];
	return n;
}

/* Every CRuby defines ruby_version (ruby_binary__inspect rejects a file without it). */
static const char *const ruby_file_markers[] = {"ruby_version", NULL};

const struct interp_ops ruby_interp_ops = {
    .name = "ruby",
    .kind = OP_FRAME_RUBY,
    .interp = OP_INTERP_RUBY,
    .unwind_error = OP_UNWIND_ERR_RUBY,
    .unwind_error_text = "[unwind stopped: unreadable Ruby frame]",
    .max_counters = RUBY_COUNTERS,
    .new_rt = ruby_new_rt,
    .free_rt = ruby_free_rt,
    .unload = ruby_unload,
    .file_markers = ruby_file_markers,
    .inspect_file = ruby_inspect_file,
    .free_file = ruby_free_file,
    .attach = ruby_attach,
    .detach = ruby_detach,
    .walk_state = ruby_walk_state,
    .walk_size = sizeof(struct ruby_unwind),
    .walk_begin = ruby_unwind__walk_begin,
    .walk_end = ruby_unwind__walk_end,
    .resolve = ruby_resolve,
    .describe = ruby_describe,
    .end_interval = ruby_end_interval,
    .held = ruby_held,
    .read_bpf_counters = ruby_read_bpf_counters,
    .counters = ruby_counters,
};
