// SPDX-License-Identifier: Apache-2.0
/*
 * memory__release() trims once per 16 MiB of newly freed heap, or once a
 * minute, not at every call once the free heap has passed the threshold: a
 * trim's pages stay counted as free by mallinfo2, and trimming them again at
 * each agent interval cost a TLB shootdown on every CPU for nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/memory.h"

#define N_CHUNKS 2048
#define CHUNK	 (24 << 10) /* under the mmap threshold: heap chunks */
#define SEC	 1000000000ull
#define T0	 (1000 * SEC)

/* Allocates then frees 48 MiB of small chunks (kept apart by small live ones, so they stay
 * free chunks the heap's top cannot give back by itself). The small ones are freed by the
 * caller. */
static void churn(void **keep)
{
	void **big = calloc(N_CHUNKS, sizeof(*big));

	assert_non_null(big);
	for (int i = 0; i < N_CHUNKS; i++) {
		big[i] = malloc(CHUNK);
		assert_non_null(big[i]);
		memset(big[i], 0x5a, CHUNK);
		keep[i] = malloc(32);
		assert_non_null(keep[i]);
	}
	for (int i = 0; i < N_CHUNKS; i++)
		free(big[i]);
	free(big);
}

static void test_trim_rule(void **state)
{
	const size_t M = 1 << 20;

	(void)state;
	assert_false(memory__trim_due(15 * M, 0, 0, T0));	      /* under 16 MiB free: never */
	assert_true(memory__trim_due(16 * M, 0, 0, T0));	      /* the first time */
	assert_true(memory__trim_due(40 * M, 20 * M, T0, T0 + SEC));  /* 20 MiB new since */
	assert_false(memory__trim_due(40 * M, 30 * M, T0, T0 + SEC)); /* 10 MiB new: wait */
	assert_false(memory__trim_due(40 * M, 40 * M, T0, T0 + 59 * SEC));
	assert_true(memory__trim_due(40 * M, 40 * M, T0, T0 + 60 * SEC)); /* the minute is over */
	assert_false(memory__trim_due(20 * M, 40 * M, T0, T0 + SEC));	  /* shrank since */
}

static void test_trims_once_per_new_free_heap(void **state)
{
	struct mallinfo2 mi;

	void **keep1 = calloc(N_CHUNKS, sizeof(void *)), **keep2 = calloc(N_CHUNKS, sizeof(void *));
	unsigned long t0;

	(void)state;
	mi = mallinfo2();
	if (!mi.arena) {
		/* A sanitizer's allocator: mallinfo2 sees none of it, so nothing is ever trimmed
		 * (test_trim_rule covers the rule itself). */
		printf(
		    "not glibc's malloc (sanitizer build): memory__release has nothing to trim\n");
		memory__release();
		assert_int_equal(memory__release_trims(), 0);
		free(keep1);
		free(keep2);
		return;
	}
	assert_non_null(keep1);
	assert_non_null(keep2);
	memory__tune();
	memory__release_at(T0); /* whatever start-up left */
	t0 = memory__release_trims();

	churn(keep1);
	memory__release_at(T0 + SEC);
	assert_int_equal(memory__release_trims(), t0 + 1);
	/* Nothing freed since: the same free pages are not trimmed again within the minute. */
	for (int i = 2; i < 50; i++)
		memory__release_at(T0 + i * SEC);
	assert_int_equal(memory__release_trims(), t0 + 1);

	/* The pages reused and freed again: resident again, with no growth mallinfo2 shows;
	 * trimmed once the minute is over, once. */
	churn(keep2);
	memory__release_at(T0 + 55 * SEC);
	assert_int_equal(memory__release_trims(), t0 + 1);
	memory__release_at(T0 + 62 * SEC);
	assert_int_equal(memory__release_trims(), t0 + 2);
	memory__release_at(T0 + 70 * SEC);
	assert_int_equal(memory__release_trims(), t0 + 2);

	for (int i = 0; i < N_CHUNKS; i++) {
		free(keep1[i]);
		free(keep2[i]);
	}
	free(keep1);
	free(keep2);
}

/* Resident and anonymous KiB of this process's mappings of files mapped executable. */
struct code_rss {
	long rss_kib, anon_kib;
	long relro_kib; /* anonymous KiB of read-only private file mappings: relocated data */
};

static struct code_rss code_rss(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512], perms[8] = "", path[256];
	struct code_rss r = {0};
	bool file = false;
	long v;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (line[0] >= '0' && line[0] <= 'f' && !(line[0] > '9' && line[0] < 'a')) {
			path[0] = '\0';
			file =
			    sscanf(line, "%*x-%*x %7s %*x %*x:%*x %*u %255s", perms, path) == 2 &&
			    path[0] == '/';
		} else if (file && sscanf(line, "Rss: %ld kB", &v) == 1) {
			r.rss_kib += v;
		} else if (file && sscanf(line, "Anonymous: %ld kB", &v) == 1) {
			r.anon_kib += v;
			if (perms[1] == '-' && perms[3] == 'p')
				r.relro_kib += v;
		}
	}
	fclose(f);
	return r;
}

/* A table the loader relocates (pointers in a position-independent binary):
 * its pages are the process's own copies, which must survive the drop. */
static const char *const relocated[] = {"alpha", "beta", "gamma"};

static void test_code_pages_dropped_relocations_kept(void **state)
{
	struct code_rss before, after;
	size_t dropped;
	char buf[64];

	(void)state;
	/* Touch libc's and this binary's code (stdio, formatting). */
	snprintf(buf, sizeof(buf), "%s %s %s %d", relocated[0], relocated[1], relocated[2], 42);
	before = code_rss();
	dropped = memory__drop_code_pages();
	after = code_rss();
	print_message("code: %ld KiB resident before, %ld after; %zu KiB given back; relocated "
		      "read-only data %ld KiB before, %ld after\n",
		      before.rss_kib, after.rss_kib, dropped >> 10, before.relro_kib,
		      after.relro_kib);
	/* libc's text alone is more than the 128 KiB a mapping needs to be dropped. */
	assert_true(dropped >= 128 << 10);
	assert_true(after.rss_kib < before.rss_kib);
	/* No copied-on-write page went (they would come back as the file's bytes). */
	assert_true(before.relro_kib > 0);
	assert_int_equal(after.relro_kib, before.relro_kib);
	assert_int_equal(after.anon_kib, before.anon_kib);
	/* And what was dropped runs and reads again. */
	assert_string_equal(buf, "alpha beta gamma 42");
	snprintf(buf, sizeof(buf), "%s-%s-%s", relocated[2], relocated[1], relocated[0]);
	assert_string_equal(buf, "gamma-beta-alpha");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trim_rule),
	    cmocka_unit_test(test_trims_once_per_new_free_heap),
	    cmocka_unit_test(test_code_pages_dropped_relocations_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
