/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OMNIPROF_SYMBOL_DWARF_LINES_H
#define OMNIPROF_SYMBOL_DWARF_LINES_H

/*
 * Source file and line of an address from a unit's .debug_line program
 * (DWARF 2 to 5), read here instead of by libdw (issue 22): libdw parses a
 * unit's whole line program into a table of about 64 bytes a row on the
 * first lookup and keeps it as long as the Dwarf, which made its line
 * tables the biggest share of the agent's heap (21 MiB of a whole-system
 * profile). This reader keeps per unit only its sequences (start and end
 * address) and a checkpoint of the line state machine every
 * DWARF_LINES_CHECKPOINT rows (and every 4 KiB of program); a lookup
 * decodes at most that many rows.
 * File names are joined once per unit, as libdw spells them.
 *
 * Answers are libdw 0.188's (dwfl_module_getsrc(), dwarf_filesrc()); where
 * the input is something this reader does not handle (an unknown version,
 * form or opcode layout, VLIW op_index, DW_LNE_define_file, addresses
 * going back inside a sequence, rows after the last end_sequence, big
 * endian, anything malformed, 64 KiB of program between two rows), it says
 * -ENOTSUP and the caller asks libdw. A unit whose file names pass the
 * bounds (a name of 4 KiB, 8 MiB joined: many entries naming one long
 * string, which libdw would join too) is refused: it has no lines, from
 * here or from libdw (dwarf_lines__find: -ENOENT, dwarf_lines__file:
 * -EBADMSG), and is counted.
 *
 * One dwarf_lines per Dwarf; not thread-safe.
 */
#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

/* Rows decoded at most by one lookup (one checkpoint's worth). */
#define DWARF_LINES_CHECKPOINT 32

struct dwarf_lines;
struct dwarf_lines_unit;

/*
 * The reader of dw's .debug_line (and .debug_line_str, .debug_str).
 * NULL when dw has no usable .debug_line (callers then ask libdw) or
 * out of memory. Free with dwarf_lines__free(); the sections stay dw's.
 */
struct dwarf_lines *dwarf_lines__new(Dwarf *dw);

/*
 * The same over bare section bytes (the fuzz target, tests): line_str and
 * str may be NULL. The bytes must outlive the reader. Free with
 * dwarf_lines__free().
 */
struct dwarf_lines *dwarf_lines__new_raw(const void *line, size_t line_size, const void *line_str,
					 size_t line_str_size, const void *str, size_t str_size);
void dwarf_lines__free(struct dwarf_lines *dl); /* accepts NULL */

/*
 * The unit whose line program starts at stmt_list (the compile unit's
 * DW_AT_stmt_list), read on first use; comp_dir: the unit's
 * DW_AT_comp_dir, or NULL. 0 and *unit (owned by dl; a refused unit too,
 * whose lookups then answer no line); -ENOTSUP when the
 * program is one this reader does not handle (remembered: asked again, the
 * answer is the same at no cost); -ENOMEM.
 */
int dwarf_lines__unit(struct dwarf_lines *dl, uint64_t stmt_list, const char *comp_dir,
		      struct dwarf_lines_unit **unit);

/*
 * The unit's unit for cu (its DW_AT_stmt_list, DW_AT_comp_dir), as
 * dwarf_lines__unit(). -ENOTSUP without DW_AT_stmt_list too.
 */
int dwarf_lines__unit_of(struct dwarf_lines *dl, Dwarf_Die *cu, struct dwarf_lines_unit **unit);

/*
 * File and line of addr (the unit's own addresses), chosen among the rows
 * as dwfl_module_getsrc() chooses. 0: *file (owned by dl, alive with it)
 * and *line; -ENOENT: no row covers addr (libdw gives no line either);
 * -ENOTSUP: ask libdw (a file index this reader does not resolve, too
 * many overlapping sequences).
 */
int dwarf_lines__find(struct dwarf_lines_unit *u, uint64_t addr, const char **file, int *line);

/*
 * The name of file index idx as dwarf_filesrc() spells it (DW_AT_call_file).
 * 0 and *name (owned by dl); -ENOTSUP: ask libdw (out of range, or an
 * index that only libdw's own table has); -EBADMSG: a refused unit (no
 * name, and do not ask libdw).
 */
int dwarf_lines__file(struct dwarf_lines_unit *u, uint64_t idx, const char **name);

/* Heap bytes taken since the last call (for the symbol cache's accounting). */
size_t dwarf_lines__growth(struct dwarf_lines *dl);

/* What the reader holds and did: units read, units left to libdw, lookups left to libdw. */
struct dwarf_lines_stats {
	size_t units, unsupported, refused, lookups_unsupported, bytes;
};
void dwarf_lines__stats(const struct dwarf_lines *dl, struct dwarf_lines_stats *st);

#endif
