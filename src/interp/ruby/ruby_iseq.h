/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What names one Ruby frame, read out of a live process (process_vm_readv
 * through struct remote_memory, so the replay suite and the fuzz target read
 * snapshots and hostile bytes with the same code; the process is neither
 * stopped nor written):
 *   an iseq (method, block, class body, <main>, <top (required)>): its
 *   label, path, first line and line table (instruction position -> line);
 *   a C function called from Ruby: its method's name.
 * Every read is bounded: names and paths are cut at RUBY_STR_MAX_CHARS,
 * line tables at RUBY_LINES_MAX entries.
 */
#ifndef OMNIPROF_INTERP_RUBY_ISEQ_H
#define OMNIPROF_INTERP_RUBY_ISEQ_H

#include <stddef.h>
#include <stdint.h>

#include "proc/remote_memory.h"

struct ruby_layout;

#define RUBY_STR_MAX_CHARS 1024
#define RUBY_LINES_MAX	   65536
#define RUBY_ISEQ_MAX_SIZE (1u << 22) /* VALUEs of instructions: beyond any real method */

/*
 * Where a VM's naming starts, absolute addresses in the process (0: not
 * found): global_symbols (ID -> name; without it names are not qualified)
 * and ruby_current_vm_ptr (3.2: the VM's shape list, where a class's name
 * is found).
 */
struct ruby_roots {
	uint64_t global_symbols;
	uint64_t current_vm_ptr;
};

struct ruby_iseq {
	char *name; /* owned; "Integer#times" style for C functions */
	char *path; /* owned; "" for C functions */
	int64_t first_line;
	uint32_t n_lines; /* entries in pos and lines */
	uint32_t *pos;	  /* owned; instruction position of each entry, increasing */
	int32_t *lines;	  /* owned; its line */
	size_t bytes;	  /* what it holds, for the frame store's budget */
};

/*
 * Reads the iseq at addr; me: the frame's method (op_frame.data: a method
 * entry qualifies the name with its class, "Shop#serve"; anything else
 * leaves the label). roots: see struct ruby_roots. 0 and *out
 * (ruby_iseq__free()), or -errno.
 */
int ruby_iseq__read(const struct remote_memory *mem, const struct ruby_layout *layout,
		    const struct ruby_roots *roots, uint64_t addr, uint64_t me,
		    struct ruby_iseq **out);

/*
 * A C function's frame: method entry me, def the definition the walker read
 * (another one: the address was reused, -ESTALE). Named "Integer#times"
 * from its owner and ID ("[C function]" without global_symbols). 0 and
 * *out, or -errno.
 */
int ruby_iseq__read_cfunc(const struct remote_memory *mem, const struct ruby_layout *layout,
			  const struct ruby_roots *roots, uint64_t me, uint64_t def,
			  struct ruby_iseq **out);

void ruby_iseq__free(struct ruby_iseq *is); /* accepts NULL */

/*
 * The line of the instruction at position pos (op_frame.aux: past the
 * current instruction, as the VM keeps its pc), the first line when pos is
 * OP_RB_NO_POS or the table is empty.
 */
int64_t ruby_iseq__line(const struct ruby_iseq *is, uint32_t pos);

/*
 * Positions of a line table kept as VM_INSN_INFO_TABLE_IMPL 2's succinct
 * bit vector (table: its bytes, len of them) for an iseq of iseq_size
 * VALUEs: writes at most max increasing positions into out, returns how many.
 * Exposed for the tests.
 */
size_t ruby_iseq__succ_positions(const uint8_t *table, size_t len, uint32_t iseq_size,
				 uint32_t *out, size_t max);

/* Bytes of the succinct table of an iseq of iseq_size VALUEs. */
size_t ruby_iseq__succ_bytes(uint32_t iseq_size);

#endif
