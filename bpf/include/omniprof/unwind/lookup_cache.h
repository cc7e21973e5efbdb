/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The types of omniprof/unwind/lookup.h that need no storage: the per-walk
 * cache of mappings and what a lookup reports. Apart so that a struct
 * holding the cache can be declared before the storage the lookup reaches
 * through its macros (BPF: the walk's per-CPU scratch).
 */
#ifndef OMNIPROF_UNWIND_LOOKUP_CACHE_H
#define OMNIPROF_UNWIND_LOOKUP_CACHE_H

#include "omniprof/abi.h"
#include "omniprof/unwind/unroll.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define OP_MAPPING_CACHE_SIZE 4

struct op_mapping_cache_entry {
	__u64 start; /* pid's mapping [start, end); start == end: unused */
	__u64 end;
	__u32 pid;
	__u32 reserved;
	__u64 bias;
	__u64 table_id;
	struct op_table_info info;
};

struct op_lookup_cache {
	struct op_mapping_cache_entry mappings[OP_MAPPING_CACHE_SIZE];
	__u32 next; /* round-robin replacement */
	__u32 reserved;
};

/* How a lookup found its rule: the counter it is charged to. */
enum op_lookup_how {
	OP_LOOKUP_CFI = 0,	  /* a table's rule */
	OP_LOOKUP_INVALID,	  /* OP_RULE_INVALID: the table has no rule for pc (a gap) */
	OP_LOOKUP_ANON,		  /* anonymous (JIT) code: the anonymous-code rule */
	OP_LOOKUP_FP_UNKNOWN_PID, /* frame pointers: the process is not known yet */
	OP_LOOKUP_FP_NO_MAPPING,  /* frame pointers: pc in no mapping with a file */
	OP_LOOKUP_FP_NO_TABLE,	  /* frame pointers: the file's table is not loaded */
};

/* Forgets the mappings of the previous walk. */
static __always_inline void op_lookup_cache__reset(struct op_lookup_cache *c)
{
	for (int i = 0; i < OP_MAPPING_CACHE_SIZE; i++)
		c->mappings[i].start = c->mappings[i].end = 0;
}

/* The cached mapping of pid holding pc, NULL: none. */
static __always_inline struct op_mapping_cache_entry *
op_lookup_cache__find(struct op_lookup_cache *c, __u32 pid, __u64 pc)
{
	struct op_mapping_cache_entry *e;

	OP_UNROLL
	for (int i = 0; i < OP_MAPPING_CACHE_SIZE; i++) {
		e = &c->mappings[i];
		if (pc - e->start < e->end - e->start && e->pid == pid)
			return e;
	}
	return 0;
}

/* Puts pid's mapping m (a file's: not the marker, not anonymous) into the
 * cache with its table info. */
static __always_inline struct op_mapping_cache_entry *
op_lookup_cache__add(struct op_lookup_cache *c, __u32 pid, const struct op_mapping_value *m,
		     __u64 pc, const struct op_table_info *info)
{
	struct op_mapping_cache_entry *e = &c->mappings[c->next++ & (OP_MAPPING_CACHE_SIZE - 1)];

	e->pid = pid;

	e->start = m->start;
	e->end = m->end;
	e->bias = m->bias;
	e->table_id = m->table_id;
	e->info = *info;
	/* An entry written by an older user space (no range) still serves this frame. */
	if (pc - e->start >= e->end - e->start) {
		e->start = pc;
		e->end = pc + 1;
	}
	return e;
}

#endif
