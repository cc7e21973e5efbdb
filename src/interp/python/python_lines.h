/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Source lines of CPython bytecode offsets, from the line table each code
 * object carries (enum python_line_table):
 *
 *   3.6-3.9  co_lnotab: (bytecode byte delta: unsigned, line delta: signed)
 *            byte pairs from (0, co_firstlineno); an offset's line is the one
 *            reached before the byte delta runs past it.
 *   3.10     co_linetable: (byte delta, line delta) pairs, each a range
 *            [start, start + delta) with the line so far plus its delta;
 *            -128 marks a range with no line.
 *   3.11+    the location table: entries of a first byte 1CCCCLLL (code C,
 *            length L + 1 code units) and code-specific operands in 6-bit
 *            varints (bit 6: more follow), signed ones zig-zag encoded.
 *            C 15: no location; 14: line delta, end line, columns; 13: line
 *            delta only; 10-12: line delta C - 10 and two column bytes; 0-9:
 *            same line, one column byte.
 *
 * The format facts come from CPython's Objects/lnotab_notes.txt (3.6-3.10)
 * and Objects/locations.md (3.11+).
 */
#ifndef OMNIPROF_INTERP_PYTHON_LINES_H
#define OMNIPROF_INTERP_PYTHON_LINES_H

#include <stddef.h>
#include <stdint.h>

/*
 * The line of the instruction at `offset` (what the walker sends as a
 * frame's aux: f_lasti for 3.6-3.10, code units for 3.11+; 0xffffffff before
 * the first instruction) in a code object whose first line is firstlineno.
 * Returns firstlineno when the table says nothing about the offset.
 */
int64_t python_lines__find(int kind, const uint8_t *table, size_t len, int64_t firstlineno,
			   uint32_t offset);

#endif
