// SPDX-License-Identifier: Apache-2.0
/*
 * The kernel's BTF as our reader takes it (src/util/kernel_btf.c): the image
 * opened and indexed, the sampler's structs looked up, member paths resolved
 * (anonymous members, typedef chains, arrays), then the sampler's whole set
 * of offsets. The bytes are the kernel's, but any of them may be wrong:
 * bounded, never a read outside the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/kernel_btf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"task_struct",  "mm_struct", "vm_area_struct",
					    "linux_binprm", "pt_regs",	 "inner"};
	static const char *const paths[] = {"pid",   "thread.fsbase", "comm",	   "a", "p",
					    "x.y.z", "vm_end",	      "thread..x", "",	"loop"};
	struct op_kernel_offsets ko;
	struct kernel_btf *btf;
	uint32_t ids[sizeof(names) / sizeof(names[0])], off, sz;
	char why[256];

	if (kernel_btf__open(data, size, &btf))
		return 0;
	kernel_btf__find_structs(btf, names, ids, sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		for (size_t j = 0; j < sizeof(paths) / sizeof(paths[0]); j++) {
			/* The struct found, and ids around it (any kind, out of range). */
			(void)kernel_btf__member(btf, ids[i], paths[j], &off, &sz);
			(void)kernel_btf__member(btf, ids[i] + 1 + (uint32_t)j, paths[j], &off,
						 &sz);
		}
	}
	if (!kernel_btf__offsets(btf, &ko, why, sizeof(why)))
		(void)ko;
	else
		(void)strlen(why);
	(void)kernel_btf__type_count(btf);
	kernel_btf__free(btf);
	return 0;
}
