// build: gcc -O2 -g
/*
 * Creates N distinct small ELF files in DIR (a header and one executable
 * PT_LOAD segment, 4 KiB each, the file's number written in it), maps each
 * of them executable, says "ready" and spins until SECONDS after the start:
 * a process that makes a profiler open thousands of files (the issue's
 * 22,000) unless it bounds its descriptors.
 * Usage: many_files SECONDS DIR N
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload.h"

#define FILE_SIZE 4096

static int make_file(const char *path, unsigned int i)
{
	unsigned char buf[FILE_SIZE] = {0};
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*eh));
	int fd;

	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_filesz = ph->p_memsz = FILE_SIZE;
	ph->p_align = 4096;
	/* Distinct contents: distinct file ids. */
	memcpy(buf + 1024, &i, sizeof(i));
	buf[2048] = 0xc3; /* ret */
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf))
		return -1;
	if (mmap(NULL, FILE_SIZE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		return -1;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	time_t deadline = wl_deadline(argc, argv);
	unsigned int n = argc > 3 ? (unsigned int)atoi(argv[3]) : 0;
	char path[4096];

	if (argc < 4) {
		fprintf(stderr, "usage: many_files SECONDS DIR N\n");
		return 2;
	}
	for (unsigned int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%05u.so", argv[2], i);
		if (make_file(path, i)) {
			perror(path);
			return 1;
		}
	}
	wl_ready();
	printf("%lu\n", wl_spin_until(1, deadline) & 1);
	return 0;
}
