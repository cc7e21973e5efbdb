// SPDX-License-Identifier: Apache-2.0
/* /proc/PID/maps text (proc_maps__parse): any bytes, never a crash or a leak. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proc/proc_maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_map *maps = NULL;
	size_t n = 0, skipped = 0;

	if (proc_maps__parse((const char *)data, size, &maps, &n, &skipped) == 0) {
		/* Read every path back: a bad length or terminator shows here under ASan. */
		for (size_t i = 0; i < n; i++)
			(void)strlen(maps[i].path);
		proc_maps__free(maps, n);
	}
	return 0;
}
