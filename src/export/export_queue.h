/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A bounded queue of export batches and the thread that sends them, so the
 * sampling loop never waits for the network. One queue per destination
 * (OTLP endpoint, Pyroscope server): a destination that is down holds up
 * only its own intervals.
 *
 * A batch is one interval's payload for the destination (one request, or
 * several: Pyroscope takes one push per service). The thread sends batches
 * oldest first; a request that fails in a way that may pass later is retried
 * with exponential backoff, holding the batches behind it. When the queue
 * holds max_batches, pushing another drops the oldest (counted). A request
 * the receiver rejects for good is dropped (counted). Every change between
 * "delivering" and "failing" is logged once, not every retry.
 */
#ifndef OMNIPROF_EXPORT_EXPORT_QUEUE_H
#define OMNIPROF_EXPORT_EXPORT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct export_request {
	char *url;		  /* owned */
	const char *content_type; /* static */
	uint8_t *body;		  /* owned */
	size_t len;
};

struct export_batch {
	struct export_batch *next; /* queue link */
	size_t n;
	size_t sent;			 /* requests[0 .. sent) are delivered */
	struct export_request *requests; /* owned */
};

/* Returns a batch with room for n requests (free with export_batch__free()), NULL on ENOMEM. */
struct export_batch *export_batch__new(size_t n);
void export_batch__free(struct export_batch *b); /* accepts NULL */

/* 0: delivered; -EAGAIN: try again later; another -errno: rejected for good. */
typedef int (*export_send_fn)(void *ctx, const struct export_request *r, char *why, size_t why_len);

struct export_queue_opts {
	const char *name; /* for log lines: "OTLP gRPC 127.0.0.1:4317" */
	size_t max_batches;
	uint32_t backoff_min_ms; /* first retry delay; doubles up to backoff_max_ms */
	uint32_t backoff_max_ms;
};

struct export_queue_stats {
	uint64_t batches_sent; /* fully delivered */
	uint64_t requests_sent;
	uint64_t retries;	   /* failed attempts that were retried */
	uint64_t dropped_full;	   /* batches dropped because the queue was full */
	uint64_t dropped_rejected; /* requests the receiver refused for good */
	uint64_t dropped_shutdown; /* batches left when the flush timed out */
	uint64_t queued;	   /* batches waiting now */
};

struct export_queue;

/* Starts the sending thread. 0 and *out, or -errno. ctx is passed to send. */
int export_queue__start(const struct export_queue_opts *opts, export_send_fn send, void *ctx,
			struct export_queue **out);
/* Queues b (the queue owns it from here, even on error). Never blocks on the network. */
void export_queue__push(struct export_queue *q, struct export_batch *b);
/* Starts the flush without waiting: the timeout runs from here (then call _stop()). */
void export_queue__begin_stop(struct export_queue *q, uint32_t timeout_ms);
/*
 * Starts the flush, or brings its deadline forward, to deadline_ns
 * (CLOCK_MONOTONIC); a later deadline than the current one is ignored. The
 * thread sends nothing new from then on and ends; a send in flight must end
 * by itself (the transport's own deadline). Accepts NULL.
 */
void export_queue__set_deadline(struct export_queue *q, uint64_t deadline_ns);
/* Waits up to timeout_ms for the thread to end after a stop: true when it has
 * (or q is NULL). */
bool export_queue__wait(struct export_queue *q, uint32_t timeout_ms);
/*
 * Sends what is queued for up to timeout_ms (counted from begin_stop() when
 * that came first) (retrying as usual), then stops
 * the thread, counts what is left as dropped_shutdown and frees the queue.
 * Fills *stats when not NULL. Accepts NULL.
 */
void export_queue__stop(struct export_queue *q, uint32_t timeout_ms,
			struct export_queue_stats *stats);
void export_queue__stats(struct export_queue *q, struct export_queue_stats *out);

#endif
