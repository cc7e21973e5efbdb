/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checks call chains in profiles: an expected chain (root first, leaf last)
 * is built frame by frame from what a workload is known to call, then looked
 * for in stacks ("root;...;leaf") or in stacks.folded text.
 */
#ifndef OMNIPROF_TESTS_FOLDED_CHECK_H
#define OMNIPROF_TESTS_FOLDED_CHECK_H

#include <stdbool.h>
#include <stddef.h>

struct chain_spec;

/* An empty expected chain; the caller frees it with chain_spec__free. NULL when out of memory. */
struct chain_spec *chain_spec__new(void);
void chain_spec__free(struct chain_spec *cs);

/* Appends a frame named exactly as the printf-style format gives. 0 or -errno. */
int chain_spec__add(struct chain_spec *cs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * Appends a frame whose name contains one of the '|'-separated substrings the
 * format gives: for names that may be printed mangled or demangled, e.g.
 * "StageILi3EE|Stage<3>". 0 or -errno.
 */
int chain_spec__add_like(struct chain_spec *cs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * Appends between min and max frames of any name, but never an unwinder error
 * frame ("[unwind ...]"): for library code whose frames are not known. 0 or -errno.
 */
int chain_spec__add_gap(struct chain_spec *cs, unsigned int min, unsigned int max);
/*
 * The frames of build/workloads/fp_chain (tests/workloads/fp_chain.c), root
 * first: main, chain_01 .. chain_24, leaf.
 */
#define FP_CHAIN_LINKS 24
/* Appends fp_chain's frames. 0 or -errno. */
int chain_spec__add_fp_chain(struct chain_spec *cs);
/* fp_chain's frames as "main,chain_01,...,leaf" (tests/e2e/otlp/check.js's --chain) in buf. */
void fp_chain__names(char *buf, size_t size);

/* The number of frames of the chain, gaps not counted. */
size_t chain_spec__len(const struct chain_spec *cs);

/*
 * `stack` is frames separated by ';', root first (len bytes, need not be
 * NUL-terminated). True when the whole chain appears in it in order, each
 * frame right after the one before it (save for the gaps), anywhere in the
 * stack: frames below the root or above the leaf do not matter.
 */
bool chain_spec__matches(const struct chain_spec *cs, const char *stack, size_t len);
/* True when a frame of `stack` matches the chain's last frame (its leaf). */
bool chain_spec__has_leaf(const struct chain_spec *cs, const char *stack, size_t len);

struct chain_count {
	long leaf;     /* samples whose stack holds the leaf */
	long complete; /* ... and the whole chain */
	/* The stack with the most leaf samples that lacks the chain (points into the text). */
	const char *worst;
	size_t worst_len;
	long worst_count;
};

/*
 * Counts, in stacks.folded text ("comm;root;...;leaf COUNT" lines), the
 * samples of the command `comm` that hold the chain's leaf and those that
 * hold the whole chain.
 */
struct chain_count chain_spec__count_folded(const struct chain_spec *cs, const char *text,
					    const char *comm);

#endif
