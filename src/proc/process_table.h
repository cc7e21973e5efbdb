/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the profiler knows of each process: its executable mappings, each
 * pointing at a file in the file cache, read from /proc/PID/maps while the
 * process lives (at start-up, on exec, on first sight, and again when a
 * sample lands outside every known mapping, e.g. after dlopen). Kept after
 * the process exits so its samples are still named when the profile is
 * built; a long-running agent purges exited processes after each profile.
 */
#ifndef OMNIPROF_PROC_PROCESS_TABLE_H
#define OMNIPROF_PROC_PROCESS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/lpm_ranges.h"
#include "util/hashmap.h"

struct file_cache;
struct unwind_maps;

struct process_mapping {
	/* What the LPM trie holds for it (unwind/lpm_ranges.h: struct lpm_range
	 * says what each field means), also reachable as lpm to publish it. */
	union {
		struct lpm_range lpm;
		struct {
			uint64_t start;
			uint64_t end;
			uint64_t table_id;
			uint64_t range_id;
			uint64_t bias; /* when has_bias */
		};
	};
	uint64_t offset;    /* file offset of start */
	uint32_t file_slot; /* in the file cache; never 0 */
	bool has_bias;	    /* an ELF file whose code segment this mapping holds */
};
#define PROCESS_MAPPING_IS_LPM(f)                                                                  \
	(offsetof(struct process_mapping, f) == offsetof(struct lpm_range, f))
_Static_assert(PROCESS_MAPPING_IS_LPM(start) && PROCESS_MAPPING_IS_LPM(end) &&
		   PROCESS_MAPPING_IS_LPM(table_id) && PROCESS_MAPPING_IS_LPM(range_id) &&
		   PROCESS_MAPPING_IS_LPM(bias) && sizeof(struct lpm_range) == 5 * sizeof(uint64_t),
	       "process_mapping's range fields are its lpm_range");
#undef PROCESS_MAPPING_IS_LPM

struct process {
	uint32_t pid;
	bool exited;
	bool gone;	  /* maps could not be read: the process had already exited */
	bool lpm_evicted; /* its LPM entries were evicted (the greediest when the trie filled):
			   * frame pointers until it exits */
	struct process_mapping *maps; /* executable mappings, sorted by start; owned */
	size_t n_maps;
	/*
	 * Some file of maps is still being opened or its table built on the
	 * file worker: maps is not in the BPF maps yet (published holds what
	 * is, NULL for a new process, which then has no pid marker and sends
	 * stack copies). process_table__publish_ready() publishes it.
	 */
	bool waiting;
	struct process_mapping *published; /* owned; with waiting only */
	size_t n_published;
	/* Files of maps still being opened when the listeners were last told of it
	 * (maps_seen): a runtime cannot inspect those yet, so p is offered again
	 * each time fewer are (process_table__publish_ready), not only once it is
	 * published, after its tables are built. */
	uint32_t offered_pending;
	uint64_t held_bytes;   /* the collector's: records held until it is published */
	bool truncated;	       /* its last maps read had more than PROCESS_MAPS_MAX mappings */
	uint64_t refreshed_ns; /* CLOCK_MONOTONIC of the last maps read */
	/* The collector's: its last read for code mapped over a known range, and
	 * whether one was put off since (rate limit: engine/collector.c). */
	uint64_t remapped_ns;
	bool remap_due;
	uint32_t refreshes;
	/* The absolute path of its last exec's program (the exec event's), or NULL: names
	 * a process gone before /proc/PID/exe was read. Owned. */
	char *exec_path;
};

struct process_table_stats {
	uint64_t processes;	  /* processes tracked */
	uint64_t maps_reads;	  /* /proc/PID/maps reads */
	uint64_t maps_errors;	  /* reads that failed (process gone, permission) */
	uint64_t unknown_address; /* frames outside every mapping after a refresh */
	uint64_t purged;	  /* exited processes forgotten (process_table__purge) */
	uint64_t lost_exits;	  /* processes found gone without an exit event */
	uint64_t maps_truncated;  /* executable mappings past PROCESS_MAPS_MAX, not tracked */
	uint64_t waited;	  /* maps reads that had to wait for the file worker */
	uint64_t reoffered;	  /* waiting processes told again (maps_seen): files opened */
	uint64_t withdrawn;	  /* published mappings gone or replaced, withdrawn while waiting */
};

/* Executable mappings tracked per process at most; more are counted and ignored. */
#define PROCESS_MAPS_MAX 8192

/*
 * Told what happens to processes (interpreter support, src/interp/interp.c,
 * is the one listener today). Any callback may be NULL.
 */
struct process_listener {
	/* p's maps were read (and published: its mappings are in the BPF maps). */
	void (*maps_read)(void *ctx, const struct process *p);
	/*
	 * p's maps were read but wait for the file worker (p->waiting: its files
	 * are being opened or their tables built, p->maps not in the BPF maps
	 * yet). A listener whose state is host-side (a runtime's offsets, read
	 * from the live process) need not wait for the tables: its samples come
	 * as stack copies until p is published, walked in user space with it.
	 */
	void (*maps_seen)(void *ctx, const struct process *p);
	/* p exited (p->exited is set); its entry stays until it is forgotten. */
	void (*exited)(void *ctx, const struct process *p);
	/* p leaves the table (process_table__purge): nothing may refer to it after. */
	void (*forget)(void *ctx, const struct process *p);
	void *ctx;
};

/* Listeners a table holds at most. */
#define PROCESS_LISTENERS_MAX 4

struct process_table {
	struct hashmap by_pid; /* of struct process, owned */
	struct file_cache *files;
	struct unwind_maps *unwind; /* NULL: no in-kernel unwinding tables to keep in step */
	struct process_listener listeners[PROCESS_LISTENERS_MAX];
	size_t n_listeners;
	size_t n_waiting; /* processes with waiting set */
	struct process_table_stats stats;
};

void process_table__init(struct process_table *pt, struct file_cache *files);
void process_table__clear(struct process_table *pt); /* accepts NULL */

/* The entry for pid, created (and its maps read) on first sight; NULL on ENOMEM. */
struct process *process_table__get(struct process_table *pt, uint32_t pid);
/* Re-reads pid's mappings now (exec, start-up scan). 0 or -errno: -ESRCH when the
 * process is past its exit_mm (no mapping at all), its last maps kept. */
int process_table__refresh(struct process_table *pt, struct process *p);
/* Re-reads p's mappings unless it was read very recently or is gone. True if read. */
bool process_table__refresh_if_stale(struct process_table *pt, struct process *p);
/* Learns every process in /proc. Returns how many were read. */
int process_table__scan_all(struct process_table *pt);
/* The entry for pid, or NULL (never created, no maps read). */
struct process *process_table__find(const struct process_table *pt, uint32_t pid);
/*
 * Forgets processes that exited or whose maps could not be read (gone),
 * dropping their file references; check_alive also looks for processes that
 * no longer exist although no exit event came (counted as lost_exits). Call
 * it only when no unnamed sample still refers to them (after a profile was
 * built). Returns how many were forgotten.
 */
size_t process_table__purge(struct process_table *pt, bool check_alive);
/*
 * p exec'ed: its old image's mappings leave the BPF maps and the table now,
 * before its new maps are read (they may wait for the file worker, and the
 * old ranges must not serve the new image's addresses meanwhile).
 */
void process_table__forget_image(struct process_table *pt, struct process *p);
/* The process left: its mappings leave the BPF maps, its names stay for the report. */
void process_table__mark_exited(struct process_table *pt, uint32_t pid);
/* Also keep the in-kernel unwinder's maps in step with every maps read. */
void process_table__set_unwind_maps(struct process_table *pt, struct unwind_maps *um);
/* Adds a listener (copied). 0, or -ENOSPC past PROCESS_LISTENERS_MAX. */
int process_table__add_listener(struct process_table *pt, const struct process_listener *l);
/* Removes the listener whose ctx is ctx: no more calls to it. */
void process_table__remove_listener(struct process_table *pt, void *ctx);

/*
 * After the file worker's jobs came back: publishes each waiting process
 * whose files are all ready (building the tables they still lack first) and
 * calls fn(ctx, p) for it, when the process's tables are acquired (an exited
 * process's only for the call). Returns how many.
 */
typedef void (*process_ready_fn)(void *ctx, struct process *p);
size_t process_table__publish_ready(struct process_table *pt, process_ready_fn fn, void *ctx);
/*
 * Moves the jobs p's files wait for (opens, table builds) ahead of the
 * start-up scan's background jobs (file_worker__promote()): called at p's
 * first held sample. Returns how many moved.
 */
size_t process_table__promote(struct process_table *pt, struct process *p);

/* The executable mapping of p holding addr, or NULL (no re-read). */
const struct process_mapping *process_table__find_mapping(const struct process *p, uint64_t addr);

/*
 * Resolves an absolute user address of pid to (file slot, address in the
 * file's own terms: ELF virtual address for ELF files, offset for pseudo
 * files, the address itself for anonymous memory). Re-reads the maps (rate
 * limited) when the address is outside them. Returns false when still unknown.
 */
bool process_table__resolve(struct process_table *pt, struct process *p, uint64_t addr,
			    uint32_t *file_slot, uint64_t *file_addr);

#endif
