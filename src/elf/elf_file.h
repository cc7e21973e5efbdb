/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An ELF file as the profiler needs it: its loadable segments (to turn a file
 * offset seen in /proc/PID/maps into the ELF virtual address symbols use) and
 * its identity (GNU build id). Opened from an fd so files reached through
 * /proc/PID/map_files or /proc/PID/root (containers, deleted files) work.
 */
#ifndef OMNIPROF_ELF_FILE_H
#define OMNIPROF_ELF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_segment {
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t offset;
	uint64_t filesz;
	uint32_t flags; /* PF_X | PF_W | PF_R */
};

struct elf_file {
	int fd;			      /* owned, open for reading */
	char *path;		      /* owned; the name used in reports */
	uint16_t type;		      /* ET_EXEC, ET_DYN, ... */
	struct elf_segment *segments; /* PT_LOAD only, in file order; owned */
	size_t n_segments;
	char *build_id;	   /* lowercase hex of the NT_GNU_BUILD_ID note, NULL when absent; owned */
	char *go_build_id; /* Go's build id (the "Go" note), NULL when absent; owned */
	uint64_t size;	   /* file size in bytes */
	int root_pid;	   /* the process whose root path is in; 0: the host's root */
};

/*
 * Opens an ELF file. When fd >= 0 it is used (and owned from then on, closed
 * on error too); otherwise path is opened. path is always copied for reports.
 * Returns 0 and *out (free with elf_file__close()), or -errno: -ENOEXEC for
 * bytes that are not a well-formed ELF file.
 */
int elf_file__open(const char *path, int fd, struct elf_file **out);
void elf_file__close(struct elf_file *ef); /* accepts NULL */

/* Maps a file offset to the ELF virtual address of the PT_LOAD covering it. */
/* Copies len bytes at ELF virtual address vaddr out of the file (its
 * segments' file contents only). 0, -ERANGE outside them, or -errno. */
int elf_file__read_vaddr(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t len);

bool elf_file__offset_to_vaddr(const struct elf_file *ef, uint64_t offset, uint64_t *vaddr);

/*
 * The ELF virtual address of the first byte of a mapping of map_size bytes at
 * file offset map_offset, taken from the PT_LOAD segment with (at least) the
 * permission flags given (PF_X for code) that the mapping holds. Unlike
 * elf_file__offset_to_vaddr this accounts for the page rounding of the loader,
 * where a mapping starts in bytes belonging to the previous segment.
 */
bool elf_file__mapping_bias(const struct elf_file *ef, uint64_t map_offset, uint64_t map_size,
			    uint32_t flags, uint64_t *vaddr);

#endif
