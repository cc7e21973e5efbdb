/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names for an ELF file's PLT stubs ("puts@plt", as perf and objdump call
 * them): the linker writes no symbol for them, so a sample in a stub would
 * show as file+0x... and a stub is a leaf often enough (the first call of a
 * lazily bound import, or a hot call through one) to matter.
 */
#ifndef OMNIPROF_ELF_PLT_H
#define OMNIPROF_ELF_PLT_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct plt_stub {
	uint64_t start;	      /* ELF virtual address */
	uint64_t size;	      /* the stub's slot: the section's entry size */
	uint64_t section_end; /* end of the section holding it */
	const char *name;     /* "name@plt", in the table's names */
};

struct plt_stubs {
	struct plt_stub *stubs; /* in section order */
	size_t n;
	char *names; /* every stub's name, back to back */
};

/*
 * Reads the stubs of elf's .plt, .plt.sec and .plt.got sections (x86-64;
 * other machines give none). Each stub is decoded, not counted: its
 * `jmp *GOT(%rip)` names the GOT slot, whose JUMP_SLOT or GLOB_DAT
 * relocation names the symbol; a lazy stub with no such jump (the .plt of
 * an IBT layout, whose jump is in .plt.sec) is named by the relocation
 * index it pushes. So lazy, -z now, IBT (.plt.sec), bnd and .plt.got
 * layouts of ld.bfd and lld are all read the same way, and a stub nothing
 * names (PLT0, a damaged entry) is left out. Bounded by the sections'
 * sizes; a file without these sections gives 0 stubs. On success (0) *out
 * holds the stubs (free with plt_stubs__free()); -ENOMEM otherwise.
 */
int plt_stubs__read(Elf *elf, struct plt_stubs *out);
void plt_stubs__free(struct plt_stubs *stubs); /* accepts NULL and an empty table */

#endif
