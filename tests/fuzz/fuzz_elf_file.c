// SPDX-License-Identifier: Apache-2.0
/*
 * A whole ELF file: headers, segments, sections and notes (elf_file__open,
 * through libelf), then what the agent asks of an opened file: biases of
 * mappings and its stack-delta table from .eh_frame/.debug_frame, and
 * whether it is CRuby's VM (ruby_binary__inspect: symbols, relocations, and
 * for a stripped 3.3+ the exported functions' code decoded).
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "interp/ruby/ruby_binary.h"
#include "unwind/stack_deltas.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_delta_table t = {0};
	struct ruby_binary rb;
	struct elf_file *ef = NULL;
	uint64_t vaddr;
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	if (elf_file__open("fuzz.elf", fd, &ef)) /* owns fd from here, on error too */
		return 0;
	for (size_t i = 0; i < ef->n_segments; i++) {
		(void)elf_file__offset_to_vaddr(ef, ef->segments[i].offset, &vaddr);
		(void)elf_file__mapping_bias(ef, ef->segments[i].offset & ~0xfffull, 0x2000, 1,
					     &vaddr);
	}
	(void)elf_file__mapping_bias(ef, 0, UINT64_MAX, 1, &vaddr);
	if (stack_deltas__build(ef, &t) == 0)
		(void)stack_delta_table__find(&t, 0x1000);
	stack_delta_table__free(&t);
	(void)ruby_binary__inspect(ef, &rb);
	elf_file__close(ef);
	return 0;
}
