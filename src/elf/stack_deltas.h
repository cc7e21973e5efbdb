/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stack-delta tables: one ELF file's call-frame information (.eh_frame,
 * .debug_frame) turned into a sorted list of (address, unwind rule). The rule
 * at address A applies from A up to the next entry's address. Built once per
 * file, loaded into BPF maps, and read by the unwinder in
 * bpf/unwind/native_unwind.h (rules in bpf/types.h, struct op_unwind_rule).
 */
#ifndef OMNIPROF_ELF_STACK_DELTAS_H
#define OMNIPROF_ELF_STACK_DELTAS_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

struct elf_file;

struct stack_delta {
	uint64_t addr; /* ELF virtual address where rule starts to apply */
	struct op_unwind_rule rule;
};

struct stack_delta_stats {
	uint64_t cies;
	uint64_t fdes;
	uint64_t unsupported; /* rows whose rule could not be expressed (became OP_RULE_INVALID) */
	uint64_t bad_entries; /* malformed CIEs/FDEs skipped */
};

struct stack_delta_table {
	struct stack_delta *deltas; /* sorted by addr, no two equal addrs; owned */
	size_t n;
	struct stack_delta_stats stats;
};

/*
 * Builds the table of ef from .eh_frame (and .debug_frame when present;
 * .eh_frame wins where both describe an address). Gaps between FDEs become
 * OP_RULE_INVALID entries; consecutive equal rules are merged. Returns 0 and
 * fills *out (free with stack_delta_table__free()), -ENOENT when the file has
 * no CFI at all, -ENOEXEC for malformed sections (parsed bytes are untrusted),
 * or -ENOMEM.
 */
int stack_deltas__build(const struct elf_file *ef, struct stack_delta_table *out);

/* Same, from raw section bytes (for tests and fuzzing): data is the section
 * contents, section_vaddr its address (pc-relative encodings need it),
 * is_debug_frame selects the .debug_frame dialect (CIE id 0xffffffff,
 * absolute addresses). */
int stack_deltas__parse(const uint8_t *data, size_t len, uint64_t section_vaddr,
			int is_debug_frame, struct stack_delta_table *out);

void stack_delta_table__free(struct stack_delta_table *t); /* accepts NULL and empty */

/* The rule covering addr (binary search), or NULL when addr is before the first entry. */
const struct stack_delta *stack_delta_table__find(const struct stack_delta_table *t,
						  uint64_t addr);

#endif
