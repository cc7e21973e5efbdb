// SPDX-License-Identifier: Apache-2.0
#include "profile/offcpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct offcpu_pending {
	uint32_t tid;
	uint32_t size; /* bytes of t */
	uint64_t start_ns;
	struct trace *t; /* owned */
};

static bool pending_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct offcpu_pending *)entry)->tid == *(const uint32_t *)key;
}

void offcpu__init(struct offcpu *o, uint64_t threshold)
{
	memset(o, 0, sizeof(*o));
	o->threshold = threshold ? threshold : OFFCPU_THRESHOLD_ONE;
	hashmap__init(&o->pending, pending_equal, NULL);
	trace_table__init(&o->traces);
}

static void pending__free(struct offcpu *o, struct offcpu_pending *e)
{
	o->bytes -= e->size;
	free(e->t);
	free(e);
}

void offcpu__clear(struct offcpu *o)
{
	void *e;

	if (!o)
		return;
	for (size_t i = 0; hashmap__next(&o->pending, &i, &e);)
		pending__free(o, e);
	hashmap__clear(&o->pending);
	trace_table__clear(&o->traces);
}

uint64_t offcpu__threshold(double p)
{
	double t;

	if (!(p > 0))
		return 1;
	if (p >= 1)
		return OFFCPU_THRESHOLD_ONE;
	t = p * (double)OFFCPU_THRESHOLD_ONE + 0.5; /* rounded (no libm) */
	return t < 1 ? 1 : (uint64_t)t;
}

uint64_t offcpu__scale(uint64_t ns, uint64_t threshold)
{
	unsigned __int128 v;

	if (!threshold || threshold >= OFFCPU_THRESHOLD_ONE)
		return ns;
	v = ((unsigned __int128)ns * OFFCPU_THRESHOLD_ONE + threshold / 2) / threshold;
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

int offcpu__start(struct offcpu *o, const struct trace *t, uint64_t start_ns)
{
	size_t size = sizeof(*t) + t->n_frames * sizeof(t->frames[0]);
	size_t max_pending = o->max_pending ? o->max_pending : OFFCPU_PENDING_MAX;
	uint64_t max_bytes = o->max_bytes ? o->max_bytes : OFFCPU_PENDING_BYTES;
	uint64_t h = hash_u64(t->tid);
	struct offcpu_pending *e = hashmap__remove(&o->pending, h, &t->tid);

	o->stats.started++;
	/* A thread is off CPU once at a time: an older trace lost its end record. */
	if (e) {
		o->stats.replaced++;
		pending__free(o, e);
	}
	if (o->pending.len >= max_pending || o->bytes + size > max_bytes) {
		o->stats.pending_full++;
		return 0;
	}
	e = malloc(sizeof(*e));
	if (!e) {
		o->stats.pending_full++;
		return -ENOMEM;
	}
	e->t = malloc(size);
	if (!e->t) {
		free(e);
		o->stats.pending_full++;
		return -ENOMEM;
	}
	memcpy(e->t, t, size);
	e->t->flags &= ~(uint32_t)OP_TRACE_F_OFF_CPU; /* every off-CPU trace has it */
	e->tid = t->tid;
	e->size = (uint32_t)size;
	e->start_ns = start_ns;
	if (hashmap__insert(&o->pending, h, e)) {
		free(e->t);
		free(e);
		o->stats.pending_full++;
		return -ENOMEM;
	}
	o->bytes += size;
	if (o->bytes > o->stats.bytes_peak)
		o->stats.bytes_peak = o->bytes;
	return 0;
}

int offcpu__end(struct offcpu *o, uint32_t tid, uint64_t start_ns, uint64_t end_ns)
{
	uint64_t h = hash_u64(tid);
	struct offcpu_pending *e = hashmap__find(&o->pending, h, &tid);
	uint64_t ns;
	int err;

	/* Another start: this end's trace was lost and the pending one is newer. */
	if (!e || e->start_ns != start_ns) {
		o->stats.unmatched++;
		return -ENOENT;
	}
	hashmap__remove_entry(&o->pending, h, e);
	ns = end_ns > start_ns ? end_ns - start_ns : 0;
	o->stats.ended++;
	o->stats.ns += ns;
	err = trace_table__add_weighted(&o->traces, e->t, offcpu__scale(ns, o->threshold));
	pending__free(o, e);
	return err;
}

size_t offcpu__purge(struct offcpu *o, bool (*gone)(void *ctx, uint32_t pid), void *ctx)
{
	struct offcpu_pending **drop;
	size_t n = 0;
	void *v;

	if (!o->pending.len)
		return 0;
	/* Collected first: removing moves entries under the iterator. */
	drop = malloc(o->pending.len * sizeof(*drop));
	if (!drop)
		return 0;
	for (size_t i = 0; hashmap__next(&o->pending, &i, &v);)
		if (gone(ctx, ((struct offcpu_pending *)v)->t->pid))
			drop[n++] = v;
	for (size_t i = 0; i < n; i++) {
		hashmap__remove_entry(&o->pending, hash_u64(drop[i]->tid), drop[i]);
		pending__free(o, drop[i]);
	}
	o->stats.exited += n;
	free(drop);
	return n;
}

void offcpu__finish(struct offcpu *o)
{
	void *e;

	for (size_t i = 0; hashmap__next(&o->pending, &i, &e);) {
		o->stats.open_at_end++;
		pending__free(o, e);
	}
	hashmap__clear(&o->pending);
}
