// SPDX-License-Identifier: Apache-2.0
#include "elf/elf_symbols.h"
#include "interp/hotspot/hotspot.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "elf/elf_file.h"
#include "interp/hotspot/hotspot_method.h"
#include "interp/hotspot/hotspot_unwind.h"
#include "proc/file_cache.h"
#include "proc/process_table.h"
#include "proc/remote_memory.h"
#include "util/clock.h"
#include "util/log.h"

struct hotspot_proc {
	uint32_t pid;
	bool published; /* in the BPF map */
	bool running;
	bool have_layout;
	bool unsupported;      /* its tables lack what we need: not asked again */
	uint32_t tries;	       /* reads of its tables that found them not ready */
	uint64_t first_try_ns; /* the first of them */
	struct hotspot_layout layout;
	struct op_jvm_proc bpf;
	uint32_t gen;	    /* this image's op_jvm_proc.gen (0: not numbered yet) */
	uint64_t low, high; /* the reserved code cache */
	uint32_t epoch;	    /* its collection (+ safepoint) count as last read ... */
	uint64_t epoch_ns;  /* ... and when (0: not read in this image) */
	/* It can redefine classes but its safepoints are not counted: no name is sure. */
	bool unsure;
};

static bool proc_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct hotspot_proc *)entry)->pid == *(const uint32_t *)key;
}

static void free_method(void *m)
{
	hotspot_method__free(m);
}

static size_t method_bytes(const void *m)
{
	return ((const struct hotspot_method *)m)->bytes;
}

static bool note_vm_symbol(void *ctx, const GElf_Sym *sym, const char *name)
{
	struct hotspot_file *hf = ctx;

	if (!sym->st_value || strncmp(name, "gHotSpotVM", 10))
		return false;
	for (int s = 0; s < HS_SYM__COUNT; s++)
		if (!strcmp(name, hotspot_vm__symbol_names[s]))
			hf->sym[s] = sym->st_value;
	return false;
}

#define HOTSPOT_SWEEPER_TRAVERSALS "_ZN14NMethodSweeper11_traversalsE"

/* NMethodSweeper::_traversals: not exported, found in the .symtab when the file keeps one. */
static bool note_sweeper(void *ctx, const GElf_Sym *sym, const char *name)
{
	struct hotspot_file *hf = ctx;

	if (!sym->st_value || GELF_ST_TYPE(sym->st_info) != STT_OBJECT || sym->st_size != 8 ||
	    strcmp(name, HOTSPOT_SWEEPER_TRAVERSALS))
		return false;
	hf->sweeper_traversals = sym->st_value;
	return true;
}

static void scan_symbols(Elf *elf, struct hotspot_file *hf)
{
	elf_symbols__for_each(elf, SHT_DYNSYM, note_vm_symbol, hf);
	elf_symbols__for_each(elf, SHT_SYMTAB, note_sweeper, hf);
}

/*
 * The JDKs whose sweeper is the only code that frees an nmethod, and frees
 * it only in a later traversal than the one that made it a zombie (each
 * traversal counted in NMethodSweeper::_traversals before it visits an
 * nmethod), checked in their source: docs/architecture.md, "What frees an
 * nmethod". Others keep the check read on every use.
 */
static bool sweeper_counts_frees(int major)
{
	return major == 17;
}

static int hotspot_inspect_file(void *rt, const struct cached_file *f, void **data)
{
	struct hotspot_file *hf;
	Elf *elf;

	(void)rt;
	*data = NULL;
	if (!f->elf || !f->basename || strncmp(f->basename, "libjvm", 6))
		return -ENOENT;
	hf = calloc(1, sizeof(*hf));
	if (!hf)
		return -ENOMEM;
	elf = elf_begin(f->elf->fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		free(hf);
		return -ENOEXEC;
	}
	scan_symbols(elf, hf);
	elf_end(elf);
	for (int s = 0; s < HS_SYM__COUNT; s++) {
		if (!hf->sym[s]) {
			pr_debug("%s: no %s: not a HotSpot JVM omniprof can read", f->path,
				 hotspot_vm__symbol_names[s]);
			free(hf);
			return -ENOENT;
		}
	}
	*data = hf;
	return 0;
}

static void hotspot_free_file(void *rt, void *data)
{
	(void)rt;
	free(data);
}

static void unpublish(struct hotspot *hs, struct hotspot_proc *hp)
{
	if (hp->published && hs->procs_fd >= 0)
		bpf_map_delete_elem(hs->procs_fd, &hp->pid);
	hp->published = false;
}

static void hotspot_detach(void *rt, const struct process *p)
{
	struct hotspot *hs = rt;
	uint32_t pid = p->pid;
	struct hotspot_proc *hp = hashmap__find(&hs->procs, hash_u64(pid), &pid);

	if (hp) {
		unpublish(hs, hp);
		hp->running = false;
		/* Its statics are absolute: another image (exec, pid reuse) reads them again. */
		hp->have_layout = false;
		hp->gen = 0;
		hp->unsupported = false;
		hp->tries = 0;
		hp->first_try_ns = 0;
		hp->low = hp->high = 0;
		hp->unsure = false;
		hp->bpf.safepoint_count = 0;
	}
}

/*
 * A redefinition frees the old versions of a class's Methods (and their
 * ConstMethods and constant pool) without a collection, so the collection
 * count alone no longer says a Method* still holds the sample's method. It
 * frees them only at a safepoint (the redefinition's VM operation, or a
 * later safepoint's metaspace clean-up), and only in a JVM whose JVMTI
 * agent can redefine: in such a JVM the safepoint count is added to the
 * epoch (op_jvm_proc.safepoint_count); one whose safepoints are not counted
 * (no perf data) has none of its Java frames named. The flag is read at
 * attach and with each read of the epoch (an agent loaded later).
 */
static void note_redefinable(struct hotspot *hs, struct hotspot_proc *hp,
			     const struct remote_memory *mem, struct op_jvm_proc *proc)
{
	uint64_t addr = 0;
	int err;

	if (hp->bpf.safepoint_count) {
		proc->safepoint_count = hp->bpf.safepoint_count; /* once set, kept */
		return;
	}
	if (!proc->gc_count || hotspot_vm__can_redefine(mem, &hp->layout) != 1)
		return;
	err = hotspot_vm__safepoint_counter(mem, &hp->layout, &addr);
	if (err == -EAGAIN || err == -EFAULT)
		return; /* asked again at the next read */
	if (!hp->unsure && !proc->safepoint_count)
		hs->stats.redefinable++;
	if (err) {
		if (!hp->unsure)
			pr_warn(
			    "pid %u: its JVM can redefine classes but does not count its "
			    "safepoints (-XX:-UsePerfData?): its Java frames show as unknown code",
			    hp->pid);
		hp->unsure = true;
		return;
	}
	hp->unsure = false;
	proc->safepoint_count = addr;
}

static int hotspot_attach(void *rt, const struct process *p, const struct process_mapping *m,
			  const void *data, struct interp_range *ranges, size_t *n_ranges)
{
	struct hotspot *hs = rt;
	const struct hotspot_file *hf = data;
	struct remote_memory mem = interp_env__memory(&hs->env, p->pid);
	uint32_t pid = p->pid;
	uint64_t h = hash_u64(pid), sym[HS_SYM__COUNT], low, high;
	struct hotspot_proc *hp = hashmap__find(&hs->procs, h, &pid);
	struct op_jvm_proc proc;
	int err;

	*n_ranges = 0;
	if (!hp) {
		hp = calloc(1, sizeof(*hp));
		if (!hp || hashmap__insert(&hs->procs, h, hp)) {
			free(hp);
			return -ENOMEM;
		}
		hp->pid = pid;
	}
	hp->running = true;
	if (hp->unsupported)
		return 0;
	if (!hp->have_layout) {
		hp->epoch_ns = 0;
		for (int s = 0; s < HS_SYM__COUNT; s++)
			sym[s] = hf->sym[s] + m->bias;
		err = hotspot_vm__read(&mem, sym, &hp->layout);
		if (err == -ENOENT || err == -EINVAL) {
			hs->stats.unsupported++;
			hp->unsupported = true;
			pr_warn("pid %u: its JVM does not describe what omniprof needs: its Java "
				"frames show as unknown code",
				pid);
			return 0;
		}
		if (err) {
			hs->stats.not_ready++;
			/* A JVM sets its tables up at start; one that never does (or lies
			 * in them) costs at most HOTSPOT_MAX_TRIES reads. */
			if (!hp->tries++)
				hp->first_try_ns = clock__now_ns();
			if (hp->tries >= HOTSPOT_MAX_TRIES &&
			    clock__now_ns() - hp->first_try_ns >= HOTSPOT_MIN_TRY_NS) {
				hs->stats.unsupported++;
				hp->unsupported = true;
				pr_warn(
				    "pid %u: its JVM's tables are still unreadable after %u tries: "
				    "its Java frames show as unknown code",
				    pid, hp->tries);
			}
			return 0;
		}
		hp->have_layout = true;
	}
	/* A new image: what BPF remembered of the pid's nmethods is not for it. */
	if (!hp->gen) {
		if (!++hs->last_gen)
			++hs->last_gen;
		hp->gen = hs->last_gen;
	}
	err = hotspot_vm__code_cache(&mem, &hp->layout, &proc, &low, &high);
	if (err) {
		hs->stats.not_ready++;
		/* Keep what was published: a read of a process changing under us. */
		if (hp->published) {
			ranges[0] = (struct interp_range){
			    .start = hp->low, .end = hp->high, .flags = OP_INTERP_RANGE_F_UNWINDS};
			*n_ranges = 1;
		}
		return 0;
	}
	ranges[0] =
	    (struct interp_range){.start = low, .end = high, .flags = OP_INTERP_RANGE_F_UNWINDS};
	*n_ranges = 1;
	proc.gen = hp->gen;
	proc.code_count = hf->sweeper_traversals && sweeper_counts_frees(hp->layout.major)
			      ? hf->sweeper_traversals + m->bias
			      : 0;
	note_redefinable(hs, hp, &mem, &proc);
	if (hp->published && !memcmp(&hp->bpf, &proc, sizeof(proc)))
		return 0;
	if (!hp->published && !hp->low)
		hs->stats.processes++;
	hp->bpf = proc;
	hp->low = low;
	hp->high = high;
	if (hs->procs_fd < 0)
		return 0;
	if (bpf_map_update_elem(hs->procs_fd, &pid, &proc, BPF_ANY)) {
		hs->stats.map_errors++;
		*n_ranges = 0;
		return 0;
	}
	hp->published = true;
	pr_debug("pid %u: JDK %d, code cache %#llx-%#llx in %u heap(s), interpreter %#llx-%#llx",
		 pid, hp->layout.major, (unsigned long long)low, (unsigned long long)high,
		 proc.n_heaps, (unsigned long long)proc.interp_start,
		 (unsigned long long)proc.interp_end);
	return 0;
}

_Static_assert(sizeof(struct hotspot_unwind) <= INTERP_WALK_MAX_SIZE, "a copy's HotSpot walk");

/* pid's `jvm_procs` value while it runs a JVM, else NULL (stack copies walk with it). */
static const void *hotspot_walk_state(const void *rt, uint32_t pid)
{
	const struct hotspot *hs = rt;
	const struct hotspot_proc *hp = hashmap__find(&hs->procs, hash_u64(pid), &pid);

	return hp && hp->running && hp->low ? &hp->bpf : NULL;
}

static bool budget_allows(struct hotspot *hs, uint32_t pid)
{
	if (frame_store__budget_allows(&hs->methods, pid))
		return true;
	if (!hs->stats.over_budget++)
		pr_warn("pid %u: Java method names hold %zu bytes: new ones are not read until "
			"the budget frees up",
			pid, frame_store__proc_bytes(&hs->methods, pid));
	return false;
}

/*
 * How long a process's last read of its collection count stands for its
 * count now (what a sample's 16 bits are widened against): no JVM collects
 * 32768 times in that time.
 */
#define HOTSPOT_EPOCH_FRESH_NS (1000ull * 1000 * 1000)

/*
 * hp's collection count now into *count: as last read while that stands
 * (or the process is gone: it collects no more), else read. 0 or -EFAULT.
 */
static int proc_epoch(struct hotspot *hs, struct hotspot_proc *hp, const struct remote_memory *mem,
		      bool force, uint32_t *count)
{
	uint64_t now = clock__now_ns();
	uint32_t v, safepoints = 0;

	if (!force && hp->epoch_ns &&
	    (!hp->running || now - hp->epoch_ns < HOTSPOT_EPOCH_FRESH_NS)) {
		*count = hp->epoch;
		return 0;
	}
	if (hp->running && !hp->bpf.safepoint_count && !hp->unsure) {
		struct op_jvm_proc proc = hp->bpf;

		note_redefinable(hs, hp, mem, &proc);
		/* Frames sampled before the BPF side adds safepoints carry another epoch: refused.
		 */
		if (proc.safepoint_count && hs->procs_fd >= 0 && hp->published &&
		    bpf_map_update_elem(hs->procs_fd, &hp->pid, &proc, BPF_ANY))
			hs->stats.map_errors++;
		else
			hp->bpf = proc;
	}
	if (!hp->bpf.gc_count || remote_memory__read(mem, hp->bpf.gc_count, &v, sizeof(v)))
		return -EFAULT;
	if (hp->bpf.safepoint_count &&
	    remote_memory__read(mem, hp->bpf.safepoint_count, &safepoints, sizeof(safepoints)))
		return -EFAULT;
	v += safepoints;
	hp->epoch = v;
	hp->epoch_ns = now;
	*count = v;
	return 0;
}

/* A frame's 16-bit epoch widened to the count nearest now (no sample is 32768 collections old). */
static uint32_t sample_epoch(uint32_t now, uint16_t low)
{
	return now + (uint32_t)(int32_t)(int16_t)(uint16_t)(low - (uint16_t)now);
}

/* Reads the method of f (Method* f->addr) into *out: 0 or -errno, timed and counted. */
static int read_method(struct hotspot *hs, struct hotspot_proc *hp, const struct remote_memory *mem,
		       const struct op_frame *f, uint64_t fingerprint, struct hotspot_method **out)
{
	uint64_t t0 = clock__now_ns();
	uint32_t type = (uint32_t)(f->data >> OP_JVM_TYPE_SHIFT);
	int err;

	if (type == OP_JVM_T_STUB)
		err = hotspot_method__read_stub(mem, f->addr, out);
	else
		err = hotspot_method__read(mem, &hp->layout, f->addr, fingerprint, out);
	hs->stats.method_ns += clock__now_ns() - t0;
	if (err)
		hs->stats.errors++;
	return err;
}

/*
 * A Java method's frame in a JVM that counts its collections. A Method*,
 * its ConstMethod and its constant pool are freed only by a class unloading,
 * which only a collection does, counted before it unloads: a name read
 * while the count was the sample's is the sample's method. So a name is
 * trusted for a frame of the epoch it was read (or read again) in; in
 * another epoch it is read again, and a frame sampled before a collection
 * that ran since is not named at all (its method may be gone and its
 * memory another's: a stale name is worse than none). A read during which
 * the count moved is refused too: its parts may come from two classes.
 */
static uint32_t resolve_method(struct hotspot *hs, struct hotspot_proc *hp, uint32_t pid,
			       const struct op_frame *f, uint64_t fingerprint, uint32_t id,
			       bool reused)
{
	struct remote_memory mem = interp_env__memory(&hs->env, pid);
	/* The store's object is ours: its epoch is ours to move. */
	struct hotspot_method *old =
	    id ? (struct hotspot_method *)frame_store__get(&hs->methods, id) : NULL;
	struct hotspot_method *m;
	uint32_t now, after;

	if (old && !hp->unsure && !proc_epoch(hs, hp, &mem, false, &now) &&
	    sample_epoch(now, f->reserved) == old->epoch)
		return id;
	if (!hp->have_layout || proc_epoch(hs, hp, &mem, true, &now)) {
		hs->stats.errors++;
		return 0;
	}
	if (hp->unsure) {
		hs->stats.unsure++;
		return 0;
	}
	if (old && sample_epoch(now, f->reserved) == old->epoch)
		return id;
	if (sample_epoch(now, f->reserved) != now) {
		hs->stats.raced++;
		hs->raced_ns = clock__now_ns();
		return 0;
	}
	if (!old && !budget_allows(hs, pid))
		return 0;
	if (read_method(hs, hp, &mem, f, fingerprint, &m))
		return 0;
	if (proc_epoch(hs, hp, &mem, true, &after) || after != now) {
		hotspot_method__free(m);
		hs->stats.raced++;
		hs->raced_ns = clock__now_ns();
		return 0;
	}
	m->epoch = now;
	if (old && hotspot_method__same(old, m)) {
		/* Still the same method: its id (and the profile's location) stays. */
		old->epoch = now;
		hotspot_method__free(m);
		hs->stats.rechecked++;
		return id;
	}
	if (old || reused)
		hs->stats.reused++;
	hs->stats.methods++;
	return frame_store__add(&hs->methods, pid, f->addr, fingerprint, m);
}

static uint32_t hotspot_resolve(void *rt, uint32_t pid, const struct op_frame *f)
{
	struct hotspot *hs = rt;
	uint32_t type = (uint32_t)(f->data >> OP_JVM_TYPE_SHIFT);
	/* A stub is known by its name alone (every blob of it shares the string). */
	uint64_t fingerprint = type == OP_JVM_T_STUB ? 0 : f->data & OP_JVM_FP_MASK;
	struct remote_memory mem = interp_env__memory(&hs->env, pid);
	struct hotspot_method *m;
	struct hotspot_proc *hp;
	bool found, reused;
	uint32_t id;

	if (!f->addr)
		return 0;
	found = frame_store__find(&hs->methods, pid, f->addr, fingerprint, &id, &reused);
	hp = hashmap__find(&hs->procs, hash_u64(pid), &pid);
	/* Stubs live as long as the JVM; one that does not count its collections is named as read.
	 */
	if (hp && type != OP_JVM_T_STUB && hp->bpf.gc_count)
		return resolve_method(hs, hp, pid, f, fingerprint, found ? id : 0, reused);
	if (found)
		return id;
	if (!hp || !hp->have_layout)
		return 0;
	if (reused)
		hs->stats.reused++;
	if (!budget_allows(hs, pid) || read_method(hs, hp, &mem, f, fingerprint, &m))
		return 0;
	hs->stats.methods++;
	return frame_store__add(&hs->methods, pid, f->addr, fingerprint, m);
}

/*
 * The flame-graph tools' Java palette in the folded output: JIT-compiled,
 * inlined, interpreted (the frame's type, kept in its offset's high bits:
 * omniprof/interp/hotspot_abi.h). Stubs keep the JVM's own name.
 */
static const char *hotspot_folded_suffix(uint64_t offset)
{
	switch ((offset >> OP_JVM_AUX_TYPE_SHIFT) & 0xf) {
	case OP_JVM_T_INTERPRETED:
		return "_[0]";
	case OP_JVM_T_COMPILED:
		return "_[j]";
	case OP_JVM_T_INLINED:
		return "_[i]";
	default:
		return "";
	}
}

static void hotspot_describe(const void *rt, uint32_t id, uint64_t offset, const char **name,
			     const char **filename, int64_t *line)
{
	const struct hotspot *hs = rt;
	const struct hotspot_method *m = hs ? frame_store__get(&hs->methods, id) : NULL;

	if (!m) {
		*name = "[unknown Java code]";
		*filename = "";
		*line = 0;
		return;
	}
	*name = m->name;
	*filename = m->filename;
	*line = hotspot_method__line(m, (uint32_t)offset & OP_JVM_BCI_MASK);
}

static size_t hotspot_end_interval(void *rt, const struct process_table *pt)
{
	struct hotspot *hs = rt;
	struct hotspot_proc **gone = NULL;
	size_t n = 0, cap = 0, held;
	void *e;

	held = frame_store__end_interval(&hs->methods, pt);
	for (size_t i = 0; hashmap__next(&hs->procs, &i, &e);) {
		struct hotspot_proc *hp = e;
		const struct process *p = process_table__find(pt, hp->pid);

		if (p && !p->exited)
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct hotspot_proc **tmp = realloc(gone, c * sizeof(*tmp));

			if (!tmp)
				break;
			gone = tmp;
			cap = c;
		}
		gone[n++] = hp;
	}
	for (size_t i = 0; i < n; i++) {
		unpublish(hs, gone[i]);
		hashmap__remove_entry(&hs->procs, hash_u64(gone[i]->pid), gone[i]);
		free(gone[i]);
	}
	free(gone);
	return held;
}

/*
 * While a running JVM counts its collections, its frames are named within
 * HOTSPOT_POLL_MS of their sample (a name holds for the epoch of its
 * sample); within HOTSPOT_RACED_POLL_MS for HOTSPOT_RACED_NS after a frame
 * was refused for a collection since its sample (a JVM collecting faster).
 */
#define HOTSPOT_POLL_MS	      100
#define HOTSPOT_RACED_POLL_MS 20
#define HOTSPOT_RACED_NS      (5ull * 1000 * 1000 * 1000)

static uint32_t hotspot_poll_ms(const void *rt)
{
	const struct hotspot *hs = rt;
	void *e;

	for (size_t i = 0; hashmap__next(&hs->procs, &i, &e);) {
		const struct hotspot_proc *hp = e;

		if (!hp->running || !hp->bpf.gc_count)
			continue;
		return hs->raced_ns && clock__now_ns() - hs->raced_ns < HOTSPOT_RACED_NS
			   ? HOTSPOT_RACED_POLL_MS
			   : HOTSPOT_POLL_MS;
	}
	return 0;
}

static size_t hotspot_held(const void *rt, uint32_t pid)
{
	return frame_store__held(&((const struct hotspot *)rt)->methods, pid);
}

static void hotspot_read_bpf_counters(void *rt, interp_read_percpu_fn read, void *ctx)
{
	struct hotspot *hs = rt;

	read(ctx, "jvm_stats", hs->bpf_stats, OP_JVM_STAT__COUNT);
}

#define HOTSPOT_COUNTERS 31
static size_t hotspot_counters(const void *rt, struct interp_counter *out)
{
	static const char *const bpf_names[OP_JVM_STAT__COUNT] = {
	    [OP_JVM_STAT_INTERPRETED] = "hotspot: interpreted frames walked in BPF",
	    [OP_JVM_STAT_COMPILED] = "hotspot: compiled frames walked in BPF",
	    [OP_JVM_STAT_STUB] = "hotspot: stub frames walked in BPF",
	    [OP_JVM_STAT_NO_BLOB] = "hotspot: code cache pcs in no code blob",
	    [OP_JVM_STAT_READ_ERR] = "hotspot: frames that could not be read",
	    [OP_JVM_STAT_NO_PROC] = "hotspot: code cache frames without a jvm_procs entry",
	    [OP_JVM_STAT_INLINED] = "hotspot: inlined frames walked in BPF",
	    [OP_JVM_STAT_NO_PCDESC] = "hotspot: compiled frames without debug info at their pc",
	    [OP_JVM_STAT_DEOPT] = "hotspot: deoptimised frames named from their original pc",
	    [OP_JVM_STAT_REMEMBERED] = "hotspot: nmethods taken from the cross-sample cache",
	    [OP_JVM_STAT_FREED] = "hotspot: remembered nmethods refused, their block freed",
	    [OP_JVM_STAT_FREE_BLOCK] = "hotspot: code cache pcs in a freed block",
	    [OP_JVM_STAT_LEAF] = "hotspot: leaf nmethods taken from the cross-sample cache",
	    [OP_JVM_STAT_UNCHANGED] =
		"hotspot: remembered nmethods taken without a check read (code count unchanged)",
	    [OP_JVM_STAT_RECOMPILED] =
		"hotspot: remembered nmethods refused, their method's new nmethod at their address",
	    [OP_JVM_STAT_REPLACED] =
		"hotspot: remembered nmethods refused, another method's nmethod at their address",
	    [OP_JVM_STAT_CHAIN] =
		"hotspot: compiled frames whose inlined scopes came from the chain cache",
	};
	const struct hotspot *hs = rt;
	const struct interp_counter host[] = {
	    {"hotspot: JVMs found (processes)", hs->stats.processes},
	    {"hotspot: attaches before the JVM was set up", hs->stats.not_ready},
	    {"hotspot: JVMs not supported", hs->stats.unsupported},
	    {"hotspot: jvm_procs updates that failed", hs->stats.map_errors},
	    {"hotspot: methods read", hs->stats.methods},
	    {"hotspot: ns reading methods", hs->stats.method_ns},
	    {"hotspot: Method addresses reused", hs->stats.reused},
	    {"hotspot: methods unreadable", hs->stats.errors},
	    {"hotspot: names read again after a collection", hs->stats.rechecked},
	    {"hotspot: frames not named: a collection ran since their sample", hs->stats.raced},
	    {"hotspot: frames not named (byte budget)", hs->stats.over_budget},
	    {"hotspot: JVMs that can redefine classes (safepoints in the epoch)",
	     hs->stats.redefinable},
	    {"hotspot: frames not named: classes redefinable, safepoints not counted",
	     hs->stats.unsure},
	    {"hotspot: method bytes now", hs->methods.bytes},
	};
	size_t n = 0;

	_Static_assert(OP_JVM_STAT__COUNT + sizeof(host) / sizeof(host[0]) <= HOTSPOT_COUNTERS,
		       "HOTSPOT_COUNTERS");
	for (int i = 0; i < OP_JVM_STAT__COUNT; i++)
		out[n++] = (struct interp_counter){bpf_names[i], hs->bpf_stats[i]};
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		out[n++] = host[i];
	return n;
}

static void hotspot_unload(void *rt)
{
	struct hotspot *hs = rt;

	if (hs)
		hs->procs_fd = -1;
}

static int hotspot_new_rt(const struct interp_env *env, void **rt)
{
	const struct frame_store_limits limits = {
	    .objects_per_process = HOTSPOT_METHODS_PER_PROCESS,
	    .bytes_per_process = HOTSPOT_BYTES_PER_PROCESS,
	    .bytes_total = HOTSPOT_BYTES_MAX,
	};
	struct hotspot *hs = calloc(1, sizeof(*hs));

	if (!hs)
		return -ENOMEM;
	hs->files = env->files;
	hs->env = *env;
	hs->procs_fd = env->map_fd ? env->map_fd(env->ctx, "jvm_procs") : -1;
	hashmap__init(&hs->procs, proc_equal, NULL);
	frame_store__init(&hs->methods, &limits, free_method, method_bytes);
	*rt = hs;
	return 0;
}

static void hotspot_free_rt(void *rt)
{
	struct hotspot *hs = rt;
	void *e;

	if (!hs)
		return;
	for (size_t i = 0; hashmap__next(&hs->procs, &i, &e);)
		free(e);
	hashmap__clear(&hs->procs);
	frame_store__clear(&hs->methods);
	free(hs);
}

const struct interp_ops hotspot_interp_ops = {
    .name = "hotspot",
    .kind = OP_FRAME_HOTSPOT,
    .interp = OP_INTERP_HOTSPOT,
    .unwind_error = OP_UNWIND_ERR_HOTSPOT,
    .unwind_error_text = "[unwind stopped: unreadable Java frame]",
    .max_counters = HOTSPOT_COUNTERS,
    .new_rt = hotspot_new_rt,
    .free_rt = hotspot_free_rt,
    .unload = hotspot_unload,
    .inspect_file = hotspot_inspect_file,
    .free_file = hotspot_free_file,
    .attach = hotspot_attach,
    .detach = hotspot_detach,
    .walk_state = hotspot_walk_state,
    .walk_size = sizeof(struct hotspot_unwind),
    .walk_begin = hotspot_unwind__walk_begin,
    .walk_end = hotspot_unwind__walk_end,
    .resolve = hotspot_resolve,
    .describe = hotspot_describe,
    .folded_suffix = hotspot_folded_suffix,
    .end_interval = hotspot_end_interval,
    .held = hotspot_held,
    .poll_ms = hotspot_poll_ms,
    .read_bpf_counters = hotspot_read_bpf_counters,
    .counters = hotspot_counters,
};
