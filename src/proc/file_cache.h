/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every file that executable code was sampled from, opened once and kept
 * open, so frames are named even after the process that mapped the file
 * exited or the file was deleted. Files are reached through
 * /proc/PID/map_files (the exact inode the process mapped, containers and
 * deleted files included), falling back to PATH resolved inside
 * /proc/PID/root (never out of it) when the inode found is the one
 * /proc/PID/maps named; both through util/safe_open.h (regular files of at
 * most SAFE_OPEN_MAX_ELF bytes only).
 *
 * Anonymous executable memory gets a pseudo-file entry with no ELF behind it
 * so its frames still carry a name. The vDSO is copied out of the process
 * (proc/vdso_image.h) and opened like a file, one entry per distinct image.
 *
 * Each file counts the process mappings that use it (the process table takes
 * and drops these references). A long-running agent closes files no process
 * uses any more with file_cache__evict_unused(), keeping the most recently
 * used of them open for programs that start again; an evicted file's slot is
 * given to the next new file, so whoever keeps data per file slot is told.
 */
#ifndef OMNIPROF_PROC_FILE_CACHE_H
#define OMNIPROF_PROC_FILE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/file_worker.h"
#include "proc/proc_maps.h"
#include "util/hashmap.h"
#include "util/list.h"

struct elf_file;

/*
 * Opens of one file at most. A file is opened through the process that
 * mapped it (/proc/PID/map_files, or its path inside /proc/PID/root): when
 * that process is gone by the time the open runs (a compiler that lived a
 * second, its opens queued behind others), the open fails with ENOENT or
 * ESRCH although the file is fine. The next process that maps it tries
 * again, through itself, up to this many opens in all: a failure kept for
 * good had every later compiler's samples in that file walked without a
 * table (issue 17: a CI run's whole warm recording of clang++).
 */
#define FILE_CACHE_OPENS 8

struct cached_file {
	uint32_t slot; /* 1-based, stable for the cache's life */
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	char *path;	      /* as the process saw it, or "[vdso]" / "[anon]" */
	const char *basename; /* points into path */
	struct elf_file *elf; /* NULL for pseudo files and files that failed to open */
	int open_error;	      /* -errno of the failed open, 0 otherwise */
	uint8_t htlhash[16];  /* file_id__htlhash(); all zero when unknown */
	uint64_t table_id;    /* id of its stack-delta table in BPF maps (a hash of what the
			       * table is built from, stack_deltas__table_id()), 0 when unknown */
	uint64_t content_id;  /* pseudo files with an image ([vdso]): hash of the whole image */
	uint32_t users;	      /* process mappings holding it (file_cache__ref) */
	uint64_t key_hash;    /* its hash in by_key */
	bool pending;	      /* being opened on the file worker: nothing known yet */
	const struct file_job *open_job; /* while pending: its job (file_worker__promote) */
	/* The process its last open went through, and how many opens it has had. */
	pid_t open_pid;
	uint32_t opens;
	/* The last mapping seen of it: where to reopen it (file_cache__ensure_fd). */
	pid_t origin_pid;
	uint64_t origin_start, origin_end, origin_offset;
	/* On fds while its elf's descriptor is open and can be closed (LRU order). */
	struct list_node fd_node;
	struct list_node unused_node; /* on unused while users == 0, oldest first */
};

struct file_cache_stats {
	uint64_t opened;
	uint64_t open_errors;
	uint64_t not_elf;
	uint64_t vdso_errors;	  /* [vdso] images that could not be read (named "[vdso]" only) */
	uint64_t vdso_hashed;	  /* [vdso] images hashed (no earlier image had their bytes) */
	uint64_t evicted;	  /* files closed because no process used them any more */
	uint64_t table_id_ns;	  /* time spent hashing CFI into table ids */
	uint64_t table_id_errors; /* files whose table id could not be computed (no table) */
	uint64_t timed_out;	  /* opens abandoned after FILE_WORKER_TIMEOUT_MS (or refused) */
	uint64_t jobs;		  /* opens posted to the file worker */
	uint64_t fds_closed;	  /* descriptors closed past max_fds (the file stays known) */
	uint64_t fds_reopened;
	uint64_t reopen_failed; /* no process maps it any more, or another file is there now */
	uint64_t
	    open_retries; /* opens tried again through another process (see FILE_CACHE_OPENS) */
};

/* Descriptors of mapped files kept open at most (file_cache.max_fds default):
 * well below RLIMIT_NOFILE, so the agent never runs out (a process mapping
 * 22,000 files took it to 20,000 before). */
#define FILE_CACHE_MAX_FDS 1024

/* Distinct vDSO images remembered byte for byte (one per ABI of one kernel, and
 * the odd process that rewrote its own): each further process's image is
 * compared with them instead of copied to a memfd and hashed again. */
#define FILE_CACHE_VDSO_IMAGES 4

struct vdso_seen {
	uint8_t *bytes; /* owned; NULL: unused */
	size_t len;
	uint64_t content_id; /* file_id__content_hash of exactly these bytes */
};

struct file_cache {
	struct hashmap by_key;
	struct cached_file **files; /* files[slot - 1]; NULL: an evicted file's free slot */
	size_t n_files;		    /* slots handed out (the highest slot) */
	size_t cap_files;
	uint32_t *free_slots; /* slots of evicted files, reused first */
	size_t n_free_slots;
	size_t cap_free_slots;
	size_t n_open; /* entries present (n_files minus free slots) */
	/* Files no process uses, least recently used first (see file_cache__evict_unused). */
	struct list_node unused; /* of cached_file.unused_node */
	size_t n_unused;
	struct file_cache_stats stats;
	/* Open descriptors, least recently used first; closed past max_fds. */
	struct list_node fds; /* of cached_file.fd_node */
	size_t n_fds;
	size_t max_fds; /* 0: FILE_CACHE_MAX_FDS */
	/* Opens go here when set (the sampling thread never opens a target's file);
	 * NULL: opened in file_cache__get (tests, the replay suite). */
	struct file_worker *worker;
	struct vdso_seen vdso_seen[FILE_CACHE_VDSO_IMAGES];
	unsigned int vdso_next; /* the entry replaced next once all are used */
};

/* An open on the file worker: inputs copied from the mapping, results for
 * file_cache__install(). */
struct file_open_job {
	struct file_job job;
	uint32_t file_slot;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	pid_t pid;
	struct proc_map map;  /* a copy, path owned */
	struct elf_file *elf; /* result; owned until installed */
	uint8_t htlhash[16];
	bool has_htlhash;
	uint64_t table_id; /* stack_deltas__table_id() folded to 64 bits, when has_table_id */
	uint64_t table_id_ns;
	bool has_table_id;
	bool opened; /* the open worked (an error after it: not an ELF file) */
};

/* Told the slot of each file just before it is closed and its slot freed. */
typedef void (*file_evict_fn)(void *ctx, uint32_t slot);

void file_cache__init(struct file_cache *fc);
void file_cache__clear(struct file_cache *fc); /* closes everything; accepts NULL */

/*
 * Returns the slot of the file behind mapping m of process pid, opening it on
 * first sight; 0 on ENOMEM. A file that cannot be opened still gets a slot
 * (its frames show as path+0xOFFSET) and the failure is counted. With a
 * worker, a new file is opened there: it stays pending (no elf) until its
 * job comes back through file_cache__install().
 */
uint32_t file_cache__get(struct file_cache *fc, pid_t pid, const struct proc_map *m);

/*
 * Puts the result of an open job into its file (abandoned: the file is
 * marked failed, -ETIMEDOUT, and keeps no elf). Takes the job's elf when
 * not abandoned. Returns the file's slot, or 0 when the file is gone.
 */
uint32_t file_cache__install(struct file_cache *fc, struct file_open_job *j, bool abandoned);

/* Where a cached file can be opened again: the last mapping seen of it. */
struct file_origin {
	pid_t pid;
	uint64_t start, end, offset;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	uint64_t size;
	char *path; /* owned */
	int fd;	    /* owned, -1: none; a duplicate for files no path reopens ([vdso]) */
	bool held;  /* fd is one of the build jobs' FILE_CACHE_SOURCE_FDS */
};

/*
 * Build jobs hold at most this many descriptors of their files between posting
 * and running (the cache's own, duplicated): a process that exits before its
 * job runs (a compiler lives a second or two, libLLVM's build queues behind
 * others) leaves no mapping to reopen the file through. Past it a job reopens
 * through the mapping as before. A whole-system start-up scan posts a hundred
 * or more builds at once: with 64, a compiler's jobs posted after it held
 * none, and failed to open their file once the compiler had exited (issue 17).
 */
#define FILE_CACHE_SOURCE_FDS 256

/* Fills *o for file slot (o->path, o->fd: the caller's). 0, or -ENOENT (no ELF file),
 * -errno. */
int file_cache__origin(const struct file_cache *fc, uint32_t slot, struct file_origin *o);
/*
 * Opens the file o names through file_cache__open_mapped() and checks it is that
 * very file (device, inode, size). Touches no cache state: safe on the file
 * worker. An fd, or -errno (-ESTALE: another file is mapped there now).
 */
int file_cache__open_origin(const struct file_origin *o);

struct table_source;
/*
 * Fills *src (unwind/unwind_maps.h) so a table build job reopens file slot on
 * the worker through file_cache__open_origin(). 0 (src's owner frees it:
 * unwind_maps__build_job() takes it), or -ENOENT (no ELF file), -errno.
 */
int file_cache__table_source(const struct file_cache *fc, uint32_t slot, struct table_source *src);

/*
 * Makes sure file slot's ELF descriptor is open, reopening it when it was
 * closed to stay under max_fds: through /proc/PID/map_files of the last
 * process seen mapping it (the same device and inode, checked), which may
 * block like any open of a target's file (callers: profile building, the
 * table build's set-up). 0, or -errno (counted; its frames stay file+0xOFF).
 */
int file_cache__ensure_fd(struct file_cache *fc, uint32_t slot);

/* One more / one less process mapping uses file slot (0 and unknown slots are ignored). */
void file_cache__ref(struct file_cache *fc, uint32_t slot);
void file_cache__unref(struct file_cache *fc, uint32_t slot);

/*
 * Closes the files no process uses but the keep most recently used, calling
 * fn (may be NULL) with each slot first. Only call it when nothing still refers
 * to those slots: between profiles, when every sample taken so far was named.
 * Returns how many were closed.
 */
size_t file_cache__evict_unused(struct file_cache *fc, size_t keep, file_evict_fn fn, void *ctx);

/*
 * Opens the file behind mapping m of pid for reading: /proc/PID/map_files
 * first, else m->path inside the process's root, accepted only when its
 * (device, inode) is m's (-ESTALE otherwise). Every refusal of
 * util/safe_open.h applies. Returns an fd or -errno.
 */
int file_cache__open_mapped(pid_t pid, const struct proc_map *m);

static inline struct cached_file *file_cache__at(const struct file_cache *fc, uint32_t slot)
{
	return slot && slot <= fc->n_files ? fc->files[slot - 1] : NULL;
}

#endif
