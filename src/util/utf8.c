// SPDX-License-Identifier: Apache-2.0
#include "util/utf8.h"

#include <stdlib.h>
#include <string.h>

size_t utf8__seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	/* Reject overlong forms, surrogates and code points above U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

bool utf8__valid(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), len;

	for (size_t i = 0; i < n; i += len) {
		/* ASCII runs are most of what is checked: no call per byte. */
		if (s[i] < 0x80) {
			len = 1;
			continue;
		}
		len = utf8__seq_len(s + i, n - i);
		if (!len)
			return false;
	}
	return true;
}

char *utf8__sanitize(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), o = 0;
	char *out = malloc(3 * n + 1); /* each byte at most becomes U+FFFD's 3 bytes */

	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t len = utf8__seq_len(s + i, n - i);

		if (len) {
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	out[o] = '\0';
	return out;
}
