/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What names a runtime's frames, read from the process while it lives and
 * kept until the profile is built: one object per (pid, address) (e.g. a
 * code object's name, file and line table), under a small id that the
 * trace carries (util/id_pool.h). Every runtime uses one; the runtime reads
 * and frees the objects, the store keeps, bounds and retires them:
 *
 *   - an address whose fingerprint changed holds another object now: the
 *     old one is retired (samples of this interval may still name it) and
 *     freed when the interval ends;
 *   - byte budgets per process and in all (frame_store__budget_allows():
 *     the runtime does not read more while one is full);
 *   - at an interval's end, objects of processes that exited or left the
 *     process table go, and a process over its object cap or byte budget
 *     (or every process when the total is over) keeps only what the
 *     interval used.
 */
#ifndef OMNIPROF_INTERP_FRAME_STORE_H
#define OMNIPROF_INTERP_FRAME_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"
#include "util/id_pool.h"

struct process_table;

struct frame_store_limits {
	size_t objects_per_process; /* kept between intervals beyond those just used */
	size_t bytes_per_process;   /* at most a quarter of bytes_total, so others keep room */
	size_t bytes_total;
};

struct frame_store_stats {
	uint64_t evicted;    /* objects freed (exit, cap, reuse) */
	uint64_t bytes_peak; /* most bytes held at once */
};

struct frame_store {
	struct frame_store_limits limits;
	void (*free_obj)(void *obj);
	size_t (*obj_bytes)(const void *obj);
	struct hashmap keys;  /* (pid, address) -> struct frame_store_key */
	struct hashmap procs; /* pid -> struct frame_store_proc: its objects and bytes */
	struct id_pool ids;   /* id -> object */
	uint32_t *retired;    /* ids replaced during this interval, freed at its end */
	size_t n_retired;
	size_t cap_retired;
	size_t bytes;	   /* held by all objects (obj_bytes) */
	uint64_t interval; /* frame_store__end_interval() calls */
	struct frame_store_stats stats;
};

/* free_obj frees one object, obj_bytes says what it holds. Free with frame_store__clear(). */
void frame_store__init(struct frame_store *fs, const struct frame_store_limits *limits,
		       void (*free_obj)(void *obj), size_t (*obj_bytes)(const void *obj));
void frame_store__clear(struct frame_store *fs); /* accepts NULL */

/*
 * The object at (pid, addr): true when it is known with this fingerprint,
 * *id then its id (0: it could not be kept) and it counts as used in this
 * interval. False otherwise, *reused telling whether addr held another one.
 */
bool frame_store__find(struct frame_store *fs, uint32_t pid, uint64_t addr, uint64_t fingerprint,
		       uint32_t *id, bool *reused);
/* May one more object of pid be read? Not while pid's or the total byte budget is full. */
bool frame_store__budget_allows(const struct frame_store *fs, uint32_t pid);
/* Bytes pid's objects hold (as counted since the last interval's end). */
size_t frame_store__proc_bytes(const struct frame_store *fs, uint32_t pid);
/*
 * Keeps obj (ownership taken: freed here on failure) for (pid, addr,
 * fingerprint), retiring what addr held. Returns its id, 0 on ENOMEM.
 */
uint32_t frame_store__add(struct frame_store *fs, uint32_t pid, uint64_t addr, uint64_t fingerprint,
			  void *obj);
/* The object of id, NULL for 0 or an unknown id. */
const void *frame_store__get(const struct frame_store *fs, uint32_t id);
/*
 * After a profile was built (no sample refers to an id any more): frees the
 * retired objects and those of processes pt no longer holds or that exited,
 * and, past a cap or budget, those this interval did not use. Returns the
 * objects still held.
 */
size_t frame_store__end_interval(struct frame_store *fs, const struct process_table *pt);
/* Objects held for pid (walks every one: tests and reports). */
size_t frame_store__held(const struct frame_store *fs, uint32_t pid);
/* Objects held in all. */
static inline size_t frame_store__live(const struct frame_store *fs)
{
	return fs->ids.live;
}

#endif
