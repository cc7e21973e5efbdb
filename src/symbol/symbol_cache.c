// SPDX-License-Identifier: Apache-2.0
#include "symbol/symbol_cache.h"

#include <stdlib.h>
#include <string.h>

#include "util/memory.h"

/* Evictions freeing this much are followed by returning free heap pages. */
#define RELEASE_AFTER_BYTES (1u << 20)

static bool entry_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct symbol_cache_entry *)entry)->key == *(const uint64_t *)key;
}

void symbol_cache__init(struct symbol_cache *c, size_t limit, void (*free_value)(void *value))
{
	memset(c, 0, sizeof(*c));
	hashmap__init(&c->index, entry_equal, NULL);
	list__init(&c->lru);
	c->limit = limit;
	c->idle_passes = SYMBOL_CACHE_IDLE_PASSES;
	c->free_value = free_value;
}

static struct symbol_cache_entry *entry_of(struct list_node *n)
{
	return n ? list_entry(n, struct symbol_cache_entry, lru) : NULL;
}

static void drop(struct symbol_cache *c, struct symbol_cache_entry *e)
{
	list__del(&e->lru);
	hashmap__remove(&c->index, hash_u64(e->key), &e->key);
	c->cost -= e->cost;
	c->n_entries--;
	if (c->free_value && e->value)
		c->free_value(e->value);
	free(e);
}

void symbol_cache__clear(struct symbol_cache *c)
{
	if (!c || !c->lru.next)
		return;
	while (!list__empty(&c->lru))
		drop(c, entry_of(list__first(&c->lru)));
	hashmap__clear(&c->index);
}

struct symbol_cache_entry *symbol_cache__get(struct symbol_cache *c, uint64_t key)
{
	struct symbol_cache_entry *e = hashmap__find(&c->index, hash_u64(key), &key);

	if (!e) {
		c->stats.misses++;
		return NULL;
	}
	c->stats.hits++;
	e->pass = c->pass;
	list__move_head(&c->lru, &e->lru);
	return e;
}

struct symbol_cache_entry *symbol_cache__find(struct symbol_cache *c, uint64_t key)
{
	return hashmap__find(&c->index, hash_u64(key), &key);
}

/*
 * The entry to evict for room beside keep (NULL: none), NULL when there is
 * none to take: the least recently used if neither this pass nor the one
 * before used it; else, unless only_unused, the most recently used.
 */
static struct symbol_cache_entry *
victim_for(struct symbol_cache *c, const struct symbol_cache_entry *keep, bool only_unused)
{
	struct list_node *n = list__last(&c->lru);
	struct symbol_cache_entry *v;

	if (n && keep && n == &keep->lru)
		n = list__prev(&c->lru, n);
	v = entry_of(n);
	if (!v)
		return NULL;
	if (v->pass + 1 < c->pass)
		return v;
	if (only_unused)
		return NULL;
	n = list__first(&c->lru);
	if (n && keep && n == &keep->lru)
		n = list__next(&c->lru, n);
	return entry_of(n);
}

/* Evicts until the total is within the bound or victim_for() finds none. */
static void evict(struct symbol_cache *c, const struct symbol_cache_entry *keep, bool only_unused)
{
	struct symbol_cache_entry *victim;
	size_t evicted = 0;

	while (c->limit && c->cost > c->limit && (victim = victim_for(c, keep, only_unused))) {
		evicted += victim->cost;
		drop(c, victim);
		c->stats.evictions++;
	}
	/* What the evicted files freed is mostly small chunks: give the pages back. */
	if (evicted >= RELEASE_AFTER_BYTES)
		memory__release();
}

struct symbol_cache_entry *symbol_cache__put(struct symbol_cache *c, uint64_t key, void *value,
					     size_t cost)
{
	struct symbol_cache_entry *e = calloc(1, sizeof(*e));

	if (!e || hashmap__insert(&c->index, hash_u64(key), e)) {
		free(e);
		if (c->free_value && value)
			c->free_value(value);
		return NULL;
	}
	e->key = key;
	e->value = value;
	e->pass = c->pass;
	e->cost = cost;
	c->cost += cost;
	list__add_head(&c->lru, &e->lru);
	c->n_entries++;
	evict(c, e, false);
	if (c->cost > c->stats.peak_cost)
		c->stats.peak_cost = c->cost;
	return e;
}

/*
 * Drops the big entries no lookup used in the last idle_passes passes. They
 * lie at the tail (least recently used first); an idle small entry is
 * stepped over, so the walk stops at the first entry used since.
 */
static void drop_idle(struct symbol_cache *c)
{
	struct list_node *n = list__last(&c->lru);
	size_t freed = 0;

	while (c->idle_passes && n) {
		struct symbol_cache_entry *e = entry_of(n);

		if (e->pass + c->idle_passes >= c->pass)
			break;
		n = list__prev(&c->lru, n);
		if (e->cost < SYMBOL_CACHE_IDLE_MIN_COST)
			continue;
		freed += e->cost;
		drop(c, e);
		c->stats.evictions++;
		c->stats.idle_drops++;
	}
	/*
	 * Most of a file's DWARF state is small chunks (units, line tables):
	 * freed, they would stay as free heap up to memory__release()'s 16 MiB.
	 * An idle drop is rare (once per file per idle spell): trim now.
	 */
	if (freed >= RELEASE_AFTER_BYTES)
		memory__trim();
}

void symbol_cache__new_pass(struct symbol_cache *c)
{
	c->pass++;
	drop_idle(c);
	evict(c, NULL, false);
}

void symbol_cache__charge(struct symbol_cache *c, struct symbol_cache_entry *e, size_t cost)
{
	e->cost += cost;
	c->cost += cost;
	evict(c, e, true);
	if (c->cost > c->stats.peak_cost)
		c->stats.peak_cost = c->cost;
}

void symbol_cache__shrink_each(struct symbol_cache *c, size_t (*fn)(void *value, void *ctx),
			       void *ctx)
{
	for (struct list_node *n = list__first(&c->lru); n; n = list__next(&c->lru, n)) {
		struct symbol_cache_entry *e = entry_of(n);
		size_t freed = e->value ? fn(e->value, ctx) : 0;

		freed = freed < e->cost ? freed : e->cost;
		e->cost -= freed;
		c->cost -= freed;
	}
}

void symbol_cache__adjust_each(struct symbol_cache *c,
			       ptrdiff_t (*fn)(struct symbol_cache_entry *e, void *ctx), void *ctx)
{
	for (struct list_node *n = list__first(&c->lru); n; n = list__next(&c->lru, n)) {
		struct symbol_cache_entry *e = entry_of(n);
		ptrdiff_t delta = e->value ? fn(e, ctx) : 0;
		size_t less;

		if (delta >= 0) {
			e->cost += (size_t)delta;
			c->cost += (size_t)delta;
			continue;
		}
		less = (size_t)-delta < e->cost ? (size_t)-delta : e->cost;
		e->cost -= less;
		c->cost -= less;
	}
	if (c->cost > c->stats.peak_cost)
		c->stats.peak_cost = c->cost;
}

size_t symbol_cache__remove_if(struct symbol_cache *c,
			       bool (*pred)(const struct symbol_cache_entry *e, void *ctx),
			       void *ctx)
{
	struct list_node *n = list__first(&c->lru);
	size_t removed = 0;

	while (n) {
		struct symbol_cache_entry *e = entry_of(n);

		n = list__next(&c->lru, n);
		if (!pred(e, ctx))
			continue;
		drop(c, e);
		c->stats.evictions++;
		removed++;
	}
	return removed;
}

bool symbol_cache__remove(struct symbol_cache *c, uint64_t key)
{
	struct symbol_cache_entry *e = hashmap__find(&c->index, hash_u64(key), &key);

	if (!e)
		return false;
	drop(c, e);
	return true;
}

void symbol_cache__trim(struct symbol_cache *c, size_t bound)
{
	size_t evicted = 0;

	while (c->cost > bound && !list__empty(&c->lru)) {
		struct symbol_cache_entry *e = entry_of(list__last(&c->lru));

		evicted += e->cost;
		drop(c, e);
		c->stats.evictions++;
	}
	if (evicted >= RELEASE_AFTER_BYTES)
		memory__release();
}
