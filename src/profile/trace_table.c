// SPDX-License-Identifier: Apache-2.0
#include "profile/trace_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Everything but the count identifies a trace. */
#define TRACE_KEY_SIZE offsetof(struct trace, count)

static bool trace_equal(const void *entry, const void *key, void *ctx)
{
	const struct trace *a = entry, *b = key;

	(void)ctx;
	return !memcmp(a, b, TRACE_KEY_SIZE) &&
	       !memcmp(a->frames, b->frames, a->n_frames * sizeof(a->frames[0]));
}

static uint64_t trace_hash(const struct trace *t)
{
	uint64_t h = hash_mem(t, TRACE_KEY_SIZE, 0);

	return hash_mem(t->frames, t->n_frames * sizeof(t->frames[0]), h);
}

void trace_table__init(struct trace_table *tt)
{
	memset(tt, 0, sizeof(*tt));
	hashmap__init(&tt->traces, trace_equal, NULL);
}

void trace_table__clear(struct trace_table *tt)
{
	void *e;

	if (!tt)
		return;
	for (size_t i = 0; hashmap__next(&tt->traces, &i, &e);) {
		free(((struct trace *)e)->timestamps);
		free(e);
	}
	hashmap__clear(&tt->traces);
	tt->samples = tt->truncated = 0;
	tt->n_timestamps = tt->timestamps_dropped = 0;
	tt->bytes = tt->dropped = 0;
	tt->first_time_ns = tt->last_time_ns = 0;
}

/* Appends t's time to e, within the table's budget: 0, or -ENOMEM (the sample still counts). */
static int add_timestamp(struct trace_table *tt, struct trace *e, uint64_t time_ns)
{
	if (tt->n_timestamps >= tt->max_timestamps) {
		tt->timestamps_dropped++;
		return 0;
	}
	if (e->n_timestamps == e->cap_timestamps) {
		uint32_t cap = e->cap_timestamps ? e->cap_timestamps * 2 : 4;
		uint64_t *ts = realloc(e->timestamps, cap * sizeof(*ts));

		if (!ts) {
			tt->timestamps_dropped++;
			return -ENOMEM;
		}
		e->timestamps = ts;
		e->cap_timestamps = cap;
	}
	e->timestamps[e->n_timestamps++] = time_ns;
	tt->n_timestamps++;
	return 0;
}

int trace_table__add(struct trace_table *tt, const struct trace *t)
{
	return trace_table__add_weighted(tt, t, 1);
}

int trace_table__add_weighted(struct trace_table *tt, const struct trace *t, uint64_t weight)
{
	uint64_t h = trace_hash(t);
	struct trace *e = hashmap__find(&tt->traces, h, t);
	size_t size;

	if (!e) {
		size = sizeof(*t) + t->n_frames * sizeof(t->frames[0]);
		if (tt->max_bytes && tt->bytes + size > tt->max_bytes) {
			tt->dropped++;
			return 0;
		}
		e = malloc(size);
		if (!e)
			return -ENOMEM;
		memcpy(e, t, size);
		e->count = 0;
		e->timestamps = NULL;
		e->n_timestamps = e->cap_timestamps = 0;
		if (hashmap__insert(&tt->traces, h, e)) {
			free(e);
			return -ENOMEM;
		}
		tt->bytes += size;
	}
	e->count += weight;
	tt->samples += weight;
	if (t->time_ns) {
		if (!tt->first_time_ns || t->time_ns < tt->first_time_ns)
			tt->first_time_ns = t->time_ns;
		if (t->time_ns > tt->last_time_ns)
			tt->last_time_ns = t->time_ns;
	}
	if (tt->keep_events)
		add_timestamp(tt, e, t->time_ns);
	if (t->flags & OP_TRACE_F_USER_TRUNCATED)
		tt->truncated += weight;
	return 0;
}
