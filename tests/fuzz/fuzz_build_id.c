// SPDX-License-Identifier: Apache-2.0
/*
 * Build-id notes: the input is the contents of a PT_NOTE segment (and of a
 * SHT_NOTE section) wrapped in a minimal well-formed ELF file, so every run
 * reaches the note walk of elf_file__open instead of failing on headers.
 */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/elf_file.h"

#define MAX_NOTES 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph[2];
		Elf64_Shdr sh[3];
		char shstr[16];
	} h;
	struct elf_file *ef = NULL;
	size_t notes_off = sizeof(h), total;
	uint8_t *file;
	int fd;

	if (size > MAX_NOTES)
		return 0;
	memset(&h, 0, sizeof(h));
	memcpy(h.eh.e_ident, ELFMAG, SELFMAG);
	h.eh.e_ident[EI_CLASS] = ELFCLASS64;
	h.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	h.eh.e_ident[EI_VERSION] = EV_CURRENT;
	h.eh.e_type = ET_DYN;
	h.eh.e_machine = EM_X86_64;
	h.eh.e_version = EV_CURRENT;
	h.eh.e_phoff = offsetof(__typeof__(h), ph);
	h.eh.e_shoff = offsetof(__typeof__(h), sh);
	h.eh.e_ehsize = sizeof(Elf64_Ehdr);
	h.eh.e_phentsize = sizeof(Elf64_Phdr);
	h.eh.e_phnum = 2;
	h.eh.e_shentsize = sizeof(Elf64_Shdr);
	h.eh.e_shnum = 3;
	h.eh.e_shstrndx = 2;
	total = notes_off + size;
	h.ph[0] = (Elf64_Phdr){PT_LOAD, PF_R | PF_X, 0, 0, 0, total, total, 0x1000};
	h.ph[1] = (Elf64_Phdr){PT_NOTE, PF_R, notes_off, notes_off, notes_off, size, size, 4};
	memcpy(h.shstr, "\0.note\0.shstr", 14);
	h.sh[1] = (Elf64_Shdr){1, SHT_NOTE, SHF_ALLOC, notes_off, notes_off, size, 0, 0, 4, 0};
	h.sh[2] = (Elf64_Shdr){7, SHT_STRTAB, 0, 0, offsetof(__typeof__(h), shstr), 14, 0, 0, 1, 0};
	file = malloc(total);
	if (!file)
		return 0;
	memcpy(file, &h, sizeof(h));
	memcpy(file + notes_off, data, size);
	fd = memfd_create("fuzz-notes", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, file, total) == (ssize_t)total) {
		if (!elf_file__open("notes.elf", fd, &ef) && ef->build_id)
			(void)strlen(ef->build_id);
		fd = -1; /* owned by elf_file__open */
	}
	if (fd >= 0)
		close(fd);
	elf_file__close(ef);
	free(file);
	return 0;
}
