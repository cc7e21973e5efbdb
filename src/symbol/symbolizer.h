/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names for frames: kernel addresses through kallsyms (modules and BPF
 * programs included), native addresses through the symbols, DWARF and Go
 * tables of the file they were resolved to, loaded per file slot into a
 * memory-bounded cache (symbol_cache.h), with the frames of addresses named
 * before remembered (frame_memo.h). A frame that cannot be named gets
 * "module+0xOFFSET", never dropped.
 */
#ifndef OMNIPROF_SYMBOL_SYMBOLIZER_H
#define OMNIPROF_SYMBOL_SYMBOLIZER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbol/debuginfo.h"
#include "symbol/frame_memo.h"
#include "symbol/native_symbols.h"
#include "symbol/symbol_cache.h"

struct file_cache;
struct kallsyms;
struct interp;

struct symbolizer_opts {
	enum demangle_mode demangle;   /* DEMANGLE_DEFAULT unless set */
	const char *const *debug_dirs; /* --debug-dir roots, searched before /usr/lib/debug */
	size_t n_debug_dirs;
	bool debuginfod;    /* ask debuginfod servers (when DEBUGINFOD_URLS is set) */
	size_t cache_bytes; /* bound of the symbol cache; 0 means the default */
	/* Where debug files with compressed DWARF are kept inflated (the table cache's
	 * folder: see debuginfo__set_inflate_dir); NULL: inflated in memory. */
	const char *inflate_dir;
};

struct symbolizer_stats {
	uint64_t kernel_unnamed;
	uint64_t native_unnamed;
	uint64_t native_inline; /* inlined frames added */
	uint64_t files_loaded;	/* symbol loads (a file evicted and needed again counts twice) */
	uint64_t files_without_symbols;
	uint64_t file_page_drops;    /* times the files' mapped pages were given back */
	uint64_t file_bytes_dropped; /* what those drops had charged, in bytes */
	uint64_t file_page_keeps;    /* passes that kept their files' pages (within the budget) */
	uint64_t pass_unloads;	     /* files unloaded after a pass (in-place DWARF) */
	uint64_t one_file_releases;  /* files given back by symbolizer__one_file_at_a_time() */
	uint64_t load_ns;	     /* thread CPU time loading files' symbols */
	uint64_t reloads;	     /* loads of a file unloaded after a pass */
	uint64_t reload_ns;	     /* thread CPU time of those loads */
	uint64_t miss_ns; /* thread CPU time naming addresses the memo lacked, loads included */
	bool kernel_restricted; /* kptr_restrict hid kernel addresses */
};

struct symbolizer {
	struct file_cache *files;
	struct kallsyms *ksyms;	     /* loaded on the first kernel frame */
	const struct interp *interp; /* names runtimes' frames; NULL: shown unnamed */
	bool ksyms_tried;
	/* symbolizer__preload_kernel()'s thread, joined at the first kernel frame
	 * (or at symbolizer__clear()); until then only it writes ksyms and ksyms_err. */
	bool ksyms_loading;
	int ksyms_err;
	pthread_t ksyms_thread;
	struct symbol_options sym_opts;
	struct debuginfo debuginfo;
	struct symbol_cache cache; /* file slot -> struct native_symbols * */
	struct frame_memo memo;	   /* (file slot, address) -> frames named before */
	struct sym_frame *frames;  /* SYM_MAX_FRAMES, the result of the last native lookup */
	uint32_t lookups;	   /* native lookups, to re-measure file pages now and then */
	size_t file_held;	   /* file pages the lookups mapped in since the last drop */
	long faults_measured;	/* this thread's minor faults when file pages were last measured */
	size_t unload_min_cost; /* SYMBOLIZER_RELOAD_MIN_COST (tests lower it) */
	size_t file_pages_kept_max; /* SYMBOLIZER_FILE_PAGES_KEPT (tests change it) */
	uint8_t *unloaded; /* by file slot: 1 once unloaded after a pass (counts reloads) */
	size_t n_unloaded;
	bool one_file;		/* symbolizer__one_file_at_a_time() */
	bool have_last;		/* last_file is a file a lookup loaded */
	uint32_t last_file;	/* the file slot of the last lookup that missed the memo */
	bool have_loaded;	/* loaded_slot and last_loaded are known */
	uint32_t loaded_slot;	/* one file at a time: the file slot whose load cost is... */
	size_t last_loaded;	/* ...its entry's cost then */
	size_t one_file_growth; /* SYMBOLIZER_ONE_FILE_GROWTH (tests lower it) */
	struct symbolizer_stats stats;
};

/* opts may be NULL (defaults). 0 or -ENOMEM; clear with symbolizer__clear() either way. */
int symbolizer__init(struct symbolizer *s, struct file_cache *files,
		     const struct symbolizer_opts *opts);
void symbolizer__clear(struct symbolizer *s); /* accepts NULL */

/*
 * Starts reading /proc/kallsyms on a thread of its own, to be taken at the
 * first kernel frame named: the agent starts it beside the BPF load, so its
 * 60-70 ms are spent during start-up rather than inside the first interval
 * that meets a kernel frame (and while another CPU verifies the programs).
 * Optional: without it the first kernel frame reads the file itself. 0 or
 * -errno (then the read is left to the first kernel frame). Call it once,
 * before the first symbolizer__kernel().
 */
int symbolizer__preload_kernel(struct symbolizer *s);

/*
 * Writes the name of a frame into buf (len bytes) and returns buf.
 * is_return: addr is a return address (look up addr - 1, the call).
 * Kernel: *module receives the module name ("bpf" for BPF programs), or NULL
 * for the kernel image.
 */
const char *symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return,
			       const char **module, char *buf, size_t len);

/*
 * The frames at ELF virtual address vaddr of file file_slot (already the call
 * instruction for return addresses), innermost inlined call first. Returns
 * their number and *frames (valid until the next call), or 0 when nothing
 * names the address (counted).
 */
size_t symbolizer__native(struct symbolizer *s, uint32_t file_slot, uint64_t vaddr,
			  const struct sym_frame **frames);

/*
 * For one last pass whose lookups come file by file (record's profiles, named
 * sorted by file): from now on a file's symbols (its libdw units and line
 * tables, libelf's inflated debug sections, its symbol table, its mapped
 * pages) are given back as soon as a lookup asks for another file, instead of
 * being kept up to the cache's bound for a next pass there is none of. So the
 * heap at the end of a recording holds the largest file's symbols, not the
 * cache's bound of them. A file whose lookups made libdw keep more than
 * SYMBOLIZER_ONE_FILE_GROWTH since it was loaded is given back and loaded
 * again for its next lookup: the lookups come in address order, so the units
 * named before (their line tables: 19 MiB for one file at record's end, issue
 * 22) are not needed again. Names do not change: a file asked for again is
 * loaded again (counted in reloads), and the frame memo still answers the
 * addresses named before.
 */
#define SYMBOLIZER_ONE_FILE_GROWTH (6u << 20)
void symbolizer__one_file_at_a_time(struct symbolizer *s);

/*
 * The same for a file opened by the caller (omniprof symbolize): ns may be
 * NULL. Uses the symbolizer's scratch frames.
 */
size_t symbolizer__native_in(struct symbolizer *s, struct native_symbols *ns, uint64_t vaddr,
			     const struct sym_frame **frames);

/* The file cache is closing file_slot (its slot will name another file): drop its symbols. */
void symbolizer__forget_file(struct symbolizer *s, uint32_t file_slot);
/* A profile is about to be named: one pass of the symbol cache (symbol_cache.h). */
void symbolizer__new_pass(struct symbolizer *s);

/*
 * Called after a pass named its frames. Gives back the pages of the ELF and
 * debug files that lookups mapped in (their symbol tables stay; lookups map
 * what they need again: the lookups do the same when they hold more than 4
 * MiB): those of the files no lookup of this pass used, and those of the
 * others too when they hold more than SYMBOLIZER_FILE_PAGES_KEPT or one file
 * at a time is on (record's last pass). And it unloads the files whose
 * DWARF libdw reads in place once they hold SYMBOLIZER_RELOAD_MIN_COST:
 * what libdw parsed for them (units, line tables, abbreviations) is kept for
 * the file's lifetime and only grows, while the frame memo already names the
 * addresses it served (an interpreter built with -g: 12-14 MiB after a few
 * intervals of a whole-system agent). The next pass loads such a file again
 * only for an address the memo lacks, parsing only the units it needs.
 * Files whose DWARF was inflated into the heap (libc6-dbg) stay: loading them
 * again costs 90-240 ms each.
 */
void symbolizer__drop_file_pages(struct symbolizer *s);

/*
 * File pages the files a pass used may keep to the next pass. A busy
 * process brings new addresses every interval, in the same few units of the
 * same files: giving all their pages back after each pass made the next
 * pass's lookups fault them in again, 5-8% of a whole-system agent's steady
 * CPU (issue 22, session 21's self-profile). Kept only up to this much, so
 * that what the agent holds between intervals stays small.
 */
#define SYMBOLIZER_FILE_PAGES_KEPT (2u << 20)

/*
 * Unloaded after a pass (see above) from this cost on, and only with at most
 * this many functions: reading and sorting the symbol table again is the part
 * of a reload that grows with the file (libpython3.11: 5,426 functions).
 */
#define SYMBOLIZER_RELOAD_MIN_COST  (1u << 20)
#define SYMBOLIZER_RELOAD_MAX_FUNCS 65536

/* Text for an OP_FRAME_ERROR frame's reason. */
const char *symbolizer__error(uint64_t reason);

/*
 * Where a sample's user stack came from, for the tests that explain every
 * incomplete stack (issue 17): with collector.mark_origin set (the
 * environment variable COLLECTOR_MARK_ORIGIN_ENV), each CPU trace gets one
 * more frame at its leaf end, an OP_FRAME_ERROR frame whose reason is
 * TRACE_ORIGIN_BASE + one of these, named "[sampled: ...]" by
 * symbolizer__error(). Off by default: it splits traces and adds a frame.
 */
#define TRACE_ORIGIN_BASE 0x4f00u
enum trace_origin {
	TRACE_ORIGIN_WALK,	   /* the BPF walk, handled at once */
	TRACE_ORIGIN_WALK_HELD,	   /* ... held while its process's files were readied */
	TRACE_ORIGIN_WALK_UNREADY, /* ... held, handled with the process never published */
	TRACE_ORIGIN_COPY,	   /* a stack copy unwound in user space at once */
	TRACE_ORIGIN_COPY_HELD,	   /* ... held, unwound once its process was published */
	TRACE_ORIGIN_COPY_EARLY,   /* ... held, unwound before, its own files ready */
	TRACE_ORIGIN_COPY_UNREADY, /* ... held, unwound with the process never published */
	TRACE_ORIGIN__COUNT,
};

#endif
