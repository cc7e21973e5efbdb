// SPDX-License-Identifier: Apache-2.0
#include "util/string_intern.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

/* A lookup key: len bytes with no NUL among them. */
struct intern_key {
	const char *s;
	size_t len;
};

static bool intern_equal(const void *entry, const void *key, void *ctx)
{
	const struct string_intern *t = ctx;
	const struct intern_key *k = key;
	const char *s = t->v[(uintptr_t)entry - 1];

	/* strncmp stops at s's NUL, so s[len] is only read when s is that long. */
	return strncmp(s, k->s, k->len) == 0 && s[k->len] == '\0';
}

int string_intern__init(struct string_intern *t, unsigned flags)
{
	memset(t, 0, sizeof(*t));
	t->flags = flags;
	hashmap__init(&t->index, intern_equal, t);
	if (flags & STRING_INTERN_EMPTY_ZERO) {
		/* Outside the index: "" never reaches the lookup. */
		if (array__grow(t->v, t->cap, t->n))
			return -ENOMEM;
		t->v[t->n++] = "";
	}
	return 0;
}

void string_intern__free(struct string_intern *t)
{
	if (!t)
		return;
	if (t->flags & STRING_INTERN_COPY) {
		size_t first = t->flags & STRING_INTERN_EMPTY_ZERO ? 1 : 0;

		for (size_t i = first; i < t->n; i++)
			free((char *)t->v[i]);
	}
	hashmap__clear(&t->index);
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

static int64_t add(struct string_intern *t, const char *s, size_t len)
{
	struct intern_key key = {s, len};
	uint64_t hash = hash_bytes(s, len, 0); /* = hash_str(s, 0) of the same text */
	void *found = hashmap__find(&t->index, hash, &key);
	const char *stored = s;

	if (found)
		return (int64_t)((uintptr_t)found - 1);
	if (array__reserve_max(t->v, t->cap, t->n + 1, (size_t)STRING_INTERN_MAX + 1))
		return -ENOMEM;
	if (t->flags & STRING_INTERN_COPY) {
		char *copy = strndup(s, len);

		if (!copy)
			return -ENOMEM;
		stored = copy;
	}
	if (hashmap__insert(&t->index, hash, (void *)(uintptr_t)(t->n + 1))) {
		if (stored != s)
			free((char *)stored);
		return -ENOMEM;
	}
	t->v[t->n] = stored;
	return (int64_t)t->n++;
}

int64_t string_intern__add(struct string_intern *t, const char *s)
{
	if (!s || !*s) {
		if (t->flags & STRING_INTERN_EMPTY_ZERO)
			return 0;
		if (!s)
			return -EINVAL;
	}
	return add(t, s, strlen(s));
}

int64_t string_intern__add_len(struct string_intern *t, const char *s, size_t len)
{
	if (!(t->flags & STRING_INTERN_COPY) || (!s && len))
		return -EINVAL;
	len = strnlen(s ? s : "", len);
	if (!len && (t->flags & STRING_INTERN_EMPTY_ZERO))
		return 0;
	return add(t, s ? s : "", len);
}
