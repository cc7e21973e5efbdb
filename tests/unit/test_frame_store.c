// SPDX-License-Identifier: Apache-2.0
/*
 * The id pool and the frame store every runtime keeps its frames' names in:
 * ids dense and reused, an address whose fingerprint changed retired until
 * the interval ends, byte budgets, the per-process cap (only what the
 * interval used is kept past it) and processes that left the table
 * forgotten. The process table holds this test's own process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/collector.h"
#include "interp/frame_store.h"
#include "util/id_pool.h"

#define GONE_PID 0x7ffffff0u /* never in the table */

static int n_freed;

static void free_obj(void *obj)
{
	n_freed++;
	free(obj);
}

static size_t obj_bytes(const void *obj)
{
	return *(const size_t *)obj;
}

static void *new_obj(size_t bytes)
{
	size_t *o = malloc(sizeof(*o));

	assert_non_null(o);
	*o = bytes;
	return o;
}

static void test_id_pool(void **state)
{
	struct id_pool p;
	int a, b, c;

	(void)state;
	id_pool__init(&p);
	assert_int_equal(id_pool__add(&p, &a), 1);
	assert_int_equal(id_pool__add(&p, &b), 2);
	assert_int_equal(id_pool__add(&p, &c), 3);
	assert_ptr_equal(id_pool__get(&p, 2), &b);
	assert_null(id_pool__get(&p, 0));
	assert_null(id_pool__get(&p, 4));
	assert_ptr_equal(id_pool__remove(&p, 2), &b);
	assert_null(id_pool__get(&p, 2));
	assert_null(id_pool__remove(&p, 2));
	assert_int_equal(p.live, 2);
	/* The freed id is reused before a new one is handed out. */
	assert_int_equal(id_pool__add(&p, &b), 2);
	assert_int_equal(id_pool__add(&p, &a), 4);
	assert_int_equal(id_pool__end(&p), 4);
	id_pool__clear(&p);
	id_pool__clear(NULL);
}

struct fixture {
	struct collector c; /* its process table holds this process */
	struct frame_store fs;
	uint32_t self;
};

static struct fixture *setup(size_t cap, size_t per_process, size_t total)
{
	const struct frame_store_limits lim = {cap, per_process, total};
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(collector__init(&f->c), 0);
	f->self = (uint32_t)getpid();
	assert_non_null(process_table__get(&f->c.procs, f->self));
	frame_store__init(&f->fs, &lim, free_obj, obj_bytes);
	n_freed = 0;
	return f;
}

static void teardown(struct fixture *f)
{
	frame_store__clear(&f->fs);
	collector__clear(&f->c);
	free(f);
}

static void test_find_and_reuse(void **state)
{
	struct fixture *f = setup(100, 1000, 4000);
	uint32_t id, old, again;
	bool reused;

	(void)state;
	assert_false(frame_store__find(&f->fs, f->self, 0x1000, 7, &id, &reused));
	assert_false(reused);
	old = frame_store__add(&f->fs, f->self, 0x1000, 7, new_obj(10));
	assert_int_equal(old, 1);
	assert_true(frame_store__find(&f->fs, f->self, 0x1000, 7, &id, &reused));
	assert_int_equal(id, old);
	/* Another object at the same address: the old one stays nameable until the end. */
	assert_false(frame_store__find(&f->fs, f->self, 0x1000, 8, &id, &reused));
	assert_true(reused);
	id = frame_store__add(&f->fs, f->self, 0x1000, 8, new_obj(20));
	assert_int_equal(id, 2);
	assert_non_null(frame_store__get(&f->fs, old));
	assert_int_equal(f->fs.bytes, 30);
	assert_int_equal(frame_store__end_interval(&f->fs, &f->c.procs), 1);
	assert_int_equal(n_freed, 1);
	assert_null(frame_store__get(&f->fs, old));
	assert_int_equal(f->fs.bytes, 20);
	assert_int_equal(f->fs.stats.bytes_peak, 30);
	/* The retired id is the next one handed out. */
	again = frame_store__add(&f->fs, f->self, 0x2000, 1, new_obj(5));
	assert_int_equal(again, old);
	assert_int_equal(frame_store__held(&f->fs, f->self), 2);
	teardown(f);
}

static void test_gone_process(void **state)
{
	struct fixture *f = setup(100, 1000, 4000);

	(void)state;
	assert_int_not_equal(frame_store__add(&f->fs, GONE_PID, 0x1000, 1, new_obj(1)), 0);
	assert_int_not_equal(frame_store__add(&f->fs, f->self, 0x1000, 1, new_obj(1)), 0);
	assert_int_equal(frame_store__held(&f->fs, GONE_PID), 1);
	assert_int_equal(frame_store__end_interval(&f->fs, &f->c.procs), 1);
	assert_int_equal(frame_store__held(&f->fs, GONE_PID), 0);
	assert_int_equal(frame_store__held(&f->fs, f->self), 1);
	/* Exited: its objects go at the next interval's end. */
	process_table__mark_exited(&f->c.procs, f->self);
	assert_int_equal(frame_store__end_interval(&f->fs, &f->c.procs), 0);
	assert_int_equal(n_freed, 2);
	teardown(f);
}

static void test_cap_keeps_what_was_used(void **state)
{
	struct fixture *f = setup(2, 1000, 4000);
	uint32_t id;
	bool reused;

	(void)state;
	for (uint64_t a = 1; a <= 3; a++)
		assert_int_not_equal(frame_store__add(&f->fs, f->self, a, 0, new_obj(1)), 0);
	/* All three were used in this interval: kept although over the cap of 2. */
	assert_int_equal(frame_store__end_interval(&f->fs, &f->c.procs), 3);
	assert_true(frame_store__find(&f->fs, f->self, 2, 0, &id, &reused));
	/* Over the cap: only the one the interval used is left. */
	assert_int_equal(frame_store__end_interval(&f->fs, &f->c.procs), 1);
	assert_true(frame_store__find(&f->fs, f->self, 2, 0, &id, &reused));
	assert_false(frame_store__find(&f->fs, f->self, 1, 0, &id, &reused));
	teardown(f);
}

static void test_budgets(void **state)
{
	struct fixture *f = setup(100, 10, 15);

	(void)state;
	assert_true(frame_store__budget_allows(&f->fs, f->self));
	frame_store__add(&f->fs, f->self, 1, 0, new_obj(8));
	assert_true(frame_store__budget_allows(&f->fs, f->self));
	frame_store__add(&f->fs, f->self, 2, 0, new_obj(8));
	assert_int_equal(frame_store__proc_bytes(&f->fs, f->self), 16);
	assert_false(frame_store__budget_allows(&f->fs, f->self));
	/* The total (16 of 15) is full too: no other process may read either. */
	assert_false(frame_store__budget_allows(&f->fs, GONE_PID));
	teardown(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_id_pool),	 cmocka_unit_test(test_find_and_reuse),
	    cmocka_unit_test(test_gone_process), cmocka_unit_test(test_cap_keeps_what_was_used),
	    cmocka_unit_test(test_budgets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
