// SPDX-License-Identifier: Apache-2.0
#include "cli/otel_env.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* [p, end) trimmed and percent-decoded: malloc'd (caller frees), or NULL with errno. */
static char *decode(const char *p, const char *end, bool percent)
{
	char *out, *o;

	while (p < end && isspace((unsigned char)*p))
		p++;
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	out = o = malloc((size_t)(end - p) + 1);
	if (!out)
		return NULL;
	while (p < end) {
		if (percent && *p == '%') {
			int hi = end - p >= 3 ? hex(p[1]) : -1, lo = end - p >= 3 ? hex(p[2]) : -1;

			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
				free(out);
				errno = EINVAL;
				return NULL;
			}
			*o++ = (char)(hi << 4 | lo);
			p += 3;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

void otel__kv_free(struct otel_kv *kv, size_t n)
{
	if (!kv)
		return;
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

int otel__parse_kv_list(const char *text, struct otel_kv **out, size_t *n, const char **why)
{
	struct otel_kv *kv = NULL;
	size_t count = 0, cap = 0;
	const char *p = text;
	int err = 0;

	*out = NULL;
	*n = 0;
	*why = NULL;
	while (*p) {
		const char *end = strchr(p, ','), *eq;

		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (!eq) {
			bool blank = true;

			for (const char *q = p; q < end; q++)
				blank &= isspace((unsigned char)*q) != 0;
			if (!blank) {
				*why = "an entry without '='";
				err = -EINVAL;
				goto cleanup;
			}
		} else {
			if (count == cap) {
				struct otel_kv *grown;

				cap = cap ? 2 * cap : 8;
				grown = realloc(kv, cap * sizeof(*kv));
				if (!grown) {
					err = -ENOMEM;
					goto cleanup;
				}
				kv = grown;
			}
			kv[count].key = decode(p, eq, false);
			kv[count].value = kv[count].key ? decode(eq + 1, end, true) : NULL;
			if (!kv[count].key || !kv[count].value) {
				err = errno == EINVAL ? -EINVAL : -ENOMEM;
				*why = err == -EINVAL ? "a bad percent escape" : NULL;
				free(kv[count].key);
				goto cleanup;
			}
			count++;
			if (!*kv[count - 1].key) {
				*why = "an empty key";
				err = -EINVAL;
				goto cleanup;
			}
		}
		p = *end ? end + 1 : end;
	}
	*out = kv;
	*n = count;
	return 0;
cleanup:
	otel__kv_free(kv, count);
	return err;
}

bool otel__bool(const char *text)
{
	return text && !strcasecmp(text, "true");
}
