// SPDX-License-Identifier: Apache-2.0
#include "pprof_read.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

Perftools__Profiles__Profile *tu_read_pprof(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	size_t len = 0, cap = 1 << 16;
	uint8_t *buf = malloc(cap);
	Perftools__Profiles__Profile *p = NULL;
	int n;

	if (!gz || !buf)
		goto cleanup;
	while ((n = gzread(gz, buf + len, (unsigned int)(cap - len))) > 0) {
		len += (size_t)n;
		if (len == cap) {
			uint8_t *tmp = realloc(buf, cap * 2);

			if (!tmp)
				goto cleanup;
			buf = tmp;
			cap *= 2;
		}
	}
	p = perftools__profiles__profile__unpack(NULL, len, buf);
cleanup:
	if (gz)
		gzclose(gz);
	free(buf);
	return p;
}

long tu_line_of(const char *text, const char *needle)
{
	const char *at = strstr(text, needle);
	long line = 1;

	if (!at)
		return 0;
	for (const char *p = text; p < at; p++)
		line += *p == '\n';
	return line;
}
