/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names for addresses in one ELF file, through elfutils' libdwfl/libdw:
 * function symbols from .symtab / .dynsym (or a separate debug file's, or
 * MiniDebugInfo's), inline frames and source lines from DWARF, and Go's
 * .gopclntab for Go binaries (stripped ones included).
 */
#ifndef OMNIPROF_SYMBOL_NATIVE_SYMBOLS_H
#define OMNIPROF_SYMBOL_NATIVE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "symbol/demangle.h"
#include "symbol/dwarf_lines.h"

struct elf_file;
struct debuginfo;
struct native_symbols;

struct symbol_options {
	enum demangle_mode demangle;
	struct debuginfo *debuginfo; /* where separate debug files are looked for; NULL: the
					global folder only, by build id */
};

/* Deeper inline chains are cut to their innermost frames plus the outermost function. */
#define SYM_MAX_FRAMES 16
/* Longer names are truncated (C++ template names can run to kilobytes). */
#define SYM_NAME_MAX 1024

/* One frame of an address: a function (inlined or not) and where in its source. */
struct sym_frame {
	char name[SYM_NAME_MAX];	/* display name, demangled as the options say */
	char system_name[SYM_NAME_MAX]; /* as found in the binary (mangled) */
	const char *file;		/* source file or NULL; valid while the symbols are open */
	int64_t line;			/* 0 when unknown */
	int inlined;			/* 1 when this call was inlined into the next frame */
};

/*
 * Prepares lookups in ef (which must outlive the result). opts may be NULL
 * (no demangling, global debug folder only). Returns 0 and *out (free with
 * native_symbols__free()), or -errno.
 */
int native_symbols__open(const struct elf_file *ef, struct native_symbols **out);
int native_symbols__open_opts(const struct elf_file *ef, const struct symbol_options *opts,
			      struct native_symbols **out);
void native_symbols__free(struct native_symbols *ns); /* accepts NULL */

/*
 * Name of the function symbol containing the ELF virtual address vaddr, or
 * NULL when no symbol covers it. *offset receives vaddr - symbol start. The
 * string belongs to ns and stays valid until native_symbols__free().
 */
const char *native_symbols__lookup(struct native_symbols *ns, uint64_t vaddr, uint64_t *offset);

/*
 * The frames at vaddr, innermost (inlined) first, the function that holds
 * the code last, into out (max entries). Returns how many; 0 when nothing
 * names the address.
 */
size_t native_symbols__frames(struct native_symbols *ns, uint64_t vaddr, struct sym_frame *out,
			      size_t max);

/*
 * Test only: native_symbols__frames() as it was before issue 22's index,
 * with libdw's dwarf_getscopes() / dwarf_getscopes_die() walking the unit
 * for each address, to check the index gives the same frames.
 */
size_t native_symbols__frames_reference(struct native_symbols *ns, uint64_t vaddr,
					struct sym_frame *out, size_t max);

/*
 * File-backed memory the symbols came to hold since the last call, in bytes,
 * for the cache bound: the resident pages of the symbol, string and
 * uncompressed DWARF sections elfutils reads in place from its mapping of
 * the file (their whole size when it read the file into memory). Lookups
 * touch more pages, so callers ask again now and then. Heap (the tables
 * built here, inflated compressed sections, libdw's parsed units) is not
 * included: the caller measures it (symbolizer.c).
 */
size_t native_symbols__file_growth(struct native_symbols *ns);

/*
 * Gives back the file pages the lookups mapped in (issue 22: ELF and debug
 * files held resident between lookups were the largest part of the RSS):
 * later lookups read them again from the page cache. The tables stay.
 * Returns what native_symbols__file_growth() had reported since the last
 * drop (now no longer held). Accepts NULL; does nothing when no lookup came
 * since the last drop.
 */
size_t native_symbols__drop_pages(struct native_symbols *ns);

/*
 * Drops the pages of [p, p + len), part of a file's mapping, that map the
 * file's own pages; a page made private by a write (anonymous) keeps its
 * contents. Returns the bytes dropped. What native_symbols__drop_pages() does
 * for each mapped ELF image; exposed for its unit test.
 */
size_t native_symbols__drop_file_range(const void *p, size_t len);

/*
 * Heap that lookups made libdw and dwarf_lines keep since the last call
 * (units parsed: their abbreviations; their sequences, checkpoints and file
 * names, or libdw's line tables where dwarf_lines left a unit to libdw),
 * counted from what they hold rather than measured, so other threads'
 * allocations are not charged here.
 */
size_t native_symbols__lookup_growth(struct native_symbols *ns);

/* What was found: for reports and tests. */
struct native_symbols_info {
	const char *debug_file; /* separate debug file in use, or NULL */
	int has_dwarf;
	int has_gopclntab;
	/*
	 * Its DWARF sections were compressed and libelf inflated them into the
	 * heap (libc6-dbg: 9.6 MiB, 90-240 ms to load): costly to load again.
	 * Without it DWARF is read in place from the file's mapping, and loading
	 * it again costs little more than the units a lookup parses.
	 */
	int dwarf_in_heap;
	size_t n_funcs;			/* function symbols in the table */
	struct dwarf_lines_stats lines; /* line programs read by dwarf_lines, and left to libdw */
};
void native_symbols__info(const struct native_symbols *ns, struct native_symbols_info *info);

#endif
