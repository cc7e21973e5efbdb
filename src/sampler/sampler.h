/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel side, seen from user space: loads the BPF sampler, opens one
 * cpu-clock perf event per online CPU and attaches the program to each, and
 * delivers every ring-buffer record to a callback. CPUs that go offline and
 * come back (hotplug) are followed from the poll loop, once a second: the
 * kernel ends a CPU's event when the CPU goes offline and never restarts it,
 * so the event is closed and a new one opened when the CPU is back.
 */
#ifndef OMNIPROF_SAMPLER_SAMPLER_H
#define OMNIPROF_SAMPLER_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/abi.h"

struct sampler_opts {
	uint32_t frequency_hz;
	bool kernel_stacks;
	const uint32_t *pids; /* only these processes; all when n_pids is 0 */
	size_t n_pids;
	bool copy_all_stacks;  /* test hook: every sample goes to user space as a stack copy */
	uint32_t max_mappings; /* test hook: exe_mappings' size (LPM entries); 0: 1M */
	/* Stack copies' budget per CPU (bpf/stack_copy.h), per second; 0: the default. */
	uint32_t copy_budget_count;
	uint64_t copy_budget_bytes;
	/* Targeting (src/engine/targets.h): pid_filter is used (filled by the caller
	 * through sampler__pid_filter_fd when pids is empty), every exec reported,
	 * children of targets made targets, only tasks under the cgroup v2 folder
	 * open as cgroup_fd (with filter_cgroup). */
	bool filter_pids;
	bool report_all_execs;
	bool follow_children;
	bool filter_cgroup;
	int cgroup_fd;
	uint32_t pid_filter_size; /* 0: 4096 or n_pids */
	const int *cpus;	  /* only these CPUs (n_cpus of them); all online when 0 */
	size_t n_cpus;
	uint32_t max_frames; /* user frames per walk; 0: OP_MAX_USER_FRAMES */
	/* Off-CPU: the share of switch-outs recorded, as P * 2^32 (1..2^32); 0: off. */
	uint64_t offcpu_threshold;
};

/* Called for each record; a non-zero return is counted, not fatal. */
typedef int (*sampler_event_fn)(void *ctx, const void *data, size_t size);

struct sampler;

/*
 * Loads and attaches everything. Returns 0 and *out (free with
 * sampler__free()), or -errno after logging one line that says what is
 * wrong and what to do.
 */
int sampler__open(const struct sampler_opts *opts, sampler_event_fn fn, void *ctx,
		  struct sampler **out);
void sampler__free(struct sampler *s); /* detaches; accepts NULL */
/* Off-CPU (opts.offcpu_threshold): starts seeing context switches. 0 (also when
 * off) or -errno after one line. */
int sampler__attach_offcpu(struct sampler *s);

/*
 * A thread of the sampler's own reads the ring buffer all along into a
 * bounded queue in memory (issue 17: a ring left unread while the main thread
 * loads tables fills up and refuses stack copies); the callback runs only
 * here, on the caller's thread, in the ring's order.
 *
 * Waits up to timeout_ms for records that should not wait (process and
 * unknown-address events, or a queue past a quarter of the ring), then hands
 * over what is queued, in order, for up to SAMPLER_HANDOVER_BUDGET_MS (what
 * is in the ring is the drainer's, queued within its wait: sampler__set_idle_wait_ms); without
 * waiting while records are left from the last hand-over. Returns the number handed over or -errno
 * (-EINTR when a signal arrived).
 */
int sampler__poll(struct sampler *s, int timeout_ms);
/*
 * The longest the drainer waits between two looks at the ring while records
 * trickle in (clamped to 10..1000 ms; 100 until set): the caller's own
 * sampler__poll() timeout, since records it would take no sooner need not
 * leave the ring sooner. Events that wake the caller, a quarter-full ring and
 * records in bulk still shorten the drainer's wait; for 2 s after such an
 * event it waits 100 ms at most.
 */
void sampler__set_idle_wait_ms(struct sampler *s, int ms);
/*
 * One sampler__poll() hands records over for this long at most (wall time),
 * the rest left queued, so that the caller's other work between two polls
 * (the file worker's results, held copies) comes at least this often.
 */
#define SAMPLER_HANDOVER_BUDGET_MS 50
/* Records are left from the last hand-over (the next poll does not wait). */
bool sampler__backlog(const struct sampler *s);
/* Hands over whatever is queued and in the ring now, without waiting (the
 * end of an interval: every record sampled so far). */
int sampler__drain(struct sampler *s);

/* Sums the per-CPU counters of the BPF side. 0 or -errno. */
int sampler__read_stats(struct sampler *s, uint64_t out[OP_STAT__COUNT]);
/* The maps the in-kernel unwinder reads (see src/unwind/unwind_maps.h). */
struct sampler_unwind_fds {
	int mappings;
	int tables;
	int info;
	int rules;
	uint32_t max_rules;
	uint32_t max_mappings; /* exe_mappings' size */
	uint64_t *gen;	       /* maps_gen in the mapped .bss (unwind_maps__set_generation) */
};
void sampler__unwind_fds(const struct sampler *s, struct sampler_unwind_fds *out);

/* From now on, samples of processes without unwind tables come as stack copies
 * (struct op_stack_copy) rather than frame-pointer walks: once the ring buffer
 * is read (copies fill it fast). */
void sampler__enable_stack_copies(struct sampler *s);
/* The fd of the BPF map called name (e.g. "py_procs"), or -ENOENT. */
int sampler__map_fd(const struct sampler *s, const char *name);
/* Sums the per-CPU values of the array map name into out[0..n). 0 or -errno. */
int sampler__read_percpu(const struct sampler *s, const char *name, uint64_t *out, uint32_t n);

/*
 * Events are opened stopped: sampling starts with sampler__set_enabled(s, true)
 * and stops with false (probabilistic profiling, the end of a recording);
 * CPUs that come back online follow the current state.
 */
void sampler__set_enabled(struct sampler *s, bool on);
/* The time the events have been counting, summed over CPUs (ns): 0 until the first
 * sampler__set_enabled(s, true), however long the events have been attached. */
uint64_t sampler__time_enabled_ns(const struct sampler *s);
/* No sample is taken from deadline_ns on (CLOCK_MONOTONIC), whenever the events stop. */
void sampler__stop_at(struct sampler *s, uint64_t deadline_ns);
/* The pid_filter map (tgid -> 1) for the caller to fill, or -ENOENT. */
int sampler__pid_filter_fd(const struct sampler *s);

/* Whether the stack copies' budget (per CPU and second) carries every sample at
 * this frequency: then a process with no tables yet loses nothing. */
bool sampler__copies_keep_up(const struct sampler *s);
/* Number of CPUs sampled now. */
int sampler__n_cpus(const struct sampler *s);

/* CPU hotplug as seen by the sampler. */
struct sampler_hotplug_stats {
	uint64_t closed;      /* events closed: their CPU went offline (or the event stopped) */
	uint64_t reopened;    /* events opened for a CPU that came (back) online */
	uint64_t open_errors; /* failed attempts to open one (retried at the next check) */
	/* The ring buffer, reported with these: its size and the most it held
	 * when the reader came (at each poll), in bytes; 0 when not measured. */
	uint64_t ring_bytes;
	uint64_t ring_high_water;
	/* The reader's window over the ring moved this many times (util/bpf_ring.h). */
	uint64_t ring_window_moves;
	/* The queue between the ring's reader thread and the main thread: the
	 * most it held (bytes), records lost past its bound (or out of memory),
	 * and the times the reader left the ring unread because the queue could
	 * not take it all (the BPF side's refusals then say what it cost). */
	uint64_t queue_high_water;
	uint64_t queue_dropped;
	uint64_t queue_full_waits;
	/* Hand-overs cut at SAMPLER_HANDOVER_BUDGET_MS, the rest left queued. */
	uint64_t queue_handovers_cut;
	/* Executable file mappings made on the host (sampler/mmap_events.h): read,
	 * queued for the main thread (over a range the trie holds for that
	 * process: a library mapped over another's), lost in a full ring, the
	 * drainer's wake-ups by them, and those put off (at most one per 20 ms). */
	uint64_t mmap_records;
	uint64_t mmap_queued;
	uint64_t mmap_lost;
	uint64_t mmap_throttled;
	uint64_t mmap_wakeups;
};
void sampler__hotplug_stats(struct sampler *s, struct sampler_hotplug_stats *out);
/* Looks at the online CPUs now (sampler__poll() does it once a second). */
void sampler__check_cpus(struct sampler *s);

/* Parses a CPU list such as "0-3,5" (from /sys/devices/system/cpu/online).
 * Returns the count and fills cpus (up to max), or -EINVAL. */
int sampler__parse_cpu_list(const char *text, int *cpus, int max);

#endif
