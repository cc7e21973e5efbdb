/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPython support on the host side:
 *
 *   - finds the interpreter of each process whose maps are read (a libpython
 *     or an executable with the interpreter linked in, python_binary.h; the
 *     file inspected once, src/interp/interp.c calls attach for the process)
 *     and tells the in-kernel walker where it is: one `py_procs` entry per pid
 *     (struct op_py_proc: eval-loop ranges, interpreters list, offsets);
 *   - names Python frames: reads each code object the walker reports from
 *     the process (process_vm_readv, never writing or stopping it) while the
 *     process lives, once per (pid, code object address), and reads it again
 *     when the code object's fingerprint says the address now holds another
 *     one; names and line tables are kept until the profile is built (an
 *     agent forgets those of exited processes after each interval, and of a
 *     process holding more than PYTHON_CODES_PER_PROCESS, the ones its last
 *     interval did not use).
 */
#ifndef OMNIPROF_INTERP_PYTHON_H
#define OMNIPROF_INTERP_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interp/frame_store.h"
#include "interp/interp.h"
#include "omniprof/interp/python_abi.h"
#include "util/hashmap.h"

struct file_cache;
struct process;

struct python_stats {
	uint64_t processes;	/* processes found running a supported CPython */
	uint64_t unsupported;	/* interpreters this build has no layout for */
	uint64_t map_errors;	/* py_procs updates that failed */
	uint64_t codes;		/* code objects read */
	uint64_t code_reused;	/* a code object address found holding another one */
	uint64_t code_errors;	/* code objects that could not be read */
	uint64_t cold_from_cfi; /* eval loops whose .cold part was found without symbols */
	uint64_t names_cut;	/* names or file names cut at PYTHON_STR_MAX_CHARS */
	uint64_t lines_cut;	/* line tables cut at PYTHON_LINE_TABLE_MAX */
	uint64_t over_budget;	/* frames whose code object was not read: a byte budget was full */
};

struct python_code; /* one code object's name, file and line table */
struct process_table;

/* Code objects kept per process between intervals, beyond those just used. */
#define PYTHON_CODES_PER_PROCESS 4096
/*
 * Byte budgets of the code objects held (names, file names, line tables as
 * python_code__bytes() counts them): per process, and for all together.
 * While a budget is full, new code objects of that process (or of any) are
 * not read (their frames show as "[unknown Python code]", counted in
 * over_budget); at an interval's end a process over its budget, or every
 * process when the total is over, keeps only the code objects that interval
 * used. One process (whatever its line tables claim) can hold at most a
 * quarter of the total, so others keep being named. An ordinary program
 * holds a few hundred bytes per code object: 16 MiB is some 50,000 of them.
 */
#define PYTHON_CODE_BYTES_PER_PROCESS (16u << 20)
#define PYTHON_CODE_BYTES_MAX	      (64u << 20)

struct python {
	struct file_cache *files;
	struct interp_env env;	  /* its memory reads (interp_env__memory) */
	int procs_fd;		  /* the py_procs BPF map, -1: none */
	struct hashmap procs;	  /* pid -> struct python_proc */
	struct frame_store codes; /* code objects: struct python_code */
	struct python_stats stats;
	uint64_t bpf_stats[OP_PY_STAT__COUNT]; /* last read (py_stats) */
};

/* CPython's entry in the runtime registry (src/interp/registry.c, interp.h). */
extern const struct interp_ops python_interp_ops;

/* procs_fd: the py_procs map (see bpf/interp/python.bpf.h) or -1. Free with python__clear(). */
void python__init(struct python *py, struct file_cache *files, int procs_fd);
void python__clear(struct python *py); /* accepts NULL */

/*
 * Resolves a Python frame of pid while the process lives: the id of the
 * code object at code_addr whose fingerprint the walker read, 0 when it
 * cannot be read (the frame is then shown unnamed).
 */
uint32_t python__resolve(struct python *py, uint32_t pid, uint64_t code_addr, uint64_t fingerprint);

/*
 * Name (qualified name from 3.11), file name and line of instruction
 * `offset` of code object id. The strings belong to py. Returns false
 * for id 0 or an unknown id (*name is then a placeholder).
 */
bool python__describe(const struct python *py, uint32_t id, uint32_t offset, const char **name,
		      const char **filename, int64_t *line);

/*
 * After a profile was built (no sample refers to a code id any more): forgets
 * the code objects and interpreter entries of processes pt no longer holds or
 * that exited, and, for a process holding more than PYTHON_CODES_PER_PROCESS,
 * those the interval did not use. Returns the code objects still held.
 */
size_t python__end_interval(struct python *py, const struct process_table *pt);
/* Code objects held for pid (for tests and reports; walks every one). */
size_t python__codes_held(const struct python *py, uint32_t pid);

#endif
