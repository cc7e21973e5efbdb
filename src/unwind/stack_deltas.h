/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stack-delta tables: one ELF file's call-frame information (.eh_frame,
 * .debug_frame) turned into a sorted list of (address, unwind rule). The rule
 * at address A applies from A up to the next entry's address. Built once per
 * file, loaded into BPF maps, and read by the unwinder in
 * bpf/include/omniprof/unwind/native.h (rules in bpf/include/omniprof/abi.h, struct
 * op_unwind_rule).
 */
#ifndef OMNIPROF_UNWIND_STACK_DELTAS_H
#define OMNIPROF_UNWIND_STACK_DELTAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/abi.h"

struct elf_file;

struct stack_delta {
	uint64_t addr; /* ELF virtual address where rule starts to apply */
	struct op_unwind_rule rule;
};

struct stack_delta_stats {
	uint64_t cies;	      /* usable CIEs */
	uint64_t fdes;	      /* FDEs used (empty ones and .debug_frame tombstones included) */
	uint64_t unsupported; /* rows whose rule could not be expressed (became OP_RULE_INVALID) */
	/*
	 * Entries skipped: malformed CIEs and FDEs, CIEs with an unknown
	 * augmentation or version, every FDE of such a CIE, FDEs whose
	 * pointer encoding needs more than the section (datarel, textrel,
	 * indirect), and one for a broken length that ends a section's walk.
	 */
	uint64_t bad_entries;
};

#define STACK_DELTAS_ID_LEN 16

struct stack_delta_table {
	struct stack_delta *deltas; /* sorted by addr, no two equal addrs; owned */
	size_t n;
	struct stack_delta_stats stats;
	/* stack_deltas__table_id() of the very bytes the table was built from (a
	 * build that reopened the file checks it against the id it was asked for). */
	uint8_t id[STACK_DELTAS_ID_LEN];
	bool has_id;
};

/*
 * Builds the table of ef from .eh_frame (and .debug_frame when present;
 * .eh_frame wins where both describe an address). Gaps between FDEs become
 * OP_RULE_INVALID entries, and so does the end of the last FDE; consecutive
 * equal rules are merged. Within one section FDEs that overlap are clipped:
 * the FDE starting lower keeps its whole range (equal starts: the earlier
 * one in the section). .eh_frame_hdr is not needed (the whole section is
 * walked). Returns 0 and fills *out (free with stack_delta_table__free()),
 * -ENOENT when the file has no CFI at all (NOBITS sections of a debug file
 * count as none), -ENOEXEC when the CFI sections are malformed throughout
 * (parsed bytes are untrusted; a section that is only partly malformed
 * gives a table and out->stats.bad_entries), -EOPNOTSUPP for an ELF file
 * that is not x86-64, or -ENOMEM. out->stats is filled on errors too.
 */
int stack_deltas__build(const struct elf_file *ef, struct stack_delta_table *out);
/*
 * Heap stack_deltas__build() of ef takes at its peak, estimated from the
 * sizes of the sections it reads (section headers only; 0 when unreadable):
 * a build holds every row before flattening them, about 8 bytes of heap per
 * byte of CFI (libLLVM-14: 4.8 MiB of .eh_frame, 39 MiB at the peak).
 */
size_t stack_deltas__build_cost(const struct elf_file *ef);

/* Same, from raw section bytes (for tests and fuzzing): data is the section
 * contents, section_vaddr its address (pc-relative encodings need it),
 * is_debug_frame selects the .debug_frame dialect (CIE id 0xffffffff,
 * absolute addresses). An empty section gives 0 and an empty table.
 * In the 64-bit DWARF format (length escape 0xffffffff) the CIE id / CIE
 * pointer is 8 bytes in both dialects. */
int stack_deltas__parse(const uint8_t *data, size_t len, uint64_t section_vaddr, int is_debug_frame,
			struct stack_delta_table *out);

/*
 * The identity of the table stack_deltas__build() makes of ef: SHA-256 over
 * everything the build reads (the ELF header fields it checks, the bytes and
 * addresses of .eh_frame and .debug_frame, or why each is unusable), so two
 * files share a table id exactly when their tables are the same. Not the
 * htlhash, which a file built to collide (same first and last 4 KiB and
 * length, other CFI in the middle) shares with its victim. Costs one read of
 * the CFI sections (bench: stack_deltas_bench). 0 or -errno.
 */
int stack_deltas__table_id(const struct elf_file *ef, uint8_t out[STACK_DELTAS_ID_LEN]);

void stack_delta_table__free(struct stack_delta_table *t); /* accepts NULL and empty */

/* The rule covering addr (binary search), or NULL when addr is before the first entry. */
const struct stack_delta *stack_delta_table__find(const struct stack_delta_table *t, uint64_t addr);

/*
 * One FDE at a time (issue 17): a held stack copy of a process whose file's
 * table is not built yet is walked from the file's CFI at once, as perf
 * --call-graph dwarf does. The FDE covering a pc is found through
 * .eh_frame_hdr's binary-search table and run through the very per-FDE
 * logic the table's build uses, so its rule is the table's rule there. Only
 * where the table's answer is the FDE's alone: a pc in no FDE (a gap, which
 * .debug_frame or the entry point may fill), a file with Go's table, an FDE
 * beside one with the same start or one that overlaps it, or a CIE whose
 * initial state holds an expression give no rule: those wait for the table.
 * A file whose section framing breaks before the FDE (the build stops there)
 * is the one case they may differ: a hostile file only lies to its own
 * process's samples, as any CFI may.
 */
struct fde_index {
	uint64_t eh_off, eh_size, eh_vaddr; /* .eh_frame: file offset, size, address */
	uint64_t hdr_vaddr; /* .eh_frame_hdr's address: the entries are relative to it */
	uint64_t table_off; /* file offset of the search table (8 bytes an entry) */
	uint32_t count;	    /* its entries */
	bool track_bx;	    /* a dynamic loader: rules carry rbx's slot (OP_CFA_F_BX) */
};

/* Reads exactly len bytes at file offset off into buf: 0 or -errno. */
typedef int (*fde_read_fn)(void *ctx, uint64_t off, void *buf, size_t len);

/*
 * Where ef's .eh_frame_hdr table and .eh_frame lie (section headers and the
 * header's fields, read through ef->fd). 0, -EOPNOTSUPP (no usable search
 * table, a Go file, not x86-64: wait for the table), -ENOEXEC, -EIO.
 */
int stack_deltas__fde_index(const struct elf_file *ef, struct fde_index *out);
/* The same through read over a file of file_size bytes (the ELF and section headers
 * read by elf_sections, bounded: 4096 sections, 64 KiB of names). */
int stack_deltas__fde_index_read(fde_read_fn read, void *ctx, uint64_t file_size,
				 struct fde_index *out);
/* The header's part of it, from the section's first hdr_len bytes of hdr_size (tests,
 * fuzzing). */
int stack_deltas__fde_index_parse(const uint8_t *hdr, size_t hdr_len, uint64_t hdr_size,
				  uint64_t hdr_vaddr, uint64_t hdr_off, uint64_t eh_vaddr,
				  uint64_t eh_off, uint64_t eh_size, struct fde_index *out);

/* One FDE's rules: rows[k].rule from rows[k].addr to the next row's (the last: to end). */
struct fde_rows {
	uint64_t start, end;	  /* the FDE's range */
	uint64_t fde_off;	  /* its offset in .eh_frame */
	struct stack_delta *rows; /* owned, sorted, rows[0].addr == start */
	size_t n;
};

/*
 * The rows of the FDE covering vaddr, every read through read (bounded:
 * 32 probes of the table, entries of at most 64 KiB). 0 with *out (free
 * with fde_rows__free), -ENOENT (no FDE covers vaddr), -EOPNOTSUPP (the
 * table's answer is not this FDE's alone, see above), -ENOEXEC (malformed),
 * -ENOMEM, or the read's error.
 */
int stack_deltas__fde_rows(const struct fde_index *ix, fde_read_fn read, void *ctx, uint64_t vaddr,
			   struct fde_rows *out);
/* The rule at vaddr, or NULL outside [start, end). */
const struct op_unwind_rule *fde_rows__rule(const struct fde_rows *r, uint64_t vaddr);
void fde_rows__free(struct fde_rows *r); /* accepts NULL */

#endif
