/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Built stack-delta tables kept on disk across runs (`--table-cache DIR`,
 * default /var/cache/omniprof): libLLVM's table takes 0.9 s to build on an
 * idle 2-CPU machine and ten times that under load, while the samples of a
 * compiler that maps it wait for it. A table read back costs one read of the
 * file plus a checksum over it (the first time this run for that unchanged file).
 *
 * One file per table, named by its id (stack_deltas__table_id(): a hash of
 * every input the build reads), so a file is found again whatever path or
 * process maps it, and a changed file is a new table. The folder must be
 * owned by the effective user and closed to group and others (it is created
 * 0700 when missing); a cache file is accepted only when it is a regular file
 * owned by the same user, reached without a symlink, whose header names the
 * id asked for and whose checksum over header and deltas matches (against
 * damaged files; the folder's owner and mode keep others out), with the
 * deltas sorted. Anything else is refused (counted, and removed so the
 * next build replaces it). Files are written to a temporary name and renamed
 * in (never partially visible, never through a symlink), and the folder is
 * kept under a byte bound, least recently used removed first (a hit touches
 * its file, at most every 10 minutes: a touch changes its ctime, and a file
 * read back again unchanged skips its checksum, util/stat_memo.h).
 *
 * Used from the file worker's threads at once: the struct is read-only after
 * table_cache__open() and its counters are atomic. Reference counted, since
 * an abandoned build job may still run after the session that made it ended.
 */
#ifndef OMNIPROF_UNWIND_TABLE_CACHE_H
#define OMNIPROF_UNWIND_TABLE_CACHE_H

#include <stdint.h>

#include "unwind/stack_deltas.h"

#define TABLE_CACHE_DEFAULT_DIR "/var/cache/omniprof"
/* The folder's bound: libLLVM-14's table is 13 MiB on disk. */
#define TABLE_CACHE_DEFAULT_BYTES (256ull << 20)

struct table_cache_stats {
	uint64_t hits;	  /* tables read back */
	uint64_t misses;  /* not there: built */
	uint64_t stores;  /* written */
	uint64_t refused; /* there but refused: corrupt, foreign, a symlink, another owner */
	uint64_t errors;  /* reads or writes that failed otherwise */
	uint64_t evicted; /* removed to keep the folder under its bound */
	uint64_t read_ns; /* time spent reading tables back */
};

struct table_cache;

/*
 * Opens (creating it 0700 when missing, its parent must exist) the cache
 * folder dir, bounded to max_bytes (0: TABLE_CACHE_DEFAULT_BYTES). 0 and *out
 * (one reference: table_cache__put()), or -errno: -EPERM when the folder is
 * another user's or open to group or others, -ELOOP when it is a symlink.
 */
int table_cache__open(const char *dir, uint64_t max_bytes, struct table_cache **out);
/* Another reference to tc (NULL stays NULL). */
struct table_cache *table_cache__get(struct table_cache *tc);
/* Drops a reference; the last closes the folder. Accepts NULL. */
void table_cache__put(struct table_cache *tc);

/*
 * The table of id, read back into *out (free with stack_delta_table__free();
 * out->id and has_id set). 0, -ENOENT (not cached), -EBADMSG (refused: the
 * file is removed), or -errno.
 */
int table_cache__load(struct table_cache *tc, const uint8_t id[STACK_DELTAS_ID_LEN],
		      struct stack_delta_table *out);
/*
 * The bytes table_cache__load() of id would allocate (the cached file's size
 * less its header; not checked: a file refused later only cost its reservation).
 * 0 when id is not cached or cannot be looked at.
 */
uint64_t table_cache__load_bytes(struct table_cache *tc, const uint8_t id[STACK_DELTAS_ID_LEN]);

struct delta_leaves;
/*
 * The table of id read back straight into its leaf-page form (delta_pages.h:
 * 6 bytes a delta, rules local to the table; free with delta_leaves__free()),
 * its build's counts into *stats: the same checks and results as
 * table_cache__load(), without ever holding the deltas whole (issue 22).
 */
int table_cache__load_leaves(struct table_cache *tc, const uint8_t id[STACK_DELTAS_ID_LEN],
			     struct delta_leaves *out, struct stack_delta_stats *stats);
/* As table_cache__load_bytes(), for table_cache__load_leaves(). */
uint64_t table_cache__load_leaves_bytes(struct table_cache *tc,
					const uint8_t id[STACK_DELTAS_ID_LEN]);
/* Writes t (t->has_id) under its id, then trims the folder. 0 or -errno. */
int table_cache__store(struct table_cache *tc, const struct stack_delta_table *t);

void table_cache__stats(const struct table_cache *tc, struct table_cache_stats *out);
/* The file name of id in the folder (32 hex digits and ".tb2"; buf of 40 bytes). */
void table_cache__name(const uint8_t id[STACK_DELTAS_ID_LEN], char buf[40]);

#endif
