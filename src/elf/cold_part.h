/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The .cold part of a function in a stripped binary: GCC moves a function's
 * rarely run paths (`foo.cold`) to another place in .text, and interpreter
 * loops (CPython's _PyEval_EvalFrameDefault, PHP's execute_ex) run there
 * too, so a runtime's code range must hold both. Without the symbol table
 * the cold part is found from the call-frame information and the function's
 * own jumps.
 */
#ifndef OMNIPROF_ELF_COLD_PART_H
#define OMNIPROF_ELF_COLD_PART_H

#include <stdint.h>

struct elf_file;

/*
 * The .cold part of the function [hot_start, hot_end) of ef: the FDE
 * (through .eh_frame_hdr) that most of the function's out-of-range rel32
 * jumps land in, and which jumps back into the function. 0 and
 * [*cold_start, *cold_end), -ENOENT when there is none, or -errno.
 */
int elf_file__find_cold_part(const struct elf_file *ef, uint64_t hot_start, uint64_t hot_end,
			     uint64_t *cold_start, uint64_t *cold_end);

/*
 * The function ef's call-frame information (an FDE, through .eh_frame_hdr)
 * says starts exactly at start: 0 and its end in *end, -ENOENT when no FDE
 * starts there, or -errno. For a stripped file, where a call's target has
 * no symbol: its size, and that it is a function's first byte at all.
 */
int elf_file__function_at(const struct elf_file *ef, uint64_t start, uint64_t *end);

#endif
