/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF maps the in-kernel unwinder reads, kept in step from user space:
 *   exe_mappings   (pid, address) -> (table id, bias), an LPM trie
 *   unwind_tables  chunk index -> a large array of delta pages holding the
 *                  tables of many files (each a page tree, see struct
 *                  op_delta_page); a chunk is added when the others are full
 *                  (a map-in-map change costs an RCU grace period, so loading
 *                  a table must not need one)
 *   table_info     table id -> (base address, chunk, the tree's levels)
 *   unwind_rules   rule index -> rule, deduplicated across every file
 * Tables are built once per table id (a hash of the table's inputs,
 * stack_deltas__table_id()), shared by every process that maps a file with
 * that CFI, reference counted and unloaded when the last mapping goes.
 */
#ifndef OMNIPROF_UNWIND_UNWIND_MAPS_H
#define OMNIPROF_UNWIND_UNWIND_MAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/file_worker.h"
#include "unwind/delta_pages.h"
#include "unwind/stack_deltas.h"
#include "omniprof/abi.h"
#include "util/hashmap.h"
#include "util/list.h"

struct elf_file;
struct loaded_table;
struct table_cache;

struct unwind_maps_stats {
	uint64_t tables_loaded;
	uint64_t tables_unloaded;
	uint64_t tables_failed; /* no CFI, malformed, or the maps were full */
	uint64_t deltas_loaded; /* currently loaded */
	uint64_t deltas_peak;
	uint64_t pages_loaded; /* delta pages (struct op_delta_page) currently loaded */
	uint64_t pages_peak;
	uint64_t rules;		  /* distinct rules */
	uint64_t build_ns;	  /* time spent building tables */
	uint64_t cfi_bad_entries; /* malformed CIEs/FDEs skipped while building (stack_deltas) */
	uint64_t map_full;	  /* inserts refused because a map was full */
	uint64_t mapping_entries; /* LPM entries currently in the trie */
	uint64_t deltas_unused;	  /* ... of tables no process uses, kept for reuse */
	uint64_t cache_hits;	  /* tables reused from those instead of rebuilt */
	uint64_t chunk_pages;	  /* capacity of all delta chunks, in pages */
	/* LPM budgets (see unwind_maps__set_capacity) */
	uint64_t refused_pid_budget;   /* ranges refused: their pid held its budget of entries */
	uint64_t refused_map_full;     /* ranges refused: the trie was full */
	uint64_t evicted_processes;    /* processes whose entries were evicted (the greediest) */
	uint64_t evicted_entries;      /* ... and the entries that went with them */
	uint64_t tables_refused_share; /* tables not built: the process held its share of pages */
	uint64_t builds_posted;	       /* builds run on the file worker */
	uint64_t builds_timed_out;     /* ... abandoned past the timeout (frame pointers then) */
	uint64_t builds_reopened;      /* ... whose file could not be opened, posted again */
	uint64_t tables_changed;       /* built from other bytes than its id names: refused */
	uint64_t cache_reads;	       /* build jobs answered from the disk cache */
	uint64_t cache_read_ns;	       /* ... and the time they took (reading, checking) */
};

struct delta_extent {
	uint32_t offset;
	uint32_t len;
};

/* One chunk of the delta arrays, with its free extents (in pages) sorted by offset. */
struct delta_chunk {
	int fd; /* the inner array, kept open to write tables into */
	uint32_t size;
	struct delta_extent *free;
	size_t n_free;
	size_t cap_free;
};

struct unwind_maps {
	int mappings_fd;
	int tables_fd;
	int info_fd;
	int rules_fd;
	uint32_t max_rules;
	struct hashmap rules;  /* struct rule_entry: rule -> index */
	struct hashmap tables; /* struct loaded_table: table id -> refcount */
	/* Loaded tables no process uses, oldest first (of loaded_table.unused_node). */
	struct list_node unused;
	size_t n_unused;
	uint64_t unused_budget; /* deltas of unused tables kept at most (default: no bound
				 * but the chunks' space) */
	struct delta_chunk chunks[OP_MAX_DELTA_CHUNKS];
	uint32_t n_chunks;
	/* The LPM trie is shared by every process: each pid may hold pid_budget entries. */
	uint32_t max_mappings;	    /* the trie's capacity (exe_mappings max_entries) */
	uint32_t pid_budget;	    /* entries one pid may hold */
	struct hashmap pid_entries; /* struct lpm_pid: pid -> entries it holds */
	bool lpm_no_batch;	    /* the kernel refused a batch on the trie: one key a call */
	struct unwind_maps_stats stats;
	/* Built tables kept on disk across runs (unwind/table_cache.h), or NULL. A
	 * reference: build jobs take their own. */
	struct table_cache *cache;
	/* User space's rule cache for stack copies (unwind_maps__rule_cached), or NULL. */
	struct unwind_rule_memo *rule_memo;
	/* Files' search tables and FDEs read for copies before their tables exist
	 * (unwind_maps__fde_rule), or NULL. */
	struct unwind_fde_memo *fde_memo;
	/* The sampler's maps_gen (bpf/sampler.bpf.c), or NULL: bumped after every
	 * change to the trie or table_info (unwind_maps__set_generation). */
	uint64_t *gen;
};

void unwind_maps__init(struct unwind_maps *um, int mappings_fd, int tables_fd, int info_fd,
		       int rules_fd, uint32_t max_rules);
void unwind_maps__clear(struct unwind_maps *um); /* accepts NULL */
/* Build jobs look tables up in cache first and store what they build there
 * (takes a reference; NULL: none). */
void unwind_maps__set_table_cache(struct unwind_maps *um, struct table_cache *cache);
/*
 * gen (the sampler's maps_gen, in its mapped .bss; NULL: none) is bumped
 * after every change to exe_mappings or table_info, before anything that
 * depends on the change (an unloaded table's pages reused): the BPF walks
 * keep the mappings they met across samples only while it is unchanged.
 */
void unwind_maps__set_generation(struct unwind_maps *um, uint64_t *gen);

/*
 * Takes a reference on the table of file table_id, building it from ef and
 * loading it first when it is not loaded. Returns 0 (table usable), -ENOENT
 * (the file has no CFI: its frames fall back to frame pointers), or -errno.
 * A failed table is remembered so it is not rebuilt for every process.
 */
int unwind_maps__acquire(struct unwind_maps *um, uint64_t table_id, const struct elf_file *ef);
void unwind_maps__release(struct unwind_maps *um, uint64_t table_id);

/*
 * Delta pages one process's tables may take (each distinct table it maps,
 * counted whole, shared or not): 32768 pages (8M deltas, 48 MiB of kernel
 * memory; libLLVM takes 8,000). A process at its share gets no table for
 * files whose table is not loaded yet (frame pointers there, counted in
 * tables_refused_share), so its files cannot grow the chunks without end.
 */
#define UNWIND_TABLE_PAGES_PER_PROCESS (1u << 15)

/*
 * The rules stack copies found, by (table id, ELF address), as the sampler's
 * per-CPU rule cache: a table id names the bytes its table was built from, so
 * an entry never goes stale (not even once the table is unloaded). Without it
 * each frame of a copy cost the BPF map reads of its delta search, a syscall
 * per page level and one for the rule: at a warm start most of the sampling
 * thread's time (issue 17). UNWIND_RULE_MEMO_SIZE entries, direct mapped,
 * allocated at the first remember (24 bytes each); freed with um.
 */
#define UNWIND_RULE_MEMO_SIZE 8192
/* True with *rule when (table_id, vaddr) is remembered. */
bool unwind_maps__rule_cached(const struct unwind_maps *um, uint64_t table_id, uint64_t vaddr,
			      struct op_unwind_rule *rule);
void unwind_maps__rule_remember(struct unwind_maps *um, uint64_t table_id, uint64_t vaddr,
				const struct op_unwind_rule *rule);

/*
 * The rule at vaddr of file table_id from the file's own CFI, before its
 * table is built (issue 17): the FDE found through .eh_frame_hdr, run by the
 * build's own per-FDE logic (stack_deltas__fde_rows), so the rule is the
 * table's. Reads ef->fd (pread, bounded). Remembered: each file's search
 * table's place (UNWIND_FDE_FILES, a failure too) and the table itself
 * while all fit in UNWIND_FDE_TABLE_MAX, the last UNWIND_FDE_SLOTS
 * FDEs' rows (at most UNWIND_FDE_MAX_ROWS rows each, 2 MiB at most), and
 * each rule in the rule memo above. A Go file (which the FDE path refuses:
 * .gopclntab wins in its table) is read one function at a time from
 * .gopclntab (go_deltas__func_rows: the function table found by the section
 * headers, read whole within the same 4 MiB, the function's record, name and
 * pcsp table through a 4 KiB window, at most GO_RULE_MAX_READS preads a
 * rule), its rows kept in the same slots. Returns UNWIND_FDE_READ /
 * UNWIND_GO_READ with *rule, UNWIND_FDE_REMEMBERED / UNWIND_GO_REMEMBERED
 * when it was remembered (no read), or -errno: no rule from the file alone
 * (wait for the table; see stack_deltas.h and go_deltas.h).
 */
enum {
	UNWIND_FDE_READ = 0,
	UNWIND_FDE_REMEMBERED = 1,
	UNWIND_GO_READ = 2,
	UNWIND_GO_REMEMBERED = 3,
};
#define UNWIND_FDE_FILES    64
#define UNWIND_FDE_SLOTS    256
#define UNWIND_FDE_MAX_ROWS 512
/* Search tables kept in memory, in all (bytes): a file past it is probed by pread. */
#define UNWIND_FDE_TABLE_MAX (4u << 20)
int unwind_maps__fde_rule(struct unwind_maps *um, uint64_t table_id, const struct elf_file *ef,
			  uint64_t vaddr, struct op_unwind_rule *rule);
/* Is table_id's file read from .gopclntab by unwind_maps__fde_rule (its refusals are Go's)? */
bool unwind_maps__fde_file_is_go(const struct unwind_maps *um, uint64_t table_id);

/* Is table id loaded (built without error)? *pages: its size in delta pages. */
bool unwind_maps__table_loaded(const struct unwind_maps *um, uint64_t table_id, uint32_t *pages);

/*
 * Building off the sampling thread: the build (stack_deltas__build(), the
 * file's CFI parsed) runs on the file worker, the load (BPF map writes) on
 * the sampling thread when the job comes back, so the maps and this struct
 * stay single-threaded.
 */
enum unwind_table_state {
	UNWIND_TABLE_UNKNOWN,  /* never built: unwind_maps__build_job() */
	UNWIND_TABLE_BUILDING, /* a build job is out */
	UNWIND_TABLE_READY,    /* loaded, or failed (remembered): acquire it */
};
enum unwind_table_state unwind_maps__table_state(const struct unwind_maps *um, uint64_t table_id);
/* The job building table_id, NULL when none is out (for file_worker__promote()). */
const struct file_job *unwind_maps__build_job_of(const struct unwind_maps *um, uint64_t table_id);

/*
 * A build is CPU work over a file already open (libLLVM: 0.3-0.8 s on an idle
 * machine, several seconds on a busy one): it gets longer than an open
 * before it is abandoned, but it reads the file, which may hang as well.
 */
#define UNWIND_BUILD_TIMEOUT_MS 30000

/*
 * Where a build job gets its file: the job opens it itself, on the worker
 * (queued jobs hold no descriptor, so thousands of them do not exhaust the
 * agent's). The caller says how to open it, so unwind/ knows no process
 * (proc/file_cache.h: file_cache__table_source() reopens the mapping the
 * file was last seen at, checking it is the same file).
 */
struct table_source {
	char *path; /* owned; reports name it */
	uint64_t size;
	/* An fd of the very file (the job closes it), or -errno. Runs on the
	 * worker: touches nothing shared. */
	int (*open)(void *ctx);
	void (*free)(void *ctx); /* frees ctx; NULL: nothing to free */
	void *ctx;		 /* owned */
};

struct table_build_job {
	struct file_job job;
	uint64_t table_id;
	struct table_source src;
	struct stack_delta_table table; /* the result (built) */
	/* The result read back from the cache (from_cache): in leaf form, 6 bytes a
	 * delta where the table's deltas take 16 (issue 22). */
	struct delta_leaves leaves;
	struct stack_delta_stats leaves_stats;
	uint8_t leaves_id[STACK_DELTAS_ID_LEN];
	struct table_cache *cache; /* a reference, or NULL: no disk cache */
	bool from_cache;	   /* read back from the cache (leaves), not built (table) */
	bool open_failed;	   /* src.open() failed: nothing was read */
};

/*
 * Marks table_id as building and returns its job (post it to the worker), or
 * NULL on ENOMEM (nothing marked). Takes src (owned by the job from then on,
 * freed on failure; *src is left empty).
 */
struct table_build_job *unwind_maps__build_job(struct unwind_maps *um, uint64_t table_id,
					       struct table_source *src);
/*
 * Loads what j built (abandoned or failed: remembered as failed, frame
 * pointers). A job that could not open its file (the process it was to be
 * opened through exited) is not remembered as failed the first
 * UNWIND_BUILD_REOPEN_TRIES times: the table is UNKNOWN again, so that the
 * next process waiting for it posts a build through its own mapping.
 */
#define UNWIND_BUILD_REOPEN_TRIES 3
void unwind_maps__finish_build(struct unwind_maps *um, struct table_build_job *j, bool abandoned);

/*
 * The rule the in-kernel unwinder finds at ELF vaddr of loaded table table_id,
 * by the same search over the deltas read back from the maps (for stacks
 * unwound in user space). 0 with *rule (OP_RULE_INVALID where the table has
 * none), -ENOENT when the table is not loaded, -errno.
 */
int unwind_maps__lookup_rule(const struct unwind_maps *um, uint64_t table_id, uint64_t vaddr,
			     struct op_unwind_rule *rule);

/* Loaded table table_id's table_info value (omniprof/unwind/lookup.h's
 * OP_LOOKUP_TABLE over the maps read back), NULL when it is not loaded. */
const struct op_table_info *unwind_maps__table_info(const struct unwind_maps *um,
						    uint64_t table_id);

/*
 * LPM budgets. A range takes one trie entry per power-of-two block covering
 * it (up to about 2 x 36 for a range starting on an odd page), so a process
 * that maps many oddly placed ranges could fill the trie every process
 * shares. Each pid may hold max_mappings / UNWIND_LPM_PID_SHARE entries
 * (32768 of the default 1M: a typical process needs a few hundred to a few
 * thousand); a range past it is refused whole (-EDQUOT, counted). Many
 * processes can still fill the trie together: past the high-water mark
 * (7/8 full) lpm_ranges.h evicts the pid holding the most entries
 * (unwind_maps__greediest_pid()), which then unwinds with frame pointers.
 */
#define UNWIND_LPM_PID_SHARE 32
#define UNWIND_LPM_PID_MIN   64 /* the smallest budget, whatever the trie's size */

/* The trie holds max_mappings entries: sets the per-pid budget from it. */
void unwind_maps__set_capacity(struct unwind_maps *um, uint32_t max_mappings);
/* True past the high-water mark: the greediest process should be evicted. */
bool unwind_maps__over_high_water(const struct unwind_maps *um);
/* The pid holding the most entries (0 when none holds any), *entries set. */
uint32_t unwind_maps__greediest_pid(const struct unwind_maps *um, uint32_t *entries);
/* Entries pid holds now. */
uint32_t unwind_maps__pid_entries(const struct unwind_maps *um, uint32_t pid);

/*
 * Inserts/removes the LPM entries covering [start, end) of pid. 0 or
 * -errno: -EDQUOT past pid's budget, -ENOSPC/-E2BIG when the trie is full;
 * a refused range leaves none of its new entries behind.
 */
int unwind_maps__add_range(struct unwind_maps *um, uint32_t pid, uint64_t start, uint64_t end,
			   uint64_t table_id, uint64_t bias);
/* The same for a range the caller knows has no entry in the trie yet (no range
 * of pid there overlaps it): its entries are written in one syscall. */
int unwind_maps__add_new_range(struct unwind_maps *um, uint32_t pid, uint64_t start, uint64_t end,
			       uint64_t table_id, uint64_t bias);
void unwind_maps__remove_range(struct unwind_maps *um, uint32_t pid, uint64_t start, uint64_t end);
/* The "known process" marker: a pid-only entry with no table; flags: OP_MARKER_F_*
 * (written again when they change). */
int unwind_maps__add_pid(struct unwind_maps *um, uint32_t pid, uint64_t flags);
void unwind_maps__remove_pid(struct unwind_maps *um, uint32_t pid);

#endif
