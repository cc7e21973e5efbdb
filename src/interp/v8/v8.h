/* SPDX-License-Identifier: Apache-2.0 */
/*
 * V8 (Node.js) as a runtime of src/interp/interp.h: node's post-mortem
 * metadata read per file (v8_binary.h), its builtins and JIT code published
 * per process as ranges the walk hands to bpf/interp/v8.bpf.h, and its
 * frames named on the host (v8_heap.h) through a frame store.
 */
#ifndef OMNIPROF_INTERP_V8_H
#define OMNIPROF_INTERP_V8_H

#include <stdint.h>

#include "interp/frame_store.h"
#include "interp/interp.h"
#include "omniprof/interp/v8_abi.h"
#include "util/hashmap.h"

struct v8_stats {
	uint64_t processes;   /* processes found running V8 */
	uint64_t unsupported; /* files with v8dbg_* symbols this build cannot use */
	uint64_t map_errors;  /* v8_procs updates that failed */
	uint64_t codes;	      /* frames' objects read (a function's bytecode, a JIT pc) */
	uint64_t code_reused; /* an address found holding another object */
	uint64_t code_errors; /* objects that could not be read or did not check out */
	uint64_t mismatches;  /* a bytecode array no longer its function's: not named */
	uint64_t no_lines;    /* named without a line (no position table, pc out of its code) */
	uint64_t maglev_translations; /* Maglev return addresses named by their translation */
	uint64_t recompiled;	      /* a JIT frame's code object changed at its pc: read again */
	uint64_t scripts;	      /* scripts' line ends computed */
	uint64_t over_budget;	      /* frames not named: a byte budget was full */
	uint64_t read_ns; /* time spent reading frames' objects (the bench's naming cost) */
};

/* Objects kept per process between intervals, and byte budgets. */
#define V8_CODES_PER_PROCESS	  8192
#define V8_CODE_BYTES_PER_PROCESS (16u << 20)
#define V8_CODE_BYTES_MAX	  (64u << 20)
#define V8_SCRIPTS_MAX		  512 /* scripts' line ends kept in all (then all dropped) */

struct file_cache;

struct v8 {
	struct file_cache *files;
	int procs_fd;		  /* the v8_procs BPF map, -1: none */
	struct hashmap procs;	  /* pid -> struct v8_proc */
	struct hashmap scripts;	  /* (pid, script) -> struct v8_script */
	struct frame_store codes; /* struct v8_code */
	struct v8_stats stats;
	uint64_t bpf_stats[OP_V8_STAT__COUNT];
	/* Reads of a pid's memory: NULL for the live process (tests, replay set it). */
	struct remote_memory (*memory)(void *ctx, uint32_t pid);
	void *memory_ctx;
};

extern const struct interp_ops v8_interp_ops;

#endif
