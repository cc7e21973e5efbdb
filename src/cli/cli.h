/* SPDX-License-Identifier: Apache-2.0 */
/* The command-line front end: one function per subcommand. */
#ifndef OMNIPROF_CLI_CLI_H
#define OMNIPROF_CLI_CLI_H

#include <stddef.h>
#include <stdint.h>

struct output_dir;

#include "util/version.h"

/* Each returns the process exit code. */
int cmd_record(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_serve(int argc, char **argv);

#include <stdbool.h>

/* Shared checks: print one line and return -errno when the requirement fails. Enough
 * privilege to sample but not to read other processes (CAP_BPF + CAP_PERFMON alone)
 * passes with a warning per missing capability, saying what it costs. */
int cli__check_privileges(void);
/* Whether /proc/kallsyms shows zeros to this process, as the kernel decides it. */
bool cli__kernel_symbols_hidden(bool has_syslog, int kptr_restrict, int perf_paranoid);
/*
 * Opens (creating it if missing) the output folder under the rules of
 * output_set.h and proves a file can be created there. 0, or -errno after one
 * clear line; on success the caller closes *out with output_dir__close().
 */
int cli__prepare_output_dir(const char *dir, struct output_dir *out);

/*
 * -p: appends the process ids in arg ("1,2,3"; a thread id selects its
 * process) to pids[*n_pids .. max). 0, or -errno after one clear line.
 */
int cli__add_pids(uint32_t *pids, size_t *n_pids, size_t max, const char *arg);

/* --symbol-cache-mb: *bytes from a size in MiB (1 to 1048576). 0, or -EINVAL
 * after one clear line. */
int cli__parse_symbol_cache_mb(const char *arg, size_t *bytes);

/*
 * -F: omniprof samples at most this often per CPU. Every sample interrupts
 * the CPU and runs the BPF walk (about 3 us for a 40-frame stack, up to a
 * 128 KiB stack copy for a young process): 1000 Hz keeps that near 0.3% of
 * each CPU in the common case and the ring buffer's traffic bounded, and is
 * 50 times the default; more adds no insight a longer recording cannot give.
 */
#define CLI_MAX_FREQUENCY_HZ 1000

/* -F: *hz from arg, at most the lower of CLI_MAX_FREQUENCY_HZ and
 * kernel.perf_event_max_sample_rate. 0, or -EINVAL / -ERANGE after one clear line. */
int cli__parse_frequency(const char *arg, uint32_t *hz);
/* The same against max_hz (max_why names where the limit comes from, for the message). */
int cli__parse_frequency_max(const char *arg, uint32_t max_hz, const char *max_why, uint32_t *hz);

/*
 * --off-cpu[=P]: *threshold (P * 2^32, src/profile/offcpu.h) from arg, a
 * fraction 0 < P <= 1 (at least 1e-6); NULL arg: deflt. 0, or -EINVAL after
 * one clear line.
 */
int cli__parse_offcpu(const char *arg, double deflt, uint64_t *threshold);

#endif
