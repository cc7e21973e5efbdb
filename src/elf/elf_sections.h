/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An untrusted ELF file's section headers and section names, read through a
 * caller's pread-like function (a file, a process's memory, a fuzzer's
 * input), not libelf: the runtime paths that need a section or two before a
 * file's table is built (the FDE index, Go's .gopclntab) read only these
 * bytes, bounded: at most ELF_SECTIONS_MAX headers and ELF_SECTIONS_MAX_NAMES
 * bytes of names, every offset checked against the file's size. ELF64
 * little-endian only; the machine is the caller's business.
 */
#ifndef OMNIPROF_ELF_SECTIONS_H
#define OMNIPROF_ELF_SECTIONS_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* Reads exactly len bytes at file offset off into buf: 0 or -errno. */
typedef int (*elf_read_fn)(void *ctx, uint64_t off, void *buf, size_t len);

#define ELF_SECTIONS_MAX       4096
#define ELF_SECTIONS_MAX_NAMES (64u << 10)

struct elf_sections {
	Elf64_Shdr *sh;	   /* owned: the file's section headers, n of them */
	size_t n;	   /* e_shnum */
	char *names;	   /* owned: the names' table, names_size bytes and a NUL */
	size_t names_size; /* > 0 */
};

/*
 * The ELF header of a file of file_size bytes, read through read into *eh.
 * 0; -ENOEXEC (shorter than a header, not ELF); -EOPNOTSUPP (not ELF64
 * little-endian, no section headers, more than ELF_SECTIONS_MAX of them or
 * extended numbering, e_shentsize not Elf64_Shdr's, no or an out-of-range
 * e_shstrndx); or read's error.
 */
int elf_sections__ehdr(elf_read_fn read, void *ctx, uint64_t file_size, Elf64_Ehdr *eh);

/*
 * The section headers and the names' table eh describes (eh as
 * elf_sections__ehdr() answered it; checked again here). 0 with *out, whose
 * memory the caller frees with elf_sections__free(); -EOPNOTSUPP (eh as
 * elf_sections__ehdr() refuses it); -ENOEXEC (headers or names outside the
 * file; the names' section empty, SHT_NOBITS or over ELF_SECTIONS_MAX_NAMES);
 * -ENOMEM; or read's error. On an error *out holds nothing.
 */
int elf_sections__read(elf_read_fn read, void *ctx, uint64_t file_size, const Elf64_Ehdr *eh,
		       struct elf_sections *out);

/* Section i's name, or NULL (i past the headers, or its name offset past the names' table). */
const char *elf_sections__name(const struct elf_sections *s, size_t i);

/*
 * The first section named name (as libelf-based readers find a name: by
 * index order), or NULL. A header whose name offset is past the names' table
 * has no name. Points into s.
 */
const Elf64_Shdr *elf_sections__first(const struct elf_sections *s, const char *name);

/* Frees what s holds (not s); accepts NULL. */
void elf_sections__free(struct elf_sections *s);

#endif
