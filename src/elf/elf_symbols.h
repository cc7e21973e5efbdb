/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One pass over an ELF file's symbol tables, for the code that looks for a
 * handful of named symbols (the runtimes finding their interpreter's globals).
 */
#ifndef OMNIPROF_ELF_SYMBOLS_H
#define OMNIPROF_ELF_SYMBOLS_H

#include <gelf.h>
#include <stdbool.h>

/* Told of one defined symbol and its name; returns true to end the scan. */
typedef bool (*elf_symbol_fn)(void *ctx, const GElf_Sym *sym, const char *name);

/*
 * Calls fn for every defined symbol (section index not SHN_UNDEF, a name
 * that resolves) of elf's symbol tables of type sh_type (SHT_DYNSYM or
 * SHT_SYMTAB), in table order, until fn returns true. Returns true when fn
 * ended the scan. Bounded by the tables' sizes; malformed sections are skipped.
 */
bool elf_symbols__for_each(Elf *elf, unsigned int sh_type, elf_symbol_fn fn, void *ctx);

#endif
