/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "Which rule for this pc": the mapping holding it, the mapping's stack-delta
 * table, the delta, its rule, and the fallbacks when one of them is missing.
 * Written once for every target like omniprof/unwind/native.h: the BPF
 * sampler (storage: BPF maps), stack copies (the process table and the maps
 * read back) and the replay suite (in-memory arrays). The includer defines
 * how storage is reached, with ctx its own context:
 *
 *   OP_LOOKUP_MAPPING(ctx, pid, pc)  const struct op_mapping_value *: the
 *                                    entry holding pc, the pid's marker
 *                                    (table_id 0) when pc is in none of its
 *                                    mappings, NULL when the pid is unknown
 *   OP_LOOKUP_TABLE(ctx, table_id)   const struct op_table_info *, NULL: the
 *                                    table is not loaded
 *   OP_LOOKUP_CHUNK(ctx, chunk)      the chunk OP_DELTA_PAGE reads (see
 *                                    omniprof/unwind/delta_search.h), NULL: none
 *   OP_LOOKUP_RULE(ctx, index)       const struct op_unwind_rule *, NULL: none
 * and may define a cache of rules across lookups (BPF: per CPU):
 *   OP_LOOKUP_CACHED(ctx, table_id, vaddr, rule)  non-zero with *rule on a hit
 *   OP_LOOKUP_REMEMBER(ctx, table_id, vaddr, rule)
 *
 * The mappings met are kept in a struct op_lookup_cache (each with its pid;
 * the caller resets it when storage changes: BPF, see walk_scratch__reset in
 * bpf/sampler.bpf.c), so most frames cost a few compares instead of a trie
 * lookup: a mapping entry carries its whole [start, end).
 */
#ifndef OMNIPROF_UNWIND_LOOKUP_H
#define OMNIPROF_UNWIND_LOOKUP_H

#include "omniprof/abi.h"
#include "omniprof/unwind/delta_search.h"
#include "omniprof/unwind/lookup_cache.h"
#include "omniprof/unwind/rules.h"

#if !defined(OP_LOOKUP_MAPPING) || !defined(OP_LOOKUP_TABLE) || !defined(OP_LOOKUP_CHUNK) ||       \
    !defined(OP_LOOKUP_RULE)
#error                                                                                             \
    "define OP_LOOKUP_MAPPING, _TABLE, _CHUNK and _RULE before including omniprof/unwind/lookup.h"
#endif
#ifndef OP_LOOKUP_CACHED
#define OP_LOOKUP_CACHED(ctx, table_id, vaddr, rule)   0
#define OP_LOOKUP_REMEMBER(ctx, table_id, vaddr, rule) ((void)0)
#endif

/*
 * The cached mapping holding pc with its table, else the one storage has,
 * remembered for the next frames. NULL with *how when frame pointers or the
 * anonymous-code rule must do; *m_out: the storage entry (NULL: unknown pid).
 */
static __always_inline struct op_mapping_cache_entry *
op_lookup__mapping(void *ctx, struct op_lookup_cache *c, __u32 pid, __u64 pc, __u32 *how,
		   const struct op_mapping_value **m_out)
{
	const struct op_mapping_value *m;
	const struct op_table_info *info;
	struct op_mapping_cache_entry *e;

	*m_out = 0;
	e = op_lookup_cache__find(c, pid, pc);
	if (e)
		return e;
	m = OP_LOOKUP_MAPPING(ctx, pid, pc);
	*m_out = m;
	if (!m) {
		*how = OP_LOOKUP_FP_UNKNOWN_PID;
		return 0;
	}
	if (m->table_id == OP_TABLE_ID_ANON) {
		*how = OP_LOOKUP_ANON;
		return 0;
	}
	if (!m->table_id) {
		*how = OP_LOOKUP_FP_NO_MAPPING;
		return 0;
	}
	info = OP_LOOKUP_TABLE(ctx, m->table_id);
	if (!info) {
		*how = OP_LOOKUP_FP_NO_TABLE;
		return 0;
	}
	return op_lookup_cache__add(c, pid, m, pc, info);
}

/*
 * Fills *rule for the instruction at pc of pid: the table's rule
 * (OP_RULE_INVALID where the table has none), the frame-pointer rule when
 * there is no table, the anonymous-code rule in anonymous code. Returns an
 * enum op_lookup_how; *m_out as op_lookup__mapping() (NULL when the cache
 * answered).
 */
static __always_inline __u32 op_lookup__rule(void *ctx, struct op_lookup_cache *c, __u32 pid,
					     __u64 pc, struct op_unwind_rule *rule,
					     const struct op_mapping_value **m_out)
{
	struct op_mapping_cache_entry *e;
	const struct op_unwind_rule *r;
	__u32 how = OP_LOOKUP_CFI, index;
	__u64 vaddr;
	void *chunk;

	e = op_lookup__mapping(ctx, c, pid, pc, &how, m_out);
	if (!e) {
		if (how == OP_LOOKUP_ANON)
			op_unwind_anon_rule(rule);
		else
			op_unwind_fp_rule(rule);
		return how;
	}
	vaddr = pc - e->bias;
	if (OP_LOOKUP_CACHED(ctx, e->table_id, vaddr, rule))
		return OP_LOOKUP_CFI;
	chunk = OP_LOOKUP_CHUNK(ctx, e->info.chunk);
	if (!chunk) {
		op_unwind_fp_rule(rule);
		return OP_LOOKUP_FP_NO_TABLE;
	}
	if (vaddr < e->info.base || vaddr - e->info.base >= OP_DELTA_PAD ||
	    op_delta_table__find(&e->info, chunk, (__u32)(vaddr - e->info.base), &index)) {
		op_rule__set_invalid(rule);
		return OP_LOOKUP_INVALID;
	}
	r = OP_LOOKUP_RULE(ctx, index);
	if (!r) {
		op_rule__set_invalid(rule);
		return OP_LOOKUP_INVALID;
	}
	*rule = *r;
	OP_LOOKUP_REMEMBER(ctx, e->table_id, vaddr, r);
	return OP_LOOKUP_CFI;
}

#endif
