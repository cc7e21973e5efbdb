/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A sampling session, shared by `record` (one profile at the end) and
 * `agent` (one profile per interval): the collector, the symbolizer, the BPF
 * sampler and the unwinder's maps, set up and torn down in the right order,
 * and the loop that feeds ring-buffer records to the collector.
 */
#ifndef OMNIPROF_ENGINE_SESSION_H
#define OMNIPROF_ENGINE_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/collector.h"
#include "engine/targets.h"
#include "interp/interp.h"
#include "sampler/sampler.h"
#include "symbol/symbolizer.h"
#include "unwind/unwind_maps.h"

struct profile;

struct session_opts {
	uint32_t frequency_hz;
	bool kernel_stacks;
	const uint32_t *pids; /* only these processes; all when n_pids is 0 */
	size_t n_pids;
	bool copy_all_stacks;		   /* test hook (see sampler.h) */
	uint32_t max_mappings;		   /* test hook (see sampler.h): 0 = default */
	uint32_t copy_budget_count;	   /* test hook (see sampler.h): 0 = default */
	const struct symbolizer_opts *sym; /* NULL: defaults */
	bool keep_events;		   /* per-event times and CPUs (for OTLP) */
	uint64_t max_timestamps;	   /* per interval, with keep_events */
	/*
	 * A continuous run: after each profile, forget exited processes and
	 * what the runtimes read for them (src/interp/), close files no process uses (but the
	 * SESSION_FILES_KEPT_UNUSED most recent) and bound each interval's traces.
	 */
	bool bounded;
	uint64_t max_trace_bytes; /* with bounded: per interval; 0: SESSION_TRACE_BYTES */
	size_t files_kept_unused; /* with bounded; 0: SESSION_FILES_KEPT_UNUSED */
	/* Off-CPU: P * 2^32 (offcpu__threshold()); 0: off. Each profile then has an
	 * off-CPU twin (session__take_offcpu_profile()). */
	uint64_t offcpu_threshold;
	/* What is profiled besides pids (see engine/targets.h): NULL / 0 when not given. */
	const char *comm;
	const char *container;
	const char *cgroup;   /* a cgroup v2 folder (absolute, or under the cgroup2 mount) */
	bool follow_children; /* pids is a command just started: its children too */
	const int *cpus;      /* only these CPUs */
	size_t n_cpus;
	uint32_t max_frames;	 /* user frames per walk; 0: OP_MAX_USER_FRAMES */
	uint32_t prob_threshold; /* 1..100; 0 or 100: always on */
	uint64_t prob_interval_ns;
	/* Built unwind tables kept on disk across runs (unwind/table_cache.h): a
	 * folder, "off", or NULL for TABLE_CACHE_DEFAULT_DIR. */
	const char *table_cache;
	/* Whole system without off-CPU: no start-up scan, each process read (maps,
	 * files, tables) at its first sample, which comes as a stack copy (the
	 * agent: a host's idle processes cost nothing). */
	bool tables_on_first_sample;
};

/* Probabilistic profiling: the draws made and what they decided. */
struct session_prob_stats {
	uint64_t on;
	uint64_t off;
	uint64_t on_ns;	      /* time sampling was on, up to the last change or the stop */
	uint64_t on_since_ns; /* when it was turned on, 0: off */
};

/* Files no process maps kept open for programs that start again (bounded runs). */
#define SESSION_FILES_KEPT_UNUSED 256
/* Memory of one interval's distinct traces (bounded runs): new traces beyond it are
 * dropped and counted. 20 Hz x 64 CPUs x 5 s of 100-frame stacks need 11 MiB. */
#define SESSION_TRACE_BYTES (32u << 20)

/* What the tables hold after the last profile (bounded runs), and what left them. */
struct session_tables {
	size_t processes;
	size_t files;
	size_t runtime_objects; /* what the runtimes hold to name frames (interp__end_interval) */
	uint64_t processes_purged;
	uint64_t files_evicted;
	uint64_t traces_dropped;
};

/* The files of the processes already running at start-up get at least this long
 * from the start of sampling to have their tables built (before sampling with
 * --off-cpu or a high -F; else sampling runs meanwhile and a short recording's
 * end waits for them up to this); the rest follow. */
#define SESSION_STARTUP_WAIT_MS 3000
/* At the end of a recording, jobs still out are given this long to finish. */
#define SESSION_FINAL_WAIT_MS 1000
/* ... and jobs that samples still held wait for, this long more (their
 * tables; below the file worker's 30 s build timeout). */
#define SESSION_HELD_WAIT_MS 15000

struct session {
	struct session_opts opts;
	struct file_worker *fw; /* file work off the sampling thread */
	struct collector c;
	struct symbolizer sym;
	struct sampler *s;
	struct unwind_maps um;
	struct interp *interp; /* language runtimes found in the processes' maps */
	bool collector_ready;
	uint64_t bpf_stats[OP_STAT__COUNT];   /* last read */
	struct sampler_hotplug_stats hotplug; /* last read */
	uint64_t interval_start_ns;	      /* CLOCK_MONOTONIC */
	uint64_t interval_start_wall_ns;
	uint64_t dropped_before; /* drops counted in earlier profiles */
	struct session_tables tables;
	struct targets targets;
	bool targets_ready;
	int cgroup_fd;
	uint64_t next_draw_ns; /* probabilistic profiling: the next draw (CLOCK_MONOTONIC) */
	bool sampling_on;
	struct session_prob_stats prob;
	uint64_t stopped_ns;  /* when session__stop_sampling stopped the events, 0: not yet */
	uint64_t stop_at_ns;  /* session__stop_at's deadline, 0: none */
	struct offcpu offcpu; /* with opts.offcpu_threshold */
	/* Sampling starts before the start-up scan's tables are built (except for
	 * off-CPU): session__run returns their buffers once the worker is idle. */
	bool release_after_startup;
	struct {
		uint64_t sampling_ns; /* CLOCK_MONOTONIC: the events enabled */
		uint64_t tables_ns;   /* the scan's tables in (0: not yet) */
	} startup;
	struct profile *offcpu_profile; /* built with the last profile, until taken */
	/* CLOCK_MONOTONIC: switches are seen from the first (program attached) to the
	 * second (stop_sampling; 0: not stopped); the off-CPU profile's window. */
	uint64_t switches_from_ns, switches_until_ns;
};

/* Loads and attaches everything, learns running processes, then starts sampling (the
 * profile's time starts there) without waiting for their tables (session__run takes
 * them in; with off-CPU it waits for them first). 0 or -errno (logged). */
int session__start(struct session *ss, const struct session_opts *o);
/* Feeds records to the collector until deadline_ns (CLOCK_MONOTONIC) or *stop is set.
 * 0, or -errno when reading samples failed (logged). */
int session__run(struct session *ss, uint64_t deadline_ns, volatile sig_atomic_t *stop);
/* The recording ends at deadline_ns (CLOCK_MONOTONIC) exactly: the kernel takes no
 * sample after it, and the profile's interval ends there at the latest. */
void session__stop_at(struct session *ss, uint64_t deadline_ns);
/* Drains the ring buffer, reads the BPF counters and detaches (record's end). */
void session__stop_sampling(struct session *ss);
/*
 * The profile of everything collected since the session started or the last
 * call, which starts a new interval. 0 and *out (free with profile__free()),
 * or -ENOMEM.
 */
int session__take_profile(struct session *ss, struct profile **out);
/*
 * The off-CPU profile (counts: nanoseconds off CPU, scaled) of the waits that
 * ended in the interval the last session__take_profile() closed: built with
 * it, from the same names. NULL when off-CPU is off. The caller frees it.
 */
struct profile *session__take_offcpu_profile(struct session *ss);
void session__clear(struct session *ss); /* accepts a zeroed session */

uint64_t session__clock_ns(int clock);

/* -v: what the targeting and probabilistic profiling did. */
void session__print_controls(const struct session *ss, FILE *f);

#endif
