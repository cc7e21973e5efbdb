// SPDX-License-Identifier: Apache-2.0
#include "util/array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int array__reserve_bytes(void *vp, size_t *cap, size_t need, size_t elem, size_t max)
{
	size_t new_cap = *cap ? *cap : ARRAY_MIN_CAP;
	void *old, *mem;

	if (need <= *cap)
		return 0;
	if (need > max || !elem)
		return -ENOMEM;
	while (new_cap < need)
		new_cap = new_cap > SIZE_MAX / 2 ? need : new_cap * 2;
	if (new_cap > max)
		new_cap = max;
	if (new_cap > SIZE_MAX / elem)
		return -ENOMEM;
	/* vp is the address of a typed pointer: read and written as bytes, so
	 * any element type's pointer goes through here without a cast at the
	 * call site. */
	memcpy(&old, vp, sizeof(old));
	mem = realloc(old, new_cap * elem);
	if (!mem)
		return -ENOMEM;
	memcpy(vp, &mem, sizeof(mem));
	*cap = new_cap;
	return 0;
}
