/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small dense ids for objects: 1, 2, 3, ... handed out in order, an id given
 * back reused first, so the ids stay as few as the objects alive (a trace
 * keeps an id in 32 bits where the object's own key would take more). The
 * pool holds the pointers, not the objects: their owner frees them.
 */
#ifndef OMNIPROF_UTIL_ID_POOL_H
#define OMNIPROF_UTIL_ID_POOL_H

#include <stddef.h>
#include <stdint.h>

struct id_pool {
	void **slots;	/* slots[id - 1]; NULL: a free id */
	size_t n_slots; /* ids handed out */
	size_t cap_slots;
	uint32_t *free; /* ids given back, reused first */
	size_t n_free;
	size_t cap_free;
	size_t live; /* ids in use */
};

/* A zeroed struct id_pool is an empty pool. */
void id_pool__init(struct id_pool *p);
/* Frees the pool's own memory (not the objects: walk them first with id_pool__get). */
void id_pool__clear(struct id_pool *p); /* accepts NULL */

/* An id for obj (not NULL), 0 on ENOMEM. */
uint32_t id_pool__add(struct id_pool *p, void *obj);
/* The object of id, NULL for 0, a free or an unknown id. */
void *id_pool__get(const struct id_pool *p, uint32_t id);
/*
 * Gives id back: returns its object (the caller frees it) and the id goes to
 * the next new object. NULL when id holds nothing, or when the pool cannot
 * remember the free id (ENOMEM): the object then stays under its id.
 */
void *id_pool__remove(struct id_pool *p, uint32_t id);
/* Largest id handed out so far (ids 1..id_pool__end(p) may hold objects). */
static inline size_t id_pool__end(const struct id_pool *p)
{
	return p->n_slots;
}

#endif
