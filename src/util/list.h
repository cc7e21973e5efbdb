/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An intrusive doubly linked list, for the least-recently-used orders of the
 * caches (files no process maps, open descriptors, loaded unwind tables,
 * symbol data): an element embeds a struct list_node and is on the list, off
 * it or moved in O(1), with no allocation. The list is circular around a
 * head node that belongs to no element. A zeroed node is off every list.
 *
 *	struct item { ...; struct list_node lru; };
 *	list__add_tail(&cache->lru, &it->lru);              // most recent last
 *	struct list_node *n = list__first(&cache->lru);     // the oldest, or NULL
 *	struct item *old = list_entry(n, struct item, lru);
 */
#ifndef OMNIPROF_UTIL_LIST_H
#define OMNIPROF_UTIL_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_node {
	struct list_node *prev, *next; /* NULL while off the list (elements) */
};

#define list_entry(node, type, member) ((type *)((char *)(node)-offsetof(type, member)))

/* An empty list (head). */
static inline void list__init(struct list_node *head)
{
	head->prev = head->next = head;
}

static inline bool list__empty(const struct list_node *head)
{
	return head->next == head;
}

/* True while element node is on a list. */
static inline bool list__linked(const struct list_node *node)
{
	return node->next != NULL;
}

static inline void list__insert_(struct list_node *node, struct list_node *prev,
				 struct list_node *next)
{
	node->prev = prev;
	node->next = next;
	prev->next = node;
	next->prev = node;
}

/* node (off any list) becomes the first of head's list. */
static inline void list__add_head(struct list_node *head, struct list_node *node)
{
	list__insert_(node, head, head->next);
}

/* node (off any list) becomes the last of head's list. */
static inline void list__add_tail(struct list_node *head, struct list_node *node)
{
	list__insert_(node, head->prev, head);
}

/* Takes node off its list; a node already off is left alone. */
static inline void list__del(struct list_node *node)
{
	if (!list__linked(node))
		return;
	node->prev->next = node->next;
	node->next->prev = node->prev;
	node->prev = node->next = NULL;
}

/* node, on a list or off it, becomes the first / last of head's list. */
static inline void list__move_head(struct list_node *head, struct list_node *node)
{
	list__del(node);
	list__add_head(head, node);
}

static inline void list__move_tail(struct list_node *head, struct list_node *node)
{
	list__del(node);
	list__add_tail(head, node);
}

/* The first / last element's node, or NULL when the list is empty. */
static inline struct list_node *list__first(const struct list_node *head)
{
	return list__empty(head) ? NULL : head->next;
}

static inline struct list_node *list__last(const struct list_node *head)
{
	return list__empty(head) ? NULL : head->prev;
}

/* The node after / before node on head's list, or NULL at its end. */
static inline struct list_node *list__next(const struct list_node *head,
					   const struct list_node *node)
{
	return node->next == head ? NULL : node->next;
}

static inline struct list_node *list__prev(const struct list_node *head,
					   const struct list_node *node)
{
	return node->prev == head ? NULL : node->prev;
}

#endif
