/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One CPython code object read out of a live process with
 * process_vm_readv (read only: the process is neither stopped nor written):
 * its name, file name, first line and line table. The reads go through
 * struct remote_memory (proc/remote_memory.h), so the replay suite names
 * frames from snapshots with the same code.
 */
#ifndef OMNIPROF_INTERP_PYTHON_CODE_H
#define OMNIPROF_INTERP_PYTHON_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc/remote_memory.h"

struct python_layout;

/*
 * What one code object may cost, whatever the target claims: a name or file
 * name is cut at PYTHON_STR_MAX_CHARS characters, a line table at
 * PYTHON_LINE_TABLE_MAX bytes (a 64 KiB table covers tens of thousands of
 * instructions; a larger one is implausible, and a hostile process can point
 * every code object at one 1 MiB table). Cut objects are flagged (counted by
 * python.c); lines past a cut table's end are reported as its last line.
 */
#define PYTHON_STR_MAX_CHARS  1024
#define PYTHON_LINE_TABLE_MAX (64u << 10)

enum python_code_cut {
	PYTHON_CODE_CUT_NAME = 1,
	PYTHON_CODE_CUT_FILENAME = 2,
	PYTHON_CODE_CUT_LINES = 4,
};

struct python_code {
	char *name;	/* co_qualname (3.11+) or co_name; owned */
	char *filename; /* co_filename; owned */
	int64_t firstlineno;
	uint8_t *lines; /* the line table's bytes; owned, NULL when unreadable */
	size_t n_lines;
	int line_kind;	  /* enum python_line_table */
	unsigned int cut; /* enum python_code_cut: what was truncated */
};

/* The heap bytes c holds (for the byte budgets), 0 for NULL. */
size_t python_code__bytes(const struct python_code *c);

/*
 * Reads the code object at addr from mem (a pid's memory as
 * interp_env__memory() gives it). fingerprint is what the walker read at
 * layout->bpf.code_fingerprint: the object must still hold it (else it was
 * freed and the address reused: -ESTALE). Returns 0 and *out (free with
 * python_code__free()), -ESTALE, -EINVAL (not a code object) or -errno.
 */
int python_code__read_from(const struct remote_memory *mem, const struct python_layout *layout,
			   uint64_t addr, uint64_t fingerprint, struct python_code **out);
void python_code__free(struct python_code *c); /* accepts NULL */

/*
 * Reads the compact str object at addr as UTF-8 into *out (the caller frees
 * it), at most PYTHON_STR_MAX_CHARS characters (*cut set when longer; cut
 * may be NULL). Exposed for the tests. 0, -EINVAL (not a compact str) or
 * -errno.
 */
int python_code__read_str(const struct remote_memory *mem, const struct python_layout *layout,
			  uint64_t addr, char **out, bool *cut);

#endif
