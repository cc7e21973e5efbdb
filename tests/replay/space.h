/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A process's executable mappings as the agent sees them, built from the text
 * of /proc/PID/maps with the agent's own code (proc_maps__parse,
 * elf_file__open, elf_file__mapping_bias): which ELF file and bias is behind
 * each address, the function that covers it (native_symbols), and the
 * stack-delta tables user_unwind needs. Works on a live process (capture)
 * and on a snapshot (replay): only the way memory is read differs, and memory
 * is read only for the vDSO, which is no file.
 */
#ifndef OMNIPROF_TESTS_REPLAY_SPACE_H
#define OMNIPROF_TESTS_REPLAY_SPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_file;
struct native_symbols;
struct user_unwind_tables;

#define SPACE_MAX_PLT 4

struct space_file {
	char *path;	     /* owned; "[vdso]" for the vDSO */
	struct elf_file *ef; /* owned; NULL when the file could not be opened */
	int open_error;
	struct native_symbols *syms; /* owned; loaded on first use */
	bool syms_tried;
	uint64_t plt[SPACE_MAX_PLT][2]; /* ELF vaddr ranges of .plt* sections */
	int n_plt;
};

struct space_map {
	uint64_t start, end, offset;
	uint64_t bias; /* ELF vaddr = address - bias, when has_bias */
	bool has_bias;
	bool is_vdso;
	uint64_t inode;
	struct space_file *file; /* NULL: anonymous memory */
};

typedef int (*space_read_fn)(void *ctx, void *dst, size_t len, uint64_t addr);

/* A mapping of a file that is not writable: its bytes are the file's. */
struct space_ro {
	uint64_t start, end, offset;
	char *path; /* owned */
};

struct space {
	struct space_map *maps; /* executable mappings, sorted by start; owned */
	size_t n_maps;
	struct space_file **files; /* owned */
	size_t n_files;
	struct space_ro *ro; /* read-only file mappings, any order; owned */
	size_t n_ro;
};

/* Builds sp from maps text; read gives the vDSO's bytes. 0 or -errno. */
int space__open(struct space *sp, const char *maps, size_t len, space_read_fn read, void *ctx);
void space__close(struct space *sp); /* accepts a zeroed or NULL sp */

const struct space_map *space__find(const struct space *sp, uint64_t addr);
/*
 * The function covering addr (addr - 1 for a return address), or NULL.
 * *offset (may be NULL) receives addr minus the function's start.
 */
const char *space__function(const struct space *sp, uint64_t addr, bool is_return,
			    uint64_t *offset);
/* A frame's name: the function, else "file+0xVADDR", "[anon]+0xOFFSET" in anonymous
 * memory, else "[unknown 0xADDR]"; written into buf. */
const char *space__name(const struct space *sp, uint64_t addr, bool is_return, char *buf,
			size_t len);
/*
 * Copies len bytes at addr from the file behind a read-only file mapping
 * (what a snapshot does not copy: its bytes are the file's, such as the
 * strings a type object points to). 0, or -EFAULT.
 */
int space__read_file(const struct space *sp, void *dst, size_t len, uint64_t addr);
/* True when addr is inside a .plt section of its file. */
bool space__in_plt(const struct space *sp, uint64_t addr);
/*
 * Adds to t what the agent puts in its mappings trie (lpm_ranges__range_id() in
 * unwind/lpm_ranges.c): each ELF file whose code segment a mapping holds, the
 * vDSO included, with its table (frame pointers when it has none); code with
 * no file or no ELF behind it as anonymous code. Returns the number of
 * mappings added.
 */
int space__add_tables(const struct space *sp, struct user_unwind_tables *t);

#endif
