/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What was computed from a file's bytes (a table id, a verified digest),
 * remembered for the rest of the run under the file's identity as fstat sees
 * it: device, inode, size, mtime and ctime. Any change of any of them (a
 * write, a truncate, a replace by rename, a touch) is another key, so the
 * bytes are hashed again. A file changed within STAT_MEMO_RACY_NS of the
 * moment its key is taken gets no key at all: a second write in the same
 * clock tick could leave both times as they were (git's "racy" files).
 *
 * Process-wide, fixed size (STAT_MEMO_SLOTS entries, a newer key replaces
 * whatever shared its slot), safe from any thread.
 */
#ifndef OMNIPROF_UTIL_STAT_MEMO_H
#define OMNIPROF_UTIL_STAT_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STAT_MEMO_SLOTS	    1024
#define STAT_MEMO_VALUE_MAX 32
#define STAT_MEMO_RACY_NS   (2ull * 1000 * 1000 * 1000)

/* What a value is of: one file may have a value of each kind. */
enum stat_memo_kind {
	STAT_MEMO_TABLE_ID = 1,	    /* stack_deltas__table_id() of an ELF file */
	STAT_MEMO_CACHE_DIGEST = 2, /* a table cache file whose digest was checked */
};

struct stat_memo_key {
	uint64_t dev;
	uint64_t ino;
	uint64_t size;
	int64_t mtime_sec;
	int64_t mtime_nsec;
	int64_t ctime_sec;
	int64_t ctime_nsec;
	uint64_t kind; /* enum stat_memo_kind; 64 bits: no padding in a key compared whole */
};

/*
 * The key of the file open on fd, for values of kind. false (no key: compute,
 * do not remember) when fstat fails, the file is not a regular file, or it
 * changed less than STAT_MEMO_RACY_NS ago (or in the future).
 */
bool stat_memo__key(int fd, enum stat_memo_kind kind, struct stat_memo_key *k);
/* Copies the value remembered under k (len bytes) into out: true, or false when none. */
bool stat_memo__find(const struct stat_memo_key *k, void *out, size_t len);
/* Remembers len (at most STAT_MEMO_VALUE_MAX) bytes under k. */
void stat_memo__add(const struct stat_memo_key *k, const void *value, size_t len);
/* Forgets everything, counters too (tests). */
void stat_memo__reset(void);

struct stat_memo_stats {
	uint64_t hits; /* values found: a hash not computed again */
	uint64_t adds; /* values remembered */
};

void stat_memo__stats(struct stat_memo_stats *out);

#endif
