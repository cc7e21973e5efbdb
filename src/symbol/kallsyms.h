/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel symbols from /proc/kallsyms, with the module each belongs to. */
#ifndef OMNIPROF_SYMBOL_KALLSYMS_H
#define OMNIPROF_SYMBOL_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module; /* NULL for the kernel image itself */
};

struct kallsyms;

/* Loads path (NULL means /proc/kallsyms). 0 and *out, or -errno. */
int kallsyms__load(const char *path, struct kallsyms **out);
/*
 * Parses kallsyms text (untrusted bytes: fuzzed). Malformed lines are
 * skipped and counted. 0 and *out (free with kallsyms__free()), or -errno.
 */
int kallsyms__parse(const char *buf, size_t len, struct kallsyms **out);
void kallsyms__free(struct kallsyms *ks); /* accepts NULL */

/* The symbol covering addr (the last one at or below it; of several at its
 * address, the one listed first) into *out (its strings belong to ks), or
 * false when none is. */
bool kallsyms__find(const struct kallsyms *ks, uint64_t addr, struct ksym *out);
size_t kallsyms__count(const struct kallsyms *ks);
size_t kallsyms__skipped_lines(const struct kallsyms *ks);
/* True when every address read as 0: kptr_restrict hides them from us. */
bool kallsyms__restricted(const struct kallsyms *ks);

#endif
