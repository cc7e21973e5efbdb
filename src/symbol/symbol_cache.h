/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A least-recently-used cache with a memory bound: symbol data per file id
 * (sorted symbol tables, elfutils sessions, Go tables). Each entry states its
 * cost in bytes; adding one evicts the least recently used others until the
 * total fits the bound again, so a long run over churning processes keeps a
 * steady footprint: an evicted file is simply loaded again when next needed.
 */
#ifndef OMNIPROF_SYMBOL_SYMBOL_CACHE_H
#define OMNIPROF_SYMBOL_SYMBOL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

/* Why 256 MiB: the symbols and DWARF of a few dozen large binaries fit, and an agent that
 * claims to stay under a few hundred MiB of memory must bound its biggest cache well below. */
#define SYMBOL_CACHE_DEFAULT_MB 256

struct symbol_cache_entry {
	uint64_t key;
	void *value; /* owned by the cache (freed with free_value); may be NULL */
	size_t cost;
	struct symbol_cache_entry *prev, *next; /* most recently used first */
};

struct symbol_cache_stats {
	uint64_t hits;
	uint64_t misses;
	uint64_t evictions;
	size_t peak_cost;
};

struct symbol_cache {
	struct hashmap index;	       /* key -> struct symbol_cache_entry * */
	struct symbol_cache_entry lru; /* sentinel: lru.next is the most recent */
	size_t cost;
	size_t limit;
	size_t n_entries;
	void (*free_value)(void *value);
	struct symbol_cache_stats stats;
};

/* limit: bound in bytes (0: no bound). free_value frees values (may be NULL). */
void symbol_cache__init(struct symbol_cache *c, size_t limit, void (*free_value)(void *value));
void symbol_cache__clear(struct symbol_cache *c); /* frees every value; accepts NULL */

/* The entry for key, now the most recently used, or NULL (counted as a miss). */
struct symbol_cache_entry *symbol_cache__get(struct symbol_cache *c, uint64_t key);

/*
 * Adds value under key (absent: the caller looked it up) with its cost, then
 * evicts least recently used other entries until the total is within the
 * bound (an entry larger than the bound stays alone). Returns the entry, or
 * NULL on ENOMEM (value is then freed).
 */
struct symbol_cache_entry *symbol_cache__put(struct symbol_cache *c, uint64_t key, void *value,
					     size_t cost);

#endif
