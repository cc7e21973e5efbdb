// SPDX-License-Identifier: Apache-2.0
#include "interp/interp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>
#include <libelf.h>

#include "elf/elf_file.h"
#include "elf/elf_symbols.h"
#include "proc/file_cache.h"
#include "proc/process_table.h"
#include "unwind/interp_ranges.h"
#include "util/hashmap.h"
#include "util/log.h"

/* What each runtime found in one file, inspected once per file slot and runtime. */
struct interp_file {
	uint32_t file_slot;
	uint32_t inspected;  /* bit r: runtime r looked at it */
	uint32_t candidates; /* bit r: runtime r may own it (file_candidates) */
	bool scanned;	     /* candidates is known */
	void *data[];	     /* runtime r's data, NULL: not its file */
};

/* A process one runtime or more is attached to. */
struct interp_proc {
	uint32_t pid;
	uint32_t attached; /* bit r: runtime r is attached */
	/* What the walk's dispatch gets for the pid (see publish_ranges). */
	struct interp_range ranges[INTERP_MAX_RANGES];
	uint8_t range_runtime[INTERP_MAX_RANGES]; /* index in interp_registry */
	size_t n_ranges;
	struct op_interp_proc value; /* what interp_procs holds (or would: no map) */
	bool published;		     /* value is in interp_procs */
};

struct interp {
	struct interp_env env;
	struct process_table *pt; /* listened to; NULL once interp__free() began */
	int ranges_fd;		  /* the interp_procs BPF map, -1: none */
	int gen_fd;		  /* its generation (interp_gen), -1: none */
	uint64_t range_errors;	  /* interp_procs updates that failed */
	void **rt;		  /* rt[r]: runtime r's state */
	struct hashmap files;	  /* file slot -> struct interp_file */
	struct hashmap procs;	  /* pid -> struct interp_proc */
	/* Bit (name[0] << 8 | name[1]): some runtime's marker starts so (see file_candidates). */
	uint64_t marker_pairs[65536 / 64];
	uint32_t no_markers;	   /* bit r: runtime r has no markers (always a candidate) */
	uint64_t files_scanned;	   /* files whose symbols were read for the markers */
	uint64_t files_no_runtime; /* of them, no runtime's marker found: inspected by none */
};

_Static_assert(sizeof(((struct interp_file *)0)->inspected) * 8 >= 32 &&
		   sizeof(((struct interp_proc *)0)->attached) * 8 >= 32,
	       "runtime bit masks");

static bool file_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct interp_file *)entry)->file_slot == *(const uint32_t *)key;
}

static bool proc_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct interp_proc *)entry)->pid == *(const uint32_t *)key;
}

const struct interp_ops *interp__of_kind(unsigned int kind)
{
	for (size_t r = 0; r < interp_registry_len; r++)
		if ((unsigned int)interp_registry[r]->kind == kind)
			return interp_registry[r];
	return NULL;
}

const char *interp__folded_suffix(unsigned int kind, uint64_t offset)
{
	const struct interp_ops *ops = interp__of_kind(kind);

	return ops && ops->folded_suffix ? ops->folded_suffix(offset) : "";
}

const struct interp_ops *interp__of_id(unsigned int interp)
{
	for (size_t r = 0; interp && r < interp_registry_len; r++)
		if ((unsigned int)interp_registry[r]->interp == interp)
			return interp_registry[r];
	return NULL;
}

const char *interp__unwind_error(uint64_t reason)
{
	for (size_t r = 0; reason && r < interp_registry_len; r++)
		if (interp_registry[r]->unwind_error == reason)
			return interp_registry[r]->unwind_error_text;
	return NULL;
}

static size_t runtime_index(const struct interp_ops *ops)
{
	for (size_t r = 0; r < interp_registry_len; r++)
		if (interp_registry[r] == ops)
			return r;
	return 0;
}

static void free_file(struct interp *in, struct interp_file *f)
{
	for (size_t r = 0; r < interp_registry_len; r++)
		if (f->data[r] && interp_registry[r]->free_file)
			interp_registry[r]->free_file(in->rt[r], f->data[r]);
	free(f);
}

static bool marker_matches(const char *marker, const char *name)
{
	size_t n = strlen(marker);

	if (n && marker[n - 1] == '*')
		return !strncmp(name, marker, n - 1);
	return !strcmp(name, marker);
}

struct marker_scan {
	const struct interp *in;
	uint32_t found; /* bit r: one of runtime r's markers was seen */
	uint32_t want;	/* the runtimes with markers */
};

static bool note_marker(void *ctx, const GElf_Sym *sym, const char *name)
{
	struct marker_scan *s = ctx;
	unsigned int pair;

	(void)sym;
	if (!name[0])
		return false;
	/* Nearly every name stops here (C++'s "_Z" names included). */
	pair = (unsigned int)(unsigned char)name[0] << 8 | (unsigned char)name[1];
	if (!(s->in->marker_pairs[pair / 64] >> (pair % 64) & 1))
		return false;
	for (size_t r = 0; r < interp_registry_len; r++) {
		const char *const *m = interp_registry[r]->file_markers;

		if (!m || s->found & (1u << r))
			continue;
		for (; *m; m++) {
			if (marker_matches(*m, name)) {
				s->found |= 1u << r;
				break;
			}
		}
	}
	return (s->found & s->want) == s->want;
}

/*
 * The runtimes that may own f (bit r): those without markers, and those of
 * whose markers f defines one. One pass over f's symbol tables instead of
 * one per runtime: most files a process maps are no runtime's, and a large
 * library's tables took each runtime tens of milliseconds to read (issue 22).
 */
static uint32_t file_candidates(struct interp *in, const struct cached_file *cf)
{
	struct marker_scan s = {.in = in};
	uint32_t all = interp_registry_len < 32 ? (1u << interp_registry_len) - 1 : ~0u;
	Elf *elf;

	if (!cf->elf)
		return 0; /* no runtime inspects a file without an ELF */
	s.want = all & ~in->no_markers;
	if (!s.want)
		return all; /* no runtime has markers: nothing to read */
	elf = elf_begin(cf->elf->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return all; /* each runtime finds out for itself, as before */
	if (!elf_symbols__for_each(elf, SHT_DYNSYM, note_marker, &s))
		elf_symbols__for_each(elf, SHT_SYMTAB, note_marker, &s);
	elf_end(elf);
	in->files_scanned++;
	if (!s.found)
		in->files_no_runtime++;
	return s.found | in->no_markers;
}

/* Runtime r's data for file_slot (inspected on first sight), NULL when not its file. */
static const void *file_data(struct interp *in, size_t r, uint32_t file_slot)
{
	uint64_t h = hash_u64(file_slot);
	struct interp_file *f = hashmap__find(&in->files, h, &file_slot);
	const struct cached_file *cf;
	void *data = NULL;

	if (!f) {
		f = calloc(1, sizeof(*f) + interp_registry_len * sizeof(f->data[0]));
		if (!f)
			return NULL;
		f->file_slot = file_slot;
		if (hashmap__insert(&in->files, h, f)) {
			free(f);
			return NULL;
		}
	}
	if (f->inspected & (1u << r))
		return f->data[r];
	cf = in->env.files ? file_cache__at(in->env.files, file_slot) : NULL;
	/* Still being opened (a waiting process's maps): inspected once it is. */
	if (cf && cf->pending)
		return NULL;
	if (cf && !f->scanned) {
		f->candidates = file_candidates(in, cf);
		f->scanned = true;
	}
	f->inspected |= 1u << r;
	if (cf && f->candidates & (1u << r) &&
	    !interp_registry[r]->inspect_file(in->rt[r], cf, &data))
		f->data[r] = data;
	return f->data[r];
}

/*
 * The code ranges of pid's runtimes go to the walk's dispatch (interp_procs):
 * the one place that writes the map. Called after the runtimes attached
 * (their own per-pid state is in place when the ranges appear) and before
 * they detach (the ranges go first).
 */
static void publish_ranges(struct interp *in, struct interp_proc *ip)
{
	struct op_interp_proc v;
	int err = 0;

	if (!ip)
		return;
	memset(&v, 0, sizeof(v));
	for (size_t i = 0; i < ip->n_ranges; i++)
		op_interp_proc__add(&v, interp_registry[ip->range_runtime[i]]->interp,
				    ip->ranges[i].start, ip->ranges[i].end, ip->ranges[i].flags);
	if (!memcmp(&v, &ip->value, sizeof(v)) && (ip->published || in->ranges_fd < 0))
		return;
	ip->value = v;
	if (in->ranges_fd < 0)
		return;
	if (op_interp_proc__empty(&v)) {
		if (ip->published)
			err = interp_procs__remove(in->ranges_fd, ip->pid);
		ip->published = false;
	} else {
		err = interp_procs__publish(in->ranges_fd, in->gen_fd, ip->pid, &v);
		ip->published = !err;
	}
	if (err) {
		in->range_errors++;
		pr_debug("pid %u: cannot publish its runtimes' code ranges: %s", ip->pid,
			 strerror(-err));
	}
}

static struct interp_proc *proc_of(struct interp *in, uint32_t pid, bool create)
{
	uint64_t h = hash_u64(pid);
	struct interp_proc *ip = hashmap__find(&in->procs, h, &pid);

	if (ip || !create)
		return ip;
	ip = calloc(1, sizeof(*ip));
	if (!ip)
		return NULL;
	ip->pid = pid;
	if (hashmap__insert(&in->procs, h, ip)) {
		free(ip);
		return NULL;
	}
	return ip;
}

/* Drops runtime r's ranges from ip. */
static void drop_ranges(struct interp_proc *ip, size_t r)
{
	size_t n = 0;

	for (size_t i = 0; i < ip->n_ranges; i++) {
		if (ip->range_runtime[i] == r)
			continue;
		ip->ranges[n] = ip->ranges[i];
		ip->range_runtime[n++] = ip->range_runtime[i];
	}
	ip->n_ranges = n;
}

static void detach_runtime(struct interp *in, struct interp_proc *ip, size_t r,
			   const struct process *p)
{
	interp_registry[r]->detach(in->rt[r], p);
	if (!ip || !(ip->attached & (1u << r)))
		return;
	ip->attached &= ~(1u << r);
	drop_ranges(ip, r);
}

/*
 * Runtime r on p's maps: attaches it to the first mapping of one of its
 * files. False when p maps none (or attaching failed): r is to be detached.
 */
static bool sync_runtime(struct interp *in, const struct process *p, size_t r)
{
	const struct interp_ops *ops = interp_registry[r];
	struct interp_proc *ip = proc_of(in, p->pid, false);
	struct interp_range ranges[INTERP_MAX_RANGES] = {0};

	for (size_t i = 0; i < p->n_maps; i++) {
		const struct process_mapping *m = &p->maps[i];
		const void *data;
		size_t n = 0;

		/* A runtime's file holds its code segment in this mapping. */
		if (!m->has_bias)
			continue;
		data = file_data(in, r, m->file_slot);
		if (!data)
			continue;
		if (ops->attach(in->rt[r], p, m, data, ranges, &n))
			break;
		ip = proc_of(in, p->pid, true);
		if (!ip)
			return true; /* attached; no ranges to publish (ENOMEM) */
		drop_ranges(ip, r);
		for (size_t k = 0; k < n && ip->n_ranges < INTERP_MAX_RANGES; k++) {
			ip->ranges[ip->n_ranges] = ranges[k];
			ip->range_runtime[ip->n_ranges++] = (uint8_t)r;
		}
		ip->attached |= 1u << r;
		if (ops->sync_mappings)
			ops->sync_mappings(in->rt[r], p);
		return true;
	}
	return false;
}

static void on_maps_read(void *ctx, const struct process *p)
{
	struct interp *in = ctx;
	uint32_t detach = 0;
	struct interp_proc *ip;

	for (size_t r = 0; r < interp_registry_len; r++)
		if (!sync_runtime(in, p, r))
			detach |= 1u << r;
	/* Ranges of runtimes p no longer runs leave the dispatch before their state does. */
	ip = proc_of(in, p->pid, false);
	for (size_t r = 0; ip && r < interp_registry_len; r++)
		if (detach & (1u << r))
			drop_ranges(ip, r);
	publish_ranges(in, ip);
	for (size_t r = 0; r < interp_registry_len; r++)
		if (detach & (1u << r))
			detach_runtime(in, ip, r, p);
}

void interp__sync_process(struct interp *in, const struct process *p)
{
	on_maps_read(in, p);
}

static void on_exited(void *ctx, const struct process *p)
{
	struct interp *in = ctx;
	struct interp_proc *ip = proc_of(in, p->pid, false);

	if (ip) {
		ip->n_ranges = 0;
		publish_ranges(in, ip);
	}
	/* Each runtime keeps what names the frames already seen until the interval ends. */
	for (size_t r = 0; r < interp_registry_len; r++)
		detach_runtime(in, ip, r, p);
}

static void on_forget(void *ctx, const struct process *p)
{
	struct interp *in = ctx;
	struct interp_proc *ip = hashmap__remove(&in->procs, hash_u64(p->pid), &p->pid);

	if (ip && ip->published && in->ranges_fd >= 0)
		interp_procs__remove(in->ranges_fd, ip->pid);
	free(ip);
}

int interp__new(const struct interp_env *env, struct process_table *pt, struct interp **out)
{
	struct process_listener l = {
	    .maps_read = on_maps_read,
	    /* Runtimes attach without waiting for the tables (held copies are walked with them). */
	    .maps_seen = on_maps_read,
	    .exited = on_exited,
	    .forget = on_forget};
	struct interp *in;
	int err;

	*out = NULL;
	if (interp_registry_len > 32)
		return -E2BIG;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->env = *env;
	in->ranges_fd = env->map_fd ? env->map_fd(env->ctx, "interp_procs") : -1;
	in->gen_fd = env->map_fd ? env->map_fd(env->ctx, "interp_gen") : -1;
	hashmap__init(&in->files, file_equal, NULL);
	hashmap__init(&in->procs, proc_equal, NULL);
	in->rt = calloc(interp_registry_len ? interp_registry_len : 1, sizeof(*in->rt));
	if (!in->rt) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t r = 0; r < interp_registry_len; r++) {
		const char *const *m = interp_registry[r]->file_markers;

		err = interp_registry[r]->new_rt(env, &in->rt[r]);
		if (err)
			goto cleanup;
		if (!m)
			in->no_markers |= 1u << r;
		for (; m && *m; m++) {
			unsigned int pair;

			/* A marker shorter than two characters (or "x*") would match names
			 * note_marker's filter never lets through. */
			if (!(*m)[0] || !(*m)[1] || (*m)[1] == '*') {
				err = -EINVAL;
				goto cleanup;
			}
			pair = (unsigned int)(unsigned char)(*m)[0] << 8 | (unsigned char)(*m)[1];
			in->marker_pairs[pair / 64] |= 1ull << (pair % 64);
		}
	}
	if (pt) {
		l.ctx = in;
		err = process_table__add_listener(pt, &l);
		if (err)
			goto cleanup;
		in->pt = pt;
	}
	*out = in;
	return 0;
cleanup:
	interp__free(in);
	return err;
}

void interp__free(struct interp *in)
{
	void *e;

	if (!in)
		return;
	if (in->pt)
		process_table__remove_listener(in->pt, in);
	in->pt = NULL;
	for (size_t i = 0; hashmap__next(&in->files, &i, &e);)
		free_file(in, e);
	for (size_t i = 0; hashmap__next(&in->procs, &i, &e);)
		free(e);
	hashmap__clear(&in->files);
	hashmap__clear(&in->procs);
	for (size_t r = 0; in->rt && r < interp_registry_len; r++)
		interp_registry[r]->free_rt(in->rt[r]);
	free(in->rt);
	free(in);
}

void interp__unload(struct interp *in)
{
	if (!in)
		return;
	/* The BPF maps go: no more maps reads or exits to follow either. */
	if (in->pt)
		process_table__remove_listener(in->pt, in);
	in->pt = NULL;
	in->env.map_fd = NULL;
	in->ranges_fd = -1;
	in->gen_fd = -1;
	for (size_t r = 0; r < interp_registry_len; r++)
		if (interp_registry[r]->unload)
			interp_registry[r]->unload(in->rt[r]);
}

bool interp__resolve(struct interp *in, uint32_t pid, const struct op_frame *f, uint32_t *id,
		     uint64_t *offset)
{
	const struct interp_ops *ops = interp__of_kind(f->kind);

	if (!ops)
		return false;
	*offset = f->aux;
	*id = in ? ops->resolve(in->rt[runtime_index(ops)], pid, f) : 0;
	return true;
}

bool interp__describe(const struct interp *in, unsigned int kind, uint32_t id, uint64_t offset,
		      const char **name, const char **filename, int64_t *line)
{
	const struct interp_ops *ops = interp__of_kind(kind);

	if (!ops)
		return false;
	ops->describe(in ? in->rt[runtime_index(ops)] : NULL, id, offset, name, filename, line);
	return true;
}

size_t interp__describe_ops(const struct interp_ops *ops, const void *rt, uint32_t id,
			    uint64_t offset, struct interp_line *out, size_t max)
{
	size_t n = 0;

	if (ops->describe_inline)
		while (n < max && ops->describe_inline(rt, id, offset, (uint32_t)n, &out[n].name,
						       &out[n].filename, &out[n].line)) {
			out[n].start_line = 0;
			n++;
		}
	if (!n) {
		ops->describe(rt, id, offset, &out[0].name, &out[0].filename, &out[0].line);
		out[0].start_line = ops->start_line ? ops->start_line(rt, id) : 0;
		n = 1;
	}
	return n;
}

size_t interp__describe_lines(const struct interp *in, unsigned int kind, uint32_t id,
			      uint64_t offset, struct interp_line *out, size_t max)
{
	const struct interp_ops *ops = interp__of_kind(kind);

	if (!ops || !max)
		return 0;
	return interp__describe_ops(ops, in ? in->rt[runtime_index(ops)] : NULL, id, offset, out,
				    max);
}

const void *interp__walk_state(const struct interp *in, uint32_t pid, unsigned int interp)
{
	const struct interp_proc *ip;

	if (!in)
		return NULL;
	ip = hashmap__find(&in->procs, hash_u64(pid), &pid);
	for (size_t r = 0; ip && r < interp_registry_len; r++)
		if ((ip->attached & (1u << r)) && interp_registry[r]->walk_state &&
		    (unsigned int)interp_registry[r]->interp == interp)
			return interp_registry[r]->walk_state(in->rt[r], pid);
	return NULL;
}

const struct op_interp_proc *interp__ranges(const struct interp *in, uint32_t pid)
{
	const struct interp_proc *ip = in ? hashmap__find(&in->procs, hash_u64(pid), &pid) : NULL;

	return ip && ip->n_ranges ? &ip->value : NULL;
}

void interp__forget_file(struct interp *in, uint32_t file_slot)
{
	struct interp_file *f;

	if (!in)
		return;
	f = hashmap__remove(&in->files, hash_u64(file_slot), &file_slot);
	if (f)
		free_file(in, f);
}

size_t interp__end_interval(struct interp *in, const struct process_table *pt)
{
	size_t held = 0;

	for (size_t r = 0; in && r < interp_registry_len; r++)
		held += interp_registry[r]->end_interval(in->rt[r], pt);
	return held;
}

size_t interp__held(const struct interp *in, uint32_t pid)
{
	size_t held = 0;

	for (size_t r = 0; in && r < interp_registry_len; r++)
		held += interp_registry[r]->held(in->rt[r], pid);
	return held;
}

uint32_t interp__poll_ms(const struct interp *in)
{
	uint32_t ms = 0;

	for (size_t r = 0; in && r < interp_registry_len; r++) {
		uint32_t v =
		    interp_registry[r]->poll_ms ? interp_registry[r]->poll_ms(in->rt[r]) : 0;

		if (v && (!ms || v < ms))
			ms = v;
	}
	return ms;
}

void interp__read_bpf_counters(struct interp *in, interp_read_percpu_fn read, void *ctx)
{
	for (size_t r = 0; in && r < interp_registry_len; r++)
		if (interp_registry[r]->read_bpf_counters)
			interp_registry[r]->read_bpf_counters(in->rt[r], read, ctx);
}

void interp__print_counters(const struct interp *in, FILE *f)
{
	if (in) {
		fprintf(f, "  %-40s %llu\n", "runtimes: interp_procs updates failed",
			(unsigned long long)in->range_errors);
		fprintf(f, "  %-40s %llu\n", "runtimes: files' symbols read once",
			(unsigned long long)in->files_scanned);
		fprintf(f, "  %-40s %llu\n", "runtimes: files of no runtime",
			(unsigned long long)in->files_no_runtime);
	}
	for (size_t r = 0; in && r < interp_registry_len; r++) {
		const struct interp_ops *ops = interp_registry[r];
		struct interp_counter *c =
		    calloc(ops->max_counters ? ops->max_counters : 1, sizeof(*c));
		size_t n;

		if (!c)
			return;
		n = ops->counters(in->rt[r], c);
		for (size_t i = 0; i < n && i < ops->max_counters; i++)
			fprintf(f, "  %-40s %llu\n", c[i].name, (unsigned long long)c[i].value);
		free(c);
	}
}
