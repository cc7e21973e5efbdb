// SPDX-License-Identifier: Apache-2.0
/*
 * .gopclntab bytes (gopclntab__open), then lookups spread over the text the
 * table claims, as a stripped Go binary would hand them to us.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "elf/gopclntab.h"

/* Where Go's linker puts .text in an amd64 executable: the seeds' tables use it. */
#define TEXT_START 0x401000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopclntab *t = NULL;
	struct gopclntab_frame f;

	if (gopclntab__open(data, size, TEXT_START, &t))
		return 0;
	(void)gopclntab__version(t);
	(void)gopclntab__n_funcs(t);
	for (uint64_t i = 0; i < 256; i++) {
		if (gopclntab__lookup(t, TEXT_START + i * 0x731, &f))
			continue;
		(void)strlen(f.name);
		if (f.file)
			(void)strlen(f.file);
	}
	gopclntab__lookup(t, 0, &f);
	gopclntab__lookup(t, UINT64_MAX, &f);
	gopclntab__free(t);
	return 0;
}
