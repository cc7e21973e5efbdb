// SPDX-License-Identifier: Apache-2.0
/* The intrusive list: order of insertion and moves, removal, LRU eviction from the front. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/list.h"

struct item {
	int id;
	struct list_node lru;
	int tail_guard;
};

/* The ids of head's list, front to back, into out (at most max); returns the count. */
static size_t ids(const struct list_node *head, int *out, size_t max)
{
	size_t n = 0;

	for (struct list_node *p = list__first(head); p && n < max; p = list__next(head, p))
		out[n++] = list_entry(p, struct item, lru)->id;
	return n;
}

/* The same back to front. */
static size_t ids_reverse(const struct list_node *head, int *out, size_t max)
{
	size_t n = 0;

	for (struct list_node *p = list__last(head); p && n < max; p = list__prev(head, p))
		out[n++] = list_entry(p, struct item, lru)->id;
	return n;
}

static void test_order(void **state)
{
	struct item it[5];
	struct list_node head;
	int got[8];

	(void)state;
	memset(it, 0, sizeof(it));
	list__init(&head);
	assert_true(list__empty(&head));
	assert_null(list__first(&head));
	assert_null(list__last(&head));
	for (int i = 0; i < 5; i++) {
		it[i].id = i;
		assert_false(list__linked(&it[i].lru)); /* zeroed: off the list */
	}
	list__add_tail(&head, &it[1].lru);
	list__add_tail(&head, &it[2].lru);
	list__add_head(&head, &it[0].lru);
	list__add_tail(&head, &it[3].lru);
	assert_false(list__empty(&head));
	assert_int_equal(ids(&head, got, 8), 4);
	assert_int_equal(got[0], 0);
	assert_int_equal(got[1], 1);
	assert_int_equal(got[2], 2);
	assert_int_equal(got[3], 3);
	assert_int_equal(ids_reverse(&head, got, 8), 4);
	assert_int_equal(got[0], 3);
	assert_int_equal(got[3], 0);
	assert_ptr_equal(list_entry(list__first(&head), struct item, lru), &it[0]);
	assert_ptr_equal(list_entry(list__last(&head), struct item, lru), &it[3]);
}

static void test_del_and_move(void **state)
{
	struct item it[4];
	struct list_node head;
	int got[8];

	(void)state;
	memset(it, 0, sizeof(it));
	list__init(&head);
	for (int i = 0; i < 4; i++) {
		it[i].id = i;
		list__add_tail(&head, &it[i].lru);
		assert_true(list__linked(&it[i].lru));
	}
	/* Middle, then twice (the second is a no-op). */
	list__del(&it[1].lru);
	list__del(&it[1].lru);
	assert_false(list__linked(&it[1].lru));
	assert_int_equal(ids(&head, got, 8), 3);
	assert_int_equal(got[0], 0);
	assert_int_equal(got[1], 2);
	assert_int_equal(got[2], 3);
	/* Moves of linked and unlinked nodes. */
	list__move_tail(&head, &it[0].lru);
	list__move_head(&head, &it[1].lru);
	list__move_head(&head, &it[3].lru);
	assert_int_equal(ids(&head, got, 8), 4);
	assert_int_equal(got[0], 3);
	assert_int_equal(got[1], 1);
	assert_int_equal(got[2], 2);
	assert_int_equal(got[3], 0);
	/* Remove first and last: the rest stays linked both ways. */
	list__del(&it[3].lru);
	list__del(&it[0].lru);
	assert_int_equal(ids(&head, got, 8), 2);
	assert_int_equal(ids_reverse(&head, got, 8), 2);
	assert_int_equal(got[0], 2);
	assert_int_equal(got[1], 1);
	list__del(&it[1].lru);
	list__del(&it[2].lru);
	assert_true(list__empty(&head));
	for (int i = 0; i < 4; i++)
		assert_int_equal(it[i].tail_guard, 0);
}

/*
 * An LRU of capacity 3 over a stream of uses: a use moves the item to the
 * back, a new item past the capacity evicts the front (least recently used),
 * removing it while iterating with the next node taken first.
 */
static void test_lru_eviction(void **state)
{
	static const int uses[] = {0, 1, 2, 0, 3, 1, 4, 0};
	struct item it[5];
	struct list_node head;
	int evicted[8], n_evicted = 0, got[8];
	size_t n_linked = 0;

	(void)state;
	memset(it, 0, sizeof(it));
	list__init(&head);
	for (size_t u = 0; u < sizeof(uses) / sizeof(uses[0]); u++) {
		struct item *x = &it[uses[u]];

		x->id = uses[u];
		if (!list__linked(&x->lru))
			n_linked++;
		list__move_tail(&head, &x->lru);
		for (struct list_node *p = list__first(&head), *next; p && n_linked > 3; p = next) {
			next = list__next(&head, p);
			if (p == &x->lru)
				continue;
			evicted[n_evicted++] = list_entry(p, struct item, lru)->id;
			list__del(p);
			n_linked--;
		}
	}
	/* 0 1 2 | 0 used | 3 evicts 1 | 1 evicts 2 | 4 evicts 0 | 0 evicts 3 */
	assert_int_equal(n_evicted, 4);
	assert_int_equal(evicted[0], 1);
	assert_int_equal(evicted[1], 2);
	assert_int_equal(evicted[2], 0);
	assert_int_equal(evicted[3], 3);
	assert_int_equal(ids(&head, got, 8), 3);
	assert_int_equal(got[0], 1);
	assert_int_equal(got[1], 4);
	assert_int_equal(got[2], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order),
	    cmocka_unit_test(test_del_and_move),
	    cmocka_unit_test(test_lru_eviction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
