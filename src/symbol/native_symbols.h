/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Function names for addresses in one ELF file, from its .symtab / .dynsym
 * (through elfutils' libdwfl, which later issues extend to DWARF, inline
 * frames and separate debug files).
 */
#ifndef OMNIPROF_SYMBOL_NATIVE_SYMBOLS_H
#define OMNIPROF_SYMBOL_NATIVE_SYMBOLS_H

#include <stdint.h>

struct elf_file;
struct native_symbols;

/*
 * Prepares lookups in ef (which must outlive the result). Returns 0 and *out
 * (free with native_symbols__free()), or -errno.
 */
int native_symbols__open(const struct elf_file *ef, struct native_symbols **out);
void native_symbols__free(struct native_symbols *ns); /* accepts NULL */

/*
 * Name of the function containing the ELF virtual address vaddr, or NULL when
 * no symbol covers it. *offset receives vaddr - symbol start. The string
 * belongs to ns and stays valid until native_symbols__free().
 */
const char *native_symbols__lookup(struct native_symbols *ns, uint64_t vaddr, uint64_t *offset);

#endif
