// SPDX-License-Identifier: Apache-2.0
#include "util/file_worker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "util/log.h"

/*
 * What the threads share with the owner. It outlives the owner while a
 * thread still runs (a stuck one may never return): the last of them frees it.
 */
struct shared {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* The queue: jobs urged (up to urgent_last), jobs posted in the
	 * foreground (up to fg_last, which may be urgent_last), then those posted
	 * in the background (from bg_first on), each part in posting order. Jobs
	 * put back (deferred) go to the head, ahead of all. */
	struct file_job *queue_first, *queue_last;
	struct file_job *urgent_last, *fg_last, *bg_first;
	struct file_job *done_first, *done_last;
	/* Finished jobs not handed back by file_worker__poll yet: those on the
	 * done list and those it took and has not finished handing back. */
	size_t n_done;
	size_t done_bytes;	/* file_job.bytes of those n_done */
	size_t reserved;	/* file_job__reserve() grants of the running jobs */
	size_t reserved_urgent; /* ... of those urged, granted past the others'
				   (FILE_WORKER_URGENT_BYTES) */
	/* Jobs put back by file_job__reserve() (no room), queued again first
	 * when a reservation ends. */
	struct file_job *deferred_first, *deferred_last;
	bool stopping;
	unsigned int refs; /* the owner and every thread alive */
	struct file_worker_stats stats;
};

/* One thread's state; freed by the thread itself when it ends. */
struct slot {
	struct shared *sh;
	struct file_job *current; /* under the lock */
	bool abandoned;		  /* left behind: end after the current job */
};

struct file_worker {
	struct shared *sh;
	struct slot *slots[FILE_WORKER_THREADS * 4]; /* the active (not abandoned) threads */
	unsigned int n_slots;
	unsigned int want_threads;
	unsigned int n_abandoned;
	uint64_t timeout_ns;
	size_t in_flight;
	bool background; /* jobs posted now go after every foreground job */
};

static void push(struct file_job **first, struct file_job **last, struct file_job *job)
{
	job->next = NULL;
	if (*last)
		(*last)->next = job;
	else
		*first = job;
	*last = job;
}

static void shared_free(struct shared *sh)
{
	struct file_job *j, *next;

	for (j = sh->queue_first; j; j = next) {
		next = j->next;
		j->free(j);
	}
	for (j = sh->done_first; j; j = next) {
		next = j->next;
		j->free(j);
	}
	for (j = sh->deferred_first; j; j = next) {
		next = j->next;
		j->free(j);
	}
	pthread_cond_destroy(&sh->cond);
	pthread_mutex_destroy(&sh->lock);
	free(sh);
}

/*
 * A job abandoned by the poller holds two references (job->abandoned set,
 * job->next used as the count, see release_abandoned): the thread's and the
 * poller's. Called under the lock; true when the caller must free it.
 */
static bool drop_abandoned(struct file_job *job)
{
	uintptr_t refs = (uintptr_t)job->next;

	job->next = (struct file_job *)(refs - 1);
	return refs == 1;
}

/*
 * Gives back what job reserved, and queues the deferred jobs again, ahead of
 * the others (they were taken before them). Under the lock.
 */
static void unreserve(struct shared *sh, struct file_job *job)
{
	if (!job->reserved)
		return;
	sh->reserved -= job->reserved;
	if (job->urgent)
		sh->reserved_urgent -= job->reserved;
	job->reserved = 0;
	if (!sh->deferred_first)
		return;
	sh->deferred_last->next = sh->queue_first;
	if (!sh->queue_first)
		sh->queue_last = sh->deferred_last;
	if (!sh->fg_last && sh->queue_first == sh->bg_first)
		sh->fg_last = sh->deferred_last; /* now the foreground's last */
	sh->queue_first = sh->deferred_first;
	sh->deferred_first = sh->deferred_last = NULL;
	pthread_cond_broadcast(&sh->cond);
}

bool file_job__reserve(struct file_job *job, size_t bytes)
{
	struct shared *sh = job->owner;
	bool fits;

	if (!sh || bytes < FILE_WORKER_RESERVE_MIN)
		return true;
	pthread_mutex_lock(&sh->lock);
	/*
	 * While a job waits for room (deferred), no other takes any: a large one
	 * (libLLVM's table, read back or built) was put back again and again
	 * while the other thread went from one smaller job to the next, and the
	 * compilers held for it were handled without it at the record's end
	 * (issue 17, session 16). Nothing reserved: anything fits.
	 */
	fits = !sh->reserved ||
	       (sh->reserved + bytes <= FILE_WORKER_RESERVE_BYTES && !sh->deferred_first) ||
	       sh->stopping;
	/* An urged job, small: beside the others (a held copy waits for it). */
	if (!fits && job->urgent && sh->reserved_urgent + bytes <= FILE_WORKER_URGENT_BYTES) {
		fits = true;
		sh->reserved_urgent += bytes;
		sh->stats.urgent_beside++;
	} else if (fits && job->urgent) {
		sh->reserved_urgent += bytes;
	}
	if (fits) {
		sh->reserved += bytes;
		job->reserved += bytes;
		if (sh->reserved > sh->stats.reserved_max)
			sh->stats.reserved_max = sh->reserved;
	} else {
		job->deferred = true;
		sh->stats.deferred++;
	}
	pthread_mutex_unlock(&sh->lock);
	return fits;
}

static void *worker_main(void *arg)
{
	struct slot *slot = arg;
	struct shared *sh = slot->sh;
	bool last;

	pthread_mutex_lock(&sh->lock);
	for (;;) {
		struct file_job *job;
		bool free_it;

		while ((!sh->queue_first || sh->n_done >= FILE_WORKER_MAX_DONE ||
			sh->done_bytes >= FILE_WORKER_MAX_DONE_BYTES) &&
		       !sh->stopping)
			pthread_cond_wait(&sh->cond, &sh->lock);
		if (sh->stopping)
			break;
		job = sh->queue_first;
		sh->queue_first = job->next;
		if (!sh->queue_first)
			sh->queue_last = NULL;
		if (sh->fg_last == job)
			sh->fg_last = NULL;
		if (sh->urgent_last == job)
			sh->urgent_last = NULL;
		if (sh->bg_first == job)
			sh->bg_first = job->next;
		job->next = NULL;
		job->started_ns = clock__now_ns();
		job->owner = sh;
		job->bytes = 0;
		slot->current = job;
		pthread_mutex_unlock(&sh->lock);

		job->run(job);

		pthread_mutex_lock(&sh->lock);
		slot->current = NULL;
		unreserve(sh, job);
		job->owner = NULL;
		if (job->deferred && !job->abandoned && !sh->stopping) {
			/* Not run: back in line once a running job's reservation ends. */
			job->deferred = false;
			if (sh->reserved) {
				push(&sh->deferred_first, &sh->deferred_last, job);
			} else {
				/* Ended meanwhile: at the head of the queue again. */
				job->next = sh->queue_first;
				if (!sh->queue_first)
					sh->queue_last = job;
				if (!sh->fg_last && sh->queue_first == sh->bg_first)
					sh->fg_last = job;
				sh->queue_first = job;
			}
			continue;
		}
		if (job->abandoned) {
			/* Too late: the poller reported it and replaced this thread. */
			sh->stats.late++;
			free_it = drop_abandoned(job);
			pthread_mutex_unlock(&sh->lock);
			if (free_it)
				job->free(job);
			pthread_mutex_lock(&sh->lock);
			break;
		}
		job->run_ns = clock__now_ns() - job->started_ns;
		if (sh->stopping) {
			pthread_mutex_unlock(&sh->lock);
			job->free(job);
			pthread_mutex_lock(&sh->lock);
			break;
		}
		push(&sh->done_first, &sh->done_last, job);
		sh->n_done++;
		sh->done_bytes += job->bytes;
		if (slot->abandoned)
			break;
	}
	last = --sh->refs == 0;
	pthread_mutex_unlock(&sh->lock);
	free(slot);
	if (last)
		shared_free(sh);
	return NULL;
}

/* Starts one thread (signals blocked: they are the sampling thread's). Under no lock. */
static int start_thread(struct file_worker *fw)
{
	struct slot *slot;
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int err;

	if (fw->n_slots >= sizeof(fw->slots) / sizeof(fw->slots[0]))
		return -ENOSPC;
	slot = calloc(1, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	slot->sh = fw->sh;
	pthread_mutex_lock(&fw->sh->lock);
	fw->sh->refs++;
	pthread_mutex_unlock(&fw->sh->lock);
	pthread_attr_init(&attr);
	/* Never joined: a stuck thread must not hold anyone up. */
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, &attr, worker_main, slot);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		pthread_mutex_lock(&fw->sh->lock);
		fw->sh->refs--;
		pthread_mutex_unlock(&fw->sh->lock);
		free(slot);
		return -err;
	}
	fw->slots[fw->n_slots++] = slot;
	pthread_mutex_lock(&fw->sh->lock);
	fw->sh->stats.threads++;
	pthread_mutex_unlock(&fw->sh->lock);
	return 0;
}

int file_worker__new(unsigned int n_threads, unsigned int timeout_ms, struct file_worker **out)
{
	struct file_worker *fw = calloc(1, sizeof(*fw));
	int err = -ENOMEM;

	*out = NULL;
	if (!fw)
		return -ENOMEM;
	fw->sh = calloc(1, sizeof(*fw->sh));
	if (!fw->sh)
		goto cleanup;
	pthread_mutex_init(&fw->sh->lock, NULL);
	pthread_cond_init(&fw->sh->cond, NULL);
	fw->sh->refs = 1;
	fw->want_threads = n_threads ? n_threads : FILE_WORKER_THREADS;
	if (fw->want_threads > FILE_WORKER_THREADS * 4)
		fw->want_threads = FILE_WORKER_THREADS * 4;
	fw->timeout_ns = (uint64_t)(timeout_ms ? timeout_ms : FILE_WORKER_TIMEOUT_MS) * 1000000ull;
	for (unsigned int i = 0; i < fw->want_threads; i++) {
		err = start_thread(fw);
		if (err)
			goto cleanup;
	}
	*out = fw;
	return 0;
cleanup:
	file_worker__free(fw);
	return err;
}

void file_worker__free(struct file_worker *fw)
{
	struct shared *sh;
	bool last;

	if (!fw)
		return;
	sh = fw->sh;
	if (sh) {
		pthread_mutex_lock(&sh->lock);
		sh->stopping = true;
		pthread_cond_broadcast(&sh->cond);
		last = --sh->refs == 0;
		pthread_mutex_unlock(&sh->lock);
		/* Busy threads finish (or stay stuck) on their own; the last one frees sh. */
		if (last)
			shared_free(sh);
	}
	free(fw);
}

void file_worker__post(struct file_worker *fw, struct file_job *job)
{
	file_worker__post_as(fw, job, fw->background);
}

void file_worker__post_as(struct file_worker *fw, struct file_job *job, bool background)
{
	struct shared *sh = fw->sh;

	job->err = 0;
	job->abandoned = false;
	job->urgent = false;
	job->bytes = 0;
	fw->in_flight++;
	pthread_mutex_lock(&sh->lock);
	sh->stats.queued++;
	if (!fw->n_slots) {
		/* Every thread is stuck and no more may be started. */
		job->err = -EBUSY;
		sh->stats.refused++;
		push(&sh->done_first, &sh->done_last, job);
		sh->n_done++;
	} else if (background || !sh->bg_first) {
		push(&sh->queue_first, &sh->queue_last, job);
		if (background && !sh->bg_first)
			sh->bg_first = job;
		if (!background)
			sh->fg_last = job;
		pthread_cond_signal(&sh->cond);
	} else {
		/* Ahead of the background jobs, after the other foreground ones. */
		job->next = sh->bg_first;
		if (sh->fg_last)
			sh->fg_last->next = job;
		else
			sh->queue_first = job;
		sh->fg_last = job;
		pthread_cond_signal(&sh->cond);
	}
	pthread_mutex_unlock(&sh->lock);
}

void file_worker__set_background(struct file_worker *fw, bool background)
{
	fw->background = background;
}

/*
 * Takes cur out of the queue (prev: the job before it, NULL when cur is the
 * head); a mark of the queue's parts that pointed at cur moves to its
 * neighbour. Called with sh->lock held.
 */
static void queue_unlink(struct shared *sh, struct file_job *prev, struct file_job *cur)
{
	if (prev)
		prev->next = cur->next;
	else
		sh->queue_first = cur->next;
	if (sh->queue_last == cur)
		sh->queue_last = prev;
	if (sh->fg_last == cur)
		sh->fg_last = prev;
	if (sh->bg_first == cur)
		sh->bg_first = cur->next;
}

bool file_worker__promote(struct file_worker *fw, const struct file_job *job)
{
	struct shared *sh = fw->sh;
	struct file_job *prev, *cur;

	pthread_mutex_lock(&sh->lock);
	prev = sh->fg_last;
	for (cur = sh->bg_first; cur && cur != job; cur = cur->next)
		prev = cur;
	if (!cur) {
		pthread_mutex_unlock(&sh->lock);
		return false;
	}
	/* Out of the background part ... */
	queue_unlink(sh, prev, cur);
	/* ... and after the last foreground job. */
	cur->next = sh->bg_first;
	if (sh->fg_last)
		sh->fg_last->next = cur;
	else
		sh->queue_first = cur;
	sh->fg_last = cur;
	if (!cur->next)
		sh->queue_last = cur;
	sh->stats.promoted++;
	pthread_mutex_unlock(&sh->lock);
	return true;
}

bool file_worker__urge(struct file_worker *fw, const struct file_job *job)
{
	struct shared *sh = fw->sh;
	struct file_job *prev = NULL, *cur, *old_urgent;

	pthread_mutex_lock(&sh->lock);
	/* Urged once is enough: its place is kept (a held copy urges at each walk). */
	for (cur = sh->urgent_last ? sh->urgent_last->next : sh->queue_first; cur && cur != job;
	     cur = cur->next)
		prev = cur;
	if (!cur) {
		/*
		 * Put back for want of room (gofmt's build behind libLLVM's): out
		 * of the deferred jobs, so a thread takes it again at once and it
		 * reserves beside (file_job__reserve).
		 */
		prev = NULL;
		for (cur = sh->deferred_first; cur && cur != job; cur = cur->next)
			prev = cur;
		if (!cur || cur->urgent) {
			pthread_mutex_unlock(&sh->lock);
			return false;
		}
		if (prev)
			prev->next = cur->next;
		else
			sh->deferred_first = cur->next;
		if (sh->deferred_last == cur)
			sh->deferred_last = prev;
		sh->stats.urged_deferred++;
	} else if (cur->urgent) {
		pthread_mutex_unlock(&sh->lock);
		return false;
	} else {
		if (!prev)
			prev = sh->urgent_last;
		/* Out of its place ... */
		queue_unlink(sh, prev, cur);
	}
	/* ... and after the last urgent one (or first). */
	old_urgent = sh->urgent_last;
	if (old_urgent) {
		cur->next = old_urgent->next;
		old_urgent->next = cur;
	} else {
		cur->next = sh->queue_first;
		sh->queue_first = cur;
	}
	if (!cur->next)
		sh->queue_last = cur;
	if (!sh->fg_last || sh->fg_last == old_urgent)
		sh->fg_last = cur;
	sh->urgent_last = cur;
	cur->urgent = true;
	sh->stats.urged++;
	pthread_cond_signal(&sh->cond);
	pthread_mutex_unlock(&sh->lock);
	return true;
}

size_t file_worker__poll(struct file_worker *fw, file_job_fn fn, void *ctx)
{
	struct shared *sh = fw->sh;
	struct file_job *stuck[sizeof(fw->slots) / sizeof(fw->slots[0])];
	struct file_job *done, *next;
	size_t n_stuck = 0, n = 0;
	uint64_t now;

	pthread_mutex_lock(&sh->lock);
	/*
	 * Read under the lock: a job a worker takes sets its start under it, so
	 * no start is after now (read before the lock, a start taken while this
	 * waited for it wrapped now - start round to "stuck for centuries").
	 */
	now = clock__now_ns();
	for (unsigned int i = 0; i < fw->n_slots;) {
		struct slot *slot = fw->slots[i];
		struct file_job *job = slot->current;

		if (!job || job->started_ns >= now ||
		    now - job->started_ns < (job->timeout_ms
						 ? (uint64_t)job->timeout_ms * 1000000ull
						 : fw->timeout_ns)) {
			i++;
			continue;
		}
		/* Left to its thread, which ends if it ever returns; reported now. */
		job->abandoned = true;
		job->err = -ETIMEDOUT;
		/* Its thread may never return: others may not wait for its room. */
		unreserve(sh, job);
		job->next = (struct file_job *)(uintptr_t)2; /* the thread's and ours */
		slot->abandoned = true;
		sh->stats.abandoned++;
		stuck[n_stuck++] = job;
		fw->slots[i] = fw->slots[--fw->n_slots];
		fw->n_abandoned++;
	}
	/*
	 * n_done still counts the jobs taken here until fn has handled each:
	 * their opened files hold descriptors until the cache takes them, so the
	 * threads may not finish another FILE_WORKER_MAX_DONE meanwhile.
	 */
	done = sh->done_first;
	sh->done_first = sh->done_last = NULL;
	pthread_mutex_unlock(&sh->lock);

	for (size_t i = 0; i < n_stuck; i++) {
		if (fw->n_abandoned <= FILE_WORKER_MAX_ABANDONED) {
			if (start_thread(fw))
				pr_warn("cannot start a file worker thread: file work slows down");
		} else if (fw->n_abandoned == FILE_WORKER_MAX_ABANDONED + 1 && i == 0) {
			pr_warn("%u file worker threads are stuck: no more are started",
				FILE_WORKER_MAX_ABANDONED);
		}
	}
	if (!fw->n_slots) {
		/* Nothing will run what is queued: fail it now rather than never. */
		pthread_mutex_lock(&sh->lock);
		while (sh->queue_first) {
			struct file_job *job = sh->queue_first;

			sh->queue_first = job->next;
			job->err = -EBUSY;
			sh->stats.refused++;
			push(&sh->done_first, &sh->done_last, job);
			sh->n_done++;
		}
		sh->queue_last = sh->fg_last = sh->bg_first = NULL;
		while (sh->deferred_first) {
			struct file_job *job = sh->deferred_first;

			sh->deferred_first = job->next;
			job->err = -EBUSY;
			sh->stats.refused++;
			push(&sh->done_first, &sh->done_last, job);
			sh->n_done++;
		}
		sh->deferred_last = NULL;
		pthread_mutex_unlock(&sh->lock);
	}
	for (size_t i = 0; i < n_stuck; i++) {
		bool free_it;

		fw->in_flight--;
		n++;
		fn(ctx, stuck[i], true);
		pthread_mutex_lock(&sh->lock);
		free_it = drop_abandoned(stuck[i]);
		pthread_mutex_unlock(&sh->lock);
		if (free_it)
			stuck[i]->free(stuck[i]);
	}
	for (; done; done = next) {
		size_t bytes = done->bytes; /* fn frees the job */

		next = done->next;
		fw->in_flight--;
		n++;
		pthread_mutex_lock(&sh->lock);
		sh->stats.done++;
		pthread_mutex_unlock(&sh->lock);
		fn(ctx, done, false);
		pthread_mutex_lock(&sh->lock);
		sh->done_bytes -= bytes;
		if (--sh->n_done == FILE_WORKER_MAX_DONE - 1 ||
		    (sh->done_bytes < FILE_WORKER_MAX_DONE_BYTES &&
		     sh->done_bytes + bytes >= FILE_WORKER_MAX_DONE_BYTES))
			pthread_cond_broadcast(&sh->cond); /* threads waited for room */
		pthread_mutex_unlock(&sh->lock);
	}
	return n;
}

size_t file_worker__in_flight(const struct file_worker *fw)
{
	return fw ? fw->in_flight : 0;
}

void file_worker__stats(struct file_worker *fw, struct file_worker_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!fw)
		return;
	pthread_mutex_lock(&fw->sh->lock);
	*out = fw->sh->stats;
	pthread_mutex_unlock(&fw->sh->lock);
}
