// SPDX-License-Identifier: Apache-2.0
#include "elf/elf_sections.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The header fields elf_sections__read() trusts: 0 or -EOPNOTSUPP. */
static int ehdr_check(const Elf64_Ehdr *eh)
{
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return -EOPNOTSUPP;
	/* e_shnum 0 is also how extended numbering starts: left to libelf's readers. */
	if (eh->e_shnum == 0 || eh->e_shnum > ELF_SECTIONS_MAX ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shstrndx == SHN_UNDEF ||
	    eh->e_shstrndx >= eh->e_shnum)
		return -EOPNOTSUPP;
	return 0;
}

int elf_sections__ehdr(elf_read_fn read, void *ctx, uint64_t file_size, Elf64_Ehdr *eh)
{
	int err;

	memset(eh, 0, sizeof(*eh));
	err = file_size < sizeof(*eh) ? -ENOEXEC : read(ctx, 0, eh, sizeof(*eh));
	if (err)
		return err;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return -ENOEXEC;
	return ehdr_check(eh);
}

int elf_sections__read(elf_read_fn read, void *ctx, uint64_t file_size, const Elf64_Ehdr *eh,
		       struct elf_sections *out)
{
	const Elf64_Shdr *st;
	size_t n;
	int err;

	memset(out, 0, sizeof(*out));
	err = ehdr_check(eh);
	if (err)
		return err;
	n = (size_t)eh->e_shnum * sizeof(Elf64_Shdr);
	if (eh->e_shoff > file_size || n > file_size - eh->e_shoff)
		return -ENOEXEC;
	out->sh = malloc(n);
	err = -ENOMEM;
	if (!out->sh)
		goto cleanup;
	out->n = eh->e_shnum;
	err = read(ctx, eh->e_shoff, out->sh, n);
	if (err)
		goto cleanup;
	err = -ENOEXEC;
	st = &out->sh[eh->e_shstrndx];
	if (st->sh_type == SHT_NOBITS || st->sh_size == 0 || st->sh_size > ELF_SECTIONS_MAX_NAMES ||
	    st->sh_offset > file_size || st->sh_size > file_size - st->sh_offset)
		goto cleanup;
	out->names_size = st->sh_size;
	out->names = malloc(out->names_size + 1);
	err = -ENOMEM;
	if (!out->names)
		goto cleanup;
	err = read(ctx, st->sh_offset, out->names, out->names_size);
	if (err)
		goto cleanup;
	/* A name that runs to the table's end ends there. */
	out->names[out->names_size] = '\0';
cleanup:
	if (err)
		elf_sections__free(out);
	return err;
}

const char *elf_sections__name(const struct elf_sections *s, size_t i)
{
	if (i >= s->n || s->sh[i].sh_name >= s->names_size)
		return NULL;
	return s->names + s->sh[i].sh_name;
}

const Elf64_Shdr *elf_sections__first(const struct elf_sections *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++) {
		const char *n = elf_sections__name(s, i);

		if (n && !strcmp(n, name))
			return &s->sh[i];
	}
	return NULL;
}

void elf_sections__free(struct elf_sections *s)
{
	if (!s)
		return;
	free(s->sh);
	free(s->names);
	memset(s, 0, sizeof(*s));
}
