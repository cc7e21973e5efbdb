// SPDX-License-Identifier: Apache-2.0
/*
 * CPU of loading a table read back from the disk cache, the path an agent
 * takes for every file of a new process it has no table of loaded (and, when
 * compilers come and go faster than the delta chunks hold their tables, again
 * and again): the worker's part (open, table id, table_cache__load) and the
 * sampling thread's part (unwind_maps__finish_build: rule indexes, delta
 * pages, BPF map writes), each in this thread's CPU time, median of ROUNDS.
 * The rounds run within 2 s of the store, so the file is checked every round
 * (util/stat_memo.h keys no file that recent), as on a table's first read back
 * in a run; the table id is hashed in the first round only.
 * Real BPF maps (root), a cache folder of its own under /tmp. Also the RSS
 * peak of one read and load over the RSS before it (watched by a thread, the
 * most of the rounds; the agent's heap settings, memory__tune): the table's
 * transient heap (issue 22). The watching thread takes a CPU meanwhile, at
 * real-time priority (SCHED_FIFO 1).
 *
 *   make build/bench/table_load_bench
 *   build/bench/table_load_bench FILE...
 *
 * Uses only interfaces main has had since session 12, so the same source
 * built against another build's library compares the two on one machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "elf/elf_file.h"
#include "elf/file_id.h"
#include "omniprof/abi.h"
#include "unwind/stack_deltas.h"
#include "unwind/table_cache.h"
#include "unwind/unwind_maps.h"
#include "util/memory.h"

#include "bench_clock.h"

#define ROUNDS 15

/*
 * The RSS peak of a round, watched by a thread of its own: the kernel's
 * VmHWM missed most of a load's transient, a plain thread too under load. It reads /proc/self/statm
 * (resident pages) in a loop while a round runs; a load takes milliseconds, a read some
 * microseconds.
 */
struct rss_watch {
	pthread_t thread;
	atomic_bool stop;
	atomic_long peak; /* pages */
	int fd;
};

static long rss_pages(int fd)
{
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long size, resident;

	if (n <= 0)
		return 0;
	buf[n] = 0;
	return sscanf(buf, "%ld %ld", &size, &resident) == 2 ? resident : 0;
}

static void *rss_watch_main(void *arg)
{
	struct rss_watch *w = arg;

	while (!atomic_load(&w->stop)) {
		long r = rss_pages(w->fd);

		if (r > atomic_load(&w->peak))
			atomic_store(&w->peak, r);
	}
	return NULL;
}

/* Starts watching; the RSS now in pages, or -1 when no watch runs. */
static long rss_watch_start(struct rss_watch *w)
{
	w->fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (w->fd < 0)
		return -1;
	atomic_store(&w->stop, false);
	atomic_store(&w->peak, rss_pages(w->fd));
	if (pthread_create(&w->thread, NULL, rss_watch_main, w)) {
		close(w->fd);
		return -1;
	}
	/* Real-time for the round (root): under load a plain thread was not run
	 * during a load's few milliseconds and missed its transient. */
	{
		struct sched_param sp = {.sched_priority = 1};

		pthread_setschedparam(w->thread, SCHED_FIFO, &sp);
	}
	return atomic_load(&w->peak);
}

/* Stops watching; the most pages seen. */
static long rss_watch_stop(struct rss_watch *w)
{
	atomic_store(&w->stop, true);
	pthread_join(w->thread, NULL);
	close(w->fd);
	return atomic_load(&w->peak);
}

static int open_path(void *ctx)
{
	int fd = open(ctx, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* One file: ROUNDS loads from the cache, each unloaded again. 0 or -errno. */
static int bench_file(const char *path, struct table_cache *tc, int fds[4])
{
	double worker[ROUNDS], sampling[ROUNDS];
	long peak_kib = 0;
	struct stack_delta_table t = {0};
	uint8_t hid[STACK_DELTAS_ID_LEN];
	struct elf_file *ef = NULL;
	struct unwind_maps um;
	uint64_t id;
	int err;

	err = elf_file__open(path, -1, &ef);
	if (!err)
		err = stack_deltas__table_id(ef, hid);
	if (!err)
		err = stack_deltas__build(ef, &t);
	if (!err)
		err = table_cache__store(tc, &t);
	if (err) {
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		goto cleanup;
	}
	id = file_id__from_htlhash(hid);
	unwind_maps__init(&um, fds[0], fds[1], fds[2], fds[3], OP_MAX_RULES);
	unwind_maps__set_table_cache(&um, tc);
	um.unused_budget = 0; /* released: unloaded at once, so each round loads again */
	for (int r = 0; r < ROUNDS; r++) {
		struct table_source src = {
		    .path = strdup(path), .size = ef->size, .open = open_path, .ctx = NULL};
		struct table_build_job *j;
		double t0;
		struct rss_watch watch;
		long rss;

		if (!src.path) {
			err = -ENOMEM;
			break;
		}
		src.ctx = src.path;
		rss = rss_watch_start(&watch);
		j = unwind_maps__build_job(&um, id, &src);
		if (!j) {
			err = -ENOMEM;
			break;
		}
		t0 = bench__thread_ms();
		j->job.run(&j->job);
		worker[r] = bench__thread_ms() - t0;
		t0 = bench__thread_ms();
		unwind_maps__finish_build(&um, j, false);
		sampling[r] = bench__thread_ms() - t0;
		err = j->from_cache ? 0 : -ENOENT;
		j->job.free(&j->job);
		if (rss >= 0) {
			long kib = (rss_watch_stop(&watch) - rss) * (sysconf(_SC_PAGESIZE) / 1024);

			if (kib > peak_kib)
				peak_kib = kib;
		}
		if (!err)
			err = unwind_maps__acquire(&um, id, NULL);
		unwind_maps__release(&um, id);
		if (err) {
			fprintf(stderr, "%s: not loaded from the cache: %s\n", path,
				strerror(-err));
			break;
		}
	}
	unwind_maps__clear(&um);
	if (!err) {
		double first = worker[0];

		qsort(worker, ROUNDS, sizeof(double), bench__cmp_double);
		qsort(sampling, ROUNDS, sizeof(double), bench__cmp_double);
		printf("%s: %zu deltas; worker %.2f ms (the first: %.2f, the table id hashed too), "
		       "sampling thread %.2f ms (CPU, median of %d; min %.2f, %.2f); "
		       "RSS peak of a read and load %.1f MiB over the RSS before it (most of %d)\n",
		       path, t.n, worker[ROUNDS / 2], first, sampling[ROUNDS / 2], ROUNDS,
		       worker[0], sampling[0], peak_kib / 1024.0, ROUNDS);
	}
cleanup:
	stack_delta_table__free(&t);
	elf_file__close(ef);
	return err;
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_map_create_opts, lpm, .map_flags = BPF_F_NO_PREALLOC);
	LIBBPF_OPTS(bpf_map_create_opts, outer);
	LIBBPF_OPTS(bpf_map_create_opts, inner, .map_flags = BPF_F_INNER_MAP);
	char dir[] = "/tmp/table_load_bench.XXXXXX", cache[64], cmd[96];
	struct table_cache *tc = NULL;
	int fds[5], err = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	/* The agent's and record's heap (a fixed mmap threshold: glibc's dynamic
	 * one would serve the rounds after the first from the heap instead). */
	memory__tune();
	if (!mkdtemp(dir))
		return 1;
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	fds[0] = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "b_map", sizeof(struct op_mapping_key),
				sizeof(struct op_mapping_value), 1024, &lpm);
	fds[4] = bpf_map_create(BPF_MAP_TYPE_ARRAY, "b_inner", 4, sizeof(struct op_delta_page), 1,
				&inner);
	outer.inner_map_fd = fds[4];
	fds[1] = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "b_tables", 4, 4, OP_MAX_DELTA_CHUNKS,
				&outer);
	fds[2] = bpf_map_create(BPF_MAP_TYPE_HASH, "b_info", 8, sizeof(struct op_table_info), 1024,
				NULL);
	fds[3] = bpf_map_create(BPF_MAP_TYPE_ARRAY, "b_rules", 4, sizeof(struct op_unwind_rule),
				OP_MAX_RULES, NULL);
	if (fds[0] < 0 || fds[1] < 0 || fds[2] < 0 || fds[3] < 0 || fds[4] < 0) {
		fprintf(stderr, "cannot create the BPF maps (root?)\n");
		return 1;
	}
	err = table_cache__open(cache, 0, &tc);
	for (int i = 1; !err && i < argc; i++)
		err = bench_file(argv[i], tc, fds);
	table_cache__put(tc);
	for (int i = 0; i < 5; i++)
		close(fds[i]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return err ? 1 : 0;
}
