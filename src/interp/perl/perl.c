// SPDX-License-Identifier: Apache-2.0
#include "interp/perl/perl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "interp/frame_store.h"
#include "interp/perl/perl_binary.h"
#include "interp/perl/perl_layout.h"
#include "interp/perl/perl_sub.h"
#include "interp/perl/perl_unwind.h"
#include "proc/file_cache.h"
#include "proc/process_table.h"
#include "proc/remote_memory.h"
#include "util/hashmap.h"
#include "util/log.h"

struct perl_file {
	struct perl_binary bin;
};

struct perl_proc {
	uint32_t pid;
	bool published; /* in the BPF map */
	bool running;	/* runs this interpreter now (not exited, no exec since) */
	const struct perl_layout *layout;
	struct op_perl_proc bpf;
};

struct perl_stats {
	uint64_t processes, unsupported, map_errors;
	uint64_t subs, sub_errors, sub_reused, over_budget;
};

/* The last C library whose thread-specific data layout was read (one per machine, mostly). */
struct perl_libc {
	uint32_t slot; /* file cache slot, 0: none yet */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	int err; /* perl_binary__glibc_tsd()'s result */
	struct perl_tsd tsd;
};

struct perl {
	struct interp_env env; /* its memory reads (interp_env__memory) */
	struct perl_libc libc;
	int procs_fd;
	struct hashmap procs; /* pid -> struct perl_proc */
	struct frame_store subs;
	struct perl_stats stats;
	uint64_t bpf_stats[OP_PERL_STAT__COUNT];
};

static bool proc_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct perl_proc *)entry)->pid == *(const uint32_t *)key;
}

static void free_sub(void *s)
{
	perl_sub__free(s);
}

static size_t sub_bytes(const void *s)
{
	return perl_sub__bytes(s);
}

static int perl_new_rt(const struct interp_env *env, void **rt)
{
	const struct frame_store_limits limits = {
	    .objects_per_process = PERL_SUBS_PER_PROCESS,
	    .bytes_per_process = PERL_SUB_BYTES_PER_PROCESS,
	    .bytes_total = PERL_SUB_BYTES_MAX,
	};
	struct perl *pl = calloc(1, sizeof(*pl));

	if (!pl)
		return -ENOMEM;
	pl->env = *env;
	pl->procs_fd = env->map_fd ? env->map_fd(env->ctx, "perl_procs") : -1;
	hashmap__init(&pl->procs, proc_equal, NULL);
	frame_store__init(&pl->subs, &limits, free_sub, sub_bytes);
	*rt = pl;
	return 0;
}

static void perl_free_rt(void *rt)
{
	struct perl *pl = rt;
	void *e;

	if (!pl)
		return;
	for (size_t i = 0; hashmap__next(&pl->procs, &i, &e);)
		free(e);
	hashmap__clear(&pl->procs);
	frame_store__clear(&pl->subs);
	free(pl);
}

static void perl_unload(void *rt)
{
	struct perl *pl = rt;

	if (pl)
		pl->procs_fd = -1;
}

/* Per file (interp.c asks once per file slot): is f a supported perl? */
static int perl_inspect_file(void *rt, const struct cached_file *f, void **data)
{
	struct perl *pl = rt;
	struct perl_file *pf;
	int err;

	*data = NULL;
	if (!f->elf)
		return -ENOENT;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return -ENOMEM;
	err = perl_binary__inspect(f->elf, f->path, &pf->bin);
	if (err == -ENOTSUP) {
		pl->stats.unsupported++;
		pr_warn("%s: Perl 5.%u (%s) is not supported: its frames show as native code",
			f->path, pf->bin.minor, pf->bin.threaded ? "threaded" : "unthreaded");
	} else if (!err) {
		pr_debug("%s: Perl 5.%u (%s), %zu runops loop(s)%s", f->path, pf->bin.minor,
			 pf->bin.threaded ? "threaded" : "unthreaded", pf->bin.n_runops,
			 pf->bin.tls_context ? ", interpreter in thread-local storage" : "");
	}
	if (err) {
		free(pf);
		return err;
	}
	*data = pf;
	return 0;
}

static void perl_free_file(void *rt, void *data)
{
	(void)rt;
	free(data);
}

static void unpublish(struct perl *pl, struct perl_proc *pp)
{
	if (pp->published && pl->procs_fd >= 0)
		bpf_map_delete_elem(pl->procs_fd, &pp->pid);
	pp->published = false;
}

/* p no longer runs perl: kept, unpublished, so the frames already seen are named. */
static void perl_detach(void *rt, const struct process *p)
{
	struct perl *pl = rt;
	uint32_t pid = p->pid;
	struct perl_proc *pp = hashmap__find(&pl->procs, hash_u64(pid), &pid);

	if (pp) {
		unpublish(pl, pp);
		pp->running = false;
	}
}

/*
 * The thread-specific data layout of the C library p maps, NULL when it
 * maps none this code knows (musl, a glibc without thread_db descriptors):
 * then PL_thr_key is not read.
 */
static const struct perl_tsd *process_tsd(struct perl *pl, const struct process *p)
{
	for (size_t i = 0; i < p->n_maps; i++) {
		const struct cached_file *f =
		    pl->env.files ? file_cache__at(pl->env.files, p->maps[i].file_slot) : NULL;

		if (!f || !f->elf || !f->basename || strncmp(f->basename, "libc.so", 7))
			continue;
		if (pl->libc.slot != f->slot || pl->libc.inode != f->inode ||
		    pl->libc.dev_major != f->dev_major || pl->libc.dev_minor != f->dev_minor) {
			pl->libc.slot = f->slot;
			pl->libc.inode = f->inode;
			pl->libc.dev_major = f->dev_major;
			pl->libc.dev_minor = f->dev_minor;
			pl->libc.err = perl_binary__glibc_tsd(f->elf, &pl->libc.tsd);
			if (pl->libc.err)
				pr_debug(
				    "%s: no thread-specific data layout (%s): Perl threads are "
				    "found without PL_thr_key",
				    f->path, strerror(-pl->libc.err));
		}
		return pl->libc.err ? NULL : &pl->libc.tsd;
	}
	return NULL;
}

/* p maps the interpreter file data in m: publishes its perl_procs entry. */
static int perl_attach(void *rt, const struct process *p, const struct process_mapping *m,
		       const void *data, struct interp_range *ranges, size_t *n_ranges)
{
	struct perl *pl = rt;
	const struct perl_file *pf = data;
	uint32_t pid = p->pid;
	uint64_t h = hash_u64(pid);
	struct perl_proc *pp = hashmap__find(&pl->procs, h, &pid);
	struct op_perl_proc proc;

	perl_binary__proc_info(&pf->bin, m->bias, &proc);
	if (pf->bin.thr_key)
		perl_binary__proc_tsd(&pf->bin, m->bias, process_tsd(pl, p), &proc);
	pr_debug("pid %u: Perl 5.%u, PL_thr_key at %#llx, thread data at %u (%u-byte entries)",
		 p->pid, pf->bin.minor, (unsigned long long)proc.thr_key, proc.tsd_specific,
		 proc.tsd_entry);
	/* The runops loops: the native rules unwind them (flags 0), then the walk
	 * hands each one's frame to perl_walk.h's step. */
	*n_ranges = 0;
	for (size_t r = 0; r < pf->bin.n_runops && r < INTERP_MAX_RANGES; r++)
		ranges[(*n_ranges)++] =
		    (struct interp_range){.start = pf->bin.runops[r][0] + m->bias,
					  .end = pf->bin.runops[r][1] + m->bias,
					  .flags = 0};
	if (!pp) {
		pp = calloc(1, sizeof(*pp));
		if (!pp || hashmap__insert(&pl->procs, h, pp)) {
			free(pp);
			return -ENOMEM;
		}
		pp->pid = pid;
		pl->stats.processes++;
	} else if (pp->published && !memcmp(&pp->bpf, &proc, sizeof(proc))) {
		return 0;
	}
	pp->layout = pf->bin.layout;
	pp->bpf = proc;
	pp->running = true;
	if (pl->procs_fd < 0)
		return 0;
	if (bpf_map_update_elem(pl->procs_fd, &pid, &proc, BPF_ANY)) {
		pl->stats.map_errors++;
		pr_debug("pid %u: cannot publish its Perl interpreter: %s", pid, strerror(errno));
		return 0;
	}
	pp->published = true;
	return 0;
}

_Static_assert(sizeof(struct perl_unwind) <= INTERP_WALK_MAX_SIZE, "a copy's Perl walk");

static const void *perl_walk_state(const void *rt, uint32_t pid)
{
	const struct perl *pl = rt;
	const struct perl_proc *pp = hashmap__find(&pl->procs, hash_u64(pid), &pid);

	return pp && pp->running ? &pp->bpf : NULL;
}

static uint32_t perl_resolve(void *rt, uint32_t pid, const struct op_frame *f)
{
	struct perl *pl = rt;
	struct remote_memory mem = interp_env__memory(&pl->env, pid);
	struct perl_proc *pp;
	struct perl_sub *sub;
	bool reused;
	uint32_t id;

	/* addr: the CV (a sub) or the COP (eval, main); data: what it is (perl_abi.h). */
	if (!pl || !f->addr)
		return 0;
	if (frame_store__find(&pl->subs, pid, f->addr, f->data, &id, &reused))
		return id;
	pp = hashmap__find(&pl->procs, hash_u64(pid), &pid);
	if (!pp || !pp->layout)
		return 0;
	if (reused)
		pl->stats.sub_reused++;
	if (!frame_store__budget_allows(&pl->subs, pid)) {
		if (!pl->stats.over_budget++)
			pr_warn("pid %u: Perl frame names hold %zu bytes (all processes: %zu): new "
				"ones are not read until the budget frees up",
				pid, frame_store__proc_bytes(&pl->subs, pid), pl->subs.bytes);
		return 0;
	}
	if (perl_sub__read(&mem, pp->layout, f->addr, f->data, &sub)) {
		pl->stats.sub_errors++;
		return 0;
	}
	pl->stats.subs++;
	return frame_store__add(&pl->subs, pid, f->addr, f->data, sub);
}

static void perl_describe(const void *rt, uint32_t id, uint64_t offset, const char **name,
			  const char **filename, int64_t *line)
{
	const struct perl *pl = rt;
	const struct perl_sub *s = pl ? frame_store__get(&pl->subs, id) : NULL;

	if (!s) {
		*name = "[unknown Perl sub]";
		*filename = "";
		*line = 0;
		return;
	}
	/* offset: the frame's aux, the line of its current statement. */
	*line = (int64_t)(uint32_t)offset;
	*name = s->name;
	*filename = s->file;
}

static size_t perl_end_interval(void *rt, const struct process_table *pt)
{
	struct perl *pl = rt;
	size_t held = frame_store__end_interval(&pl->subs, pt);
	void *e;

	/* Processes that left: their entry goes too (unpublished at exit). */
	for (size_t i = 0; hashmap__next(&pl->procs, &i, &e);) {
		struct perl_proc *pp = e;
		const struct process *p = process_table__find(pt, pp->pid);

		if (p && !p->exited)
			continue;
		unpublish(pl, pp);
		hashmap__remove_entry(&pl->procs, hash_u64(pp->pid), pp);
		free(pp);
		i = 0; /* the table changed under the cursor: start over */
	}
	return held;
}

static size_t perl_held(const void *rt, uint32_t pid)
{
	const struct perl *pl = rt;

	return frame_store__held(&pl->subs, pid);
}

static void perl_read_bpf_counters(void *rt, interp_read_percpu_fn read, void *ctx)
{
	struct perl *pl = rt;

	read(ctx, "perl_stats", pl->bpf_stats, OP_PERL_STAT__COUNT);
}

#define PERL_COUNTERS 18
static size_t perl_counters(const void *rt, struct interp_counter *out)
{
	static const char *const bpf_names[OP_PERL_STAT__COUNT] = {
	    [OP_PERL_STAT_WALKS] = "perl: samples whose walk met the runops loop",
	    [OP_PERL_STAT_NO_INTERP] = "perl: thread without an interpreter",
	    [OP_PERL_STAT_NO_STACK] = "perl: interpreter without a context stack",
	    [OP_PERL_STAT_FRAMES] = "perl: frames walked in BPF",
	    [OP_PERL_STAT_READ_ERR] = "perl: unreadable contexts or stackinfos",
	    [OP_PERL_STAT_RUNOPS_EMPTY] = "perl: runops frames without a Perl frame",
	    [OP_PERL_STAT_SCAN_LIMIT] = "perl: context scans cut (OP_PERL_SCAN)",
	};
	const struct perl *pl = rt;
	const struct interp_counter host[] = {
	    {"perl: interpreters found (processes)", pl->stats.processes},
	    {"perl: unsupported interpreters", pl->stats.unsupported},
	    {"perl: perl_procs updates that failed", pl->stats.map_errors},
	    {"perl: frames named", pl->stats.subs},
	    {"perl: frames unreadable", pl->stats.sub_errors},
	    {"perl: frame addresses reused", pl->stats.sub_reused},
	    {"perl: frames not named (byte budget)", pl->stats.over_budget},
	    {"perl: frame names forgotten", pl->subs.stats.evicted},
	};
	size_t n = 0;

	_Static_assert(OP_PERL_STAT__COUNT + sizeof(host) / sizeof(host[0]) <= PERL_COUNTERS,
		       "PERL_COUNTERS");
	for (int i = 0; i < OP_PERL_STAT__COUNT; i++)
		out[n++] = (struct interp_counter){bpf_names[i], pl->bpf_stats[i]};
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		out[n++] = host[i];
	return n;
}

/* Every perl exports its runops loop (perl_binary__inspect rejects a file without it). */
static const char *const perl_file_markers[] = {"Perl_runops_standard", NULL};

const struct interp_ops perl_interp_ops = {
    .name = "perl",
    .kind = OP_FRAME_PERL,
    .interp = OP_INTERP_PERL,
    .unwind_error = OP_UNWIND_ERR_PERL,
    .unwind_error_text = "[unwind stopped: unreadable Perl frame]",
    .max_counters = PERL_COUNTERS,
    .new_rt = perl_new_rt,
    .free_rt = perl_free_rt,
    .unload = perl_unload,
    .file_markers = perl_file_markers,
    .inspect_file = perl_inspect_file,
    .free_file = perl_free_file,
    .attach = perl_attach,
    .detach = perl_detach,
    .walk_state = perl_walk_state,
    .walk_size = sizeof(struct perl_unwind),
    .walk_begin = perl_unwind__walk_begin,
    .walk_end = perl_unwind__walk_end,
    .resolve = perl_resolve,
    .describe = perl_describe,
    .end_interval = perl_end_interval,
    .held = perl_held,
    .read_bpf_counters = perl_read_bpf_counters,
    .counters = perl_counters,
};
