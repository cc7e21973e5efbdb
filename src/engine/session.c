// SPDX-License-Identifier: Apache-2.0
#include "engine/session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "profile/profile.h"
#include "profile/profile_builder.h"
#include "util/log.h"
#include "util/clock.h"
#include "util/memory.h"

uint64_t session__clock_ns(int clock)
{
	return clock__ns((clockid_t)clock);
}

static int on_event(void *ctx, const void *data, size_t size)
{
	return collector__handle(ctx, data, size);
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	/* One fd per distinct mapped file is kept open: allow as many as we may. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * Takes in the file worker's results for up to wait_ms while jobs are out
 * (a stuck one is abandoned by the worker's timeout, never waited for past
 * wait_ms). read_ring: read the samples meanwhile (at start-up: those of
 * processes still waiting are stack copies, held until their tables are in).
 */
static void settle_files(struct session *ss, unsigned int wait_ms, bool read_ring)
{
	uint64_t end = session__clock_ns(CLOCK_MONOTONIC) + (uint64_t)wait_ms * 1000000ull;

	collector__poll_files(&ss->c);
	while (file_worker__in_flight(ss->fw) && session__clock_ns(CLOCK_MONOTONIC) < end) {
		if (read_ring)
			sampler__poll(ss->s, 5);
		else
			usleep(5000);
		collector__poll_files(&ss->c);
	}
}

/* The collector stamps samples in wall-clock time: keep the offset current (NTP steps). */
static void set_clock_offset(struct session *ss)
{
	uint64_t mono = session__clock_ns(CLOCK_MONOTONIC);
	uint64_t wall = session__clock_ns(CLOCK_REALTIME);

	ss->c.monotonic_to_wall_ns = (int64_t)(wall - mono);
	ss->interval_start_ns = mono;
	ss->interval_start_wall_ns = wall;
}

static void reset_traces(struct session *ss)
{
	trace_table__init(&ss->c.traces);
	ss->c.traces.keep_events = ss->opts.keep_events;
	ss->c.traces.max_timestamps = ss->opts.max_timestamps;
	if (ss->opts.bounded)
		ss->c.traces.max_bytes =
		    ss->opts.max_trace_bytes ? ss->opts.max_trace_bytes : SESSION_TRACE_BYTES;
}

/* A file is closed and its slot freed: nothing may keep data under the slot. */
static void forget_file(void *ctx, uint32_t slot)
{
	struct session *ss = ctx;

	symbolizer__forget_file(&ss->sym, slot);
	interp__forget_file(ss->interp, slot);
}

static bool pid_exited(void *ctx, uint32_t pid)
{
	const struct process *p = process_table__find(ctx, pid);

	return p && (p->exited || p->gone);
}

/*
 * Between two profiles every sample taken so far is named, so what only
 * exited processes needed can go: their entries, what runtimes read for them,
 * and the files no process maps any more (the most recent kept open).
 */

static void end_interval(struct session *ss)
{
	struct session_tables *t = &ss->tables;

	/* Waits of exited processes never end (their end records were lost). */
	if (ss->c.offcpu)
		offcpu__purge(ss->c.offcpu, pid_exited, &ss->c.procs);

	t->processes_purged += process_table__purge(&ss->c.procs, ss->s != NULL);
	t->runtime_objects = interp__end_interval(ss->interp, &ss->c.procs);
	t->files_evicted += file_cache__evict_unused(
	    &ss->c.files,
	    ss->opts.files_kept_unused ? ss->opts.files_kept_unused : SESSION_FILES_KEPT_UNUSED,
	    forget_file, ss);
	t->processes = ss->c.procs.by_pid.len;
	t->files = ss->c.files.n_open;
	/* Lines held back by the rate limit get their "(N more ...)" line now. */
	log__flush_suppressed();
	/* The interval's traces, profile and what was forgotten were freed: return the pages. */
	memory__release();
}

static int map_fd(void *ctx, const char *name)
{
	return sampler__map_fd(ctx, name);
}

static int read_percpu(void *ctx, const char *name, uint64_t *out, uint32_t n)
{
	return sampler__read_percpu(ctx, name, out, n);
}

int session__start(struct session *ss, const struct session_opts *o)
{
	struct interp_env env = {0};
	struct sampler_opts sopts = {0};
	struct sampler_unwind_fds ufds;
	int err;

	memset(ss, 0, sizeof(*ss));
	ss->opts = *o;
	raise_fd_limit();
	memory__tune();
	err = collector__init(&ss->c);
	if (err) {
		pr_err("out of memory");
		return err;
	}
	ss->collector_ready = true;
	/*
	 * The worker threads hash files (htlhash: OpenSSL's SHA-256) and may
	 * still run, or be stuck, when the process exits: OpenSSL's exit-time
	 * cleanup would free what they use under them (a crash in libcrypto
	 * after the outputs were written). Nothing to clean at exit anyway.
	 */
	OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
	err = file_worker__new(0, 0, &ss->fw);
	if (err) {
		pr_err("cannot start the file worker: %s", strerror(-err));
		return err;
	}
	ss->c.files.worker = ss->fw;
	reset_traces(ss);
	if (o->offcpu_threshold) {
		offcpu__init(&ss->offcpu, o->offcpu_threshold);
		ss->offcpu.traces.max_bytes = ss->c.traces.max_bytes;
		ss->c.offcpu = &ss->offcpu;
	}
	err = symbolizer__init(&ss->sym, &ss->c.files, o->sym);
	if (err) {
		pr_err("out of memory");
		return err;
	}

	sopts.frequency_hz = o->frequency_hz;
	sopts.kernel_stacks = o->kernel_stacks;
	sopts.pids = o->pids;
	sopts.n_pids = o->n_pids;
	sopts.copy_all_stacks = o->copy_all_stacks;
	sopts.max_mappings = o->max_mappings;
	sopts.copy_budget_count = o->copy_budget_count;
	sopts.offcpu_threshold = o->offcpu_threshold;
	/* The first interval starts when sampling can: before the program is attached. */
	set_clock_offset(ss);
	err = sampler__open(&sopts, on_event, &ss->c, &ss->s);
	if (err)
		return err;
	sampler__unwind_fds(ss->s, &ufds);
	unwind_maps__init(&ss->um, ufds.mappings, ufds.tables, ufds.info, ufds.rules,
			  ufds.max_rules);
	unwind_maps__set_capacity(&ss->um, ufds.max_mappings);
	process_table__set_unwind_maps(&ss->c.procs, &ss->um);
	/* Runtimes: found in every maps read, their frames named as they arrive. */
	env.files = &ss->c.files;
	env.map_fd = map_fd;
	env.ctx = ss->s;
	err = interp__new(&env, &ss->c.procs, &ss->interp);
	if (err) {
		pr_err("cannot start the runtimes' support: %s", strerror(-err));
		return err;
	}
	ss->c.interp = ss->interp;
	ss->sym.interp = ss->interp;

	/* Every process is unknown until the scan below reads it: its samples come as
	 * stack copies (the ring is read while the tables are built; the copies'
	 * budget bounds what the scan's own time leaves unread). */
	sampler__enable_stack_copies(ss->s);
	/* Learn the processes that already run (and load their unwind tables); the
	 * ones that start later arrive through exec events and unknown-pid reports,
	 * their files readied first (the scan's in the background). */
	file_worker__set_background(ss->fw, true);
	if (o->n_pids) {
		for (size_t i = 0; i < o->n_pids; i++)
			process_table__get(&ss->c.procs, o->pids[i]);
	} else {
		process_table__scan_all(&ss->c.procs);
	}
	file_worker__set_background(ss->fw, false);
	settle_files(ss, SESSION_STARTUP_WAIT_MS, true);
	memory__release(); /* the tables' build buffers */
	/* Off-CPU from here: the running processes' first waits are then walked
	 * with their tables, not guessed (a switch-out is never copied). */
	if (o->offcpu_threshold) {
		err = sampler__attach_offcpu(ss->s);
		if (err)
			return err;
		ss->switches_from_ns = session__clock_ns(CLOCK_MONOTONIC);
	}
	return 0;
}

int session__run(struct session *ss, uint64_t deadline_ns, volatile sig_atomic_t *stop)
{
	while (!*stop) {
		uint64_t now = session__clock_ns(CLOCK_MONOTONIC);
		int64_t left_ms;
		int err;

		if (now >= deadline_ns)
			break;
		left_ms = (int64_t)((deadline_ns - now) / 1000000);
		err = sampler__poll(ss->s, left_ms < 100 ? (int)left_ms + 1 : 100);
		if (err < 0 && err != -EINTR) {
			pr_err("reading samples failed: %s", strerror(-err));
			return err;
		}
		/* Files opened and tables built meanwhile: publish, unwind held copies. */
		collector__poll_files(&ss->c);
	}
	return 0;
}

void session__stop_sampling(struct session *ss)
{
	if (!ss->s)
		return;
	ss->switches_until_ns = session__clock_ns(CLOCK_MONOTONIC);
	sampler__drain(ss->s);
	/* Held samples are unwound with the tables in the BPF maps: before they go. */
	settle_files(ss, SESSION_FINAL_WAIT_MS, false);
	collector__release_held(&ss->c);
	/* Threads still off CPU now have no end: counted, not guessed. */
	if (ss->c.offcpu)
		offcpu__finish(ss->c.offcpu);
	sampler__read_stats(ss->s, ss->bpf_stats);
	interp__read_bpf_counters(ss->interp, read_percpu, ss->s);
	sampler__hotplug_stats(ss->s, &ss->hotplug);
	/* The tables go with the BPF object: stop keeping them in step first. */
	process_table__set_unwind_maps(&ss->c.procs, NULL);
	interp__unload(ss->interp);
	sampler__free(ss->s);
	ss->s = NULL;
}

/* The off-CPU twin of the interval ending at now: the waits that ended in it. */
static int build_offcpu(struct session *ss, uint64_t now)
{
	struct trace_table done = ss->offcpu.traces;
	uint64_t from, until;
	struct profile *p;
	int err;

	trace_table__init(&ss->offcpu.traces);
	ss->offcpu.traces.max_bytes = ss->c.traces.max_bytes;
	profile__free(ss->offcpu_profile);
	ss->offcpu_profile = NULL;
	p = profile__new(ss->opts.frequency_hz);
	err = p ? profile_builder__build(p, &done, &ss->sym) : -ENOMEM;
	trace_table__clear(&done);
	if (err) {
		profile__free(p);
		return err;
	}
	p->off_cpu = true;
	/* The time switches were seen in: from the attach (the first interval starts
	 * before the program loads) to the stop (record's drain and wait follow it). */
	from = ss->interval_start_ns > ss->switches_from_ns ? ss->interval_start_ns
							    : ss->switches_from_ns;
	until = ss->switches_until_ns && ss->switches_until_ns < now ? ss->switches_until_ns : now;
	p->time_ns = ss->interval_start_wall_ns + (from - ss->interval_start_ns);
	p->duration_ns = until > from ? until - from : 0;
	ss->offcpu_profile = p;
	return 0;
}

struct profile *session__take_offcpu_profile(struct session *ss)
{
	struct profile *p = ss->offcpu_profile;

	ss->offcpu_profile = NULL;
	return p;
}

int session__take_profile(struct session *ss, struct profile **out)
{
	struct trace_table done;
	uint64_t now, dropped, traces_dropped;
	struct profile *p;
	int err;

	/*
	 * Records still in the ring buffer were sampled in this interval: take
	 * them in, then end the interval. What the BPF side writes meanwhile is
	 * stamped after now (but for the few microseconds of a program in flight).
	 */
	if (ss->s) {
		sampler__drain(ss->s);
		collector__poll_files(&ss->c);
		sampler__read_stats(ss->s, ss->bpf_stats);
		interp__read_bpf_counters(ss->interp, read_percpu, ss->s);
		sampler__hotplug_stats(ss->s, &ss->hotplug);
	}
	now = session__clock_ns(CLOCK_MONOTONIC);
	done = ss->c.traces;
	dropped = ss->bpf_stats[OP_STAT_RINGBUF_FULL] + ss->bpf_stats[OP_STAT_STACK_COPY_LOST] +
		  ss->c.stats.bad_records + ss->c.copies.bad_records + ss->c.stats.enomem;
	traces_dropped = done.dropped; /* cleared with the table below */
	ss->tables.traces_dropped += traces_dropped;
	/* New samples go to a fresh table from here on. */
	reset_traces(ss);
	p = profile__new(ss->opts.frequency_hz);
	err = p ? profile_builder__build(p, &done, &ss->sym) : -ENOMEM;
	trace_table__clear(&done);
	/* Before end_interval: the names of exited processes' frames go with it.
	 * Failing, it costs the off-CPU profile only. */
	if (!err && ss->c.offcpu && build_offcpu(ss, now))
		pr_warn("out of memory: this interval's off-CPU profile is lost");
	if (ss->opts.bounded)
		end_interval(ss);
	if (err) {
		profile__free(p);
		return err;
	}
	p->time_ns = ss->interval_start_wall_ns;
	p->duration_ns = now - ss->interval_start_ns;
	p->stats.dropped = dropped - ss->dropped_before + traces_dropped;
	ss->dropped_before = dropped;
	/* Intervals tile time exactly: the next starts where this one ended. */
	ss->interval_start_wall_ns += p->duration_ns;
	ss->interval_start_ns = now;
	ss->c.monotonic_to_wall_ns =
	    (int64_t)(session__clock_ns(CLOCK_REALTIME) - session__clock_ns(CLOCK_MONOTONIC));
	*out = p;
	return 0;
}

void session__clear(struct session *ss)
{
	profile__free(ss->offcpu_profile);
	ss->offcpu_profile = NULL;
	if (ss->c.offcpu) {
		offcpu__clear(ss->c.offcpu);
		ss->c.offcpu = NULL;
	}
	if (ss->collector_ready)
		process_table__set_unwind_maps(&ss->c.procs, NULL);
	interp__unload(ss->interp);
	sampler__free(ss->s);
	ss->s = NULL;
	unwind_maps__clear(&ss->um);
	symbolizer__clear(&ss->sym);
	interp__free(ss->interp);
	ss->interp = NULL;
	if (ss->collector_ready)
		collector__clear(&ss->c);
	ss->collector_ready = false;
	log__flush_suppressed();
	/* Busy (or stuck) jobs finish alone: never waited for. */
	file_worker__free(ss->fw);
	ss->fw = NULL;
}
