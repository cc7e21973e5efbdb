/* SPDX-License-Identifier: Apache-2.0 */
/* Parsing of /proc/PID/maps (untrusted text: fuzzed). */
#ifndef OMNIPROF_PROC_PROC_MAPS_H
#define OMNIPROF_PROC_PROC_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum proc_map_perm {
	PROC_MAP_R = 1 << 0,
	PROC_MAP_W = 1 << 1,
	PROC_MAP_X = 1 << 2,
	PROC_MAP_P = 1 << 3, /* private (copy on write) */
};

struct proc_map {
	uint64_t start;
	uint64_t end;
	uint64_t offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t perms; /* enum proc_map_perm */
	char *path;	/* owned; "" for anonymous memory; "[vdso]", "[heap]", ... */
};

/*
 * Parses the text of a maps file. Lines that do not parse are skipped and
 * counted in *skipped (may be NULL). Returns 0 with *out (free with
 * proc_maps__free()) and *n, or -ENOMEM.
 */
int proc_maps__parse(const char *buf, size_t len, struct proc_map **out, size_t *n,
		     size_t *skipped);
/* Reads and parses /proc/PID/maps: 0, or -errno (-ENOENT: the process is gone). */
int proc_maps__read(pid_t pid, struct proc_map **out, size_t *n);
void proc_maps__free(struct proc_map *maps, size_t n); /* accepts NULL */

#endif
