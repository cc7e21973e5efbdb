/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A cache with a memory bound: symbol data per file slot (sorted symbol tables,
 * elfutils sessions, Go tables). Each entry states its cost in bytes; adding
 * one evicts others until the total fits the bound again, so a long run over
 * churning processes keeps a steady footprint: an evicted file is simply
 * loaded again when next needed.
 *
 * Which others: the profile builder names one file after the other, in the
 * same order every interval (a "pass", symbol_cache__new_pass()). Files no
 * pass used since the one before the current go first, least recently used
 * first (processes that left). Then the most recently used: the file the
 * pass has just finished with, which is the one needed furthest ahead. A
 * file that grows while it is looked up (libdw parses more of its DWARF)
 * only pushes out unused files; if that is not enough, the total stays over
 * the bound until the next file is added or the next pass starts, and the
 * grown file, then the most recently used, is the one to go. With plain LRU,
 * a set of files a little larger than the bound missed on every file of
 * every interval (with libc's inflated debug file and an interpreter library built with
 * -g, both reloaded every 5 s); this way the same part of it stays, and only
 * the rest is loaded again.
 */
#ifndef OMNIPROF_SYMBOL_SYMBOL_CACHE_H
#define OMNIPROF_SYMBOL_SYMBOL_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"
#include "util/list.h"

/*
 * Why 32 MiB: the agent's whole footprint is meant to stay under 64 MiB (aim:
 * 32). Entries are charged what they really hold (heap measured while
 * loading, what libdw keeps of the units lookups reach, counted, plus the file
 * sections elfutils reads in place), and
 * a profile names its frames one file after the other, so a bound smaller than
 * the files of one profile costs no reloads within it: measured on a whole
 * system with libc's DWARF (libc6-dbg) and an interpreter built with -g, record's peak
 * RSS went from 74 MB (256 MiB bound) to 41 MB, with the same CPU time.
 */
#define SYMBOL_CACHE_DEFAULT_MB 32

/*
 * Files idle this many whole passes (no lookup reached them: the frame memo
 * named all their addresses) are dropped at the next pass whatever the bound,
 * when they hold at least SYMBOL_CACHE_IDLE_MIN_COST: libdw keeps every unit,
 * line table and inflated section it read for the file's lifetime (libc's
 * debug file: 11-13 MiB in a busy agent), which the memo no longer needs. A file is
 * loaded again on its next new address (counted in files_loaded); smaller
 * entries (symbol tables alone, files without symbols) stay, as reloading
 * them costs more than they hold.
 */
#define SYMBOL_CACHE_IDLE_PASSES   3
#define SYMBOL_CACHE_IDLE_MIN_COST (256u << 10)

struct symbol_cache_entry {
	uint64_t key;
	void *value; /* owned by the cache (freed with free_value); may be NULL */
	size_t cost;
	uint64_t pass;	      /* the last pass that used it */
	struct list_node lru; /* in the cache's order, most recently used first */
};

struct symbol_cache_stats {
	uint64_t hits;
	uint64_t misses;
	uint64_t evictions;
	uint64_t idle_drops; /* evictions of idle files (see SYMBOL_CACHE_IDLE_PASSES) */
	size_t peak_cost;
};

struct symbol_cache {
	struct hashmap index; /* key -> struct symbol_cache_entry * */
	struct list_node lru; /* head: the first is the most recently used */
	size_t cost;
	size_t limit;
	size_t n_entries;
	uint64_t pass;	      /* the current pass */
	uint64_t idle_passes; /* drop big entries idle this many passes (0: never) */
	void (*free_value)(void *value);
	struct symbol_cache_stats stats;
};

/* limit: bound in bytes (0: no bound). free_value frees values (may be NULL). */
void symbol_cache__init(struct symbol_cache *c, size_t limit, void (*free_value)(void *value));
void symbol_cache__clear(struct symbol_cache *c); /* frees every value; accepts NULL */

/* The entry for key, now the most recently used, or NULL (counted as a miss). */
struct symbol_cache_entry *symbol_cache__get(struct symbol_cache *c, uint64_t key);
/* The entry of key or NULL, as it is: not counted, not moved in the LRU order. */
struct symbol_cache_entry *symbol_cache__find(struct symbol_cache *c, uint64_t key);

/* A new pass over the files starts (a profile is about to be named); drops
 * the big entries idle for idle_passes passes (SYMBOL_CACHE_IDLE_PASSES after
 * init), then brings the total back within the bound. */
void symbol_cache__new_pass(struct symbol_cache *c);

/*
 * Adds value under key (absent: the caller looked it up) with its cost, then
 * evicts other entries, in the order above, until the total is within the
 * bound (an entry larger than the bound stays alone). Returns the entry, or
 * NULL on ENOMEM (value is then freed).
 */
struct symbol_cache_entry *symbol_cache__put(struct symbol_cache *c, uint64_t key, void *value,
					     size_t cost);

/*
 * Adds cost to entry e (it grew: more of its file was parsed), then evicts
 * unused entries until the total is within the bound (see above).
 */
void symbol_cache__charge(struct symbol_cache *c, struct symbol_cache_entry *e, size_t cost);

/*
 * Calls fn(entry's value, ctx) for every entry with a value and takes what
 * it returns off the entry's cost (what the value gave back, e.g. file pages
 * dropped; at most the entry's cost). Evicts nothing.
 */
void symbol_cache__shrink_each(struct symbol_cache *c, size_t (*fn)(void *value, void *ctx),
			       void *ctx);
/*
 * Calls fn(entry, ctx) for every entry with a value and adds what it returns
 * to the entry's cost (negative: what the value gave back; the cost goes no
 * lower than 0). Evicts nothing: the next put, charge or pass does.
 */
void symbol_cache__adjust_each(struct symbol_cache *c,
			       ptrdiff_t (*fn)(struct symbol_cache_entry *e, void *ctx), void *ctx);
/*
 * Drops every entry for which pred(entry, ctx) is true (counted as evictions);
 * returns how many. The freed heap stays for reuse (no trim).
 */
size_t symbol_cache__remove_if(struct symbol_cache *c,
			       bool (*pred)(const struct symbol_cache_entry *e, void *ctx),
			       void *ctx);
/* Drops key's entry (its file went away). True when there was one. */
bool symbol_cache__remove(struct symbol_cache *c, uint64_t key);
/* Evicts least recently used entries until the total is within bound. */
void symbol_cache__trim(struct symbol_cache *c, size_t bound);

#endif
