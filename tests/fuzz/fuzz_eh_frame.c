// SPDX-License-Identifier: Apache-2.0
/*
 * .eh_frame / .debug_frame bytes (stack_deltas__parse). Input: one byte of
 * options (bit 0: .debug_frame dialect), then the section's contents, which
 * is placed at a fixed address (pc-relative encodings resolve against it).
 * Every table built must be sorted with distinct addresses.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "unwind/stack_deltas.h"

#define SECTION_VADDR 0x10000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_delta_table t = {0};

	if (size < 1)
		return 0;
	if (stack_deltas__parse(data + 1, size - 1, SECTION_VADDR, data[0] & 1, &t) == 0) {
		for (size_t i = 1; i < t.n; i++)
			if (t.deltas[i - 1].addr >= t.deltas[i].addr)
				abort(); /* the documented invariant: sorted, no two equal */
		if (t.n) {
			(void)stack_delta_table__find(&t, t.deltas[0].addr);
			(void)stack_delta_table__find(&t, t.deltas[t.n - 1].addr + 1);
		}
	}
	stack_delta_table__free(&t);
	return 0;
}
