// SPDX-License-Identifier: Apache-2.0
#include "symbol/symbolizer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "interp/interp.h"
#include "proc/file_cache.h"
#include "symbol/kallsyms.h"
#include "util/clock.h"
#include "omniprof/abi.h"
#include "util/log.h"
#include "util/memory.h"
#include "util/read_file.h"

/* The cost of remembering that a file has no symbols. */
#define NEGATIVE_ENTRY_COST 64

static void free_symbols(void *value)
{
	native_symbols__free(value);
}

int symbolizer__init(struct symbolizer *s, struct file_cache *files,
		     const struct symbolizer_opts *opts)
{
	struct symbolizer_opts defaults = {.demangle = DEMANGLE_DEFAULT};
	size_t bound;
	int err;

	if (!opts)
		opts = &defaults;
	memset(s, 0, sizeof(*s));
	s->files = files;
	bound = opts->cache_bytes ? opts->cache_bytes : (size_t)SYMBOL_CACHE_DEFAULT_MB << 20;
	symbol_cache__init(&s->cache, bound, free_symbols);
	frame_memo__init(&s->memo, 0);
	s->unload_min_cost = SYMBOLIZER_RELOAD_MIN_COST;
	s->one_file_growth = SYMBOLIZER_ONE_FILE_GROWTH;
	s->file_pages_kept_max = SYMBOLIZER_FILE_PAGES_KEPT;
	err =
	    debuginfo__init(&s->debuginfo, opts->debug_dirs, opts->n_debug_dirs, opts->debuginfod);
	if (err)
		return err;
	debuginfo__set_inflate_dir(&s->debuginfo, opts->inflate_dir);
	s->sym_opts.demangle = opts->demangle;
	s->sym_opts.debuginfo = &s->debuginfo;
	s->frames = calloc(SYM_MAX_FRAMES, sizeof(*s->frames));
	return s->frames ? 0 : -ENOMEM;
}

void symbolizer__clear(struct symbolizer *s)
{
	if (!s)
		return;
	if (s->ksyms_loading) {
		pthread_join(s->ksyms_thread, NULL);
		s->ksyms_loading = false;
	}
	kallsyms__free(s->ksyms);
	s->ksyms = NULL;
	symbol_cache__clear(&s->cache);
	frame_memo__clear(&s->memo);
	debuginfo__clear(&s->debuginfo);
	free(s->frames);
	s->frames = NULL;
	free(s->unloaded);
	s->unloaded = NULL;
	s->n_unloaded = 0;
}

/* kernel.kptr_restrict's value, or -1 when unreadable. */
static int kptr_restrict(void)
{
	char *buf;
	size_t len;
	int v = -1;

	if (read_file("/proc/sys/kernel/kptr_restrict", &buf, &len) == 0) {
		v = atoi(buf);
		free(buf);
	}
	return v;
}

static void *preload_kernel(void *arg)
{
	struct symbolizer *s = arg;

	s->ksyms_err = kallsyms__load(NULL, &s->ksyms);
	return NULL;
}

int symbolizer__preload_kernel(struct symbolizer *s)
{
	int err;

	if (s->ksyms_tried || s->ksyms_loading)
		return -EALREADY;
	err = -pthread_create(&s->ksyms_thread, NULL, preload_kernel, s);
	if (!err)
		s->ksyms_loading = true;
	return err;
}

static struct kallsyms *kernel_symbols(struct symbolizer *s)
{
	int err;

	if (s->ksyms_tried)
		return s->ksyms;
	s->ksyms_tried = true;
	if (s->ksyms_loading) {
		pthread_join(s->ksyms_thread, NULL);
		s->ksyms_loading = false;
		err = s->ksyms_err;
	} else {
		err = kallsyms__load(NULL, &s->ksyms);
	}
	if (err) {
		pr_warn("cannot read /proc/kallsyms (%s): kernel frames show as addresses",
			strerror(-err));
		return NULL;
	}
	if (kallsyms__restricted(s->ksyms)) {
		s->stats.kernel_restricted = true;
		int kptr = kptr_restrict();

		/* Only the remedies that apply: kptr_restrict 0 already shows them to
		 * perf users, 2 hides them from everyone. */
		pr_warn("/proc/kallsyms shows every address as 0 (kernel.kptr_restrict=%d, "
			"uid %d): kernel frames show as [kernel]+0xADDRESS; %s",
			kptr, (int)getuid(),
			kptr == 0   ? "grant CAP_SYSLOG, or set kernel.perf_event_paranoid to 1 or "
				      "less"
			: kptr == 1 ? "grant CAP_SYSLOG (or run as root), or set "
				      "kernel.kptr_restrict=0"
				    : "kernel.kptr_restrict=2 hides them even from root: set it "
				      "to 0 or 1");
		kallsyms__free(s->ksyms);
		s->ksyms = NULL;
	}
	return s->ksyms;
}

const char *symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return,
			       const char **module, char *buf, size_t len)
{
	struct kallsyms *ks = kernel_symbols(s);
	struct ksym ksym,
	    *sym = ks && kallsyms__find(ks, is_return ? addr - 1 : addr, &ksym) ? &ksym : NULL;

	*module = NULL;
	if (!sym) {
		s->stats.kernel_unnamed++;
		snprintf(buf, len, "[kernel]+0x%llx", (unsigned long long)addr);
		return buf;
	}
	/* BPF programs are listed as "bpf_prog_<tag>_<name>  [bpf]": kept as they are. */
	*module = sym->module;
	snprintf(buf, len, "%s", sym->name);
	return buf;
}

/* Native lookups between two re-measures of the file pages a lookup read (a
 * read of /proc/self/pagemap over its symbol and DWARF sections). */
#define FILE_PAGES_EVERY 64

/*
 * Minor faults of the naming thread after which a lookup re-measures the file
 * pages at once: a fault maps up to 64 KiB of a file (fault-around), and one
 * lookup that reaches a new unit (its DIE tree and line program: 1.5 MiB for
 * libpython's ceval.c) can map more than FILE_PAGES_HELD_MAX by itself,
 * which the 64-lookup cadence left held until 63 more lookups (issue 22).
 * Heap faults count too: they only make a measure come sooner.
 */
#define FILE_PAGES_FAULTS 32

/*
 * File pages (of the ELF and debug files libelf maps) the lookups may hold
 * before they are all given back: issue 22 found 45-49 MiB of them resident in
 * a whole-system agent, the largest part of its RSS. What a lookup needs
 * again comes back from the page cache (minor faults).
 */
#define FILE_PAGES_HELD_MAX (4u << 20)

static size_t drop_value_pages(void *value, void *ctx)
{
	(void)ctx;
	return native_symbols__drop_pages(value);
}

static void drop_file_pages(struct symbolizer *s)
{
	size_t before = s->cache.cost;

	symbol_cache__shrink_each(&s->cache, drop_value_pages, NULL);
	s->stats.file_page_drops++;
	s->stats.file_bytes_dropped += before - s->cache.cost;
	s->file_held = 0;
}

/* Marks file_slot as unloaded after a pass, so that its next load counts as a reload. */
static void mark_unloaded(struct symbolizer *s, uint64_t file_slot)
{
	if (file_slot >= s->n_unloaded) {
		size_t n = file_slot + 1 > 2 * s->n_unloaded ? file_slot + 1 : 2 * s->n_unloaded;
		uint8_t *grown = realloc(s->unloaded, n);

		if (!grown)
			return; /* only a counter is lost */
		memset(grown + s->n_unloaded, 0, n - s->n_unloaded);
		s->unloaded = grown;
		s->n_unloaded = n;
	}
	s->unloaded[file_slot] = 1;
}

/* Whether file_slot was unloaded after a pass since its last load; clears the mark. */
static bool take_unloaded(struct symbolizer *s, uint64_t file_slot)
{
	bool was = file_slot < s->n_unloaded && s->unloaded[file_slot];

	if (was)
		s->unloaded[file_slot] = 0;
	return was;
}

/*
 * True for an entry to unload after a pass: see symbolizer__drop_file_pages().
 * A file a lookup of this very pass reached stays: its process is finding new
 * addresses in it, and unloading it would make the next pass load it and parse
 * its units again (measured in reloads: every pass for an agent's busy
 * workloads early on).
 */
static bool unload_after_pass(const struct symbol_cache_entry *e, void *ctx)
{
	struct symbolizer *s = ctx;
	struct native_symbols_info info;

	if (!e->value || e->cost < s->unload_min_cost || e->pass >= s->cache.pass)
		return false;
	native_symbols__info(e->value, &info);
	if (!info.has_dwarf || info.dwarf_in_heap || info.n_funcs > SYMBOLIZER_RELOAD_MAX_FUNCS)
		return false;
	mark_unloaded(s, e->key);
	return true;
}

/*
 * At a pass's end: the file pages of a file no lookup of this pass used are
 * given back (taken off its cost); those of a file this pass used are
 * measured (charged to it), to be kept when all that the lookups hold stays
 * within file_pages_kept_max (see symbolizer__drop_file_pages()).
 */
static ptrdiff_t settle_pass_pages(struct symbol_cache_entry *e, void *ctx)
{
	struct symbolizer *s = ctx;
	size_t n;

	if (e->pass < s->cache.pass) {
		n = native_symbols__drop_pages(e->value);
		s->file_held -= n < s->file_held ? n : s->file_held;
		return -(ptrdiff_t)n;
	}
	n = native_symbols__file_growth(e->value);
	s->file_held += n;
	return (ptrdiff_t)n;
}

void symbolizer__drop_file_pages(struct symbolizer *s)
{
	bool give_back;

	symbol_cache__adjust_each(&s->cache, settle_pass_pages, s);
	/* One file at a time (record's last pass): no pass follows to use them. */
	give_back = s->one_file || s->file_held > s->file_pages_kept_max;
	pr_debug("symbols: after the pass, %zu KiB of file pages held (%s)", s->file_held >> 10,
		 give_back ? "given back" : "kept");
	if (give_back)
		drop_file_pages(s);
	else
		s->stats.file_page_keeps++;
	s->stats.pass_unloads += symbol_cache__remove_if(&s->cache, unload_after_pass, s);
}

/* Heap allocated since before (0 when other frees outweighed it). */
static size_t heap_growth(size_t before)
{
	size_t now = memory__heap_in_use();

	return now > before ? now - before : 0;
}

/* The calling thread's minor faults so far (0 when unknown). */
static long thread_faults(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_minflt;
}

/* What a lookup in ns added: the units libdw parsed for it, and the file pages
 * it came to hold, measured every FILE_PAGES_EVERY lookups or when the lookups
 * faulted FILE_PAGES_FAULTS times since the last measure. */
static size_t lookup_growth(struct symbolizer *s, struct native_symbols *ns)
{
	size_t grown = native_symbols__lookup_growth(ns), file;
	long faults = thread_faults();

	/* Another thread's count (record's last pass) is below or far from it: measured. */
	if (++s->lookups % FILE_PAGES_EVERY == 0 || faults < s->faults_measured ||
	    faults - s->faults_measured >= FILE_PAGES_FAULTS) {
		s->faults_measured = faults;
		file = native_symbols__file_growth(ns);
		s->file_held += file;
		grown += file;
	}
	return grown;
}

/*
 * The cache entry of file_slot, loading its symbols on a miss; NULL when the
 * file is not open. An entry costs the pages of the file-backed sections
 * elfutils has read plus the heap that opening it allocated (measured,
 * elfutils' own included).
 */
static struct symbol_cache_entry *file_entry(struct symbolizer *s, uint32_t file_slot)
{
	struct symbol_cache_entry *e = symbol_cache__get(&s->cache, file_slot);
	const struct cached_file *f;
	struct native_symbols *ns = NULL;
	size_t heap, file;
	uint64_t start;
	int err;

	if (e)
		return e;
	f = file_cache__at(s->files, file_slot);
	if (!f || !f->elf)
		return NULL;
	/* Its descriptor may have been closed to bound them: reopened by file slot. */
	if (file_cache__ensure_fd(s->files, file_slot))
		return symbol_cache__put(&s->cache, file_slot, NULL, NEGATIVE_ENTRY_COST);
	heap = memory__heap_in_use();
	start = clock__ns(CLOCK_THREAD_CPUTIME_ID);
	err = native_symbols__open_opts(f->elf, &s->sym_opts, &ns);
	start = clock__ns(CLOCK_THREAD_CPUTIME_ID) - start;
	s->stats.load_ns += start;
	s->stats.files_loaded++;
	if (take_unloaded(s, file_slot)) {
		s->stats.reloads++;
		s->stats.reload_ns += start;
	}
	pr_debug("symbols: %s loaded in %.1f ms", f->path, (double)start / 1e6);
	if (err) {
		s->stats.files_without_symbols++;
		pr_info("%s: no symbols: %s", f->path, strerror(-err));
	}
	if (!ns)
		return symbol_cache__put(&s->cache, file_slot, NULL, NEGATIVE_ENTRY_COST);
	file = native_symbols__file_growth(ns);
	s->file_held += file;
	return symbol_cache__put(&s->cache, file_slot, ns, file + heap_growth(heap));
}

/* Counts a native lookup's result in the stats. */
static void count_frames(struct symbolizer *s, size_t n)
{
	if (!n)
		s->stats.native_unnamed++;
	else
		s->stats.native_inline += n - 1;
}

size_t symbolizer__native_in(struct symbolizer *s, struct native_symbols *ns, uint64_t vaddr,
			     const struct sym_frame **frames)
{
	size_t n = ns ? native_symbols__frames(ns, vaddr, s->frames, SYM_MAX_FRAMES) : 0;

	*frames = s->frames;
	count_frames(s, n);
	return n;
}

/*
 * One file at a time: gives back the symbols of the file the last lookup used
 * when file_slot is another one, or when its lookups grew it by more than
 * SYMBOLIZER_ONE_FILE_GROWTH since its load. The last lookup's *frames are
 * used up by now (they are valid until the next call); the memo holds copies.
 */
static void release_last_file(struct symbolizer *s, uint32_t file_slot)
{
	struct symbol_cache_entry *e;
	size_t cost;

	if (s->have_last && (e = symbol_cache__find(&s->cache, s->last_file)) &&
	    (s->last_file != file_slot ||
	     (e->value && s->have_loaded && s->loaded_slot == file_slot &&
	      e->cost > s->last_loaded + s->one_file_growth))) {
		cost = e->cost;
		s->have_loaded = false;
		if (e->value)
			mark_unloaded(s, s->last_file);
		symbol_cache__remove(&s->cache, s->last_file);
		s->stats.one_file_releases++;
		/* Mostly small chunks: the next file reuses them; pages past the
		 * trim threshold go back to the kernel. */
		if (cost >= (1u << 20))
			memory__release();
	}
	s->have_last = true;
	s->last_file = file_slot;
}

void symbolizer__one_file_at_a_time(struct symbolizer *s)
{
	s->one_file = true;
	s->have_last = false;
	s->have_loaded = false;
}

size_t symbolizer__native(struct symbolizer *s, uint32_t file_slot, uint64_t vaddr,
			  const struct sym_frame **frames)
{
	long memo = frame_memo__get(&s->memo, file_slot, vaddr, s->frames, SYM_MAX_FRAMES);
	struct symbol_cache_entry *e;
	uint64_t start;
	size_t n;

	if (memo >= 0) {
		*frames = s->frames;
		count_frames(s, (size_t)memo);
		return (size_t)memo;
	}
	start = clock__ns(CLOCK_THREAD_CPUTIME_ID);
	if (s->one_file)
		release_last_file(s, file_slot);
	e = file_entry(s, file_slot);
	/* Its cost as loaded (or as found when one file at a time began): where
	 * its growth counts from. */
	if (s->one_file && e && (!s->have_loaded || s->loaded_slot != file_slot)) {
		s->have_loaded = true;
		s->loaded_slot = file_slot;
		s->last_loaded = e->cost;
	}
	n = symbolizer__native_in(s, e ? e->value : NULL, vaddr, frames);
	/* libdw parses units, lines and abbreviations as lookups reach them, and
	 * reads more pages of the file: charged to the file, which may push others
	 * out (never this one: *frames use it). */
	if (e && e->value)
		symbol_cache__charge(&s->cache, e, lookup_growth(s, e->value));
	/* Pointers into the pages (source file names) stay valid: a read maps them in again. */
	if (s->file_held > FILE_PAGES_HELD_MAX)
		drop_file_pages(s);
	/* Remembered only when the file was open: a file not open yet may be later. */
	if (e)
		frame_memo__put(&s->memo, file_slot, vaddr, s->frames, n);
	s->stats.miss_ns += clock__ns(CLOCK_THREAD_CPUTIME_ID) - start;
	return n;
}

const char *symbolizer__error(uint64_t reason)
{
	switch (reason) {
	case OP_UNWIND_ERR_READ:
		return "[unwind stopped: unreadable stack]";
	case OP_UNWIND_ERR_MAX_DEPTH:
		return "[unwind stopped: too many frames]";
	case OP_UNWIND_ERR_BAD_FP:
		return "[unwind stopped: bad frame pointer]";
	case OP_UNWIND_ERR_NO_RULE:
		return "[unwind stopped: no unwind rule]";
	case OP_UNWIND_ERR_ANON_CODE:
		return "[unwind stopped: JIT/anonymous code without frame pointer]";
	case OP_UNWIND_ERR_NO_MAPS:
		return "[unwind stopped: process exited before its maps were read]";
	case OP_UNWIND_ERR_RBX_CFA:
		return "[unwind stopped: lazy-binding trampoline above the leaf (CFA in rbx)]";
	case OP_UNWIND_ERR_GO_STALE:
		return "[unwind stopped: Go stack switch, thread moved on before the copy's walk]";
	default: {
		static const char *const origins[TRACE_ORIGIN__COUNT] = {
		    [TRACE_ORIGIN_WALK] = "[sampled: BPF walk]",
		    [TRACE_ORIGIN_WALK_HELD] = "[sampled: BPF walk, held]",
		    [TRACE_ORIGIN_WALK_UNREADY] = "[sampled: BPF walk, held, never ready]",
		    [TRACE_ORIGIN_COPY] = "[sampled: stack copy]",
		    [TRACE_ORIGIN_COPY_HELD] = "[sampled: stack copy, held]",
		    [TRACE_ORIGIN_COPY_EARLY] = "[sampled: stack copy, held, walked early]",
		    [TRACE_ORIGIN_COPY_UNREADY] = "[sampled: stack copy, held, never ready]",
		};
		const char *text;

		if (reason >= TRACE_ORIGIN_BASE && reason < TRACE_ORIGIN_BASE + TRACE_ORIGIN__COUNT)
			return origins[reason - TRACE_ORIGIN_BASE];
		/* A runtime's own reason (its frames could not be read). */
		text = interp__unwind_error(reason);

		return text ? text : "[unwind stopped]";
	}
	}
}

void symbolizer__new_pass(struct symbolizer *s)
{
	symbol_cache__new_pass(&s->cache);
}

void symbolizer__forget_file(struct symbolizer *s, uint32_t file_slot)
{
	frame_memo__forget_file(&s->memo, file_slot);
	symbol_cache__remove(&s->cache, file_slot);
	take_unloaded(s, file_slot);
}
