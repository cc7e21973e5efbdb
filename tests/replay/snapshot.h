/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A process snapshot: what the unwinder needs to walk a stopped process's
 * threads again later, in another process. Per thread its registers; the
 * stack memory around each thread's stack pointer; the vDSO's bytes (it is no
 * file); the text of /proc/PID/maps; and for each mapped ELF file its path
 * and build id (files are referenced, not copied: a changed file is detected).
 *
 * File format (little endian), written and read only here:
 *   "OPSNAP01", then records { u32 tag; u32 zero; u64 len; u8 payload[len] }
 *   TAG_META    u32 pid, u32 stopped tid (the thread that met the stop condition)
 *   TAG_MAPS    the maps text
 *   TAG_THREAD  u32 tid, char comm[16], u32 zero, struct user_regs_struct
 *   TAG_MEM     u64 address, bytes
 *   TAG_FILE    path NUL build-id-hex NUL (empty build id: none)
 *   TAG_ZERO    u64 address, u64 length: captured memory that was all zeros
 * Unknown tags are skipped, so the format can grow.
 */
#ifndef OMNIPROF_TESTS_REPLAY_SNAPSHOT_H
#define OMNIPROF_TESTS_REPLAY_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#include "proc/remote_memory.h"

struct snapshot_thread {
	uint32_t tid;
	char comm[16];
	struct user_regs_struct regs;
};

struct snapshot_mem {
	uint64_t addr;
	uint64_t len;
	uint8_t *data; /* owned; NULL: zeros (pages of a mapping never written) */
};

struct snapshot_file {
	char *path;	/* owned */
	char *build_id; /* owned; "" when the file has none */
};

struct snapshot {
	uint32_t pid;
	uint32_t stopped_tid;
	char *maps; /* owned, NUL-terminated */
	size_t maps_len;
	struct snapshot_thread *threads; /* owned */
	size_t n_threads;
	struct snapshot_mem *mems; /* owned, sorted by addr, disjoint */
	size_t n_mems;
	struct snapshot_file *files; /* owned */
	size_t n_files;
};

void snapshot__init(struct snapshot *s);
void snapshot__clear(struct snapshot *s); /* frees everything; accepts NULL */

/* Builders; data is copied. 0 or -ENOMEM. */
int snapshot__add_thread(struct snapshot *s, const struct snapshot_thread *t);
int snapshot__add_mem(struct snapshot *s, uint64_t addr, const void *data, uint64_t len);
/* Captured memory that held only zeros (kept as its range). 0, -ENOMEM or -EEXIST. */
int snapshot__add_zero(struct snapshot *s, uint64_t addr, uint64_t len);
int snapshot__add_file(struct snapshot *s, const char *path, const char *build_id);

/* 0 or -errno. */
int snapshot__write(const struct snapshot *s, const char *path);
/* Fills s (snapshot__init'ed); 0, -errno, or -EINVAL for a malformed file. */
int snapshot__read(struct snapshot *s, const char *path);

/* Copies len bytes at addr from the captured memory: 0, or -EFAULT when not captured. */
int snapshot__read_mem(const struct snapshot *s, void *dst, size_t len, uint64_t addr);
/* The snapshot's memory as a proc/remote_memory source (s must outlive it). */
struct remote_memory snapshot__memory(const struct snapshot *s);
/* The build id recorded for path, or NULL when the file was not recorded. */
const char *snapshot__build_id(const struct snapshot *s, const char *path);

#endif
