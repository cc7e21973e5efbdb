// SPDX-License-Identifier: Apache-2.0
/* /proc/kallsyms text (kallsyms__parse), then lookups over the parsed table. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbol/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms *ks = NULL;
	uint64_t probe = 0;

	if (kallsyms__parse((const char *)data, size, &ks))
		return 0;
	/* Look up the first bytes as an address, and a few fixed ones. */
	memcpy(&probe, data, size < sizeof(probe) ? size : sizeof(probe));
	const uint64_t addrs[] = {0, 1, probe, 0xffffffff81000000ull, UINT64_MAX};
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct ksym v, *s = kallsyms__find(ks, addrs[i], &v) ? &v : NULL;

		if (s && s->name)
			(void)strlen(s->name);
		if (s && s->module)
			(void)strlen(s->module);
	}
	(void)kallsyms__count(ks);
	(void)kallsyms__restricted(ks);
	kallsyms__free(ks);
	return 0;
}
