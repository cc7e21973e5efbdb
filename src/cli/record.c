// SPDX-License-Identifier: Apache-2.0
/*
 * `omniprof record`: sample for a while, then write pprof, folded stacks and
 * a flame graph to the output folder and print a summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/self_metrics.h"
#include "export/exporters.h"
#include "export/metrics_server.h"
#include "export/output_set.h"
#include "interp/interp.h"
#include "engine/session.h"
#include "cli/signals.h"
#include "engine/collector.h"
#include "profile/profile.h"
#include "profile/profile_builder.h"
#include "sampler/sampler.h"
#include "symbol/symbolizer.h"
#include "unwind/unwind_maps.h"
#include "unwind/table_cache.h"
#include "util/log.h"
#include "util/memory.h"
#include "util/safe_open.h"

#define DEFAULT_OUTPUT_DIR "omniprof-out"

struct record_opts {
	struct cli_common common; /* -F, -p, --no-kernel, symbols, -v */
	double duration_s;	  /* 0: until Ctrl-C / SIGTERM */
	const char *output_dir;
	bool copy_all_stacks;
	uint32_t max_mappings;
	uint32_t copy_budget;
	bool call_graph_noted;	    /* -g / --call-graph: the note is said once */
	char **command;		    /* record -- COMMAND ARGS...: NULL-terminated, or NULL */
	uint64_t offcpu_threshold;  /* --off-cpu: P * 2^32; 0: off */
	const char *metrics_listen; /* --metrics-listen ADDR:PORT, or NULL */
};

enum {
	OPT_COPY_ALL_STACKS = CLI_KEY_OWN,
	OPT_LPM_ENTRIES,
	OPT_COPY_BUDGET,
	OPT_CALL_GRAPH,
	OPT_OFF_CPU,
	OPT_METRICS_LISTEN,
};

static const struct cli_option record_options[] = {
    {.key = 'd',
     .name = "duration",
     .arg = "SECONDS",
     .help = "sample for SECONDS, from the first sample on\n"
	     "(default: until Ctrl-C, SIGTERM or SIGHUP)"},
    {.key = CLI_KEY_FREQUENCY},
    {.key = CLI_KEY_PID},
    {.key = 'o',
     .name = "output",
     .arg = "DIR",
     .help = "output folder (default ./" DEFAULT_OUTPUT_DIR "); created if\n"
	     "missing; refused if a symlink, another user's, or\n"
	     "writable by group or others (so not /tmp itself)"},
    {.key = 'a',
     .name = "all-cpus",
     .help = "the whole system (the default; accepted as perf\ntakes it)"},
    {.key = CLI_KEY_NO_KERNEL},
    CLI_TARGET_OPTIONS,
    {.key = 'g', .help = "accepted and ignored: stacks are always recorded"},
    {.key = OPT_CALL_GRAPH,
     .name = "call-graph",
     .arg = "MODE",
     .help = "accepted and ignored (perf's fp, dwarf, lbr): the\n"
	     "walk uses .eh_frame, frame pointers where none"},
    {.key = OPT_OFF_CPU,
     .name = "off-cpu",
     .arg = "P",
     .optional = true,
     .help = "also record where threads wait: each switch away\n"
	     "from the CPU, with probability P (default 1),\n"
	     "unwound, timed until the thread runs again; writes\n"
	     "offcpu.pb.gz, offcpu.folded and offcpu.html"},
    {.key = CLI_KEY_DEMANGLE},
    {.key = CLI_KEY_DEBUG_DIR},
    {.key = CLI_KEY_NO_DEBUGINFOD},
    {.key = CLI_KEY_SYMBOL_CACHE_MB},
    {.key = OPT_METRICS_LISTEN,
     .name = "metrics-listen",
     .arg = "ADDR:PORT",
     .help = "serve the recording's own metrics (Prometheus text)\n"
	     "at http://ADDR:PORT/metrics while it runs"},
    {.key = CLI_KEY_CONFIG},
    {.key = CLI_KEY_TABLE_CACHE},
    {.key = CLI_KEY_VERBOSE, .help = "print counters at the end (-vv: debug output)"},
    /* Test hook: every sample is unwound in user space from a copy. */
    {.key = OPT_COPY_ALL_STACKS, .name = "copy-all-stacks", .hidden = true},
    /* Test hook: the LPM trie's size, so a test fills it quickly. */
    {.key = OPT_LPM_ENTRIES, .name = "lpm-entries", .arg = "N", .hidden = true},
    /* Test hook: stack copies per second per CPU, so a test exceeds the budget. */
    {.key = OPT_COPY_BUDGET, .name = "copy-budget", .arg = "N", .hidden = true},
};

static int record_option(void *ctx, int key, const char *arg)
{
	struct record_opts *o = ctx;
	char *end;

	switch (key) {
	case 'd':
		o->duration_s = strtod(arg, &end);
		if (*end || !(o->duration_s > 0) || o->duration_s > 1e7) {
			pr_err("-d: '%s' is not a positive number of seconds", arg);
			return -EINVAL;
		}
		return 0;
	case 'o':
		o->output_dir = arg;
		return 0;
	case 'a':
		return 0;
	case 'g':
	case OPT_CALL_GRAPH:
		if (!o->call_graph_noted)
			fprintf(stderr,
				"omniprof: note: %s ignored: kernel and user stacks are "
				"always recorded (user stacks unwound with .eh_frame)\n",
				key == 'g' ? "-g" : "--call-graph");
		o->call_graph_noted = true;
		return 0;
	case OPT_COPY_ALL_STACKS:
		o->copy_all_stacks = true;
		return 0;
	case OPT_OFF_CPU:
		return cli__parse_offcpu(arg, 1.0, &o->offcpu_threshold);
	case OPT_METRICS_LISTEN: {
		const char *why;

		if (metrics_server__check_address(arg, &why)) {
			pr_err("--metrics-listen '%s' is not usable: %s", arg, why);
			return -EINVAL;
		}
		o->metrics_listen = arg;
		return 0;
	}
	case OPT_LPM_ENTRIES: {
		long v = strtol(arg, &end, 10);

		if (*end || v < 1024 || v > (1l << 24)) {
			pr_err("--lpm-entries: '%s' is not between 1024 and 16777216", arg);
			return -EINVAL;
		}
		o->max_mappings = (uint32_t)v;
		return 0;
	}
	case OPT_COPY_BUDGET: {
		long v = strtol(arg, &end, 10);

		if (*end || v < 1 || v > 100000) {
			pr_err("--copy-budget: '%s' is not between 1 and 100000", arg);
			return -EINVAL;
		}
		o->copy_budget = (uint32_t)v;
		return 0;
	}
	}
	return -EINVAL;
}

static const struct cli_command record_command = {
    .name = "record",
    .synopsis = "[-d SECONDS] [-F HZ] [-p PID]... [-o DIR] [-a] [--no-kernel]\n"
		"[--comm REGEX] [--cgroup PATH] [--container ID] [--cpu LIST]\n"
		"[--max-frames N] [--probabilistic-threshold N]\n"
		"[--probabilistic-interval D] [--off-cpu[=P]] [--demangle MODE]\n"
		"[--debug-dir DIR]... [--no-debuginfod] [--symbol-cache-mb MB]\n"
		"[--metrics-listen ADDR:PORT] [--config FILE] [--table-cache DIR|off]\n"
		"[-v] [[--] COMMAND [ARG]...]",
    .options = record_options,
    .n_options = sizeof(record_options) / sizeof(record_options[0]),
    .footer = "With COMMAND: runs it, profiles it and its children until it exits (or -d\n"
	      "runs out: then it gets SIGTERM), and says how it exited.\n"
	      "Writes DIR/profile.pb.gz (pprof), DIR/stacks.folded and DIR/flamegraph.html.",
    .own = record_option,
    .operands_end_options = true,
};

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	int first_arg, err;

	cli_common__init(&o->common, true);
	o->output_dir = DEFAULT_OUTPUT_DIR;
	err = cli__parse(&record_command, argc, argv, &o->common, o, &first_arg);
	if (err)
		return err;
	if (first_arg < argc) {
		if (o->common.n_pids) {
			pr_err("-p and a command to run cannot be combined");
			return -EINVAL;
		}
		o->command = &argv[first_arg];
	}
	return 0;
}

/* SIGCHLD from the command: the recording ends (set by the handler). */
static volatile sig_atomic_t command_exited;

static void on_sigchld(int sig)
{
	(void)sig;
	command_exited = 1;
}

/*
 * Forks the command; it waits on a pipe until *go is written (the sampler is
 * attached and its pid a target), then execs. The child's pid, or -errno
 * after one clear line; *go is the pipe's write end (closing it without
 * writing makes the child exit, status 127, without running anything).
 */
static pid_t command__fork(char **argv, int *go)
{
	struct sigaction sa = {.sa_handler = on_sigchld};
	int fds[2];
	pid_t pid;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGCHLD, &sa, NULL) || pipe2(fds, O_CLOEXEC)) {
		pr_err("cannot start '%s': %s", argv[0], strerror(errno));
		return -errno;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		pr_err("cannot start '%s': %s", argv[0], strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (!pid) {
		char c;

		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		/* Ignored signals stay ignored through exec: give the command the defaults. */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "omniprof: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

/* Waits for the command (SIGTERM first when it still runs) and says how it ended. */
static void command__reap(pid_t pid, const char *name)
{
	int status = 0;
	pid_t r = waitpid(pid, &status, WNOHANG);

	if (r == 0) {
		kill(pid, SIGTERM);
		fprintf(stderr, "omniprof: the recording ended before '%s': sent it SIGTERM\n",
			name);
		/* A command that ignores SIGTERM gets SIGKILL 2 s later: never waited on forever.
		 */
		for (int i = 0; i < 200 && (r = waitpid(pid, &status, WNOHANG)) == 0; i++)
			usleep(10000);
		if (r == 0) {
			kill(pid, SIGKILL);
			r = waitpid(pid, &status, 0);
		}
	}
	if (r != pid)
		return;
	if (WIFEXITED(status))
		fprintf(stderr, "omniprof: '%s' exited with status %d\n", name,
			WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		fprintf(stderr, "omniprof: '%s' was killed by signal %d (%s)\n", name,
			WTERMSIG(status), strsignal(WTERMSIG(status)));
}

/* How often --metrics-listen's page is rendered while recording. */
#define METRICS_PERIOD_NS 1000000000ull

/* --metrics-listen: renders the page from what sampling sees now and publishes it. */
static void publish_metrics(struct metrics_server *m, struct session *ss)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!m)
		return;
	f = open_memstream(&text, &len);
	if (!f)
		return;
	/* No profile is built before the end: the samples received count. */
	self_metrics__write_sampling(f, ss, ss->c.stats.traces, "Samples received so far.");
	if (!fclose(f))
		metrics_server__publish(m, text, len);
	free(text);
}

/*
 * Feeds the session until deadline_ns, *stop, or (with a command) its exit,
 * in slices so that the metrics page is rendered about every second.
 */
static void record__run(struct session *ss, uint64_t deadline_ns, volatile sig_atomic_t *stop,
			bool command, struct metrics_server *m)
{
	uint64_t next_page = session__clock_ns(CLOCK_MONOTONIC) + METRICS_PERIOD_NS;

	publish_metrics(m, ss);
	while (!*stop && !(command && command_exited)) {
		uint64_t now = session__clock_ns(CLOCK_MONOTONIC), until = deadline_ns;

		if (now >= deadline_ns)
			break;
		/* A command's exit is seen within 100 ms (SIGCHLD may land outside poll). */
		if (command && until - now > 100000000ull)
			until = now + 100000000ull;
		if (m && until > next_page)
			until = next_page;
		session__run(ss, until, command ? &command_exited : stop);
		if (m && session__clock_ns(CLOCK_MONOTONIC) >= next_page) {
			publish_metrics(m, ss);
			next_page += METRICS_PERIOD_NS;
		}
	}
}

/* Files of targets refused by util/safe_open.h, by reason. */
static void print_safe_open_stats(void)
{
	struct safe_open_stats st;
	char label[64];

	safe_open__stats(&st);
	fprintf(stderr, "  %-40s %llu\n", "files: opened for targets (checked)",
		(unsigned long long)st.opened);
	for (int r = 0; r < SAFE_OPEN_R__COUNT; r++) {
		snprintf(label, sizeof(label), "files: refused, %s",
			 r == SAFE_OPEN_R_PSEUDO_FS  ? "pseudo filesystem"
			 : r == SAFE_OPEN_R_ESCAPE   ? "magic link in a root"
			 : r == SAFE_OPEN_R_MISMATCH ? "not the mapped inode"
			 : r == SAFE_OPEN_R_TOO_BIG  ? "over the size cap"
						     : safe_open__reason_name(r));
		fprintf(stderr, "  %-40s %llu\n", label, (unsigned long long)st.refused[r]);
	}
}

static void print_counters(const uint64_t bpf[OP_STAT__COUNT],
			   const struct sampler_hotplug_stats *hotplug, const struct collector *c,
			   const struct symbolizer *sym, const struct unwind_maps *um)
{
	static const char *const names[OP_STAT__COUNT] = {
	    [OP_STAT_SAMPLES] = "bpf: program runs",
	    [OP_STAT_IDLE] = "bpf: idle CPU (not recorded)",
	    [OP_STAT_FILTERED] = "bpf: not targets (not recorded)",
	    [OP_STAT_RINGBUF_FULL] = "dropped: ring buffer full",
	    [OP_STAT_KERNEL_STACK_ERR] = "truncated: kernel stack unavailable",
	    [OP_STAT_USER_REGS_ERR] = "truncated: user registers unavailable",
	    [OP_STAT_USER_READ_ERR] = "truncated: user stack unreadable",
	    [OP_STAT_USER_MAX_DEPTH] = "truncated: user stack too deep",
	    [OP_STAT_USER_BAD_FP] = "truncated: bad frame pointer",
	    [OP_STAT_PROC_EVENT_LOST] = "lost: exec/exit events",
	    [OP_STAT_FP_UNKNOWN_PID] = "fallback to frame pointers: unknown pid",
	    [OP_STAT_FP_NO_MAPPING] = "fallback to frame pointers: no mapping",
	    [OP_STAT_FP_NO_TABLE] = "fallback to frame pointers: no table",
	    [OP_STAT_USER_NO_RULE] = "truncated: no unwind rule",
	    [OP_STAT_USER_BAD_CFA] = "truncated: impossible CFA",
	    [OP_STAT_FRAMES_CFI] = "frames: unwound with stack deltas",
	    [OP_STAT_FRAMES_FP] = "frames: unwound with frame pointers",
	    [OP_STAT_UNKNOWN_LOST] = "lost: unknown-pid reports",
	    [OP_STAT_FRAMES_ANON] = "frames: in anonymous (JIT) code",
	    [OP_STAT_USER_ANON_STOP] = "truncated: JIT code without frame pointer",
	    [OP_STAT_STACK_COPIES] = "bpf: stack copies (unknown process/address)",
	    [OP_STAT_STACK_COPY_LOST] = "dropped: stack copies, ring buffer full",
	    [OP_STAT_STACK_COPY_SKIPPED] = "not copied (over budget): frame pointers",
	    [OP_STAT_PID_FILTER_FULL] = "lost: children not followed (map full)",
	    [OP_STAT_OFFCPU_SWITCHES] = "off-cpu: switch-outs of user threads",
	    [OP_STAT_OFFCPU_SAMPLED] = "off-cpu: ... recorded",
	    [OP_STAT_OFFCPU_PENDING_FULL] = "off-cpu: not recorded (pending map full)",
	    [OP_STAT_OFFCPU_LOST] = "off-cpu: dropped, ring buffer full",
	    [OP_STAT_OFFCPU_EXITED] = "off-cpu: exited while pending",
	    [OP_STAT_OFFCPU_NOT_READY] = "off-cpu: recorded before tables loaded",
	    [OP_STAT_OFFCPU_TRUNCATED] = "off-cpu: recorded, user stack truncated",
	    [OP_STAT_STACK_COPY_RING_HALF] = "not copied: ring half full (asks)",
	};

	fprintf(stderr, "counters:\n");
	for (int i = 0; i < OP_STAT__COUNT; i++)
		fprintf(stderr, "  %-40s %llu\n", names[i] ? names[i] : "bpf: (unnamed counter)",
			(unsigned long long)bpf[i]);
	fprintf(stderr, "  %-40s %llu closed, %llu reopened, %llu open errors\n",
		"cpus: hotplug events", (unsigned long long)hotplug->closed,
		(unsigned long long)hotplug->reopened, (unsigned long long)hotplug->open_errors);
	fprintf(stderr, "  %-40s %llu of %llu bytes; window moved %llu times\n",
		"ring: most held when read", (unsigned long long)hotplug->ring_high_water,
		(unsigned long long)hotplug->ring_bytes,
		(unsigned long long)hotplug->ring_window_moves);
	fprintf(stderr,
		"  %-40s %llu bytes at most, %llu lost, %llu waits (full), %llu hand-overs cut\n",
		"ring: reader's queue", (unsigned long long)hotplug->queue_high_water,
		(unsigned long long)hotplug->queue_dropped,
		(unsigned long long)hotplug->queue_full_waits,
		(unsigned long long)hotplug->queue_handovers_cut);
	fprintf(stderr,
		"  %-40s %llu on the host, %llu over known ranges, %llu lost, %llu wake-ups (%llu "
		"put off)\n",
		"mmap: code mappings seen", (unsigned long long)hotplug->mmap_records,
		(unsigned long long)hotplug->mmap_queued, (unsigned long long)hotplug->mmap_lost,
		(unsigned long long)hotplug->mmap_wakeups,
		(unsigned long long)hotplug->mmap_throttled);
	fprintf(stderr, "  %-40s %llu (%llu maps read again, %llu put off, %llu same file)\n",
		"user: code mapped over known ranges", (unsigned long long)c->stats.mmaps,
		(unsigned long long)c->stats.remaps, (unsigned long long)c->stats.remaps_limited,
		(unsigned long long)c->stats.remaps_same);
	fprintf(stderr, "  %-40s %llu\n", "user: trace records",
		(unsigned long long)c->stats.traces);
	fprintf(stderr, "  %-40s %llu\n", "dropped: malformed records",
		(unsigned long long)c->stats.bad_records);
	fprintf(stderr, "  %-40s %llu\n", "dropped: out of memory",
		(unsigned long long)c->stats.enomem);
	fprintf(stderr, "  %-40s %llu\n", "user: exec events", (unsigned long long)c->stats.execs);
	fprintf(stderr, "  %-40s %llu\n", "user: exit events", (unsigned long long)c->stats.exits);
	fprintf(stderr, "  %-40s %llu\n", "user: processes tracked",
		(unsigned long long)c->procs.stats.processes);
	fprintf(stderr, "  %-40s %llu\n", "user: maps reads",
		(unsigned long long)c->procs.stats.maps_reads);
	fprintf(stderr, "  %-40s %llu\n", "user: maps read errors (process gone)",
		(unsigned long long)c->procs.stats.maps_errors);
	fprintf(stderr, "  %-40s %llu\n", "unnamed: frames outside known mappings",
		(unsigned long long)c->stats.unresolved);
	fprintf(stderr, "  %-40s %llu\n", "user: files opened",
		(unsigned long long)c->files.stats.opened);
	fprintf(stderr, "  %-40s %llu (%llu opened again through another process)\n",
		"user: files that could not be opened",
		(unsigned long long)c->files.stats.open_errors,
		(unsigned long long)c->files.stats.open_retries);
	fprintf(stderr, "  %-40s %llu\n", "user: files not ELF or malformed",
		(unsigned long long)c->files.stats.not_elf);
	fprintf(stderr, "  %-40s %llu posted, %llu timed out\n",
		"user: file opens on the file worker", (unsigned long long)c->files.stats.jobs,
		(unsigned long long)c->files.stats.timed_out);
	if (c->files.worker) {
		struct file_worker_stats ws;

		file_worker__stats(c->files.worker, &ws);
		fprintf(stderr,
			"  %-40s %llu queued, %llu done, %llu abandoned, %llu refused, %llu late, "
			"%llu threads\n",
			"file worker: jobs", (unsigned long long)ws.queued,
			(unsigned long long)ws.done, (unsigned long long)ws.abandoned,
			(unsigned long long)ws.refused, (unsigned long long)ws.late,
			(unsigned long long)ws.threads);
		fprintf(stderr,
			"  %-40s %llu put back (no room), %.1f MiB reserved at most, %llu urged "
			"jobs beside (%llu urged once put back)\n",
			"file worker: build memory", (unsigned long long)ws.deferred,
			(double)ws.reserved_max / (1 << 20), (unsigned long long)ws.urgent_beside,
			(unsigned long long)ws.urged_deferred);
	}
	fprintf(stderr, "  %-40s %llu closed past %u, %llu reopened, %llu not reopened\n",
		"user: file descriptors", (unsigned long long)c->files.stats.fds_closed,
		(unsigned)(c->files.max_fds ? c->files.max_fds : FILE_CACHE_MAX_FDS),
		(unsigned long long)c->files.stats.fds_reopened,
		(unsigned long long)c->files.stats.reopen_failed);
	fprintf(stderr, "  %-40s %llu (%llu released ready, %llu unready, %llu over budget)\n",
		"held: records waiting for files", (unsigned long long)c->held.held,
		(unsigned long long)c->held.released, (unsigned long long)c->held.unready,
		(unsigned long long)c->held.overflow);
	fprintf(stderr, "  %-40s %llu (walks kept held: %llu a file not ready, %llu unmapped pc)\n",
		"held: copies released before publish", (unsigned long long)c->held.early,
		(unsigned long long)c->held.blocked, (unsigned long long)c->held.blocked_unmapped);
	fprintf(stderr, "  %-40s %llu bytes peak, %llu releases cut at %u ms (%llu walk passes)\n",
		"held: memory", (unsigned long long)c->held.peak_bytes,
		(unsigned long long)c->held.slices_cut, (unsigned)COLLECTOR_RELEASE_BUDGET_MS,
		(unsigned long long)c->held.loaded_cut);
	fprintf(stderr, "  %-40s %llu (%llu to the head: a copy's walk stopped there)\n",
		"held: file jobs moved ahead (sampled)", (unsigned long long)c->held.promoted,
		(unsigned long long)c->held.urged);
	fprintf(stderr, "  %-40s %llu\n", "user: waiting processes offered again",
		(unsigned long long)c->procs.stats.reoffered);
	fprintf(stderr, "  %-40s %llu (%llu maps reads waited)\n",
		"user: mappings past the cap (untracked)",
		(unsigned long long)c->procs.stats.maps_truncated,
		(unsigned long long)c->procs.stats.waited);
	fprintf(stderr, "  %-40s %llu\n", "user: [vdso] images unreadable",
		(unsigned long long)c->files.stats.vdso_errors);
	fprintf(stderr, "  %-40s %llu\n", "unnamed: native frames",
		(unsigned long long)sym->stats.native_unnamed);
	fprintf(stderr, "  %-40s %llu\n", "unnamed: kernel frames",
		(unsigned long long)sym->stats.kernel_unnamed);
	fprintf(stderr, "  %-40s %llu (%llu complete, %llu truncated, %llu past the copy)\n",
		"copies: unwound in user space", (unsigned long long)c->copies.received,
		(unsigned long long)c->copies.complete, (unsigned long long)c->copies.truncated,
		(unsigned long long)c->copies.beyond_copy);
	fprintf(stderr, "  %-40s %llu KiB\n", "copies: stack bytes received",
		(unsigned long long)c->copies.stack_bytes / 1024);
	fprintf(stderr, "  %-40s %llu\n", "copies: live reads past a Go switch",
		(unsigned long long)c->copies.switch_reads);
	fprintf(stderr, "  %-40s %llu\n", "copies: Go switches taken from the copy",
		(unsigned long long)c->copies.go_captured);
	fprintf(stderr, "  %-40s %llu\n", "copies: process maps never read",
		(unsigned long long)c->copies.no_maps);
	fprintf(stderr, "  %-40s %llu\n", "copies: a caller newly mapped (maps read)",
		(unsigned long long)c->copies.reread);
	fprintf(stderr, "  %-40s %llu\n", "copies: malformed",
		(unsigned long long)c->copies.bad_records);
	fprintf(stderr, "  %-40s %llu cfi, %llu frame pointers\n", "copies: frames",
		(unsigned long long)c->copies.frames_cfi, (unsigned long long)c->copies.frames_fp);
	fprintf(stderr, "  %-40s %llu (%llu of them truncated)\n",
		"copies: a frame in a file without table",
		(unsigned long long)c->copies.without_table,
		(unsigned long long)c->copies.truncated_without_table);
	fprintf(stderr, "  %-40s %llu\n", "copies: tables of unpublished mappings",
		(unsigned long long)c->copies.unpublished_tables);
	fprintf(stderr, "  %-40s %llu read, %llu remembered, %llu refused, %.1f ms\n",
		"copies: frames from the file's CFI", (unsigned long long)c->copies.frames_fde,
		(unsigned long long)c->copies.frames_fde_memo,
		(unsigned long long)c->copies.fde_refused, c->copies.fde_ns / 1e6);
	fprintf(stderr, "  %-40s %llu read, %llu remembered, %llu refused\n",
		"copies: frames from Go's .gopclntab", (unsigned long long)c->copies.frames_go,
		(unsigned long long)c->copies.frames_go_memo,
		(unsigned long long)c->copies.go_refused);
	for (unsigned int i = 0; i < STACK_COPY_REASONS; i++) {
		static const char prefix[] = "[unwind stopped: ";
		const char *why = symbolizer__error(i);
		char label[96];

		if (!c->copies.stopped[i])
			continue;
		/* "[unwind stopped: why]" -> "copies: truncated, why" */
		why =
		    strncmp(why, prefix, sizeof(prefix) - 1) ? "other]" : why + sizeof(prefix) - 1;
		snprintf(label, sizeof(label), "copies: truncated, %.*s", (int)strcspn(why, "]"),
			 why);
		fprintf(stderr, "  %-40s %llu\n", label, (unsigned long long)c->copies.stopped[i]);
	}
	for (unsigned int i = 1; i < OP_INTERP__COUNT; i++) {
		const struct interp_ops *ops = interp__of_id(i);
		const struct interp_walk_stats *ws = &c->copies.interp[i];
		char label[64];

		if (!ops)
			continue;
		snprintf(label, sizeof(label), "copies: %s walks", ops->name);
		fprintf(stderr, "  %-40s %llu (%llu frames, %llu no thread state, %llu errors)\n",
			label, (unsigned long long)ws->walks, (unsigned long long)ws->frames,
			(unsigned long long)ws->no_state, (unsigned long long)ws->errors);
	}
	fprintf(stderr, "  %-40s %llu\n", "symbols: inline frames added",
		(unsigned long long)sym->stats.native_inline);
	fprintf(stderr,
		"  %-40s %llu (%llu without symbols, %llu unloaded after a pass, %llu given back "
		"once named, %llu reloaded)\n",
		"symbols: file loads", (unsigned long long)sym->stats.files_loaded,
		(unsigned long long)sym->stats.files_without_symbols,
		(unsigned long long)sym->stats.pass_unloads,
		(unsigned long long)sym->stats.one_file_releases,
		(unsigned long long)sym->stats.reloads);
	fprintf(stderr, "  %-40s %llu (%llu bytes charged)\n", "symbols: file pages given back",
		(unsigned long long)sym->stats.file_page_drops,
		(unsigned long long)sym->stats.file_bytes_dropped);
	fprintf(stderr, "  %-40s %llu hits, %llu misses, %llu evictions, %zu bytes peak\n",
		"symbols: cache", (unsigned long long)sym->cache.stats.hits,
		(unsigned long long)sym->cache.stats.misses,
		(unsigned long long)sym->cache.stats.evictions, sym->cache.stats.peak_cost);
	fprintf(stderr,
		"  %-40s %llu by build id, %llu by debuglink, %llu by debuginfod, %llu not "
		"found, %llu refused\n",
		"symbols: debug files", (unsigned long long)sym->debuginfo.stats.by_build_id,
		(unsigned long long)sym->debuginfo.stats.by_debuglink,
		(unsigned long long)sym->debuginfo.stats.by_debuginfod,
		(unsigned long long)sym->debuginfo.stats.not_found,
		(unsigned long long)sym->debuginfo.stats.mismatched);
	fprintf(stderr,
		"  %-40s %llu unsafe, %llu bad debuglink names, %llu roots gone, %llu CRC "
		"bytes\n",
		"symbols: debug candidates refused",
		(unsigned long long)sym->debuginfo.stats.refused,
		(unsigned long long)sym->debuginfo.stats.bad_links,
		(unsigned long long)sym->debuginfo.stats.root_gone,
		(unsigned long long)sym->debuginfo.stats.crc_bytes);
	fprintf(stderr,
		"  %-40s %llu timeouts, %llu over the size cap, %llu invalid, %llu skipped\n",
		"symbols: debuginfod failures",
		(unsigned long long)sym->debuginfo.stats.debuginfod_timeouts,
		(unsigned long long)sym->debuginfo.stats.debuginfod_too_big,
		(unsigned long long)sym->debuginfo.stats.debuginfod_invalid,
		(unsigned long long)sym->debuginfo.stats.debuginfod_skipped);
	print_safe_open_stats();
	fprintf(stderr, "  %-40s %llu (%llu new addresses: maps read at once)\n",
		"user: unknown pid/address reports", (unsigned long long)c->stats.unknown_reports,
		(unsigned long long)c->stats.unknown_rereads);
	fprintf(stderr, "  %-40s %llu\n", "user: maps read again for JIT stops",
		(unsigned long long)c->stats.jit_rereads);
	fprintf(stderr, "  %-40s %llu (%llu failed or without CFI, %llu unloaded)\n",
		"tables: loaded", (unsigned long long)um->stats.tables_loaded,
		(unsigned long long)um->stats.tables_failed,
		(unsigned long long)um->stats.tables_unloaded);
	fprintf(stderr, "  %-40s %llu now, %llu peak (%llu bytes peak)\n", "tables: deltas",
		(unsigned long long)um->stats.deltas_loaded,
		(unsigned long long)um->stats.deltas_peak,
		(unsigned long long)um->stats.pages_peak * sizeof(struct op_delta_page));
	fprintf(stderr, "  %-40s %llu\n", "tables: malformed CFI entries skipped",
		(unsigned long long)um->stats.cfi_bad_entries);
	fprintf(stderr, "  %-40s %llu\n", "tables: distinct rules",
		(unsigned long long)um->stats.rules);
	fprintf(stderr, "  %-40s %.1f ms\n", "tables: build time",
		(double)um->stats.build_ns / 1e6);
	if (um->cache) {
		struct table_cache_stats tcs;

		table_cache__stats(um->cache, &tcs);
		fprintf(stderr,
			"  %-40s %llu read back (%.1f ms), %llu built and stored, %llu refused, "
			"%llu errors, %llu evicted\n",
			"tables: disk cache", (unsigned long long)um->stats.cache_reads,
			(double)um->stats.cache_read_ns / 1e6, (unsigned long long)tcs.stores,
			(unsigned long long)tcs.refused, (unsigned long long)tcs.errors,
			(unsigned long long)tcs.evicted);
	} else {
		fprintf(stderr, "  %-40s off\n", "tables: disk cache");
	}
	fprintf(stderr, "  %-40s %llu deltas unused but kept, %llu reuses\n", "tables: cache",
		(unsigned long long)um->stats.deltas_unused,
		(unsigned long long)um->stats.cache_hits);
	fprintf(stderr, "  %-40s %llu\n", "tables: mapping entries (LPM)",
		(unsigned long long)um->stats.mapping_entries);
	fprintf(stderr, "  %-40s %llu\n", "tables: inserts refused (map full)",
		(unsigned long long)um->stats.map_full);
	fprintf(stderr, "  %-40s %llu (budget %u entries per process)\n",
		"tables: ranges refused (pid budget)",
		(unsigned long long)um->stats.refused_pid_budget, um->pid_budget);
	fprintf(stderr, "  %-40s %llu\n", "tables: ranges refused (trie full)",
		(unsigned long long)um->stats.refused_map_full);
	fprintf(stderr, "  %-40s %llu\n", "tables: refused (process's page share)",
		(unsigned long long)um->stats.tables_refused_share);
	fprintf(stderr, "  %-40s %llu (%llu entries)\n", "tables: processes evicted (greediest)",
		(unsigned long long)um->stats.evicted_processes,
		(unsigned long long)um->stats.evicted_entries);
	fprintf(stderr, "  %-40s %llu posted, %llu timed out, %llu reopened (file gone)\n",
		"tables: builds on the file worker", (unsigned long long)um->stats.builds_posted,
		(unsigned long long)um->stats.builds_timed_out,
		(unsigned long long)um->stats.builds_reopened);
	fprintf(stderr, "  %-40s %llu\n", "tables: refused (file changed under us)",
		(unsigned long long)um->stats.tables_changed);
}

static void print_offcpu_counters(const struct offcpu_stats *st)
{
	fprintf(stderr, "  %-40s %llu (%llu ended, %.3f s unscaled)\n",
		"off-cpu: switch-out traces", (unsigned long long)st->started,
		(unsigned long long)st->ended, (double)st->ns / 1e9);
	fprintf(stderr, "  %-40s %llu unmatched ends, %llu replaced, %llu not kept\n",
		"off-cpu: lost", (unsigned long long)st->unmatched,
		(unsigned long long)st->replaced, (unsigned long long)st->pending_full);
	fprintf(stderr, "  %-40s %llu (%llu exited)\n", "off-cpu: still off CPU at the end",
		(unsigned long long)st->open_at_end, (unsigned long long)st->exited);
	fprintf(stderr, "  %-40s %llu bytes peak\n", "off-cpu: pending traces",
		(unsigned long long)st->bytes_peak);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts *o = calloc(1, sizeof(*o));
	struct session_opts sopts = {0};
	struct session ss = {0};
	struct profile *p = NULL, *offcpu = NULL;
	struct output_dir dir = {.fd = -1};
	uint64_t deadline_ns;
	size_t dropped;
	pid_t child = 0;
	uint32_t child_pid;
	struct metrics_server *metrics = NULL; /* --metrics-listen, or NULL */
	int ret = 1, err, go = -1;

	if (!o) {
		pr_err("out of memory");
		return 1;
	}
	err = parse_args(argc, argv, o);
	if (err) {
		ret = err > 0 ? 0 : 2;
		goto cleanup;
	}
	if (cli__check_privileges() || cli__prepare_output_dir(o->output_dir, &dir))
		goto cleanup;
	/* From here a stop signal still writes what was sampled (none yet: an empty profile). */
	if (cli__catch_stop_signals(true)) {
		pr_err("cannot install signal handlers: %s", strerror(errno));
		goto cleanup;
	}

	/* Before loading anything: an address in use ends the start at once. */
	if (o->metrics_listen && metrics_server__start(o->metrics_listen, &metrics))
		goto cleanup;

	cli_common__to_session(&o->common, &sopts);
	sopts.copy_all_stacks = o->copy_all_stacks;
	sopts.max_mappings = o->max_mappings;
	sopts.copy_budget_count = o->copy_budget;
	if (o->command) {
		child = command__fork(o->command, &go);
		if (child < 0)
			goto cleanup;
		child_pid = (uint32_t)child;
		sopts.pids = &child_pid;
		sopts.n_pids = 1;
		sopts.follow_children = true;
	}
	sopts.offcpu_threshold = o->offcpu_threshold;
	if (session__start(&ss, &sopts))
		goto cleanup;
	/* Loading, BTF, kallsyms and the first scan are done: their code pages go
	 * (memory.h); what sampling and the profile's writing run comes back. */
	dropped = memory__drop_code_pages();
	pr_debug("code pages given back after start-up: %zu KiB", dropped >> 10);

	/* -d counts from the first sample on: the start-up (loading, reading what runs)
	 * is not part of the recording. */
	deadline_ns =
	    o->duration_s > 0 ? ss.interval_start_ns + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
	if (o->duration_s > 0)
		session__stop_at(&ss, deadline_ns);
	if (o->command)
		fprintf(stderr, "omniprof: sampling '%s' and its children on %d CPUs at %u Hz\n",
			o->command[0], sampler__n_cpus(ss.s), o->common.frequency_hz);
	else
		fprintf(stderr, "omniprof: sampling %s on %d CPUs at %u Hz%s\n",
			o->common.n_pids || o->common.comm || o->common.cgroup ||
				o->common.container
			    ? "the given processes"
			    : "the whole system",
			sampler__n_cpus(ss.s), o->common.frequency_hz,
			o->duration_s > 0 ? "" : " until Ctrl-C");
	if (o->command) {
		/* Sampling is on and the command's pid a target: let it exec. */
		if (write(go, "g", 1) != 1) {
			pr_err("cannot start '%s': %s", o->command[0], strerror(errno));
			goto cleanup;
		}
		close(go);
		go = -1;
	}
	/* With a command, until it exits (SIGCHLD), -d runs out, or a stop signal. */
	record__run(&ss, deadline_ns, &cli__stop_requests, o->command != NULL, metrics);
	session__stop_sampling(&ss);
	if (child > 0) {
		command__reap(child, o->command[0]);
		child = 0;
	}

	/* One last pass names it all, file by file: each file's symbols go once named. */
	symbolizer__one_file_at_a_time(&ss.sym);
	if (session__take_profile(&ss, &p)) {
		pr_err("out of memory while building the profile");
		goto cleanup;
	}
	offcpu = session__take_offcpu_profile(&ss);
	if (record_set__write_all(p, offcpu, &dir))
		goto cleanup;
	summary__print(p, stdout, 10);
	if (offcpu)
		summary__print_offcpu(offcpu, stdout, 10);
	if (log_verbosity > 0) {
		print_counters(ss.bpf_stats, &ss.hotplug, &ss.c, &ss.sym, &ss.um);
		session__print_controls(&ss, stderr);
		if (ss.c.offcpu)
			print_offcpu_counters(&ss.c.offcpu->stats);
		interp__print_counters(ss.interp, stderr);
	}
	if (!p->stats.samples)
		pr_warn("no samples were recorded: the %s did not run on a CPU while sampling",
			o->command ? "command"
			: o->common.n_pids || o->common.comm || o->common.cgroup ||
				o->common.container
			    ? "processes"
			    : "system");
	printf("\nwrote %s/profile.pb.gz, %s/stacks.folded and %s/flamegraph.html\n", o->output_dir,
	       o->output_dir, o->output_dir);
	if (offcpu)
		printf("wrote %s/offcpu.pb.gz, %s/offcpu.folded and %s/offcpu.html\n",
		       o->output_dir, o->output_dir, o->output_dir);
	ret = 0;

cleanup:
	if (go >= 0)
		close(go); /* the command exits without running */
	if (child > 0)
		waitpid(child, NULL, 0);
	profile__free(offcpu);
	profile__free(p);
	metrics_server__free(metrics);
	session__clear(&ss);
	output_dir__close(&dir);
	free(o);
	return ret;
}
