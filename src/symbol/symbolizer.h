/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names for frames: kernel addresses through kallsyms, native addresses
 * through the symbols of the file they were resolved to. A frame that cannot
 * be named gets "module+0xOFFSET", never dropped.
 */
#ifndef OMNIPROF_SYMBOL_SYMBOLIZER_H
#define OMNIPROF_SYMBOL_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct file_cache;
struct kallsyms;
struct python;

struct symbolizer_stats {
	uint64_t kernel_unnamed;
	uint64_t native_unnamed;
};

struct symbolizer {
	struct file_cache *files;
	struct kallsyms *ksyms; /* loaded on the first kernel frame */
	const struct python *python; /* names Python frames; NULL: shown unnamed */
	bool ksyms_tried;
	struct symbolizer_stats stats;
};

void symbolizer__init(struct symbolizer *s, struct file_cache *files);
void symbolizer__clear(struct symbolizer *s); /* accepts NULL */

/*
 * Writes the name of a frame into buf (len bytes) and returns buf.
 * is_return: addr is a return address (look up addr - 1, the call).
 * Kernel: *module receives the module name, or NULL for the kernel image.
 */
const char *symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return,
			       const char **module, char *buf, size_t len);
const char *symbolizer__native(struct symbolizer *s, uint32_t file_id, uint64_t addr,
			       bool is_return, char *buf, size_t len);
/* Text for an OP_FRAME_ERROR frame's reason. */
const char *symbolizer__error(uint64_t reason);

#endif
