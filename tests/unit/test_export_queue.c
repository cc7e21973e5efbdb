// SPDX-License-Identifier: Apache-2.0
/*
 * The export queue with a stand-in sender: order, retries with backoff,
 * drop-oldest when full, rejections, and the flush at stop.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "export/export_queue.h"

struct fake {
	pthread_mutex_t lock;
	int fail_first;	  /* this many -EAGAIN before any success */
	bool fail_always; /* -EAGAIN forever */
	int reject_id;	  /* the request with this body byte is rejected (-EPROTO); 0: none */
	int sent[64];	  /* body bytes in delivery order */
	int n_sent;
	int attempts;
};

static int fake_send(void *ctx, const struct export_request *r, char *why, size_t why_len)
{
	struct fake *f = ctx;
	int err = 0;

	pthread_mutex_lock(&f->lock);
	f->attempts++;
	if (f->fail_always || f->fail_first > 0) {
		f->fail_first--;
		snprintf(why, why_len, "connection refused (fake)");
		err = -EAGAIN;
	} else if (r->body[0] == f->reject_id) {
		snprintf(why, why_len, "HTTP status 400 (fake)");
		err = -EPROTO;
	} else if (f->n_sent < 64) {
		f->sent[f->n_sent++] = r->body[0];
	}
	pthread_mutex_unlock(&f->lock);
	return err;
}

/* A batch of n requests whose bodies are the bytes id, id+1, ... */
static struct export_batch *batch(int id, size_t n)
{
	struct export_batch *b = export_batch__new(n);

	assert_non_null(b);
	for (size_t i = 0; i < n; i++) {
		b->requests[i].url = strdup("http://127.0.0.1:1/test");
		b->requests[i].body = malloc(1);
		assert_non_null(b->requests[i].url);
		assert_non_null(b->requests[i].body);
		b->requests[i].body[0] = (uint8_t)(id + (int)i);
		b->requests[i].len = 1;
		b->requests[i].content_type = "application/octet-stream";
	}
	return b;
}

static struct export_queue *start(struct fake *f, size_t max)
{
	struct export_queue_opts o = {
	    .name = "test", .max_batches = max, .backoff_min_ms = 1, .backoff_max_ms = 4};
	struct export_queue *q = NULL;

	pthread_mutex_init(&f->lock, NULL);
	assert_int_equal(export_queue__start(&o, fake_send, f, &q), 0);
	return q;
}

static void test_order_and_flush(void **state)
{
	struct fake f = {0};
	struct export_queue *q = start(&f, 16);
	struct export_queue_stats st;

	(void)state;
	export_queue__push(q, batch(1, 1));
	export_queue__push(q, batch(2, 2)); /* requests 2 and 3 */
	export_queue__push(q, batch(10, 1));
	export_queue__stop(q, 5000, &st);
	assert_int_equal(f.n_sent, 4);
	assert_int_equal(f.sent[0], 1);
	assert_int_equal(f.sent[1], 2);
	assert_int_equal(f.sent[2], 3);
	assert_int_equal(f.sent[3], 10);
	assert_int_equal(st.batches_sent, 3);
	assert_int_equal(st.requests_sent, 4);
	assert_int_equal(st.dropped_full + st.dropped_rejected + st.dropped_shutdown, 0);
}

static void test_retry_with_backoff(void **state)
{
	struct fake f = {.fail_first = 5};
	struct export_queue *q = start(&f, 16);
	struct export_queue_stats st;

	(void)state;
	export_queue__push(q, batch(1, 1));
	export_queue__push(q, batch(2, 1));
	export_queue__stop(q, 5000, &st);
	assert_int_equal(st.retries, 5);
	assert_int_equal(f.n_sent, 2);
	assert_int_equal(f.sent[0], 1); /* the failed one was not skipped */
	assert_int_equal(st.batches_sent, 2);
}

static int attempts(struct fake *f)
{
	int n;

	pthread_mutex_lock(&f->lock);
	n = f->attempts;
	pthread_mutex_unlock(&f->lock);
	return n;
}

static void test_full_queue_drops_oldest(void **state)
{
	struct fake f = {.fail_always = true};
	struct export_queue *q = start(&f, 3);
	struct export_queue_stats st;

	(void)state;
	for (int i = 1; i <= 5; i++)
		export_queue__push(q, batch(i, 1));
	export_queue__stats(q, &st);
	assert_int_equal(st.dropped_full, 2);
	assert_int_equal(st.queued, 3);
	/* The sender thread keeps trying while the backend is down; under a
	 * loaded machine (sanitizers, parallel tests) its first try can come
	 * later than the short flush below, so wait for it (bounded). */
	for (int waited = 0; waited < 5000 && !attempts(&f); waited++)
		usleep(1000);
	export_queue__stop(q, 20, &st);
	assert_int_equal(f.n_sent, 0);
	assert_true(f.attempts >= 1);
	assert_int_equal(st.dropped_full, 2);
	assert_int_equal(st.dropped_shutdown, 3);
	assert_int_equal(st.queued, 0);
}

/* Once the backend is back, the newest intervals that were kept all arrive, oldest first. */
static void test_kept_intervals_arrive_after_outage(void **state)
{
	struct fake f = {.fail_always = true};
	struct export_queue *q = start(&f, 3);
	struct export_queue_stats st;

	(void)state;
	for (int i = 1; i <= 6; i++)
		export_queue__push(q, batch(i, 1));
	pthread_mutex_lock(&f.lock);
	f.fail_always = false;
	pthread_mutex_unlock(&f.lock);
	export_queue__stop(q, 5000, &st);
	assert_int_equal(st.dropped_full, 3);
	assert_int_equal(f.n_sent, 3);
	/* 1..3 were dropped or one of them was in flight: the last two are always 5, 6. */
	assert_int_equal(f.sent[1], 5);
	assert_int_equal(f.sent[2], 6);
}

static void test_rejected_request_is_dropped(void **state)
{
	struct fake f = {.reject_id = 2};
	struct export_queue *q = start(&f, 16);
	struct export_queue_stats st;

	(void)state;
	export_queue__push(q, batch(1, 3)); /* 1, 2 (rejected), 3 */
	export_queue__push(q, batch(4, 1));
	export_queue__stop(q, 5000, &st);
	assert_int_equal(st.dropped_rejected, 1);
	assert_int_equal(st.requests_sent, 3);
	assert_int_equal(f.n_sent, 3);
	assert_int_equal(f.sent[0], 1);
	assert_int_equal(f.sent[1], 3);
	assert_int_equal(f.sent[2], 4);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * A destination that keeps failing, with an 8 s backoff: a far deadline
 * keeps the thread flushing, bringing it to now (a second signal) ends the
 * thread at once, and what was not delivered is counted at exit.
 */
static void test_deadline_brought_forward(void **state)
{
	struct export_queue_opts o = {
	    .name = "test", .max_batches = 16, .backoff_min_ms = 8000, .backoff_max_ms = 8000};
	struct fake f = {.fail_always = true};
	struct export_queue *q = NULL;
	struct export_queue_stats st;
	uint64_t t0;

	(void)state;
	pthread_mutex_init(&f.lock, NULL);
	assert_int_equal(export_queue__start(&o, fake_send, &f, &q), 0);
	export_queue__push(q, batch(1, 1));
	export_queue__push(q, batch(2, 1));
	export_queue__set_deadline(q, (mono_ms() + 60000) * 1000000ull);
	assert_false(export_queue__wait(q, 200)); /* still trying, in its backoff */
	/* A later deadline does not extend an earlier one; an earlier one wins. */
	export_queue__set_deadline(q, (mono_ms() + 120000) * 1000000ull);
	t0 = mono_ms();
	export_queue__set_deadline(q, mono_ms() * 1000000ull);
	assert_true(export_queue__wait(q, 5000));
	assert_true(mono_ms() - t0 < 2000);
	export_queue__stop(q, 0, &st);
	assert_int_equal(st.dropped_shutdown, 2);
	assert_int_equal(st.batches_sent, 0);
	assert_true(st.retries >= 1);
	assert_true(export_queue__wait(NULL, 0));
}

/* Rejects every request, with a reason that depends on its body byte's parity. */
static int reject_send(void *ctx, const struct export_request *r, char *why, size_t why_len)
{
	(void)ctx;
	snprintf(why, why_len, "HTTP status 400: %s", r->body[0] % 2 ? "bad field" : "too big");
	return -EPROTO;
}

/* Each distinct rejection reason is logged once, however often it recurs. */
static void test_rejection_reasons_logged_once(void **state)
{
	struct export_queue_opts o = {.name = "test", .max_batches = 16, .backoff_min_ms = 1};
	struct export_queue *q = NULL;
	struct export_queue_stats st;
	char *log_text, path[] = "/tmp/omniprof-test-log-XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO), n_bad = 0, n_big = 0;
	FILE *f;
	long len;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	assert_int_equal(export_queue__start(&o, reject_send, NULL, &q), 0);
	for (int i = 1; i <= 10; i++)
		export_queue__push(q, batch(i, 1));
	export_queue__stop(q, 5000, &st);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	assert_int_equal(st.dropped_rejected, 10);
	f = fdopen(fd, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	log_text = calloc(1, (size_t)len + 1);
	assert_non_null(log_text);
	assert_int_equal(fread(log_text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	unlink(path);
	for (char *p = log_text; (p = strstr(p, "bad field")); p++)
		n_bad++;
	for (char *p = log_text; (p = strstr(p, "too big")); p++)
		n_big++;
	printf("%s", log_text);
	free(log_text);
	assert_int_equal(n_bad, 1);
	assert_int_equal(n_big, 1);
}

static void test_stop_null_and_empty(void **state)
{
	struct fake f = {0};
	struct export_queue *q = start(&f, 2);
	struct export_queue_stats st;

	(void)state;
	export_queue__stop(NULL, 0, NULL);
	export_queue__push(q, NULL);
	export_queue__stop(q, 0, &st);
	assert_int_equal(st.batches_sent + st.dropped_shutdown, 0);
	export_batch__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order_and_flush),
	    cmocka_unit_test(test_retry_with_backoff),
	    cmocka_unit_test(test_full_queue_drops_oldest),
	    cmocka_unit_test(test_kept_intervals_arrive_after_outage),
	    cmocka_unit_test(test_rejected_request_is_dropped),
	    cmocka_unit_test(test_deadline_brought_forward),
	    cmocka_unit_test(test_rejection_reasons_logged_once),
	    cmocka_unit_test(test_stop_null_and_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
