// SPDX-License-Identifier: Apache-2.0
#include "interp/perl/perl_layout.h"

#include <stddef.h>

/*
 * Perl 5.28 to 5.40 on x86-64, threaded (useithreads, MULTIPLICITY) and
 * unthreaded. Where every value comes from: offsetof() and the macros,
 * compiled against each release's own headers (git tags v5.28.3, v5.30.3,
 * v5.32.1, v5.34.3, v5.36.3, v5.38.2, v5.40.0 of github.com/Perl/perl5:
 * intrpvar.h for struct interpreter, cop.h for struct stackinfo,
 * PERL_CONTEXT and COP, cv.h, gv.h, hv.h, sv.h, hek in hv.h) with Debian
 * 12's config.h (perl 5.36.0-7+deb12u2: threaded as it is, unthreaded with
 * USE_ITHREADS, MULTIPLICITY and USE_THREADS taken out). The 5.36 threaded
 * values are the same against Debian's installed headers
 * (/usr/lib/x86_64-linux-gnu/perl/5.36/CORE, `perl -MExtUtils::Embed -e
 * ccopts`). A maintenance release (5.N.x) keeps its series' layout (perl's
 * binary compatibility within a series), so a row is per minor.
 *
 * What differs between the series (the rest is the same in all seven):
 *   - struct interpreter (threaded): Icurcop 224, Icurstackinfo 240 up to
 *     5.32; 208 and 224 from 5.34 (intrpvar.h moved sub_generation,
 *     dowarn and utf8cache next to fields of their size: less padding).
 *   - struct stackinfo: si_type at 40 up to 5.30, 44 from 5.32 (si_cxsubix
 *     came before it).
 *   - PERL_CONTEXT: 96 bytes up to 5.30, 104 from 5.32 (the sub, format
 *     and eval parts gained old_cxsubix before their CV): blk_sub.cv
 *     64 -> 72, blk_eval.cv 80 -> 88, blk_eval.cur_top_env 88 -> 96.
 *   - HvAUX(): after the bucket array up to 5.34, in the body
 *     (struct xpvhv_with_aux, offset 32) from 5.36.
 *   - COP's file: cop_file (char *) at 48 when threaded, cop_filegv (GV *)
 *     at 48 when not.
 * The same in all: context types CXt_SUB 9, CXt_FORMAT 10, CXt_EVAL 11
 * (perl_abi.h), CXp_MULTICALL 0x10, PERLSI_MAIN 1, cop_line 36, Iop 8,
 * si_cxstack 8, si_prev 16, si_cxix 32, blk_oldcop 16, blk_sub.retop
 * (= blk_eval.retop) 48; JMPENV je_prev 0, je_mustcatch 212 (after
 * glibc's 200-byte sigjmp_buf); XPVCV xcv_stash 32, xcv_gv_u 56, xcv_file 64,
 * xcv_flags 92 (U32), CVf_NAMED 0x8000; XPVGV xiv_u (the name HEK) 32,
 * xnv_u (the stash) 40; SV sv_any 0, sv_flags 12, sv_u 16; SVf_OOK
 * 0x02000000 (5.38's SVphv_HasAUX is the same bit); XPVHV xhv_max 24 up to
 * 5.34; struct xpvhv_aux xhv_name_u 0, xhv_name_count 28; HEK hek_len 4,
 * hek_key 8.
 *
 * Verified on a running perl (tests/e2e/test_perl.c): Debian's 5.36
 * threaded; see docs/architecture.md for the builds verified from source.
 */

/* The fields every row shares (sources above). */
#define PERL_COMMON_BPF                                                                            \
	.si_cxstack = 8, .si_prev = 16, .si_cxix = 32, .cx_type = 0, .cx_oldcop = 16,              \
	.cx_sub_retop = 48, .cop_line = 36, .cxp_multicall = 0x10
#define PERL_COMMON_NAMING                                                                         \
	.sv_any = 0, .sv_flags = 12, .sv_u = 16, .cv_stash = 32, .cv_gv = 56, .cv_file = 64,       \
	.cv_flags = 92, .cvf_named = 0x8000, .gv_name = 32, .gv_stash = 40, .hv_aux_name = 0,      \
	.hv_aux_count = 28, .svf_ook = 0x2000000, .hek_len = 4, .hek_key = 8, .cop_file = 48

/* struct stackinfo and PERL_CONTEXT up to 5.30 (si_type 40, 96-byte contexts). */
#define PERL_CX_528                                                                                \
	.si_type = 40, .cx_size = 96, .cx_sub_cv = 64, .cx_eval_cv = 80, .cx_eval_top_env = 88
/* From 5.32 (si_cxsubix, old_cxsubix): si_type 44, 104-byte contexts. */
#define PERL_CX_532                                                                                \
	.si_type = 44, .cx_size = 104, .cx_sub_cv = 72, .cx_eval_cv = 88, .cx_eval_top_env = 96
/* struct interpreter (threaded): Iop, Icurcop, Icurstackinfo up to 5.32, then from 5.34. */
#define PERL_INTERP_528 .interp_op = 8, .interp_curcop = 224, .interp_curstackinfo = 240
#define PERL_INTERP_534 .interp_op = 8, .interp_curcop = 208, .interp_curstackinfo = 224
/* HvAUX(): after the bucket array (xhv_max at 24 in the body) up to 5.34; in the body from 5.36. */
#define PERL_HV_528 .hv_aux_after_array = true, .hv_max = 24
#define PERL_HV_536 .hv_aux_after_array = false, .hv_aux = 32

#define PERL_ROW(MINOR, CX, INTERP, HV)                                                            \
	{.minor = MINOR,                                                                           \
	 .threaded = true,                                                                         \
	 .bpf = {PERL_COMMON_BPF, CX, INTERP},                                                     \
	 .je_mustcatch = 212,                                                                      \
	 PERL_COMMON_NAMING,                                                                       \
	 HV},                                                                                      \
	{                                                                                          \
		.minor = MINOR, .threaded = false, .bpf = {PERL_COMMON_BPF, CX},                   \
		.je_mustcatch = 212, PERL_COMMON_NAMING, HV, .cop_file_gv = true                   \
	}

static const struct perl_layout layouts[] = {
    PERL_ROW(28, PERL_CX_528, PERL_INTERP_528, PERL_HV_528),
    PERL_ROW(30, PERL_CX_528, PERL_INTERP_528, PERL_HV_528),
    PERL_ROW(32, PERL_CX_532, PERL_INTERP_528, PERL_HV_528),
    PERL_ROW(34, PERL_CX_532, PERL_INTERP_534, PERL_HV_528),
    PERL_ROW(36, PERL_CX_532, PERL_INTERP_534, PERL_HV_536),
    PERL_ROW(38, PERL_CX_532, PERL_INTERP_534, PERL_HV_536),
    PERL_ROW(40, PERL_CX_532, PERL_INTERP_534, PERL_HV_536),
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
	       fits(o->cx_eval_top_env, 8, OP_PERL_CX_BLOCK) &&
	       fits(o->si_cxstack, 8, OP_PERL_SI_BLOCK) && fits(o->si_prev, 8, OP_PERL_SI_BLOCK) &&
	       fits(o->si_cxix, 4, OP_PERL_SI_BLOCK) && fits(o->si_type, 4, OP_PERL_SI_BLOCK) &&
	       o->cx_size >= 8;
}
