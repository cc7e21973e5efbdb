// SPDX-License-Identifier: Apache-2.0
#include "interp/perl/perl_layout.h"

#include <stddef.h>

/*
 * Perl 5.36.0, x86-64, threaded (useithreads, MULTIPLICITY), as Debian 12
 * builds it (perl 5.36.0-7+deb12u2). Source of every value: offsetof() and
 * the macros, compiled against that package's own headers
 * (/usr/lib/x86_64-linux-gnu/perl/5.36/CORE: intrpvar.h for struct
 * interpreter, cop.h for struct stackinfo / PERL_CONTEXT / COP, cv.h, gv.h,
 * hv.h, sv.h, hv_func.h for HEK) with `perl -MExtUtils::Embed -e ccopts`.
 * Notes from those headers:
 *   - HvAUX(hv) is &((struct xpvhv_with_aux *)SvANY(hv))->xhv_aux in 5.36
 *     (offset 32 in the body); 5.34 and older put it after HvARRAY instead,
 *     so they need a walk of their own: not in this table yet.
 *   - CopFILE(cop) is cop->cop_file (a char *) in threaded builds;
 *     unthreaded ones keep a GV (cop_filegv) instead: not in this table yet.
 *   - Context types: CXt_SUB 9, CXt_FORMAT 10, CXt_EVAL 11 (CXTYPEMASK 0xf)
 *     since 5.24 (perl_abi.h).
 */
static const struct perl_layout layouts[] = {
    {
	.minor = 36,
	.threaded = true,
	.bpf =
	    {
		.interp_curcop = 208,	    /* offsetof(struct interpreter, Icurcop) */
		.interp_curstackinfo = 224, /* offsetof(struct interpreter, Icurstackinfo) */
		.si_cxstack = 8,	    /* offsetof(struct stackinfo, si_cxstack) */
		.si_prev = 16,		    /* offsetof(struct stackinfo, si_prev) */
		.si_cxix = 32,		    /* offsetof(struct stackinfo, si_cxix) */
		.si_type = 44,		    /* offsetof(struct stackinfo, si_type) */
		.cx_size = 104,		    /* sizeof(PERL_CONTEXT) */
		.cx_type = 0,		    /* cx_type: the first byte of struct block */
		.cx_oldcop = 16,	    /* offsetof(struct block, blku_oldcop) */
		.cx_sub_retop = 48,	    /* blk_u.blku_sub.retop (= blku_eval.retop) */
		.cx_sub_cv = 72,	    /* blk_u.blku_sub.cv (= blku_format.cv) */
		.cx_eval_cv = 88,	    /* blk_u.blku_eval.cv */
		.cop_line = 36,		    /* offsetof(COP, cop_line) */
		.interp_op = 8,		    /* offsetof(struct interpreter, Iop) */
		.cxp_multicall = 0x10,	    /* CXp_MULTICALL */
	    },
	.sv_any = 0,	      /* offsetof(struct sv, sv_any) */
	.sv_flags = 12,	      /* offsetof(struct sv, sv_flags) */
	.cv_stash = 32,	      /* offsetof(XPVCV, xcv_stash) */
	.cv_gv = 56,	      /* offsetof(XPVCV, xcv_gv_u) */
	.cv_file = 64,	      /* offsetof(XPVCV, xcv_file) */
	.cv_flags = 92,	      /* offsetof(XPVCV, xcv_flags) */
	.cvf_named = 0x8000,  /* CVf_NAMED */
	.gv_name = 32,	      /* offsetof(XPVGV, xiv_u) */
	.gv_stash = 40,	      /* offsetof(XPVGV, xnv_u) */
	.hv_aux = 32,	      /* offsetof(struct xpvhv_with_aux, xhv_aux) */
	.hv_aux_name = 0,     /* offsetof(struct xpvhv_aux, xhv_name_u) */
	.hv_aux_count = 28,   /* offsetof(struct xpvhv_aux, xhv_name_count) */
	.svf_ook = 0x2000000, /* SVf_OOK */
	.hek_len = 4,	      /* offsetof(struct hek, hek_len) */
	.hek_key = 8,	      /* offsetof(struct hek, hek_key) */
	.cop_file = 48,	      /* offsetof(COP, cop_file) */
    },
};

const struct perl_layout *perl_layout__find(unsigned int minor, bool threaded)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor && layouts[i].threaded == threaded)
			return &layouts[i];
	return NULL;
}

static bool fits(uint16_t off, uint16_t size, uint16_t block)
{
	return off % size == 0 && off + size <= block;
}

bool perl_layout__fits(const struct op_perl_offsets *o)
{
	return fits(o->cx_type, 1, OP_PERL_CX_BLOCK) && fits(o->cx_oldcop, 8, OP_PERL_CX_BLOCK) &&
	       fits(o->cx_sub_retop, 8, OP_PERL_CX_BLOCK) &&
	       fits(o->cx_sub_cv, 8, OP_PERL_CX_BLOCK) &&
	       fits(o->cx_eval_cv, 8, OP_PERL_CX_BLOCK) &&
	       fits(o->si_cxstack, 8, OP_PERL_SI_BLOCK) && fits(o->si_prev, 8, OP_PERL_SI_BLOCK) &&
	       fits(o->si_cxix, 4, OP_PERL_SI_BLOCK) && fits(o->si_type, 4, OP_PERL_SI_BLOCK) &&
	       o->cx_size >= 8;
}
