// SPDX-License-Identifier: Apache-2.0
/*
 * Go stack deltas (src/unwind/go_deltas.c over gopclntab__func and
 * gopclntab__pcsp): the bytes as a .gopclntab, then searched for a pclntab
 * by its magic as in a binary without section headers.
 */
#include <stddef.h>
#include <stdint.h>

#include "unwind/go_deltas.h"

/* Where Go's linker puts .text in an amd64 executable: the seeds' tables use it. */
#define TEXT_START 0x401000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_delta_table t;
	struct go_delta_stats st;
	long off;

	if (!go_deltas__build(data, size, TEXT_START, &t, &st)) {
		/* Sorted, as the page trees need. */
		for (size_t i = 1; i < t.n; i++)
			if (t.deltas[i - 1].addr >= t.deltas[i].addr)
				__builtin_trap();
		stack_delta_table__free(&t);
	}
	off = go_deltas__find_pclntab(data, size, TEXT_START, TEXT_START + (1ull << 26));
	if (off >= 0 && !go_deltas__build(data + off, size - (size_t)off, TEXT_START, &t, &st))
		stack_delta_table__free(&t);
	return 0;
}
