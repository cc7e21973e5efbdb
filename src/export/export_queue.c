// SPDX-License-Identifier: Apache-2.0
/*
 * One mutex guards the list and the counters; the network call runs without
 * it, so push() only ever waits for a few pointer moves. The batch being
 * sent (the head) is never dropped by push(): a full queue drops the oldest
 * batch behind it instead.
 */
#include "export/export_queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"
#include "util/clock.h"

struct export_queue {
	struct export_queue_opts opts;
	char name[128];
	export_send_fn send;
	void *ctx;

	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* a push, or a stop request */
	pthread_cond_t done; /* the thread ended (finished) */
	bool finished;
	struct export_batch *head, *tail;
	bool busy; /* the thread is sending head */
	bool stopping;
	uint64_t deadline_ns; /* CLOCK_MONOTONIC; when stopping: give up then */
	struct export_queue_stats stats;

	/* Thread-only state. */
	bool failing;
	bool rejecting;
	uint64_t failures; /* consecutive */
	uint64_t dropped_at_failure;
	/* Rejection reasons already logged (hashes), so each distinct one is said once. */
	uint64_t reasons[16];
	size_t n_reasons;
};

#define MAX_REASONS (sizeof(((struct export_queue *)0)->reasons) / sizeof(uint64_t))

/* true the first time this reason is seen (and remembered, while there is room). */
static bool new_reason(struct export_queue *q, const char *why)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (const char *p = why; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (size_t i = 0; i < q->n_reasons; i++)
		if (q->reasons[i] == h)
			return false;
	/* Bodies that differ every time (request ids) would flood the log: the first
	 * MAX_REASONS are said, the rest only counted. */
	if (q->n_reasons == MAX_REASONS)
		return false;
	q->reasons[q->n_reasons++] = h;
	return true;
}

struct export_batch *export_batch__new(size_t n)
{
	struct export_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->requests = calloc(n ? n : 1, sizeof(*b->requests));
	if (!b->requests) {
		free(b);
		return NULL;
	}
	b->n = n;
	return b;
}

void export_batch__free(struct export_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		free(b->requests[i].url);
		free(b->requests[i].body);
	}
	free(b->requests);
	free(b);
}

/* Waits on q->wake until abs_ns (CLOCK_MONOTONIC), a push or a stop. Lock held. */
static void wait_until(struct export_queue *q, uint64_t abs_ns)
{
	struct timespec ts = {.tv_sec = (time_t)(abs_ns / 1000000000ull),
			      .tv_nsec = (long)(abs_ns % 1000000000ull)};

	pthread_cond_timedwait(&q->wake, &q->lock, &ts);
}

static void note_failure(struct export_queue *q, const char *why, int err)
{
	q->failures++;
	if (err != -EAGAIN) {
		/* Not an outage, and retrying would not help: drop, count, say it once. */
		if (new_reason(q, why))
			pr_warn("%s: receiver rejected a request (%s); dropping such requests "
				"(counted)",
				q->name, why);
		q->rejecting = true;
		return;
	}
	if (!q->failing) {
		q->failing = true;
		q->dropped_at_failure = q->stats.dropped_full;
		pr_warn("%s: export failing (%s); retrying with backoff, keeping up to %zu "
			"intervals",
			q->name, why, q->opts.max_batches);
	}
}

static void note_success(struct export_queue *q)
{
	if (q->failing) {
		uint64_t dropped = q->stats.dropped_full - q->dropped_at_failure;

		pr_warn("%s: export recovered after %llu failed attempts; %llu intervals dropped "
			"meanwhile (queue full)",
			q->name, (unsigned long long)q->failures, (unsigned long long)dropped);
	}
	if (q->rejecting)
		pr_warn("%s: receiver accepts requests again", q->name);
	q->failing = q->rejecting = false;
	q->failures = 0;
}

static void *run(void *arg)
{
	struct export_queue *q = arg;
	uint32_t backoff_ms = q->opts.backoff_min_ms;
	char why[256];

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct export_batch *b;
		struct export_request *r;
		int err;

		while (!q->head && !q->stopping)
			pthread_cond_wait(&q->wake, &q->lock);
		if (!q->head || (q->stopping && clock__now_ns() >= q->deadline_ns))
			break;
		b = q->head;
		r = &b->requests[b->sent];
		q->busy = true;
		pthread_mutex_unlock(&q->lock);

		err = b->sent < b->n ? q->send(q->ctx, r, why, sizeof(why)) : 0;

		pthread_mutex_lock(&q->lock);
		q->busy = false;
		if (!err || err != -EAGAIN) {
			if (!err) {
				q->stats.requests_sent++;
				note_success(q);
			} else {
				q->stats.dropped_rejected++;
				note_failure(q, why, err);
			}
			backoff_ms = q->opts.backoff_min_ms;
			if (b->sent < b->n) {
				free(r->body); /* delivered: its memory goes now */
				r->body = NULL;
				b->sent++;
			}
			if (b->sent == b->n) {
				q->head = b->next;
				if (!q->head)
					q->tail = NULL;
				q->stats.queued--;
				if (!err)
					q->stats.batches_sent++;
				export_batch__free(b);
			}
			continue;
		}
		q->stats.retries++;
		note_failure(q, why, err);
		/* Back off, but wake for a stop; pushes do not shorten the wait. */
		{
			uint64_t until = clock__deadline_ns(backoff_ms);

			if (q->stopping && until > q->deadline_ns)
				until = q->deadline_ns;
			while (clock__now_ns() < until) {
				wait_until(q, until);
				/* A stop, or a deadline brought forward (a second signal). */
				if (q->stopping && until > q->deadline_ns)
					until = q->deadline_ns;
			}
		}
		backoff_ms = backoff_ms * 2 > q->opts.backoff_max_ms ? q->opts.backoff_max_ms
								     : backoff_ms * 2;
	}
	q->finished = true;
	pthread_cond_broadcast(&q->done);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int export_queue__start(const struct export_queue_opts *opts, export_send_fn send, void *ctx,
			struct export_queue **out)
{
	struct export_queue *q = calloc(1, sizeof(*q));
	pthread_condattr_t ca;
	int err;

	if (!q)
		return -ENOMEM;
	q->opts = *opts;
	if (!q->opts.max_batches)
		q->opts.max_batches = 1;
	if (!q->opts.backoff_min_ms)
		q->opts.backoff_min_ms = 1;
	if (q->opts.backoff_max_ms < q->opts.backoff_min_ms)
		q->opts.backoff_max_ms = q->opts.backoff_min_ms;
	snprintf(q->name, sizeof(q->name), "%s", opts->name ? opts->name : "export");
	q->send = send;
	q->ctx = ctx;
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->wake, &ca);
	pthread_cond_init(&q->done, &ca);
	pthread_condattr_destroy(&ca);
	err = -pthread_create(&q->thread, NULL, run, q);
	if (err) {
		pthread_cond_destroy(&q->done);
		pthread_cond_destroy(&q->wake);
		pthread_mutex_destroy(&q->lock);
		free(q);
		return err;
	}
	*out = q;
	return 0;
}

void export_queue__push(struct export_queue *q, struct export_batch *b)
{
	struct export_batch *victim = NULL;

	if (!b)
		return;
	b->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->stats.queued >= q->opts.max_batches) {
		/* The oldest not being sent: the head unless the thread is on it. */
		struct export_batch **pp = &q->head;

		if (q->busy && *pp)
			pp = &(*pp)->next;
		if (*pp) {
			victim = *pp;
			*pp = victim->next;
			if (q->tail == victim)
				q->tail = pp == &q->head ? NULL : q->head;
			q->stats.queued--;
			q->stats.dropped_full++;
		}
	}
	if (q->tail)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	q->stats.queued++;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
	export_batch__free(victim);
}

void export_queue__stats(struct export_queue *q, struct export_queue_stats *out)
{
	pthread_mutex_lock(&q->lock);
	*out = q->stats;
	pthread_mutex_unlock(&q->lock);
}

void export_queue__set_deadline(struct export_queue *q, uint64_t deadline_ns)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	if (!q->stopping || deadline_ns < q->deadline_ns)
		q->deadline_ns = deadline_ns;
	q->stopping = true;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
}

void export_queue__begin_stop(struct export_queue *q, uint32_t timeout_ms)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	if (!q->stopping) {
		q->stopping = true;
		q->deadline_ns = clock__deadline_ns(timeout_ms);
	}
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
}

bool export_queue__wait(struct export_queue *q, uint32_t timeout_ms)
{
	uint64_t until = clock__deadline_ns(timeout_ms);
	bool finished;

	if (!q)
		return true;
	pthread_mutex_lock(&q->lock);
	while (!q->finished && clock__now_ns() < until) {
		struct timespec ts = {.tv_sec = (time_t)(until / 1000000000ull),
				      .tv_nsec = (long)(until % 1000000000ull)};

		pthread_cond_timedwait(&q->done, &q->lock, &ts);
	}
	finished = q->finished;
	pthread_mutex_unlock(&q->lock);
	return finished;
}

void export_queue__stop(struct export_queue *q, uint32_t timeout_ms,
			struct export_queue_stats *stats)
{
	struct export_batch *b, *next;

	if (!q)
		return;
	export_queue__begin_stop(q, timeout_ms);
	/* A request in flight ends at the transport's deadline (or its own timeout). */
	pthread_join(q->thread, NULL);

	for (b = q->head; b; b = next) {
		next = b->next;
		q->stats.dropped_shutdown++;
		export_batch__free(b);
	}
	q->head = q->tail = NULL;
	q->stats.queued = 0;
	if (q->stats.dropped_shutdown)
		pr_warn("%s: %llu intervals not delivered at exit (flush timeout or second signal)",
			q->name, (unsigned long long)q->stats.dropped_shutdown);
	if (stats)
		*stats = q->stats;
	pthread_cond_destroy(&q->done);
	pthread_cond_destroy(&q->wake);
	pthread_mutex_destroy(&q->lock);
	free(q);
}
