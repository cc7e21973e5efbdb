// SPDX-License-Identifier: Apache-2.0
/*
 * Stack-delta table build cost and size for some ELF files.
 *
 *   make build/bench/stack_deltas_bench
 *   build/bench/stack_deltas_bench [FILE...]
 *   build/bench/stack_deltas_bench --dump FILE    (the table, one delta a line)
 *
 * Without arguments it measures libc, libstdc++, node and the libjvm.so
 * files it can find. Each file is built REPEAT times; the best time is
 * reported (the first run also pays for reading the file from disk).
 */
#include <errno.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "unwind/stack_deltas.h"
#include "unwind/delta_pages.h"
#include "unwind/table_cache.h"

#define REPEAT 10

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *const cmd_names[] = {"cfa", "stop", "invalid", "plt", "deref", "signal"};

static int dump_file(const char *path)
{
	struct stack_delta_table t = {0};
	struct elf_file *ef;
	int err;

	err = elf_file__open(path, -1, &ef);
	if (!err)
		err = stack_deltas__build(ef, &t);
	if (err) {
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		elf_file__close(ef);
		return 1;
	}
	for (size_t i = 0; i < t.n; i++) {
		const struct op_unwind_rule *r = &t.deltas[i].rule;

		printf("%llx %s %s %d %d\n", (unsigned long long)t.deltas[i].addr,
		       r->cmd < 6 ? cmd_names[r->cmd] : "?", r->cfa_base ? "rbp" : "rsp",
		       r->cfa_offset, r->fp_offset);
	}
	stack_delta_table__free(&t);
	elf_file__close(ef);
	return 0;
}

/* Best time of the table id plus a read back of t from a fresh disk cache;
 * -1 when the cache cannot be used. */
static double cached_ms(const struct elf_file *ef, const struct stack_delta_table *t)
{
	char dir[] = "/tmp/omniprof-bench-XXXXXX", path[512], name[40];
	uint8_t id[STACK_DELTAS_ID_LEN];
	struct stack_delta_table back;
	struct table_cache *tc = NULL;
	double best = -1;

	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/cache", dir);
	if (table_cache__open(path, 0, &tc) || table_cache__store(tc, t))
		goto cleanup;
	for (int i = 0; i < REPEAT; i++) {
		double t0 = now_ms(), dt;

		if (stack_deltas__table_id(ef, id) || table_cache__load(tc, id, &back))
			break;
		dt = now_ms() - t0;
		stack_delta_table__free(&back);
		if (best < 0 || dt < best)
			best = dt;
	}
cleanup:
	table_cache__put(tc);
	table_cache__name(t->id, name);
	snprintf(path, sizeof(path), "%s/cache/%s", dir, name);
	unlink(path);
	snprintf(path, sizeof(path), "%s/cache", dir);
	rmdir(path);
	rmdir(dir);
	return best;
}

static void bench_file(const char *path)
{
	struct stack_delta_table t = {0};
	size_t counts[16] = {0};
	struct elf_file *ef;
	uint32_t pages, levels;
	uint8_t id[STACK_DELTAS_ID_LEN];
	double best = 0, best_id = 0, best_cached = -1;
	int err;

	err = elf_file__open(path, -1, &ef);
	if (err) {
		printf("%-60s open: %s\n", path, strerror(-err));
		return;
	}
	for (int i = 0; i < REPEAT; i++) {
		double t0 = now_ms(), dt;

		stack_delta_table__free(&t);
		err = stack_deltas__build(ef, &t);
		dt = now_ms() - t0;
		if (err) {
			printf("%-60s build: %s\n", path, strerror(-err));
			elf_file__close(ef);
			return;
		}
		if (i == 0 || dt < best)
			best = dt;
	}
	/* The table id hashes the CFI the build reads: its cost next to the build's. */
	for (int i = 0; i < REPEAT; i++) {
		double t0 = now_ms(), dt;

		err = stack_deltas__table_id(ef, id);
		dt = now_ms() - t0;
		if (err)
			break;
		if (i == 0 || dt < best_id)
			best_id = dt;
	}
	/* What a restarted agent pays instead of the build: the id of the bytes
	 * opened, then the table read back from the disk cache and checked. */
	if (!err)
		best_cached = cached_ms(ef, &t);
	for (size_t i = 0; i < t.n; i++)
		counts[t.deltas[i].rule.cmd & 15]++;
	printf("%s (%llu bytes)\n", path, (unsigned long long)ef->size);
	pages = delta_pages__count(t.n, &levels);
	printf("  deltas %zu, %zu bytes as struct stack_delta, %u pages in %u levels, %zu bytes in "
	       "BPF maps\n",
	       t.n, t.n * sizeof(struct stack_delta), pages, levels,
	       (size_t)pages * sizeof(struct op_delta_page));
	printf("  build %.2f ms (best of %d)\n", best, REPEAT);
	if (err)
		printf("  table id: %s\n", strerror(-err));
	else
		printf("  table id %.2f ms (best of %d)\n", best_id, REPEAT);
	if (best_cached >= 0)
		printf("  from the table cache %.2f ms (id and read back, best of %d)\n",
		       best_cached, REPEAT);
	printf("  cies %llu fdes %llu unsupported rows %llu bad entries %llu\n",
	       (unsigned long long)t.stats.cies, (unsigned long long)t.stats.fdes,
	       (unsigned long long)t.stats.unsupported, (unsigned long long)t.stats.bad_entries);
	printf("  by rule: cfa %zu stop %zu invalid %zu plt %zu deref %zu signal %zu rbx %zu\n",
	       counts[OP_RULE_CFA], counts[OP_RULE_STOP], counts[OP_RULE_INVALID],
	       counts[OP_RULE_PLT], counts[OP_RULE_CFA_DEREF], counts[OP_RULE_SIGNAL],
	       counts[OP_RULE_CFA_RBX]);
	stack_delta_table__free(&t);
	elf_file__close(ef);
}

int main(int argc, char **argv)
{
	static const char *defaults[] = {
	    "/usr/lib/x86_64-linux-gnu/libc.so.6",
	    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	    "/usr/bin/node",
	    "/usr/lib/jvm/*/lib/server/libjvm.so",
	};
	char *seen[64];
	size_t n_seen = 0;
	glob_t g;

	if (argc == 3 && !strcmp(argv[1], "--dump"))
		return dump_file(argv[2]);
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			bench_file(argv[i]);
		return 0;
	}
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		if (glob(defaults[i], 0, NULL, &g) != 0)
			continue;
		for (size_t j = 0; j < g.gl_pathc; j++) {
			char *real = realpath(g.gl_pathv[j], NULL);
			bool dup = false;

			/* the JDK directories are partly symlinks to each other */
			for (size_t k = 0; real && k < n_seen; k++)
				dup |= !strcmp(seen[k], real);
			if (!real || dup || n_seen == 64) {
				free(real);
				continue;
			}
			seen[n_seen++] = real;
			bench_file(real);
		}
		globfree(&g);
	}
	while (n_seen)
		free(seen[--n_seen]);
	return 0;
}
