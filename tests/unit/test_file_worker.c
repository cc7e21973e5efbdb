// SPDX-License-Identifier: Apache-2.0
/*
 * The file worker: jobs run off the calling thread and come back through
 * file_worker__poll(); a job blocked past the timeout is abandoned (reported
 * at once, its thread replaced and never waited for), a late return frees the
 * job on its own thread, past the cap of stuck threads jobs fail at once, and
 * freeing the worker does not wait for a stuck job. Finished jobs not yet
 * handed back (each may hold an opened file's descriptor) never number more
 * than FILE_WORKER_MAX_DONE, plus the jobs running, even while poll's
 * callback is slow to take the ones it already collected.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/file_worker.h"

struct test_job {
	struct file_job job;
	int fd; /* read end of a pipe to block on; -1: return at once */
	int value;
	int order; /* when it ran, counted from 0 */
};

static atomic_int freed, ran;

static void job_run(struct file_job *job)
{
	struct test_job *j = (struct test_job *)job;
	char c;

	if (j->fd >= 0 && read(j->fd, &c, 1) != 1)
		job->err = -EIO;
	j->order = atomic_fetch_add(&ran, 1);
	j->value *= 2;
}

static void job_free(struct file_job *job)
{
	atomic_fetch_add(&freed, 1);
	free(job);
}

static struct test_job *job_new(int fd, int value)
{
	struct test_job *j = calloc(1, sizeof(*j));

	assert_non_null(j);
	j->job.kind = FILE_JOB_OPEN;
	j->job.run = job_run;
	j->job.free = job_free;
	j->fd = fd;
	j->value = value;
	return j;
}

struct seen {
	int done;
	int abandoned;
	int sum;
	int order[16]; /* by value / 2 (values 0..15): when the job ran */
};

static void on_job(void *ctx, struct file_job *job, bool abandoned)
{
	struct seen *s = ctx;

	if (abandoned) {
		assert_int_equal(job->err, -ETIMEDOUT);
		s->abandoned++;
		return; /* still its thread's */
	}
	s->done++;
	s->sum += ((struct test_job *)job)->value;
	if (((struct test_job *)job)->value / 2 < 16)
		s->order[((struct test_job *)job)->value / 2] = ((struct test_job *)job)->order;
	job->free(job);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Polls until cond holds or 10 s passed. */
#define POLL_UNTIL(fw, seen, cond)                                                                 \
	do {                                                                                       \
		double t0_ = now_s();                                                              \
		while (!(cond) && now_s() - t0_ < 10) {                                            \
			file_worker__poll((fw), on_job, (seen));                                   \
			usleep(2000);                                                              \
		}                                                                                  \
	} while (0)

static void test_jobs_come_back(void **state)
{
	struct file_worker *fw;
	struct seen s = {0};

	(void)state;
	assert_int_equal(file_worker__new(2, 1000, &fw), 0);
	for (int i = 1; i <= 10; i++)
		file_worker__post(fw, &job_new(-1, i)->job);
	assert_int_equal(file_worker__in_flight(fw), 10);
	POLL_UNTIL(fw, &s, s.done == 10);
	assert_int_equal(s.done, 10);
	assert_int_equal(s.sum, 2 * 55);
	assert_int_equal(file_worker__in_flight(fw), 0);
	file_worker__free(fw);
}

/* Jobs posted in the background run after every foreground job, each part in order. */
static void test_background_jobs_last(void **state)
{
	static const int expect[] = {0, 1, 2, 4, 5, 3, 6}; /* when values 0..6 ran */
	struct file_worker *fw;
	struct seen s = {0};
	int p[2], base;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(file_worker__new(1, 10000, &fw), 0);
	base = atomic_load(&ran);
	/* One thread, held by the first job while the others queue. */
	file_worker__post(fw, &job_new(p[0], 0)->job);
	file_worker__set_background(fw, true);
	file_worker__post(fw, &job_new(-1, 3)->job);
	file_worker__post(fw, &job_new(-1, 4)->job);
	file_worker__set_background(fw, false);
	file_worker__post(fw, &job_new(-1, 1)->job);
	file_worker__post(fw, &job_new(-1, 2)->job);
	file_worker__set_background(fw, true);
	file_worker__post(fw, &job_new(-1, 6)->job);
	file_worker__set_background(fw, false);
	file_worker__post(fw, &job_new(-1, 5)->job);
	assert_int_equal(write(p[1], "x", 1), 1);
	POLL_UNTIL(fw, &s, s.done == 7);
	assert_int_equal(s.done, 7);
	for (int v = 0; v < 7; v++)
		assert_int_equal(s.order[v] - base, expect[v]);
	file_worker__free(fw);
	close(p[0]);
	close(p[1]);
}

/* A background job promoted (a sampled process waits for it) runs after the
 * foreground jobs and before the other background ones; a job not queued in
 * the background (foreground, running) is left where it is. */
static void test_promote(void **state)
{
	struct file_worker_stats st;
	struct file_worker *fw;
	struct seen s = {0};
	struct test_job *first, *fg, *bg_last;
	int p[2], base;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(file_worker__new(1, 10000, &fw), 0);
	base = atomic_load(&ran);
	first = job_new(p[0], 0);
	file_worker__post(fw, &first->job);
	file_worker__set_background(fw, true);
	file_worker__post(fw, &job_new(-1, 4)->job);
	file_worker__post(fw, &job_new(-1, 5)->job);
	bg_last = job_new(-1, 2);
	file_worker__post(fw, &bg_last->job);
	file_worker__set_background(fw, false);
	fg = job_new(-1, 1);
	file_worker__post(fw, &fg->job);
	/* The last background job jumps the other two; foreground and running stay. */
	assert_true(file_worker__promote(fw, &bg_last->job));
	assert_false(file_worker__promote(fw, &fg->job));
	assert_false(file_worker__promote(fw, &first->job));
	/* One posted after it still goes before the background. */
	file_worker__post(fw, &job_new(-1, 3)->job);
	assert_int_equal(write(p[1], "x", 1), 1);
	POLL_UNTIL(fw, &s, s.done == 6);
	assert_int_equal(s.done, 6);
	/* Ran in order: 0, 1, 2 (promoted), 3, 4, 5. */
	for (int v = 0; v < 6; v++)
		assert_int_equal(s.order[v] - base, v);
	file_worker__stats(fw, &st);
	assert_int_equal(st.promoted, 1);
	file_worker__free(fw);
	close(p[0]);
	close(p[1]);
}

static atomic_int started;

/* As job_run, counted in started first: the test knows a thread took it. */
static void started_run(struct file_job *job)
{
	atomic_fetch_add(&started, 1);
	job_run(job);
}

/* Waits until n jobs of started_run (or urge_reserve_run) were taken, or 10 s. */
static void wait_started(int n)
{
	double t0 = now_s();

	while (atomic_load(&started) < n && now_s() - t0 < 10)
		usleep(1000);
	assert_true(atomic_load(&started) >= n);
}

/*
 * Jobs urged (a held copy's walk stopped at their file) run before every
 * other queued job, foreground or background, in the order they were urged;
 * a job urged again stays where it is; the others keep their
 * order, and a foreground job posted after still goes before the background.
 */
static void test_urge(void **state)
{
	struct file_worker_stats st;
	struct file_worker *fw;
	struct seen s = {0};
	struct test_job *first, *a, *b;
	int p[2], base;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(file_worker__new(1, 10000, &fw), 0);
	base = atomic_load(&ran);
	atomic_store(&started, 0);
	first = job_new(p[0], 0);
	first->job.run = started_run;
	file_worker__post(fw, &first->job);
	wait_started(1); /* running: not queued any more */
	a = job_new(-1, 1);
	file_worker__post(fw, &a->job);
	file_worker__post(fw, &job_new(-1, 3)->job);
	file_worker__post(fw, &job_new(-1, 4)->job);
	file_worker__set_background(fw, true);
	file_worker__post(fw, &job_new(-1, 6)->job);
	b = job_new(-1, 2);
	file_worker__post(fw, &b->job);
	file_worker__post(fw, &job_new(-1, 7)->job);
	file_worker__set_background(fw, false);
	assert_true(file_worker__urge(fw, &a->job));
	assert_true(file_worker__urge(fw, &b->job));
	assert_false(file_worker__urge(fw, &a->job));
	/* Neither promoted any more: they are no background jobs now. */
	assert_false(file_worker__promote(fw, &b->job));
	file_worker__post(fw, &job_new(-1, 5)->job);
	assert_int_equal(write(p[1], "x", 1), 1);
	POLL_UNTIL(fw, &s, s.done == 8);
	assert_int_equal(s.done, 8);
	for (int v = 0; v < 8; v++)
		assert_int_equal(s.order[v] - base, v);
	file_worker__stats(fw, &st);
	assert_int_equal(st.urged, 2);
	file_worker__free(fw);
	close(p[0]);
	close(p[1]);
}

/* value 1: a build past the whole budget (runs alone), held by its pipe;
 * even: a small one (2 MiB) that returns at once. */
static void urge_reserve_run(struct file_job *job)
{
	struct test_job *j = (struct test_job *)job;
	char c;

	if (!file_job__reserve(job, j->value == 1 ? FILE_WORKER_RESERVE_BYTES * 2 : 2u << 20))
		return; /* run again later */
	if (j->value == 1)
		atomic_fetch_add(&started, 1);
	if (j->fd >= 0 && read(j->fd, &c, 1) != 1)
		job->err = -EIO;
}

/*
 * An urged small build runs beside a large one holding the reservation (a
 * held copy waits for it: gofmt's table beside libLLVM's); one not urged
 * is put back, and urged then, runs beside as well.
 */
static void test_urged_runs_beside_large(void **state)
{
	struct file_worker_stats st;
	struct file_worker *fw;
	struct seen s = {0};
	struct test_job *large, *blocker, *other, *urged;
	int p[2], q[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(q), 0);
	assert_int_equal(file_worker__new(2, 10000, &fw), 0);
	atomic_store(&started, 0);
	large = job_new(p[0], 1);
	large->job.run = urge_reserve_run;
	file_worker__post(fw, &large->job);
	/* Holds the other thread while the two small ones are queued. */
	blocker = job_new(q[0], 8);
	blocker->job.run = started_run;
	file_worker__post(fw, &blocker->job);
	wait_started(2); /* the large one reserved, the blocker running */
	other = job_new(-1, 2);
	other->job.run = urge_reserve_run;
	file_worker__post(fw, &other->job);
	urged = job_new(-1, 4);
	urged->job.run = urge_reserve_run;
	file_worker__post(fw, &urged->job);
	assert_true(file_worker__urge(fw, &urged->job));
	assert_int_equal(write(q[1], "x", 1), 1);
	/* 8 * 2 (run doubles it) + 4: the blocker and the urged one, the large one still held. */
	POLL_UNTIL(fw, &s, s.sum >= 20);
	assert_int_equal(s.done, 2);
	assert_int_equal(s.sum, 20);
	/* The other one was put back: urged then, it runs beside too. */
	for (double t0 = now_s(); now_s() - t0 < 10; usleep(1000)) {
		file_worker__stats(fw, &st);
		if (st.deferred >= 1)
			break;
	}
	assert_true(st.deferred >= 1);
	assert_true(file_worker__urge(fw, &other->job));
	POLL_UNTIL(fw, &s, s.done == 3);
	assert_int_equal(s.done, 3);
	assert_int_equal(write(p[1], "x", 1), 1);
	POLL_UNTIL(fw, &s, s.done == 4);
	assert_int_equal(s.done, 4);
	file_worker__stats(fw, &st);
	assert_int_equal(st.urgent_beside, 2);
	assert_int_equal(st.urged_deferred, 1);
	file_worker__free(fw);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

static void test_stuck_job_abandoned(void **state)
{
	struct file_worker_stats st;
	struct file_worker *fw;
	struct seen s = {0};
	int p[2], before;
	double t0;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(file_worker__new(1, 100, &fw), 0);
	before = atomic_load(&freed);
	file_worker__post(fw, &job_new(p[0], 1)->job);
	POLL_UNTIL(fw, &s, s.abandoned == 1);
	assert_int_equal(s.abandoned, 1);
	assert_int_equal(file_worker__in_flight(fw), 0);
	/* The replacement runs the next job while the first is still blocked. */
	file_worker__post(fw, &job_new(-1, 21)->job);
	POLL_UNTIL(fw, &s, s.done == 1);
	assert_int_equal(s.done, 1);
	assert_int_equal(s.sum, 42);
	file_worker__stats(fw, &st);
	assert_int_equal(st.abandoned, 1);
	assert_int_equal(st.threads, 2);
	assert_int_equal(st.late, 0);
	/* It comes back after all: its own thread frees it. */
	assert_int_equal(write(p[1], "x", 1), 1);
	t0 = now_s();
	while (atomic_load(&freed) < before + 2 && now_s() - t0 < 10)
		usleep(2000);
	assert_int_equal(atomic_load(&freed), before + 2);
	file_worker__stats(fw, &st);
	assert_int_equal(st.late, 1);
	file_worker__free(fw);
	close(p[0]);
	close(p[1]);
}

static void test_cap_then_refused_and_free_never_waits(void **state)
{
	struct file_worker_stats st;
	struct file_worker *fw;
	struct seen s = {0};
	int p[2];
	double t0;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(file_worker__new(1, 50, &fw), 0);
	/* Every job blocks: each strands a thread, up to the cap and one more. */
	for (int i = 0; i <= FILE_WORKER_MAX_ABANDONED; i++) {
		file_worker__post(fw, &job_new(p[0], 1)->job);
		POLL_UNTIL(fw, &s, s.abandoned == i + 1);
	}
	assert_int_equal(s.abandoned, FILE_WORKER_MAX_ABANDONED + 1);
	file_worker__stats(fw, &st);
	assert_int_equal(st.threads, FILE_WORKER_MAX_ABANDONED + 1);
	/* No thread is left to run it: it fails at once rather than never. */
	file_worker__post(fw, &job_new(-1, 5)->job);
	file_worker__poll(fw, on_job, &s);
	file_worker__stats(fw, &st);
	assert_int_equal(st.refused, 1);
	assert_int_equal(s.done, 1);
	t0 = now_s();
	file_worker__free(fw);
	assert_true(now_s() - t0 < 1.0);
	/* Let the stuck threads go (they free their jobs and the shared state). */
	for (int i = 0; i <= FILE_WORKER_MAX_ABANDONED; i++)
		assert_int_equal(write(p[1], "x", 1), 1);
	usleep(200000);
	close(p[1]);
	close(p[0]);
}

/* Jobs that ran and that on_held_job has not handled yet, and their peak. */
static atomic_int held, held_peak;

static void held_job_run(struct file_job *job)
{
	int now = atomic_fetch_add(&held, 1) + 1, peak = atomic_load(&held_peak);

	(void)job;
	while (now > peak && !atomic_compare_exchange_weak(&held_peak, &peak, now))
		;
}

static void on_held_job(void *ctx, struct file_job *job, bool abandoned)
{
	int *done = ctx;

	assert_false(abandoned);
	/* A slow taker (the sampling thread installing a file): the threads may not race ahead. */
	usleep(200);
	atomic_fetch_sub(&held, 1);
	(*done)++;
	job->free(job);
}

static void test_done_jobs_bounded_until_handled(void **state)
{
	const int n_jobs = 4 * FILE_WORKER_MAX_DONE, n_threads = 2;
	struct file_worker *fw;
	double t0;
	int done = 0;

	(void)state;
	atomic_store(&held, 0);
	atomic_store(&held_peak, 0);
	assert_int_equal(file_worker__new((unsigned int)n_threads, 1000, &fw), 0);
	for (int i = 0; i < n_jobs; i++) {
		struct test_job *j = job_new(-1, i);

		j->job.run = held_job_run;
		file_worker__post(fw, &j->job);
	}
	t0 = now_s();
	while (done < n_jobs && now_s() - t0 < 10) {
		/* Let the threads fill the done list before each poll. */
		usleep(20000);
		file_worker__poll(fw, on_held_job, &done);
	}
	file_worker__free(fw);
	print_message("at most %d jobs finished and not handled (bound %d + %d threads)\n",
		      atomic_load(&held_peak), FILE_WORKER_MAX_DONE, n_threads);
	assert_int_equal(done, n_jobs);
	/* The cap was reached (the check means something) and never passed. */
	assert_true(atomic_load(&held_peak) >= FILE_WORKER_MAX_DONE);
	assert_true(atomic_load(&held_peak) <= FILE_WORKER_MAX_DONE + n_threads);
}

/* Each holds 1 MiB once done: the done list is bounded by bytes as well as by count. */
static void bytes_job_run(struct file_job *job)
{
	held_job_run(job);
	job->bytes = 1u << 20;
}

static void test_done_bytes_bounded_until_handled(void **state)
{
	const int n_jobs = 64, n_threads = 2, bound = (int)(FILE_WORKER_MAX_DONE_BYTES >> 20);
	struct file_worker *fw;
	double t0;
	int done = 0;

	(void)state;
	atomic_store(&held, 0);
	atomic_store(&held_peak, 0);
	assert_int_equal(file_worker__new((unsigned int)n_threads, 1000, &fw), 0);
	for (int i = 0; i < n_jobs; i++) {
		struct test_job *j = job_new(-1, i);

		j->job.run = bytes_job_run;
		file_worker__post(fw, &j->job);
	}
	t0 = now_s();
	while (done < n_jobs && now_s() - t0 < 10) {
		usleep(20000);
		file_worker__poll(fw, on_held_job, &done);
	}
	file_worker__free(fw);
	print_message("at most %d MiB finished and not handled (bound %d + %d threads)\n",
		      atomic_load(&held_peak), bound, n_threads);
	assert_int_equal(done, n_jobs);
	assert_true(atomic_load(&held_peak) >= bound);
	assert_true(atomic_load(&held_peak) <= bound + n_threads);
}

/* Jobs inside their reservation now, their peak, and the large ones' peak. */
static atomic_int inside, inside_peak, large_inside, large_peak;

static void peak_up(atomic_int *now, atomic_int *peak)
{
	int n = atomic_fetch_add(now, 1) + 1, p = atomic_load(peak);

	while (n > p && !atomic_compare_exchange_weak(peak, &p, n))
		;
}

/* value odd: a large job (more than half the budget); even: a small one. Each
 * runs 60 ms, or until its pipe has a byte (fd >= 0). */
static void reserve_job_run(struct file_job *job)
{
	struct test_job *j = (struct test_job *)job;
	bool large = j->value & 1;
	char c;

	if (!file_job__reserve(job, large ? FILE_WORKER_RESERVE_BYTES * 3 / 4 : 2u << 20))
		return; /* run again later */
	peak_up(&inside, &inside_peak);
	if (large)
		peak_up(&large_inside, &large_peak);
	if (j->fd >= 0 && read(j->fd, &c, 1) != 1)
		job->err = -EIO;
	if (j->fd < 0)
		usleep(60000);
	if (large)
		atomic_fetch_sub(&large_inside, 1);
	atomic_fetch_sub(&inside, 1);
}

static struct test_job *reserve_job_new(int fd, int value)
{
	struct test_job *j = job_new(fd, value);

	j->job.run = reserve_job_run;
	return j;
}

/*
 * Two large reservations never run at once, small ones run beside each
 * other, the job put back does not hold a thread (a job posted after it runs
 * while the first large one still does), and it is not a stuck job: six
 * large jobs of 60 ms on two threads, with a 100 ms timeout, none abandoned.
 */
static void test_reserve_one_large_at_a_time(void **state)
{
	struct file_worker_stats st;
	struct file_worker *fw;
	struct seen s = {0};
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(file_worker__new(2, 10000, &fw), 0);
	/* A large job held by the pipe, a large one behind it, then a plain job
	 * (the sum gets 8 when it is done: the large ones add 1 and 3). */
	file_worker__post(fw, &reserve_job_new(p[0], 1)->job);
	file_worker__post(fw, &reserve_job_new(-1, 3)->job);
	file_worker__post(fw, &job_new(-1, 4)->job);
	POLL_UNTIL(fw, &s, s.sum >= 8);
	assert_true(s.sum >= 8); /* done while the pipe still holds a large job */
	assert_int_equal(atomic_load(&large_peak), 1);
	assert_int_equal(write(p[1], "x", 1), 1);
	POLL_UNTIL(fw, &s, s.done == 3);
	if (s.done != 3)
		fail_msg("%d of 3 jobs done, %d abandoned, sum %d", s.done, s.abandoned, s.sum);
	file_worker__stats(fw, &st);
	assert_true(st.deferred >= 1);
	file_worker__free(fw);
	close(p[0]);
	close(p[1]);

	s = (struct seen){0};
	assert_int_equal(file_worker__new(2, 100, &fw), 0);
	for (int i = 0; i < 6; i++)
		file_worker__post(fw, &reserve_job_new(-1, 2 * i + 1)->job);
	POLL_UNTIL(fw, &s, s.done + s.abandoned == 6);
	assert_int_equal(s.done, 6);
	assert_int_equal(s.abandoned, 0);
	assert_int_equal(atomic_load(&large_peak), 1);
	file_worker__stats(fw, &st);
	assert_true(st.deferred >= 1);
	assert_true(st.reserved_max <= FILE_WORKER_RESERVE_BYTES);
	for (int i = 0; i < 6; i++)
		file_worker__post(fw, &reserve_job_new(-1, 2 * i)->job);
	POLL_UNTIL(fw, &s, s.done == 12);
	assert_int_equal(s.done, 12);
	assert_int_equal(atomic_load(&inside_peak), 2);
	file_worker__free(fw);
}

/*
 * Every job comes back, whatever the order of posts (foreground and
 * background), promotions, urgings and reservations that put jobs back: the
 * queue's marks (urgent_last, fg_last, bg_first, the put-back list) are moved
 * by each of those, and a job lost between them would leave a table building
 * for ever. A seeded random mix, several seeds; the job's pointer is passed to
 * promote and urge only while it is out (they compare, never read it).
 */
#define RANDOM_JOBS 400
#define RANDOM_OUT  64

struct random_job {
	struct file_job job;
	unsigned int reserve_mib; /* what run() reserves */
	unsigned int sleep_us;
	int slot; /* in struct random_seen.out */
};

struct random_seen {
	struct file_job *out[RANDOM_OUT]; /* posted, not back yet */
	int done;
	int errors;
};

static void random_run(struct file_job *job)
{
	struct random_job *j = (struct random_job *)job;

	if (!file_job__reserve(job, (size_t)j->reserve_mib << 20))
		return; /* put back: run again later */
	if (j->sleep_us)
		usleep(j->sleep_us);
}

static void random_back(void *ctx, struct file_job *job, bool abandoned)
{
	struct random_seen *s = ctx;
	struct random_job *j = (struct random_job *)job;

	assert_false(abandoned);
	assert_ptr_equal(s->out[j->slot], job);
	s->out[j->slot] = NULL;
	s->done++;
	s->errors += job->err != 0;
	job->free(job);
}

static uint32_t next_random(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

static void test_random_mix_all_come_back(void **state)
{
	static const unsigned int sizes_mib[] = {0, 0, 2, 6, 12, 20};

	(void)state;
	for (uint32_t seed = 1; seed <= 8; seed++) {
		struct random_seen s = {0};
		struct file_worker_stats st;
		struct file_worker *fw;
		uint32_t r = seed * 2654435761u;
		int posted = 0;

		assert_int_equal(file_worker__new(2, 20000, &fw), 0);
		while (posted < RANDOM_JOBS) {
			uint32_t what = next_random(&r) % 8;
			int slot = (int)(next_random(&r) % RANDOM_OUT);

			if (what < 4 && !s.out[slot]) {
				struct random_job *j = calloc(1, sizeof(*j));

				assert_non_null(j);
				j->job.kind = FILE_JOB_BUILD;
				j->job.run = random_run;
				j->job.free = job_free;
				j->reserve_mib =
				    sizes_mib[next_random(&r) %
					      (sizeof(sizes_mib) / sizeof(sizes_mib[0]))];
				j->sleep_us = next_random(&r) % 3 ? 0 : next_random(&r) % 2000;
				j->slot = slot;
				s.out[slot] = &j->job;
				file_worker__post_as(fw, &j->job, next_random(&r) % 2);
				posted++;
			} else if (what == 4 && s.out[slot]) {
				file_worker__promote(fw, s.out[slot]);
			} else if (what == 5 && s.out[slot]) {
				file_worker__urge(fw, s.out[slot]);
			} else if (what == 6) {
				file_worker__poll(fw, random_back, &s);
			} else if (what == 7) {
				usleep(next_random(&r) % 500);
			}
		}
		for (double t0 = now_s(); s.done < posted && now_s() - t0 < 20; usleep(2000))
			file_worker__poll(fw, random_back, &s);
		file_worker__stats(fw, &st);
		if (s.done != posted)
			fail_msg(
			    "seed %u: %d of %d jobs came back (%llu deferred, %llu urged, %llu "
			    "promoted, %llu urged once put back)",
			    seed, s.done, posted, (unsigned long long)st.deferred,
			    (unsigned long long)st.urged, (unsigned long long)st.promoted,
			    (unsigned long long)st.urged_deferred);
		assert_int_equal(s.errors, 0);
		assert_true(st.deferred > 0); /* the mix did put jobs back */
		assert_true(st.urged > 0 && st.promoted > 0);
		file_worker__free(fw);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jobs_come_back),
	    cmocka_unit_test(test_background_jobs_last),
	    cmocka_unit_test(test_promote),
	    cmocka_unit_test(test_urge),
	    cmocka_unit_test(test_urged_runs_beside_large),
	    cmocka_unit_test(test_stuck_job_abandoned),
	    cmocka_unit_test(test_cap_then_refused_and_free_never_waits),
	    cmocka_unit_test(test_done_jobs_bounded_until_handled),
	    cmocka_unit_test(test_done_bytes_bounded_until_handled),
	    cmocka_unit_test(test_reserve_one_large_at_a_time),
	    cmocka_unit_test(test_random_mix_all_come_back),
	};

	return cmocka_run_group_tests_name("file_worker", tests, NULL, NULL);
}
