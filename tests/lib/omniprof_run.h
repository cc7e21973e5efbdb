/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Running build/omniprof (and the Node.js receivers) from end-to-end tests:
 * starting it with its output in a log, waiting for it with a time bound,
 * reading its log and its `-v` counters.
 */
#ifndef OMNIPROF_TESTS_OMNIPROF_RUN_H
#define OMNIPROF_TESTS_OMNIPROF_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

/* Most arguments tu_omniprof_start and tu_node_start pass on. */
#define TU_MAX_ARGS 40

/* Path of the omniprof binary in the build folder; a static buffer, not freed. */
char *tu_omniprof_path(void);
/* Milliseconds on CLOCK_MONOTONIC. */
uint64_t tu_now_ms(void);
/* A loopback TCP port nothing listens on right now, or -errno. */
int tu_free_port(void);
/*
 * Forks and execs argv (argv[0] is a path) with stdout and stderr in log_path,
 * created or truncated with mode. When the log cannot be opened the child
 * exits with status 126 unless run_without_log, then it runs with the test's
 * own stdout/stderr. Returns the pid (caller reaps it), or -1.
 */
pid_t tu_spawn_logged(char *const argv[], const char *log_path, mode_t mode, bool run_without_log);
/*
 * Starts `omniprof SUB ARGS...` (args NULL-terminated, at most TU_MAX_ARGS)
 * with stdout and stderr in log_path (0644; runs even when the log cannot be
 * opened). Returns the pid (caller reaps it), or -1.
 */
pid_t tu_omniprof_start(const char *log_path, const char *sub, const char *const *args);
/*
 * Waits up to limit_ms for pid, polling every poll_ms; SIGKILLs and reaps it
 * after that. Returns the wait status, or -1 when it had to be killed; *ru
 * (may be NULL) gets its resource usage either way.
 */
int tu_wait_bounded(pid_t pid, uint64_t limit_ms, unsigned poll_ms, struct rusage *ru);
/* CPU seconds (user + system, all threads) pid has used so far, from /proc/PID/stat; -1 when
 * it cannot be read. */
double tu_cpu_seconds(pid_t pid);
/*
 * Polls pid's CPU time every 50 ms until it has used cpu_s seconds more than at the call: true,
 * or false after limit_ms. *used (may be NULL) gets the CPU seconds it used meanwhile. A test
 * that needs a number of samples of a workload waits on this rather than a fixed duration: on a
 * loaded host a busy workload gets a fraction of a CPU, and so a fraction of the samples.
 */
bool tu_wait_cpu(pid_t pid, double cpu_s, uint64_t limit_ms, double *used);
/* Whether the file at log_path holds needle now (false when unreadable). */
bool tu_log_has(const char *log_path, const char *needle);
/* Polls log_path every 100 ms until it holds needle: true, or false after timeout_ms. */
bool tu_wait_log(const char *log_path, const char *needle, unsigned timeout_ms);
/*
 * Whether a mapping of pid's (/proc/PID/maps) is of a file whose name holds
 * needle (e.g. "/libcurl.so"); -1 when the maps cannot be read.
 */
int tu_maps_has(pid_t pid, const char *needle);
/* Prints the file at log_path under the title line ("(none)" when unreadable). */
void tu_print_log(const char *title, const char *log_path);
/*
 * The number right after label in text (record -v's "  NAME   VALUE" lines),
 * or -1 when text is NULL or label is absent.
 */
long long tu_counter_after(const char *text, const char *label);
/*
 * Starts `node tests/e2e/otlp/SCRIPT ARGS...` with NODE_PATH set to the build's
 * node_modules and waits for its first line ("ready"). Returns the pid (reap
 * it with tu_reap), or -1 with a message saying what is missing.
 */
pid_t tu_node_start(const char *script, const char *const *args);

#endif
