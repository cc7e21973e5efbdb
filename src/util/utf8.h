/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UTF-8 as the formats we write require it: protobuf string fields (pprof,
 * OTLP; Pyroscope refuses a profile holding a string that is not UTF-8, Go's
 * protobuf decoder a proto3 one), JSON. The names we write come from other
 * processes' files and paths, which are any bytes.
 */
#ifndef OMNIPROF_UTIL_UTF8_H
#define OMNIPROF_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes, n >= 1), 0 when invalid
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
size_t utf8__seq_len(const unsigned char *s, size_t n);
/* Whether the NUL-terminated s is valid UTF-8. */
bool utf8__valid(const char *s);
/* A copy of s with each invalid byte replaced by U+FFFD, or NULL on ENOMEM. Caller frees. */
char *utf8__sanitize(const char *s);

#endif
