/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The rules no table holds, made by the lookup (omniprof/unwind/lookup.h)
 * and by rule sources in tests: frame pointers, anonymous code, "no rule".
 * For BPF and C alike.
 */
#ifndef OMNIPROF_UNWIND_RULES_H
#define OMNIPROF_UNWIND_RULES_H

#include "omniprof/abi.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* The frame-pointer rule: CFA = rbp + 16, caller's rbp at CFA - 16. */
static __always_inline void op_unwind_fp_rule(struct op_unwind_rule *rule)
{
	rule->cmd = OP_RULE_CFA;
	rule->cfa_base = OP_CFA_RBP;
	rule->cfa_offset = 16;
	rule->fp_offset = -16;
}

/* Anonymous executable memory: frame pointers, or a stop that says so. */
static __always_inline void op_unwind_anon_rule(struct op_unwind_rule *rule)
{
	op_unwind_fp_rule(rule);
	rule->cmd = OP_RULE_ANON;
}

/* No usable rule: the walk stops with OP_UNWIND_ERR_NO_RULE. */
static __always_inline void op_rule__set_invalid(struct op_unwind_rule *rule)
{
	rule->cmd = OP_RULE_INVALID;
	rule->cfa_base = 0;
	rule->fp_offset = 0;
	rule->cfa_offset = 0;
}

#endif
