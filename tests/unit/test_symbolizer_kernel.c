// SPDX-License-Identifier: Apache-2.0
/*
 * Kernel frames named by the symbolizer, with /proc/kallsyms read at the
 * first kernel frame or beforehand on a thread of its own
 * (symbolizer__preload_kernel, which the agent starts beside the BPF load):
 * both ways must give the same names as the table read directly. Needs a
 * /proc/kallsyms that shows addresses (root): fails loudly otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/file_cache.h"
#include "symbol/kallsyms.h"
#include "symbol/symbolizer.h"

/* Every STRIDE-th text symbol of /proc/kallsyms is asked for. */
#define STRIDE 61

struct pick {
	uint64_t addr;
	char name[128];
	char module[64];
};

/*
 * Text symbols of /proc/kallsyms, every STRIDE-th: what a kernel stack's
 * addresses look like (core image, modules; not BPF programs, see below). Returns the
 * number read into picks (caller's array of max entries).
 */
static size_t pick_symbols(struct pick *picks, size_t max)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	size_t n = 0, seen = 0;

	assert_non_null(f);
	while (n < max && fgets(line, sizeof(line), f)) {
		char type, name[128], module[64] = "";
		uint64_t addr;

		if (sscanf(line, "%" SCNx64 " %c %127s [%63[^]]]", &addr, &type, name, module) < 3)
			continue;
		/* BPF programs and trampolines come and go with other processes'
		 * loads: the three reads of the table here may not agree on them. */
		if (!strchr("tTwW", type) || !addr || !strcmp(module, "bpf") ||
		    !strncmp(module, "__builtin__", 11) || seen++ % STRIDE)
			continue;
		picks[n].addr = addr;
		snprintf(picks[n].name, sizeof(picks[n].name), "%s", name);
		snprintf(picks[n].module, sizeof(picks[n].module), "%s", module);
		n++;
	}
	fclose(f);
	return n;
}

/* The name and module symbolizer s gives addr, written into name/module. */
static void kernel_name(struct symbolizer *s, uint64_t addr, bool is_return, char *name, size_t len,
			char *module, size_t mlen)
{
	const char *mod = NULL, *got = symbolizer__kernel(s, addr, is_return, &mod, name, len);

	assert_ptr_equal(got, name);
	snprintf(module, mlen, "%s", mod ? mod : "");
}

static void test_preloaded_names_equal_direct_ones(void **state)
{
	struct symbolizer direct, preloaded;
	struct kallsyms *table = NULL;
	struct file_cache fc;
	struct pick *picks = calloc(8192, sizeof(*picks));
	size_t n, named = 0;

	(void)state;
	assert_non_null(picks);
	n = pick_symbols(picks, 8192);
	assert_true(n > 100);
	assert_int_equal(kallsyms__load(NULL, &table), 0);
	assert_false(kallsyms__restricted(table));

	file_cache__init(&fc);
	assert_int_equal(symbolizer__init(&direct, &fc, NULL), 0);
	assert_int_equal(symbolizer__init(&preloaded, &fc, NULL), 0);
	assert_int_equal(symbolizer__preload_kernel(&preloaded), 0);
	/* A second start is refused: one read per symbolizer. */
	assert_int_equal(symbolizer__preload_kernel(&preloaded), -EALREADY);

	for (size_t i = 0; i < n; i++) {
		/* The symbol's start, and a return address one past a call in it. */
		for (int r = 0; r < 2; r++) {
			uint64_t addr = picks[i].addr + (uint64_t)r;
			char a[SYM_NAME_MAX], b[SYM_NAME_MAX], ma[64], mb[64];
			struct ksym want;

			kernel_name(&direct, addr, r, a, sizeof(a), ma, sizeof(ma));
			kernel_name(&preloaded, addr, r, b, sizeof(b), mb, sizeof(mb));
			assert_string_equal(a, b);
			assert_string_equal(ma, mb);
			/* Aliases share an address: the table's choice is the answer. */
			assert_true(kallsyms__find(table, picks[i].addr, &want));
			assert_string_equal(a, want.name);
			assert_string_equal(ma, want.module ? want.module : "");
			named++;
		}
	}
	assert_int_equal(named, 2 * n);
	/* Once the first kernel frame took the table, nothing is left to start. */
	assert_int_equal(symbolizer__preload_kernel(&preloaded), -EALREADY);
	assert_int_equal(preloaded.stats.kernel_unnamed, direct.stats.kernel_unnamed);

	symbolizer__clear(&preloaded);
	symbolizer__clear(&direct);
	file_cache__clear(&fc);
	kallsyms__free(table);
	free(picks);
}

/* A symbolizer that never met a kernel frame still joins its read at clear
 * (ASan shows a leaked table or thread otherwise). */
static void test_preload_unused_is_joined(void **state)
{
	struct symbolizer s;
	struct file_cache fc;

	(void)state;
	file_cache__init(&fc);
	assert_int_equal(symbolizer__init(&s, &fc, NULL), 0);
	assert_int_equal(symbolizer__preload_kernel(&s), 0);
	symbolizer__clear(&s);
	assert_false(s.ksyms_loading);
	assert_null(s.ksyms);
	file_cache__clear(&fc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_preloaded_names_equal_direct_ones),
	    cmocka_unit_test(test_preload_unused_is_joined),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
