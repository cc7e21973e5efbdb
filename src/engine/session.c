// SPDX-License-Identifier: Apache-2.0
#include "engine/session.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "profile/profile.h"
#include "profile/profile_builder.h"
#include "unwind/table_cache.h"
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

/* Samples still held at the end wait for their files' jobs longer than the
 * rest: a cold compiler's libLLVM and libclang-cpp take seconds to build under
 * load, and without them its held samples would be walked by frame pointers
 * (`unready`), which is most of a short recording of a compiler loop (issue
 * 17). Bounded by SESSION_HELD_WAIT_MS, below the builds' own timeout. */
static void settle_held(struct session *ss)
{
	uint64_t start = session__clock_ns(CLOCK_MONOTONIC), now = start;
	uint64_t end = start + SESSION_HELD_WAIT_MS * 1000000ull;

	while (ss->c.held_first && file_worker__in_flight(ss->fw) && now < end) {
		usleep(5000);
		collector__poll_files(&ss->c);
		now = session__clock_ns(CLOCK_MONOTONIC);
	}
	if (now > start)
		pr_info("end: waited %.0f ms more for the held samples' files",
			(double)(now - start) / 1e6);
}

/* The collector stamps samples in wall-clock time: keep the offset current (NTP steps). */
static void set_clock_offset(struct session *ss)
{
	uint64_t mono = session__clock_ns(CLOCK_MONOTONIC);
	uint64_t wall = session__clock_ns(CLOCK_REALTIME);

	ss->c.monotonic_to_wall_ns = (int64_t)(wall - mono);
	ss->c.sampling_from_ns = mono;
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

/* A cgroup v2 folder opened (O_DIRECTORY): path as given when it is one, else under
 * each cgroup2 mount. The fd (the caller closes it), or -errno after one clear line. */
/*
 * The disk cache of built tables (dir: a folder, "off", NULL: the default).
 * Not having one is not an error: tables are built as before (said once, at
 * info level for the default folder, which a user without root cannot make).
 */
static void session__open_table_cache(struct session *ss, const char *dir)
{
	struct table_cache *tc = NULL;
	int err;

	if (dir && !strcmp(dir, "off"))
		return;
	err = table_cache__open(dir ?: TABLE_CACHE_DEFAULT_DIR, 0, &tc);
	if (err) {
		if (dir)
			pr_warn("--table-cache %s: %s (tables are built every run)", dir,
				strerror(-err));
		else
			pr_info("no table cache in %s: %s (tables are built every run)",
				TABLE_CACHE_DEFAULT_DIR, strerror(-err));
		return;
	}
	unwind_maps__set_table_cache(&ss->um, tc);
	table_cache__put(tc);
}

static int open_cgroup(const char *path)
{
	struct statfs st;
	struct mntent *m;
	char buf[4096];
	FILE *f;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && !fstatfs(fd, &st) && st.f_type == CGROUP2_SUPER_MAGIC)
		return fd;
	if (fd >= 0)
		close(fd);
	f = setmntent("/proc/self/mounts", "re");
	while (f && (m = getmntent(f))) {
		if (strcmp(m->mnt_type, "cgroup2"))
			continue;
		snprintf(buf, sizeof(buf), "%s/%s", m->mnt_dir, path[0] == '/' ? path + 1 : path);
		fd = open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0 && !fstatfs(fd, &st) && st.f_type == CGROUP2_SUPER_MAGIC) {
			endmntent(f);
			return fd;
		}
		if (fd >= 0)
			close(fd);
	}
	if (f)
		endmntent(f);
	pr_err("--cgroup: '%s' is not a cgroup v2 folder (absolute, or under a cgroup2 mount)",
	       path);
	return -ENOENT;
}

/* Probabilistic profiling, as the OpenTelemetry eBPF profiler does it: a draw in
 * [0, 100) below the threshold turns sampling on for the next interval, else off. */
static void draw(struct session *ss, uint64_t now)
{
	bool first = !ss->prob.on && !ss->prob.off, on = true;
	uint64_t step;
	uint32_t r = 0;

	if (ss->opts.prob_threshold && ss->opts.prob_threshold < 100) {
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r = (uint32_t)random();
		on = r % 100 < ss->opts.prob_threshold;
		/* -v (the agent's only view of it): each draw, with the running counts. */
		pr_info("probabilistic profiling: sampling %s for the next %.3g s (%llu on, "
			"%llu off so far)",
			on ? "on" : "off", (double)ss->opts.prob_interval_ns / 1e9,
			(unsigned long long)ss->prob.on + on,
			(unsigned long long)ss->prob.off + !on);
	}
	if (on)
		ss->prob.on++;
	else
		ss->prob.off++;
	if (first || on != ss->sampling_on)
		sampler__set_enabled(ss->s, on);
	if (!on && ss->prob.on_since_ns) {
		ss->prob.on_ns += now - ss->prob.on_since_ns;
		ss->prob.on_since_ns = 0;
	} else if (on && !ss->prob.on_since_ns) {
		ss->prob.on_since_ns = now;
	}
	ss->sampling_on = on;
	/* On a fixed grid, as a ticker: a late draw does not push the next ones back. */
	step = ss->opts.prob_interval_ns ? ss->opts.prob_interval_ns : 60ull * 1000000000ull;
	if (first)
		ss->next_draw_ns = now;
	do
		ss->next_draw_ns += step;
	while (ss->next_draw_ns <= now);
}

/* The start-up scan's tables are in (sampling ran meanwhile): their build
 * buffers go back to the kernel now, not at the first interval's end. */
static void startup_done(struct session *ss)
{
	uint64_t now = session__clock_ns(CLOCK_MONOTONIC);

	ss->release_after_startup = false;
	ss->startup.tables_ns = now;
	memory__release();
	pr_info("start-up: the running processes' tables were in %.0f ms after sampling started",
		(double)(now - ss->startup.sampling_ns) / 1e6);
}

/* How long the end waits for jobs still out: the start-up scan's tables keep
 * the SESSION_STARTUP_WAIT_MS they had before sampling began without them (a
 * short recording would otherwise get its held copies unwound without them). */
static unsigned int final_wait_ms(const struct session *ss)
{
	uint64_t since = session__clock_ns(CLOCK_MONOTONIC) - ss->startup.sampling_ns;
	uint64_t left;

	if (!ss->release_after_startup || since >= SESSION_STARTUP_WAIT_MS * 1000000ull)
		return SESSION_FINAL_WAIT_MS;
	left = SESSION_STARTUP_WAIT_MS - since / 1000000ull;
	return left > SESSION_FINAL_WAIT_MS ? (unsigned int)left : SESSION_FINAL_WAIT_MS;
}

int session__start(struct session *ss, const struct session_opts *o)
{
	struct targets_opts topts = {0};
	uint32_t *target_pids = NULL;
	int n_targets;
	struct interp_env env = {0};
	struct sampler_opts sopts = {0};
	struct sampler_unwind_fds ufds;
	uint64_t t_start = session__clock_ns(CLOCK_MONOTONIC), t_bpf, t_scan;
	int err;

	memset(ss, 0, sizeof(*ss));
	ss->opts = *o;
	ss->cgroup_fd = -1;
	topts.pids = o->pids;
	topts.n_pids = o->n_pids;
	topts.comm = o->comm;
	topts.container = o->container;
	topts.follow_children = o->follow_children;
	err = targets__init(&ss->targets, &topts);
	if (err)
		return err;
	ss->targets_ready = true;
	if (o->cgroup) {
		ss->cgroup_fd = open_cgroup(o->cgroup);
		if (ss->cgroup_fd < 0)
			return ss->cgroup_fd;
	}
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
	/* A continuous run names kernel frames in one of its first intervals
	 * anyway: read their symbols now, beside the BPF load below. */
	if (o->bounded && o->kernel_stacks && symbolizer__preload_kernel(&ss->sym))
		pr_debug("kernel symbols: read at the first kernel frame instead");

	sopts.frequency_hz = o->frequency_hz;
	sopts.kernel_stacks = o->kernel_stacks;
	sopts.pids = o->pids;
	sopts.n_pids = o->n_pids;
	sopts.copy_all_stacks = o->copy_all_stacks;
	sopts.max_mappings = o->max_mappings;
	sopts.copy_budget_count = o->copy_budget_count;
	sopts.filter_pids = targets__by_process(&ss->targets);
	sopts.report_all_execs = targets__report_all_execs(&ss->targets);
	sopts.follow_children = targets__follow_children(&ss->targets);
	/* Processes found by name or container, and followed children, are not counted
	 * in advance: room for many. */
	if (sopts.filter_pids && !o->n_pids)
		sopts.pid_filter_size = 65536;
	if (o->follow_children)
		sopts.pid_filter_size = 65536;
	sopts.filter_cgroup = ss->cgroup_fd >= 0;
	sopts.cgroup_fd = ss->cgroup_fd;
	sopts.cpus = o->cpus;
	sopts.n_cpus = o->n_cpus;
	sopts.max_frames = o->max_frames;
	ss->c.max_user_frames = o->max_frames;
	ss->c.mark_origin = getenv(COLLECTOR_MARK_ORIGIN_ENV) != NULL;
	sopts.offcpu_threshold = o->offcpu_threshold;
	/* The events are opened and attached stopped: the interval starts when they
	 * start, below. No sample should come before; any that did would be counted. */
	ss->c.sampling_from_ns = UINT64_MAX;
	err = sampler__open(&sopts, on_event, &ss->c, &ss->s);
	if (err)
		return err;
	t_bpf = session__clock_ns(CLOCK_MONOTONIC);
	sampler__unwind_fds(ss->s, &ufds);
	unwind_maps__init(&ss->um, ufds.mappings, ufds.tables, ufds.info, ufds.rules,
			  ufds.max_rules);
	unwind_maps__set_capacity(&ss->um, ufds.max_mappings);
	unwind_maps__set_generation(&ss->um, ufds.gen);
	session__open_table_cache(ss, o->table_cache);
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
	/* Learn the targets that already run (and load their unwind tables); the
	 * ones that start later arrive through exec events and unknown-pid reports,
	 * their files readied first (the scan's in the background). */
	file_worker__set_background(ss->fw, true);
	if (targets__by_process(&ss->targets)) {
		n_targets = targets__attach(&ss->targets, sampler__pid_filter_fd(ss->s),
					    sampler__map_fd(ss->s, "pid_filter_gen"), &target_pids);
		if (n_targets < 0) {
			pr_err("cannot list the processes to profile: %s", strerror(-n_targets));
			return n_targets;
		}
		for (int i = 0; i < n_targets; i++)
			process_table__get(&ss->c.procs, target_pids[i]);
		free(target_pids);
		ss->c.targets = &ss->targets;
	} else if (!o->tables_on_first_sample || o->offcpu_threshold) {
		/* (A switch-out is never copied: the running processes' first waits are
		 * walked with their tables only if they are read now.) */
		process_table__scan_all(&ss->c.procs);
	}
	/*
	 * With tables_on_first_sample a process is read at its first sample: the pid has no marker,
	 * so the sample comes as a stack copy, whose handling reads the maps and
	 * has the files opened and the tables built (foreground jobs, the copy held
	 * meanwhile). A host's idle processes cost no maps read, no file opened and
	 * no table built (issue 22: 126 tables and 273 ms of builds at the start of
	 * a 20 s record); the copies' budget covers the first samples of many.
	 */
	file_worker__set_background(ss->fw, false);
	t_scan = session__clock_ns(CLOCK_MONOTONIC);
	/* On-CPU samples of a process whose tables are still being built come as
	 * stack copies, unwound when they are in, as complete: sampling starts now,
	 * and the build buffers go back once the worker is idle (session__run).
	 * Not when the copies' budget cannot carry every sample (a high -F), nor
	 * for off-CPU walks (a switch-out is never copied): those wait for the
	 * running processes' tables first. */
	if (o->offcpu_threshold || !sampler__copies_keep_up(ss->s)) {
		settle_files(ss, SESSION_STARTUP_WAIT_MS, true);
		memory__release(); /* the tables' build buffers */
	} else {
		ss->release_after_startup = true;
	}
	/* Sampling starts now that what runs is known: the first interval starts here. */
	set_clock_offset(ss);
	draw(ss, ss->interval_start_ns);
	ss->startup.sampling_ns = ss->interval_start_ns;
	pr_info("start-up: %.0f ms to sampling (BPF load %.0f ms, process scan %.0f ms, "
		"tables waited for %.0f ms)",
		(double)(ss->interval_start_ns - t_start) / 1e6, (double)(t_bpf - t_start) / 1e6,
		(double)(t_scan - t_bpf) / 1e6, (double)(ss->interval_start_ns - t_scan) / 1e6);
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

/*
 * How long one wait for records may last. Samples never wake the loop (see
 * trace_wakeup in sampler.bpf.c: they are read when the ring is a quarter
 * full or at the timeout); what needs an answer soon does (exec, exit, an
 * unknown address, a stack copy). So while files are being opened for the
 * file worker, processes wait for them or records are held, the loop looks
 * every SESSION_BUSY_POLL_MS for the worker's results; otherwise it sleeps up
 * to SESSION_IDLE_POLL_MS: each wake-up is a syscall and two context switches,
 * which at 10 a second were a third of an idle agent's CPU. A runtime whose
 * names hold only for a while after the sample (interp__poll_ms(): a JVM,
 * whose methods a collection may free) sets a shorter limit while it runs.
 */
#define SESSION_BUSY_POLL_MS 100
#define SESSION_IDLE_POLL_MS 1000

static int64_t poll_limit_ms(const struct session *ss)
{
	uint32_t runtime_ms = interp__poll_ms(ss->interp);
	int64_t limit = SESSION_IDLE_POLL_MS;

	if ((ss->fw && file_worker__in_flight(ss->fw)) || ss->c.procs.n_waiting || ss->c.held_first)
		limit = SESSION_BUSY_POLL_MS;
	/* Held records of published processes go in slices, the ring's queue taken between them. */
	if (collector__release_pending(&ss->c))
		return 0;
	return runtime_ms && runtime_ms < limit ? runtime_ms : limit;
}

int session__run(struct session *ss, uint64_t deadline_ns, volatile sig_atomic_t *stop)
{
	while (!*stop) {
		uint64_t now = session__clock_ns(CLOCK_MONOTONIC);
		int64_t left_ms, limit_ms;
		int err;

		if (now >= deadline_ns)
			break;
		if (now >= ss->next_draw_ns && ss->opts.prob_threshold &&
		    ss->opts.prob_threshold < 100)
			draw(ss, now);
		left_ms = (int64_t)((deadline_ns - now) / 1000000);
		if (ss->opts.prob_threshold && ss->opts.prob_threshold < 100 &&
		    ss->next_draw_ns > now &&
		    (int64_t)((ss->next_draw_ns - now) / 1000000) < left_ms)
			left_ms = (int64_t)((ss->next_draw_ns - now) / 1000000);
		limit_ms = poll_limit_ms(ss);
		/* The drainer wakes no more often than this loop takes what it queued. */
		sampler__set_idle_wait_ms(ss->s, (int)limit_ms);
		err = sampler__poll(ss->s, left_ms < limit_ms ? (int)left_ms + 1 : (int)limit_ms);
		if (err < 0 && err != -EINTR) {
			pr_err("reading samples failed: %s", strerror(-err));
			return err;
		}
		/* Files opened and tables built meanwhile: publish, unwind held copies. */
		collector__poll_files(&ss->c);
		if (ss->release_after_startup && !file_worker__in_flight(ss->fw))
			startup_done(ss);
	}
	return 0;
}

void session__stop_at(struct session *ss, uint64_t deadline_ns)
{
	ss->stop_at_ns = deadline_ns;
	if (ss->s)
		sampler__stop_at(ss->s, deadline_ns);
}

void session__stop_sampling(struct session *ss)
{
	if (!ss->s)
		return;
	/* The recording ends here, on time: what follows only takes in what was sampled. */
	sampler__set_enabled(ss->s, false);
	ss->stopped_ns = session__clock_ns(CLOCK_MONOTONIC);
	if (ss->stop_at_ns && ss->stop_at_ns < ss->stopped_ns)
		ss->stopped_ns = ss->stop_at_ns;
	if (ss->prob.on_since_ns && ss->stopped_ns > ss->prob.on_since_ns)
		ss->prob.on_ns += ss->stopped_ns - ss->prob.on_since_ns;
	ss->prob.on_since_ns = 0;
	ss->switches_until_ns = session__clock_ns(CLOCK_MONOTONIC);
	/* A backlog goes in slices, the file worker's results taken between them
	 * (its threads stop while too many finished jobs wait); then the rest. */
	while (sampler__backlog(ss->s) && sampler__poll(ss->s, 0) >= 0)
		collector__poll_files(&ss->c);
	sampler__drain(ss->s);
	/* Held samples are unwound with the tables in the BPF maps: before they go. */
	settle_files(ss, final_wait_ms(ss), false);
	settle_held(ss);
	collector__release_held(&ss->c);
	if (ss->c.stats.before_start)
		pr_info("%llu samples taken before sampling started, left out",
			(unsigned long long)ss->c.stats.before_start);
	/* Threads still off CPU now have no end: counted, not guessed. */
	if (ss->c.offcpu)
		offcpu__finish(ss->c.offcpu);
	sampler__read_stats(ss->s, ss->bpf_stats);
	interp__read_bpf_counters(ss->interp, read_percpu, ss->s);
	sampler__hotplug_stats(ss->s, &ss->hotplug);
	/* The tables go with the BPF object: stop keeping them in step first. */
	process_table__set_unwind_maps(&ss->c.procs, NULL);
	interp__unload(ss->interp);
	/* The generation lives in the object's .bss: nothing may bump it once that is gone. */
	unwind_maps__set_generation(&ss->um, NULL);
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
	uint64_t now, dropped, traces_dropped, first_ns, last_ns;
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
	/* After session__stop_sampling the interval ended when the events stopped. */
	now = ss->stopped_ns ? ss->stopped_ns : session__clock_ns(CLOCK_MONOTONIC);
	done = ss->c.traces;
	dropped = ss->bpf_stats[OP_STAT_RINGBUF_FULL] + ss->bpf_stats[OP_STAT_STACK_COPY_LOST] +
		  ss->c.stats.bad_records + ss->c.copies.bad_records + ss->c.stats.enomem;
	traces_dropped = done.dropped; /* cleared with the table below */
	ss->tables.traces_dropped += traces_dropped;
	/* New samples go to a fresh table from here on. */
	reset_traces(ss);
	first_ns = done.first_time_ns;
	last_ns = done.last_time_ns;
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
	/*
	 * A held stack copy is unwound once its tables exist, often in a later
	 * interval than the one it was sampled in: the window stretches back (or
	 * on) to cover every sample it carries, so no timestamp lies outside it.
	 */
	if (first_ns && first_ns < p->time_ns) {
		p->duration_ns += p->time_ns - first_ns;
		p->time_ns = first_ns;
	}
	if (last_ns > p->time_ns + p->duration_ns)
		p->duration_ns = last_ns - p->time_ns;
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
	/* The generation lives in the object's .bss: nothing may bump it once that is gone. */
	unwind_maps__set_generation(&ss->um, NULL);
	sampler__free(ss->s);
	ss->s = NULL;
	unwind_maps__clear(&ss->um);
	symbolizer__clear(&ss->sym);
	interp__free(ss->interp);
	ss->interp = NULL;
	if (ss->collector_ready)
		collector__clear(&ss->c);
	ss->collector_ready = false;
	if (ss->targets_ready) {
		targets__clear(&ss->targets);
		if (ss->cgroup_fd >= 0)
			close(ss->cgroup_fd);
		ss->cgroup_fd = -1;
	}
	ss->targets_ready = false;
	log__flush_suppressed();
	/* Busy (or stuck) jobs finish alone: never waited for. */
	file_worker__free(ss->fw);
	ss->fw = NULL;
}

void session__print_controls(const struct session *ss, FILE *f)
{
	const struct targets_stats *t = &ss->targets.stats;

	if (ss->opts.prob_threshold && ss->opts.prob_threshold < 100)
		fprintf(f,
			"  %-40s %llu on, %llu off (threshold %u%%, every %.3g s), on for "
			"%.3f s\n",
			"probabilistic: intervals", (unsigned long long)ss->prob.on,
			(unsigned long long)ss->prob.off, ss->opts.prob_threshold,
			(double)ss->opts.prob_interval_ns / 1e9, (double)ss->prob.on_ns / 1e9);
	else
		fprintf(f, "  %-40s off (always sampling)\n", "probabilistic: intervals");
	fprintf(f, "  %-40s %llu matched, %llu not, %llu removed, %llu map full\n",
		"targets: processes", (unsigned long long)t->matched,
		(unsigned long long)t->excluded, (unsigned long long)t->removed,
		(unsigned long long)t->map_full);
}
