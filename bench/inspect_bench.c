// SPDX-License-Identifier: Apache-2.0
/*
 * CPU of the runtimes' "is this file yours?" (interp_ops.inspect_file), the
 * path every file a process maps takes once per file slot (issue 22): the
 * files given are mapped in this process, opened into a file cache of their
 * own, and one process holding them all is shown to every runtime
 * (interp__sync_process), in this thread's CPU time; ROUNDS rounds, each with
 * a new file cache and runtimes (so each file is inspected again), the first
 * (cold page cache) left out of the median.
 *
 *   make build/bench/inspect_bench
 *   build/bench/inspect_bench FILE...
 *
 * Uses only interfaces main has had since session 12, so the same source
 * built against another build's library compares the two on one machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "interp/interp.h"
#include "proc/file_cache.h"
#include "proc/proc_maps.h"
#include "proc/process_table.h"

#include "bench_clock.h"

#define ROUNDS	  9
#define MAX_FILES 256

/* One round: a new cache and runtimes, every file inspected. The ms it took, or < 0. */
static double round_ms(const struct proc_map *maps, size_t n_maps, const char *const *paths,
		       size_t n_paths, size_t *found)
{
	struct process_mapping pm[MAX_FILES] = {0};
	struct interp_env env = {0};
	struct process p = {0};
	struct interp *in = NULL;
	struct file_cache fc;
	double t0, t1 = -1;

	file_cache__init(&fc);
	env.files = &fc;
	if (interp__new(&env, NULL, &in))
		goto cleanup;
	/* Each given file's first mapping (offset 0), as the process table would hold it. */
	for (size_t k = 0; k < n_paths; k++) {
		for (size_t i = 0; i < n_maps; i++) {
			if (maps[i].offset || strcmp(maps[i].path, paths[k]))
				continue;
			pm[p.n_maps].start = maps[i].start;
			pm[p.n_maps].end = maps[i].end;
			pm[p.n_maps].file_slot = file_cache__get(&fc, getpid(), &maps[i]);
			pm[p.n_maps].has_bias = true;
			if (pm[p.n_maps].file_slot)
				p.n_maps++;
			break;
		}
	}
	p.pid = (uint32_t)getpid();
	p.maps = pm;
	*found = p.n_maps;
	t0 = bench__thread_ms();
	interp__sync_process(in, &p);
	t1 = bench__thread_ms() - t0;
cleanup:
	interp__free(in);
	file_cache__clear(&fc);
	return t1;
}

int main(int argc, char **argv)
{
	static char real[MAX_FILES][PATH_MAX];
	const char *paths[MAX_FILES];
	double ms[ROUNDS];
	struct proc_map *maps = NULL;
	size_t n_maps = 0, n_paths = 0, found = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	for (int a = 1; a < argc && n_paths < MAX_FILES; a++) {
		struct stat st;
		void *m;
		int fd;

		if (!realpath(argv[a], real[n_paths]))
			continue;
		fd = open(real[n_paths], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || !st.st_size) {
			close(fd);
			continue;
		}
		/* Kept mapped to the end: the file cache opens it through map_files. */
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (m == MAP_FAILED)
			continue;
		paths[n_paths] = real[n_paths];
		n_paths++;
	}
	if (proc_maps__read(getpid(), &maps, &n_maps)) {
		fprintf(stderr, "cannot read this process's maps\n");
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		ms[r] = round_ms(maps, n_maps, paths, n_paths, &found);
		if (ms[r] < 0) {
			fprintf(stderr, "cannot start the runtimes\n");
			return 1;
		}
	}
	qsort(ms + 1, ROUNDS - 1, sizeof(ms[0]), bench__cmp_double);
	printf("%zu files: inspection %.2f ms median of %d rounds (min %.2f, max %.2f; "
	       "first round %.2f)\n",
	       found, ms[1 + (ROUNDS - 1) / 2], ROUNDS - 1, ms[1], ms[ROUNDS - 1], ms[0]);
	proc_maps__free(maps, n_maps);
	return 0;
}
