// SPDX-License-Identifier: Apache-2.0
#include "util/id_pool.h"

#include <stdlib.h>
#include <string.h>

void id_pool__init(struct id_pool *p)
{
	memset(p, 0, sizeof(*p));
}

void id_pool__clear(struct id_pool *p)
{
	if (!p)
		return;
	free(p->slots);
	free(p->free);
	id_pool__init(p);
}

uint32_t id_pool__add(struct id_pool *p, void *obj)
{
	if (p->n_free) {
		uint32_t id = p->free[--p->n_free];

		p->slots[id - 1] = obj;
		p->live++;
		return id;
	}
	if (p->n_slots >= UINT32_MAX)
		return 0;
	if (p->n_slots == p->cap_slots) {
		size_t cap = p->cap_slots ? p->cap_slots * 2 : 256;
		void **tmp = realloc(p->slots, cap * sizeof(*tmp));

		if (!tmp)
			return 0;
		p->slots = tmp;
		p->cap_slots = cap;
	}
	p->slots[p->n_slots++] = obj;
	p->live++;
	return (uint32_t)p->n_slots;
}

void *id_pool__get(const struct id_pool *p, uint32_t id)
{
	return id && id <= p->n_slots ? p->slots[id - 1] : NULL;
}

void *id_pool__remove(struct id_pool *p, uint32_t id)
{
	void *obj = id_pool__get(p, id);

	if (!obj)
		return NULL;
	if (p->n_free == p->cap_free) {
		size_t cap = p->cap_free ? p->cap_free * 2 : 256;
		uint32_t *tmp = realloc(p->free, cap * sizeof(*tmp));

		if (!tmp)
			return NULL; /* kept under its id: freed with the rest */
		p->free = tmp;
		p->cap_free = cap;
	}
	p->slots[id - 1] = NULL;
	p->free[p->n_free++] = id;
	p->live--;
	return obj;
}
