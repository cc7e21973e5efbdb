/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small open-addressing hash map from caller-defined keys to caller-owned
 * entries. The map stores pointers only; the caller computes hashes and
 * says how two keys compare, so one implementation serves interning tables,
 * the trace aggregator and the process table alike.
 */
#ifndef OMNIPROF_UTIL_HASHMAP_H
#define OMNIPROF_UTIL_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when entry (as stored) matches key (as passed to lookup). */
typedef bool (*hashmap_equal_fn)(const void *entry, const void *key, void *ctx);

struct hashmap_slot {
	uint64_t hash; /* 0 = empty (hashes are forced non-zero) */
	void *entry;
};

struct hashmap {
	struct hashmap_slot *slots;
	size_t cap; /* power of two or 0 */
	size_t len;
	hashmap_equal_fn equal;
	void *ctx;
};

void hashmap__init(struct hashmap *m, hashmap_equal_fn equal, void *ctx);
/* Frees the slot array only; entries belong to the caller. Accepts NULL. */
void hashmap__clear(struct hashmap *m);
/* Returns the entry whose key equals key, or NULL. */
void *hashmap__find(const struct hashmap *m, uint64_t hash, const void *key);
/* Inserts entry under hash (the caller checked it is absent): 0 or -ENOMEM. */
int hashmap__insert(struct hashmap *m, uint64_t hash, void *entry);
/* Removes and returns the entry matching key, or NULL. */
void *hashmap__remove(struct hashmap *m, uint64_t hash, const void *key);
/* Removes this very entry (stored under hash); false when absent. */
bool hashmap__remove_entry(struct hashmap *m, uint64_t hash, const void *entry);

/* Iteration: for (size_t i = 0; hashmap__next(m, &i, &entry);) ... */
bool hashmap__next(const struct hashmap *m, size_t *iter, void **entry);

/* 64-bit hashing helpers (FNV-1a mixed with a finaliser). */
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed);
uint64_t hash_u64(uint64_t x);
/*
 * The same job 8 bytes at a time, for fixed-layout keys hashed per sample or
 * per frame (a 16-byte frame: about 25 instructions instead of 110). Values
 * differ from hash_bytes()'s: only for in-memory tables, never stored.
 */
uint64_t hash_mem(const void *data, size_t len, uint64_t seed);
static inline uint64_t hash_str(const char *s, uint64_t seed)
{
	uint64_t h = seed ^ 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return hash_u64(h);
}

#endif
