/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PHP support on the host side:
 *
 *   - finds the Zend engine of each process whose maps are read (an
 *     executable exporting execute_ex and executor_globals: php-cli,
 *     php-fpm, php-cgi; php_binary.h, once per file) and tells the in-kernel
 *     walker where it is: one `php_procs` entry per pid (struct op_php_proc)
 *     and the pid's OP_INTERP_PHP ranges: execute_ex and its .cold part
 *     (flags 0: the native rules unwind them, the step replaces them by PHP
 *     frames) and OPcache's JIT buffer (OP_INTERP_RANGE_F_UNWINDS), found
 *     again on every maps read;
 *   - names PHP frames: each (pid, zend_function) the walker reports is read
 *     once while the process lives (php_func.h) and kept in a frame store
 *     until the profile is built; the line comes with the frame.
 */
#ifndef OMNIPROF_INTERP_PHP_H
#define OMNIPROF_INTERP_PHP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interp/frame_store.h"
#include "interp/interp.h"
#include "omniprof/interp/php_abi.h"
#include "util/hashmap.h"

struct file_cache;
struct process_table;
struct remote_memory;

struct php_stats {
	uint64_t processes;   /* processes found running a supported PHP */
	uint64_t unsupported; /* PHP binaries this build cannot walk (version, ZTS) */
	uint64_t map_errors;  /* php_procs updates that failed */
	uint64_t funcs;	      /* functions read */
	uint64_t reused;      /* a function address found holding another function */
	uint64_t errors;      /* functions that could not be read */
	uint64_t names_cut;   /* names or file names cut */
	uint64_t over_budget; /* frames not named: a byte budget was full */
	uint64_t jit_ranges;  /* OPcache JIT buffers handed to the walk */
};

/* Functions kept per process between intervals, beyond those just used. */
#define PHP_FUNCS_PER_PROCESS	   4096
#define PHP_FUNC_BYTES_PER_PROCESS (16u << 20)
#define PHP_FUNC_BYTES_MAX	   (64u << 20)

struct php {
	struct file_cache *files;
	int procs_fd;		  /* the php_procs BPF map, -1: none */
	struct hashmap procs;	  /* pid -> struct php_proc */
	struct frame_store funcs; /* struct php_func */
	struct php_stats stats;
	uint64_t bpf_stats[OP_PHP_STAT__COUNT]; /* last read (php_stats) */
	/* Its memory reads (interp_env__memory): a pid's live memory, or the replay's snapshot. */
	struct interp_env env;
};

/* PHP's entry in the runtime registry (src/interp/registry.c, interp.h). */
extern const struct interp_ops php_interp_ops;

/* procs_fd: the php_procs map (bpf/interp/php.bpf.h) or -1. Free with php__clear(). */
void php__init(struct php *php, struct file_cache *files, int procs_fd);
void php__clear(struct php *php); /* accepts NULL */

/*
 * Attaches pid as running the engine in bin, loaded with bias (tests and
 * replay use this without a process table): returns the published state.
 */
struct php_binary;
const struct op_php_proc *php__attach_binary(struct php *php, uint32_t pid,
					     const struct php_binary *bin, uint64_t bias);

/* The frame store id of PHP frame (func, fingerprint) of pid, 0 when it cannot be read. */
uint32_t php__resolve(struct php *php, uint32_t pid, uint64_t func, uint64_t fingerprint);
/* Name, file and line of id at line; false for an unknown id (placeholder name). */
bool php__describe(const struct php *php, uint32_t id, uint64_t line, const char **name,
		   const char **filename, int64_t *out_line);

#endif
