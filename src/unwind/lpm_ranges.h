/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Publishing a process's executable ranges into the LPM trie the in-kernel
 * unwinder reads (unwind_maps' exe_mappings): which value a range gets, the
 * tables its ranges reference (within the process's share of delta pages),
 * the swap of an old set of ranges for a new one with no gap, the pid marker,
 * and eviction of the greediest process when the trie fills. It knows ranges
 * and pids, not processes: the caller (proc/process_table.c) hands in its
 * mappings as lpm_ranges (a stride over its own array) and finds other pids'
 * ranges for eviction through lpm_owner.
 */
#ifndef OMNIPROF_UNWIND_LPM_RANGES_H
#define OMNIPROF_UNWIND_LPM_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/abi.h"

struct elf_file;
struct unwind_maps;

/*
 * The LPM value of a file whose open was abandoned (timed out): a table id no
 * table has, so the unwinder uses frame pointers there and does not report
 * the address as unknown again and again.
 */
#define FILE_ID_NO_TABLE (OP_TABLE_ID_ANON - 1)

/* One executable range of a pid, as the trie holds it. */
struct lpm_range {
	uint64_t start;
	uint64_t end;
	uint64_t table_id; /* stack-delta table referenced in BPF maps, 0: none */
	uint64_t range_id; /* file id of its LPM entries (OP_TABLE_ID_ANON: JIT), 0: none */
	uint64_t bias;	   /* ELF vaddr = address - bias */
};

/* n ranges sorted by start, stride bytes apart (each inside a caller's element). */
struct lpm_ranges {
	struct lpm_range *first; /* NULL when n is 0 */
	size_t n;
	size_t stride;
};

static inline struct lpm_range *lpm_ranges__at(const struct lpm_ranges *r, size_t i)
{
	return (struct lpm_range *)((char *)r->first + i * r->stride);
}

/*
 * Who owns the pids' ranges: find() gives pid's current ranges and its
 * "evicted" flag (set here when it is evicted; it then publishes nothing but
 * its pid marker until the caller forgets it). False: pid is unknown.
 */
struct lpm_owner {
	bool (*find)(void *ctx, uint32_t pid, struct lpm_ranges *ranges, bool **evicted);
	void *ctx;
};

/*
 * What the LPM trie says about a mapping of a file: its table id when it is
 * an ELF file (a file with no usable table keeps the id, so the unwinder
 * finds no table and uses frame pointers without asking again),
 * FILE_ID_NO_TABLE when its open timed out, OP_TABLE_ID_ANON for code with
 * no file (anonymous) or no ELF behind it (-ENOEXEC: JIT), 0 for no entry
 * (the file could not be opened: the unwinder reports the address and the
 * maps are read again).
 */
uint64_t lpm_ranges__range_id(bool elf, uint64_t table_id, int open_error, bool anonymous);

/*
 * Takes a reference on table table_id for a range of a process whose tables
 * already take *pages delta pages: refused (0, counted) when that is its
 * whole share and the table would have to be built. build_from: the file to
 * build it from here (NULL: built by the file worker already). 0 or the
 * table id.
 */
uint64_t lpm_ranges__acquire_within_share(struct unwind_maps *um, uint64_t table_id,
					  const struct elf_file *build_from, uint64_t *pages);

/* Drops the table references of ranges (table_id set to 0). */
void lpm_ranges__release(struct unwind_maps *um, const struct lpm_ranges *ranges);

/* Removes pid's ranges and pid marker from the trie and drops their table references. */
void lpm_ranges__unpublish(struct unwind_maps *um, uint32_t pid, const struct lpm_ranges *ranges);

/*
 * Puts pid's ranges (range_id and table_id set, tables acquired) into the
 * trie in place of old, never leaving a moment where a range present before
 * and after is missing: new ranges go in first, then old ranges that changed
 * come out (and new ones they overlapped are written again). Tables of the
 * new ranges were acquired before the old ones are released, so a file
 * mapped before and after keeps its loaded table. The pid marker goes in
 * last: until then the unwinder treats the process as unknown rather than as
 * mapped nowhere. *evicted: pid's flag (owner.find gives the same one); an
 * evicted pid (or one evicted here, the greediest when the trie filled)
 * publishes its pid marker only.
 */
void lpm_ranges__publish(struct unwind_maps *um, uint32_t pid, const struct lpm_ranges *ranges,
			 const struct lpm_ranges *old, bool *evicted,
			 const struct lpm_owner *owner);

#endif
