/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File work off the sampling thread. Opening a file a target maps, parsing
 * it and building its stack-delta table can block for ever (a hung NFS or
 * FUSE server, a FIFO swapped in) or take a second (libLLVM's table): none
 * of it may run in the ring-buffer callback. The sampling thread posts jobs
 * here; a small pool of threads runs them; after each ring-buffer poll the
 * sampling thread collects what finished (file_worker__poll).
 *
 * A job running longer than the timeout is abandoned: it is reported at once
 * as abandoned, its thread is left blocked (detached, never joined) and a new
 * thread takes its place. Past FILE_WORKER_MAX_ABANDONED stuck threads no new
 * one is started: once every thread is stuck, jobs fail at once (-EBUSY,
 * counted as refused) instead of queueing for ever. If a stuck job ever
 * returns, its thread frees it and ends.
 *
 * Nothing here waits for a job: neither the sampling thread nor
 * file_worker__free(), which leaves busy threads to finish (or not) alone.
 */
#ifndef OMNIPROF_UTIL_FILE_WORKER_H
#define OMNIPROF_UTIL_FILE_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Threads that run jobs. Two, so one long table build does not hold back opens. */
#define FILE_WORKER_THREADS 2
/* A job running longer than this is abandoned (unless the job sets its own). */
#define FILE_WORKER_TIMEOUT_MS 5000
/* Finished jobs not yet handed back at most (those file_worker__poll took
 * count until its callback has handled each): threads wait beyond it (an
 * opened file holds a descriptor until the cache takes it and bounds them). */
#define FILE_WORKER_MAX_DONE 128
/* Memory the finished jobs not handed back yet may hold together (file_job.bytes):
 * threads wait beyond it. Tables read back from the disk cache are quick to
 * read and large: at start-up a hundred of them (33 MiB) waited for the sampling
 * thread at once. One job may exceed it alone. */
#define FILE_WORKER_MAX_DONE_BYTES (8u << 20)
/* Transient memory running jobs may reserve together (file_job__reserve): a
 * job that does not fit is put back until it does or would run alone. Two
 * large table builds at once made the profiler's peak (117 MiB). */
#define FILE_WORKER_RESERVE_BYTES (16u << 20)
/* Less is not reserved: small builds never wait, and do not keep a large one waiting. */
#define FILE_WORKER_RESERVE_MIN (1u << 20)
/* An urged job (file_worker__urge) up to this size may run beside a large build
 * that holds the reservation (one such at a time): gofmt's table (1.3 MiB) waited
 * for libLLVM's (29 MiB) to end. The peak grows by it at most. */
#define FILE_WORKER_URGENT_BYTES (4u << 20)
/* Stuck threads left behind at most; past it no replacement is started. */
#define FILE_WORKER_MAX_ABANDONED 16

enum file_job_kind {
	FILE_JOB_OPEN,	/* struct file_open_job (proc/file_cache.h) */
	FILE_JOB_BUILD, /* struct table_build_job (unwind/unwind_maps.h) */
};

/*
 * A job, embedded first in the struct of its kind. run() executes on a
 * worker thread and may touch only the job; free() releases the job and
 * everything it holds (called by whoever owns the job last: the sampling
 * thread after handling it, or a stuck thread that came back too late).
 */
struct file_job {
	enum file_job_kind kind;
	void (*run)(struct file_job *job);
	void (*free)(struct file_job *job);
	int err;		 /* set by run(); -ETIMEDOUT abandoned, -EBUSY refused */
	uint64_t started_ns;	 /* CLOCK_MONOTONIC when a thread took it */
	uint64_t run_ns;	 /* how long run() took */
	unsigned int timeout_ms; /* 0: the worker's */
	bool abandoned;		 /* under the lock */
	bool deferred;		 /* file_job__reserve() found no room: run() again later */
	bool urgent;		 /* under the lock: moved to the head (file_worker__urge) */
	size_t bytes;		 /* set by run(): memory the finished job holds */
	size_t reserved;	 /* under the lock: what file_job__reserve() granted */
	void *owner;		 /* the worker's shared state, while it runs */
	struct file_job *next;
};

struct file_worker_stats {
	uint64_t queued;
	uint64_t done;
	uint64_t abandoned;	/* jobs that ran past the timeout */
	uint64_t refused;	/* failed at once: every thread was stuck */
	uint64_t threads;	/* threads started */
	uint64_t late;		/* abandoned jobs that returned after all (freed by their thread) */
	uint64_t promoted;	/* background jobs moved ahead: a sampled process waits for them */
	uint64_t urged;		/* jobs moved to the head: a held copy gets no rule without them */
	uint64_t urgent_beside; /* reservations granted to urged jobs beside a full one */
	uint64_t urged_deferred; /* ... of them taken out of the jobs put back (no room) */
	uint64_t deferred;	 /* jobs put back by file_job__reserve() (no room yet) */
	uint64_t reserved_max;	 /* most bytes reserved at once */
};

struct file_worker;

/* n_threads workers (0: FILE_WORKER_THREADS), timeout_ms (0: FILE_WORKER_TIMEOUT_MS).
 * 0 and *out (free with file_worker__free()), or -errno. */
int file_worker__new(unsigned int n_threads, unsigned int timeout_ms, struct file_worker **out);
/* Stops idle threads and drops queued jobs; never waits for a busy one. Accepts NULL. */
void file_worker__free(struct file_worker *fw);

/* Queues job (owned by the worker until it comes back from file_worker__poll). */
void file_worker__post(struct file_worker *fw, struct file_job *job);
/*
 * While on, posted jobs are background jobs: every job posted in the
 * foreground runs before them (the start-up scan's files, posted in the
 * background, do not hold up the files of a process started since, whose
 * samples wait for them).
 */
void file_worker__set_background(struct file_worker *fw, bool background);
/* Queues job in the background or the foreground, whatever the mode. */
void file_worker__post_as(struct file_worker *fw, struct file_job *job, bool background);
/*
 * Moves job, if it is still queued among the background jobs, to the end of
 * the foreground ones: a file a sampled process waits for goes before the
 * start-up scan's others. True when it moved. job is only compared: it may
 * have finished (not freed by the caller yet).
 */
bool file_worker__promote(struct file_worker *fw, const struct file_job *job);
/*
 * Moves job, if it is still queued (foreground, background, or put back
 * for want of room) and was not urged before, to the head of the queue,
 * after the jobs urged before it: a file a held copy can take no rule from
 * until the job is done (a Go file's table, a file with no .eh_frame_hdr, a
 * refused FDE, a file still opened) goes before the builds of files whose
 * copies are already walked from their CFI one FDE at a time (issue 17).
 * True when it moved. job is only compared, as by file_worker__promote().
 */
bool file_worker__urge(struct file_worker *fw, const struct file_job *job);

/*
 * Called with each job that finished (abandoned false: fn owns the job and
 * frees it with job->free) or that was just abandoned (abandoned true,
 * job->err -ETIMEDOUT: fn may read the job's inputs but neither frees nor
 * keeps it, its thread still runs it).
 */
typedef void (*file_job_fn)(void *ctx, struct file_job *job, bool abandoned);

/*
 * From run(), before its memory-hungry part: true when bytes more of
 * transient memory fit in FILE_WORKER_RESERVE_BYTES beside what the other
 * running jobs reserved (or no other job holds any; below
 * FILE_WORKER_RESERVE_MIN always), held then until run() returns. False:
 * run() must return at once, undoing what it did (it is not handed back: it
 * runs again from the start once a reservation ends). A thread never waits
 * for room: opens go on beside a large build.
 */
bool file_job__reserve(struct file_job *job, size_t bytes);

/* Abandons jobs past the timeout and hands back finished ones. Returns how many. */
size_t file_worker__poll(struct file_worker *fw, file_job_fn fn, void *ctx);
/* Jobs posted and not handed back yet (queued, running, finished). */
size_t file_worker__in_flight(const struct file_worker *fw);
void file_worker__stats(struct file_worker *fw, struct file_worker_stats *out);

#endif
