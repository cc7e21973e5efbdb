// SPDX-License-Identifier: Apache-2.0
/*
 * `omniprof record`: sample for a while, then write pprof, folded stacks and
 * a flame graph to the output folder and print a summary.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "export/exporters.h"
#include "export/output_set.h"
#include "engine/session.h"
#include "cli/signals.h"
#include "engine/collector.h"
#include "profile/profile.h"
#include "profile/profile_builder.h"
#include "sampler/sampler.h"
#include "symbol/symbolizer.h"
#include "unwind/unwind_maps.h"
#include "util/log.h"
#include "util/safe_open.h"

/* Why 20 Hz: it is what the reference agent of this field samples at, so profiles compare
 * one to one; at 20 samples per second per busy CPU a minute gives 1,200 samples, enough
 * to rank hot functions, while the kernel side costs well under 0.1% of a CPU. */
#define DEFAULT_FREQUENCY_HZ 20
#define DEFAULT_OUTPUT_DIR   "omniprof-out"
#define MAX_PIDS	     4096
#define MAX_DEBUG_DIRS	     64

struct record_opts {
	double duration_s; /* 0: until Ctrl-C / SIGTERM */
	uint32_t frequency_hz;
	uint32_t pids[MAX_PIDS];
	size_t n_pids;
	const char *output_dir;
	bool kernel_stacks;
	bool copy_all_stacks;
	uint32_t max_mappings;
	struct symbolizer_opts sym;
	const char *debug_dirs[MAX_DEBUG_DIRS];
};

static void record_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: omniprof record [-d SECONDS] [-F HZ] [-p PID]... [-o DIR] [--no-kernel]\n"
	    "                       [--demangle MODE] [--debug-dir DIR]... [--no-debuginfod]\n"
	    "                       [--symbol-cache-mb MB] [-v]\n"
	    "\n"
	    "  -d, --duration SECONDS  stop after SECONDS (default: until Ctrl-C/SIGTERM/SIGHUP)\n"
	    "  -F, --frequency HZ      samples per second per CPU (default %d, at most %d and\n"
	    "                          kernel.perf_event_max_sample_rate)\n"
	    "  -p, --pid PID           profile only this process and its threads (repeatable,\n"
	    "                          or comma-separated); default: the whole system\n"
	    "  -o, --output DIR        output folder (default ./%s); created if missing;\n"
	    "                          refused if a symlink, another user's, or writable\n"
	    "                          by group or others (so not /tmp itself)\n"
	    "      --no-kernel         do not record kernel frames\n"
	    "      --demangle MODE     C++/Rust names: none, simplified, templates or full\n"
	    "                          (default %s)\n"
	    "      --debug-dir DIR     also look for separate debug files under DIR\n"
	    "                          (repeatable; searched before /usr/lib/debug)\n"
	    "      --no-debuginfod     do not ask debuginfod servers even if DEBUGINFOD_URLS\n"
	    "                          is set\n"
	    "      --symbol-cache-mb MB  memory bound of the symbol cache (default %d)\n"
	    "  -v, --verbose           print counters at the end (-vv: debug output)\n"
	    "\n"
	    "Writes DIR/profile.pb.gz (pprof), DIR/stacks.folded and DIR/flamegraph.html.\n",
	    DEFAULT_FREQUENCY_HZ, CLI_MAX_FREQUENCY_HZ, DEFAULT_OUTPUT_DIR,
	    demangle__mode_name(DEMANGLE_DEFAULT), SYMBOL_CACHE_DEFAULT_MB);
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
	    {"duration", required_argument, NULL, 'd'},
	    {"frequency", required_argument, NULL, 'F'},
	    {"pid", required_argument, NULL, 'p'},
	    {"output", required_argument, NULL, 'o'},
	    {"no-kernel", no_argument, NULL, 'K'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {"demangle", required_argument, NULL, 'M'},
	    {"debug-dir", required_argument, NULL, 'D'},
	    {"no-debuginfod", no_argument, NULL, 'N'},
	    {"symbol-cache-mb", required_argument, NULL, 'C'},
	    /* Test hook (not in the usage): every sample is unwound in user space from a copy. */
	    {"copy-all-stacks", no_argument, NULL, 'A'},
	    /* Test hook (not in the usage): the LPM trie's size, so a test fills it quickly. */
	    {"lpm-entries", required_argument, NULL, 'L'},
	    {NULL, 0, NULL, 0},
	};
	char *end;
	int c;

	o->frequency_hz = DEFAULT_FREQUENCY_HZ;
	o->output_dir = DEFAULT_OUTPUT_DIR;
	o->kernel_stacks = true;
	o->sym.demangle = DEMANGLE_DEFAULT;
	o->sym.debuginfod = true;
	o->sym.debug_dirs = o->debug_dirs;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:F:p:o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->duration_s = strtod(optarg, &end);
			if (*end || !(o->duration_s > 0) || o->duration_s > 1e7) {
				pr_err("-d: '%s' is not a positive number of seconds", optarg);
				return -EINVAL;
			}
			break;
		case 'F':
			if (cli__parse_frequency(optarg, &o->frequency_hz))
				return -EINVAL;
			break;
		case 'p':
			if (cli__add_pids(o->pids, &o->n_pids, MAX_PIDS, optarg))
				return -EINVAL;
			break;
		case 'o':
			o->output_dir = optarg;
			break;
		case 'K':
			o->kernel_stacks = false;
			break;
		case 'A':
			o->copy_all_stacks = true;
			break;
		case 'L': {
			long v = strtol(optarg, &end, 10);

			if (*end || v < 1024 || v > (1l << 24)) {
				pr_err("--lpm-entries: '%s' is not between 1024 and 16777216",
				       optarg);
				return -EINVAL;
			}
			o->max_mappings = (uint32_t)v;
			break;
		}
		case 'M':
			if (demangle__parse_mode(optarg, &o->sym.demangle)) {
				pr_err(
				    "--demangle: '%s' is not none, simplified, templates or full",
				    optarg);
				return -EINVAL;
			}
			break;
		case 'D':
			if (o->sym.n_debug_dirs == MAX_DEBUG_DIRS) {
				pr_err("--debug-dir: at most %d folders", MAX_DEBUG_DIRS);
				return -EINVAL;
			}
			o->debug_dirs[o->sym.n_debug_dirs++] = optarg;
			break;
		case 'N':
			o->sym.debuginfod = false;
			break;
		case 'C':
			if (cli__parse_symbol_cache_mb(optarg, &o->sym.cache_bytes))
				return -EINVAL;
			break;
		case 'v':
			log_verbosity++;
			break;
		case 'h':
			record_usage(stdout);
			return 1;
		default:
			record_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s'", argv[optind]);
		record_usage(stderr);
		return -EINVAL;
	}
	return 0;
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
	    [OP_STAT_FILTERED] = "bpf: other processes (not recorded)",
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
	    [OP_STAT_STACK_COPY_SKIPPED] = "not copied (ring half full): frame pointers",
	};

	fprintf(stderr, "counters:\n");
	for (int i = 0; i < OP_STAT__COUNT; i++)
		fprintf(stderr, "  %-40s %llu\n", names[i] ? names[i] : "bpf: (unnamed counter)",
			(unsigned long long)bpf[i]);
	fprintf(stderr, "  %-40s %llu closed, %llu reopened, %llu open errors\n",
		"cpus: hotplug events", (unsigned long long)hotplug->closed,
		(unsigned long long)hotplug->reopened, (unsigned long long)hotplug->open_errors);
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
	fprintf(stderr, "  %-40s %llu\n", "user: files that could not be opened",
		(unsigned long long)c->files.stats.open_errors);
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
	fprintf(stderr, "  %-40s %llu bytes peak\n", "held: memory",
		(unsigned long long)c->held.peak_bytes);
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
	fprintf(stderr, "  %-40s %llu\n", "copies: process maps never read",
		(unsigned long long)c->copies.no_maps);
	fprintf(stderr, "  %-40s %llu\n", "copies: malformed",
		(unsigned long long)c->copies.bad_records);
	fprintf(stderr, "  %-40s %llu cfi, %llu frame pointers\n", "copies: frames",
		(unsigned long long)c->copies.frames_cfi, (unsigned long long)c->copies.frames_fp);
	fprintf(stderr, "  %-40s %llu (%llu frames, %llu no thread state, %llu errors)\n",
		"copies: Python walks", (unsigned long long)c->copies.python_walks,
		(unsigned long long)c->copies.python_frames,
		(unsigned long long)c->copies.python_no_thread,
		(unsigned long long)c->copies.python_errors);
	fprintf(stderr, "  %-40s %llu\n", "symbols: inline frames added",
		(unsigned long long)sym->stats.native_inline);
	fprintf(stderr, "  %-40s %llu (%llu without symbols)\n", "symbols: file loads",
		(unsigned long long)sym->stats.files_loaded,
		(unsigned long long)sym->stats.files_without_symbols);
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
	fprintf(stderr, "  %-40s %llu posted, %llu timed out\n",
		"tables: builds on the file worker", (unsigned long long)um->stats.builds_posted,
		(unsigned long long)um->stats.builds_timed_out);
	fprintf(stderr, "  %-40s %llu\n", "tables: refused (file changed under us)",
		(unsigned long long)um->stats.tables_changed);
}

static int pprof_cb(int fd, void *ctx)
{
	return pprof__write_fd(ctx, fd);
}

static int folded_stdio(FILE *f, void *ctx)
{
	return folded__write(ctx, f);
}

static int folded_cb(int fd, void *ctx)
{
	return output_fd__stdio(fd, folded_stdio, ctx);
}

static int flamegraph_stdio(FILE *f, void *ctx)
{
	return flamegraph__write(ctx, f, "omniprof CPU profile");
}

static int flamegraph_cb(int fd, void *ctx)
{
	return output_fd__stdio(fd, flamegraph_stdio, ctx);
}

/* The three files as one set: a crash or a full disk leaves the previous set whole. */
static int write_outputs(const struct profile *p, struct output_dir *dir)
{
	const struct output_item items[] = {
	    {"profile.pb.gz", pprof_cb, (void *)p},
	    {"stacks.folded", folded_cb, (void *)p},
	    {"flamegraph.html", flamegraph_cb, (void *)p},
	};

	return output_set__write(dir, items, sizeof(items) / sizeof(items[0]));
}

int cmd_record(int argc, char **argv)
{
	struct record_opts *o = calloc(1, sizeof(*o));
	struct session_opts sopts = {0};
	struct session ss = {0};
	struct profile *p = NULL;
	struct output_dir dir = {.fd = -1};
	uint64_t deadline_ns;
	int ret = 1, err;

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

	sopts.frequency_hz = o->frequency_hz;
	sopts.kernel_stacks = o->kernel_stacks;
	sopts.pids = o->pids;
	sopts.n_pids = o->n_pids;
	sopts.copy_all_stacks = o->copy_all_stacks;
	sopts.max_mappings = o->max_mappings;
	sopts.sym = &o->sym;
	if (session__start(&ss, &sopts))
		goto cleanup;

	deadline_ns =
	    o->duration_s > 0 ? ss.interval_start_ns + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
	fprintf(stderr, "omniprof: sampling %s on %d CPUs at %u Hz%s\n",
		o->n_pids ? "the given processes" : "the whole system", sampler__n_cpus(ss.s),
		o->frequency_hz, o->duration_s > 0 ? "" : " until Ctrl-C");

	session__run(&ss, deadline_ns, &cli__stop_requests);
	session__stop_sampling(&ss);

	if (session__take_profile(&ss, &p)) {
		pr_err("out of memory while building the profile");
		goto cleanup;
	}
	if (write_outputs(p, &dir))
		goto cleanup;
	summary__print(p, stdout, 10);
	if (log_verbosity > 0) {
		print_counters(ss.bpf_stats, &ss.hotplug, &ss.c, &ss.sym, &ss.um);
		interp__print_counters(ss.interp, stderr);
	}
	if (!p->stats.samples)
		pr_warn("no samples were recorded: the %s did not run on a CPU while sampling",
			o->n_pids ? "processes" : "system");
	printf("\nwrote %s/profile.pb.gz, %s/stacks.folded and %s/flamegraph.html\n", o->output_dir,
	       o->output_dir, o->output_dir);
	ret = 0;

cleanup:
	profile__free(p);
	session__clear(&ss);
	output_dir__close(&dir);
	free(o);
	return ret;
}
