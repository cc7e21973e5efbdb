// SPDX-License-Identifier: Apache-2.0
#include "util/hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HASHMAP_MIN_CAP 16

void hashmap__init(struct hashmap *m, hashmap_equal_fn equal, void *ctx)
{
	m->slots = NULL;
	m->cap = 0;
	m->len = 0;
	m->equal = equal;
	m->ctx = ctx;
}

void hashmap__clear(struct hashmap *m)
{
	if (!m)
		return;
	free(m->slots);
	m->slots = NULL;
	m->cap = 0;
	m->len = 0;
}

static inline uint64_t fix_hash(uint64_t h)
{
	return h ? h : 1;
}

void *hashmap__find(const struct hashmap *m, uint64_t hash, const void *key)
{
	if (!m->cap)
		return NULL;
	hash = fix_hash(hash);
	for (size_t i = hash & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct hashmap_slot *s = &m->slots[i];
		if (!s->hash)
			return NULL;
		if (s->hash == hash && m->equal(s->entry, key, m->ctx))
			return s->entry;
	}
}

static void place(struct hashmap_slot *slots, size_t cap, uint64_t hash, void *entry)
{
	size_t i = hash & (cap - 1);
	while (slots[i].hash)
		i = (i + 1) & (cap - 1);
	slots[i].hash = hash;
	slots[i].entry = entry;
}

static int grow(struct hashmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : HASHMAP_MIN_CAP;
	struct hashmap_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].hash)
			place(slots, cap, m->slots[i].hash, m->slots[i].entry);
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int hashmap__insert(struct hashmap *m, uint64_t hash, void *entry)
{
	/* Keep the load factor under 3/4 so probe chains stay short. */
	if ((m->len + 1) * 4 > m->cap * 3) {
		int err = grow(m);
		if (err)
			return err;
	}
	place(m->slots, m->cap, fix_hash(hash), entry);
	m->len++;
	return 0;
}

/* Empties slot i and re-places the rest of its cluster (backward-shift deletion). */
static void *remove_slot(struct hashmap *m, size_t i)
{
	void *entry = m->slots[i].entry;
	size_t j;

	m->slots[i].hash = 0;
	m->len--;
	for (j = (i + 1) & (m->cap - 1); m->slots[j].hash; j = (j + 1) & (m->cap - 1)) {
		struct hashmap_slot s = m->slots[j];
		m->slots[j].hash = 0;
		place(m->slots, m->cap, s.hash, s.entry);
	}
	return entry;
}

void *hashmap__remove(struct hashmap *m, uint64_t hash, const void *key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	hash = fix_hash(hash);
	for (i = hash & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].hash)
			return NULL;
		if (m->slots[i].hash == hash && m->equal(m->slots[i].entry, key, m->ctx))
			return remove_slot(m, i);
	}
}

bool hashmap__remove_entry(struct hashmap *m, uint64_t hash, const void *entry)
{
	size_t i;

	if (!m->cap)
		return false;
	hash = fix_hash(hash);
	for (i = hash & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].hash)
			return false;
		if (m->slots[i].hash == hash && m->slots[i].entry == entry) {
			remove_slot(m, i);
			return true;
		}
	}
}

bool hashmap__next(const struct hashmap *m, size_t *iter, void **entry)
{
	for (; *iter < m->cap; (*iter)++) {
		if (m->slots[*iter].hash) {
			*entry = m->slots[(*iter)++].entry;
			return true;
		}
	}
	return false;
}

uint64_t hash_u64(uint64_t x)
{
	/* splitmix64 finaliser */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

uint64_t hash_mem(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ 0xcbf29ce484222325ull, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return hash_u64(h ^ len);
}

uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return hash_u64(h);
}
