/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One string interner: each distinct string gets a dense index, in the order
 * first seen, and the strings can be read back by index or as one array (the
 * string tables of pprof and OTLP, frame text ids, kallsyms' module names).
 *
 * Strings are borrowed (the caller's, which must outlive the interner: the
 * profile's pool, constants) or, with STRING_INTERN_COPY, copied: each copy is
 * its own allocation, so a pointer from string_intern__at() stays valid until
 * string_intern__free(). With STRING_INTERN_EMPTY_ZERO, index 0 is "" and
 * NULL and "" both intern to it, as pprof and OTLP want.
 *
 * The interner's hash map points back at it: do not move it once initialised.
 */
#ifndef OMNIPROF_UTIL_STRING_INTERN_H
#define OMNIPROF_UTIL_STRING_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

#define STRING_INTERN_COPY	 0x1u /* keep copies (freed by string_intern__free) */
#define STRING_INTERN_EMPTY_ZERO 0x2u /* index 0 is "" (NULL and "" map to it) */

/* Indices are kept within int32 (OTLP's are int32, frame ids uint32). */
#define STRING_INTERN_MAX INT32_MAX

struct string_intern {
	struct hashmap index; /* entry: (void *)(uintptr_t)(i + 1) */
	const char **v;	      /* v[0 .. n): the strings, in the order first interned */
	size_t n, cap;
	unsigned flags;
};

/* 0 or -ENOMEM. Free with string_intern__free() (also after a failure). */
int string_intern__init(struct string_intern *t, unsigned flags);
/* Frees the index, the array and the copies; accepts NULL. */
void string_intern__free(struct string_intern *t);

/* s's index (added if new), or -ENOMEM; -EINVAL for NULL without EMPTY_ZERO. */
int64_t string_intern__add(struct string_intern *t, const char *s);
/*
 * The same for the first len bytes of s (up to a NUL within them), which need
 * not be NUL-terminated: only with STRING_INTERN_COPY (else -EINVAL).
 */
int64_t string_intern__add_len(struct string_intern *t, const char *s, size_t len);

static inline size_t string_intern__count(const struct string_intern *t)
{
	return t->n;
}

/* The string of index i (i < count). */
static inline const char *string_intern__at(const struct string_intern *t, size_t i)
{
	return t->v[i];
}

/* All count strings, index order (valid until the next add). */
static inline const char *const *string_intern__strings(const struct string_intern *t)
{
	return t->v;
}

#endif
