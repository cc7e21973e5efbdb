/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Giving back the file pages of an ELF image mapped with ELF_C_READ_MMAP
 * (issue 22). A scan of a large symbol table (node's 13 MiB of .symtab,
 * .strtab, .dynsym and .dynstr, libLLVM-14's, libpython's) makes every page it
 * reads resident in this process until elf_end(); the runtimes scan every
 * file a process maps, so those pages were a large part of the agent's RSS
 * peak. A page dropped here is read again from the page cache (a minor
 * fault) if it is needed again.
 */
#ifndef OMNIPROF_ELF_PAGES_H
#define OMNIPROF_ELF_PAGES_H

#include <gelf.h>
#include <stddef.h>

/*
 * Drops the pages of [p, p + len), part of a file's mapping, that map the
 * file's own pages; a page made private by a write (anonymous: libelf
 * converted data in place) and memory that is not a file's keep their
 * contents, so this is safe on any range elf_rawfile() or an Elf_Data of a
 * mapped Elf returns. Returns the bytes dropped.
 */
size_t elf_pages__drop_range(const void *p, size_t len);

/* Symbols between two drops in elf_pages__drop_symbols_every(). */
#define ELF_PAGES_SYMBOLS_EVERY 16384

/*
 * For a loop over the symbol table scn of elf: at every
 * ELF_PAGES_SYMBOLS_EVERY-th symbol index i (not at 0), drops the file pages of
 * the table and of its string table, so a scan holds about that many
 * symbols' pages (384 KiB of entries plus their names) and the page-cache
 * folios their faults mapped whole (up to 2 MiB each on a recent kernel:
 * 7 MiB at most for a 17 MiB table in test_elf_pages, against all of it).
 * Does nothing for a table under that many symbols or an Elf read into memory.
 */
void elf_pages__drop_symbols_every(Elf *elf, Elf_Scn *scn, size_t i);

#endif
