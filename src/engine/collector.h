/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The user-space half of the data path: takes each ring-buffer record from
 * the sampler, keeps the process table in step (exec, exit, first sight),
 * resolves the sample's user frames to (file, address) while the process
 * lives, and aggregates the result in the trace table.
 */
#ifndef OMNIPROF_ENGINE_COLLECTOR_H
#define OMNIPROF_ENGINE_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "proc/file_cache.h"
#include "proc/process_table.h"
#include "profile/offcpu.h"
#include "profile/trace_table.h"
#include "engine/stack_copy.h"

struct interp;

struct collector_stats {
	uint64_t traces;      /* trace records received */
	uint64_t bad_records; /* malformed ring-buffer records */
	uint64_t execs;
	uint64_t exits;
	uint64_t unresolved;	  /* frames left without a mapping */
	uint64_t unknown_reports; /* unknown pid/address reports from the unwinder */
	uint64_t unknown_rereads; /* ... of an address outside the maps: maps read at once */
	uint64_t jit_rereads;	  /* maps read again for samples stopped in anonymous code */
	uint64_t enomem;	  /* samples lost to allocation failure */
	uint64_t before_start;	  /* CPU samples taken before sampling_from_ns: left out */
	/* Code mapped over a range the trie held (OP_EVENT_MMAP, sampler/mmap_events.h). */
	uint64_t mmaps;		 /* such records handled */
	uint64_t remaps;	 /* ... another file there: maps read again at once */
	uint64_t remaps_limited; /* ... past COLLECTOR_REMAP_MIN_NS or _PER_SEC: read later */
	uint64_t remaps_same;	 /* ... the file the maps already hold there: nothing to do */
	bool remap_warned;	 /* the one log line of a process remapping in a loop */
};

/*
 * A process's maps are read again for code mapped over its known ranges at
 * most this often: a process mapping and unmapping code in a loop costs the
 * agent a maps read per interval, no more (the reads put off are done at its
 * next sample after it).
 */
#define COLLECTOR_REMAP_MIN_NS (50ull * 1000 * 1000)
/* ... and at most this many such reads a second over all processes: many
 * processes doing it at once cost the agent no more (the rest put off as above). */
#define COLLECTOR_REMAPS_PER_SEC 20

/*
 * Records of a process whose files are not ready yet (opened and tables built
 * on the file worker) are held, in arrival order, and handled when it is
 * published, so slow I/O costs no sample and no completeness. Bounded: a
 * record past either budget is handled at once with what is known (counted).
 */
#define COLLECTOR_HELD_BYTES	     (64u << 20)
#define COLLECTOR_HELD_PROCESS_BYTES (16u << 20)

struct collector_held_stats {
	uint64_t held;	   /* records held for a process's files */
	uint64_t released; /* ... handled once they were ready */
	uint64_t unready;  /* ... handled before (the end, an exec): frame pointers there */
	uint64_t overflow; /* not held, past a byte budget: handled at once */
	uint64_t promoted; /* file jobs moved ahead of the start-up scan's for a sampled process */
	uint64_t urged;	   /* file jobs moved to the head: a copy's walk stopped at their file */
	uint64_t bytes;	   /* held now */
	uint64_t peak_bytes;
	uint64_t slices_cut; /* releases cut at COLLECTOR_RELEASE_BUDGET_MS, went on later */
	/* Copies of processes still waiting, released as their own stacks' files
	 * were ready (collector__release_loaded), and walks that kept one held. */
	uint64_t early;
	uint64_t blocked;	   /* ... its walk met a file still opened or its table built */
	uint64_t blocked_unmapped; /* ... a pc in no mapping (or malformed): at its publish */
	uint64_t loaded_cut;	   /* ... passes cut at the slice's end, went on later */
};

/*
 * Held records of published processes are handled for this long at most per
 * collector__poll_files(); the rest wait for the next call (their processes'
 * new records are held behind them, in order). Issue 17: at a warm start
 * tens of processes were published at once and the main thread unwound
 * their hundreds of copies in one go, the ring's reader's queue reached its
 * bound meanwhile (29 MiB) and the BPF side refused copies ("ring half full").
 */
#define COLLECTOR_RELEASE_BUDGET_MS 20

struct held_record;

struct targets;

struct collector {
	struct file_cache files;
	struct process_table procs;
	struct trace_table traces;
	struct collector_stats stats;
	struct stack_copy_stats copies;
	struct trace *scratch;	     /* one trace of maximal size, reused per record */
	struct op_trace *copy_trace; /* a stack copy, unwound (OP_TRACE_MAX_SIZE bytes) */
	/* Added to a sample's CLOCK_MONOTONIC time to get the wall clock (keep_events). */
	int64_t monotonic_to_wall_ns;
	/*
	 * CPU samples taken (CLOCK_MONOTONIC) before this are left out: the
	 * session's first interval starts here, and attaching each event's
	 * program enables it for a moment before (at a frequency event's warm-up
	 * rate: a burst of samples that each count as 1/F s). 0: none left out.
	 */
	uint64_t sampling_from_ns;
	struct interp *interp;	  /* names runtimes' frames; NULL: they stay unnamed */
	struct targets *targets;  /* per-process filters kept at exec and exit; NULL: none */
	uint32_t max_user_frames; /* stack copies walk this deep (--max-frames); 0: the most */
	struct offcpu *offcpu;	  /* off-CPU traces joined with their waits; NULL: off */
	struct held_record *held_first, *held_last;
	bool releasing;	      /* handling held records: hold nothing */
	bool release_pending; /* a published process may still have records held */
	bool loaded_pending;  /* a waiting process's held copy may walk with its files now */
	bool loaded_cut;      /* ... and the last pass over them was cut at the slice's end */
	struct collector_held_stats held;
	/* The host-wide remap budget (COLLECTOR_REMAPS_PER_SEC): reads in the second from
	 * remap_window_ns. */
	uint64_t remap_window_ns;
	uint32_t remaps_in_window;
	/* Each CPU trace ends (at its leaf) with a frame naming where its user
	 * stack came from (enum trace_origin): tests only, off by default. */
	bool mark_origin;
	/* The record being handled is a stack copy unwound (by handle_stack_copy
	 * or release_loaded: TRACE_ORIGIN_COPY*), not a BPF walk. */
	bool handling_copy;
	bool handling_early;   /* ... by release_loaded */
	bool handling_unready; /* a held record of a process never published (the end) */
};

/* Set (to anything) in record's or agent's environment: collector.mark_origin. */
#define COLLECTOR_MARK_ORIGIN_ENV "OMNIPROF_TEST_MARK_ORIGIN"

/* 0 or -ENOMEM. Free with collector__clear(). */
int collector__init(struct collector *c);
void collector__clear(struct collector *c); /* accepts NULL */

/* The offset stamping samples in wall-clock time, from the clocks now
 * (collector__init sets it first: no sample is stamped without it). */
void collector__set_clock_offset(struct collector *c);

/* Handles one ring-buffer record (any enum op_event_type). 0 or -errno. */
int collector__handle(struct collector *c, const void *data, size_t size);

/*
 * Takes in what the file worker finished (c->files.worker; none: nothing to
 * do): files opened, tables built and loaded, processes published, their
 * held records handled. Never waits. Returns how many jobs came back.
 */
size_t collector__poll_files(struct collector *c);
/* Whether held records wait for the next collector__poll_files() (a release or
 * a pass of collector__release_loaded cut at the slice's end). */
bool collector__release_pending(const struct collector *c);
/*
 * Handles the held CPU-sample stack copies of processes still waiting for
 * some files whose own walks meet only files that are ready (opened, tables
 * loaded or failed for good); the others stay held. Walks all of them:
 * collector__poll_files() does the same within its COLLECTOR_RELEASE_BUDGET_MS
 * slice (after the published processes' records).
 */
void collector__release_loaded(struct collector *c);
/* Handles every held record now, ready or not (the end of a recording). */
void collector__release_held(struct collector *c);

#endif
