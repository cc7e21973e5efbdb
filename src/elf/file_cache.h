/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every file that executable code was sampled from, opened once and kept
 * open, so frames are named even after the process that mapped the file
 * exited or the file was deleted. Files are reached through
 * /proc/PID/map_files (the exact inode the process mapped, containers and
 * deleted files included), falling back to /proc/PID/root/PATH.
 *
 * Anonymous executable memory gets a pseudo-file entry with no ELF behind it
 * so its frames still carry a name. The vDSO is copied out of the process
 * (elf/vdso_image.h) and opened like a file, one entry per distinct image.
 */
#ifndef OMNIPROF_ELF_FILE_CACHE_H
#define OMNIPROF_ELF_FILE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/hashmap.h"

struct proc_map;
struct elf_file;

struct cached_file {
	uint32_t id; /* 1-based, stable for the cache's life */
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	char *path;	      /* as the process saw it, or "[vdso]" / "[anon]" */
	const char *basename; /* points into path */
	struct elf_file *elf; /* NULL for pseudo files and files that failed to open */
	int open_error;	      /* -errno of the failed open, 0 otherwise */
	uint8_t htlhash[16];  /* file_id__htlhash(); all zero when unknown */
	uint64_t table_id;    /* id of its stack-delta table in BPF maps, 0 when unknown */
};

struct file_cache_stats {
	uint64_t opened;
	uint64_t open_errors;
	uint64_t not_elf;
	uint64_t vdso_errors; /* [vdso] images that could not be read (named "[vdso]" only) */
};

struct file_cache {
	struct hashmap by_key;
	struct cached_file **files; /* files[id - 1] */
	size_t n_files;
	size_t cap_files;
	struct file_cache_stats stats;
};

void file_cache__init(struct file_cache *fc);
void file_cache__clear(struct file_cache *fc); /* closes everything; accepts NULL */

/*
 * Returns the id of the file behind mapping m of process pid, opening it on
 * first sight; 0 on ENOMEM. A file that cannot be opened still gets an id
 * (its frames show as path+0xOFFSET) and the failure is counted.
 */
uint32_t file_cache__get(struct file_cache *fc, pid_t pid, const struct proc_map *m);

static inline struct cached_file *file_cache__at(const struct file_cache *fc, uint32_t id)
{
	return id && id <= fc->n_files ? fc->files[id - 1] : NULL;
}

#endif
