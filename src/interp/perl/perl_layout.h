/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Perl's struct layouts per version and build (threaded or not), x86-64:
 * the offsets the BPF walker needs (struct op_perl_offsets) and those the
 * host needs to name a frame (CV, GV, stash, HEK, COP). Each value says
 * where it comes from in perl_layout.c.
 */
#ifndef OMNIPROF_INTERP_PERL_LAYOUT_H
#define OMNIPROF_INTERP_PERL_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "omniprof/interp/perl_abi.h"

struct perl_layout {
	unsigned int minor; /* 5.minor */
	bool threaded;
	struct op_perl_offsets bpf;
	uint8_t je_mustcatch; /* JMPENV -> je_mustcatch (struct op_perl_proc's) */
	/* Naming (host). */
	uint16_t sv_any;    /* SV -> sv_any (the body) */
	uint16_t sv_flags;  /* SV -> sv_flags (U32) */
	uint16_t cv_stash;  /* XPVCV body -> xcv_stash */
	uint16_t cv_gv;	    /* XPVCV body -> xcv_gv_u (GV*, or HEK* when CVf_NAMED) */
	uint16_t cv_file;   /* XPVCV body -> xcv_file (char*) */
	uint16_t cv_flags;  /* XPVCV body -> xcv_flags (U32 in 5.22+) */
	uint32_t cvf_named; /* CVf_NAMED: xcv_gv_u holds the name's HEK */
	uint16_t gv_name;   /* XPVGV body -> xiv_u.xivu_namehek (HEK*) */
	uint16_t gv_stash;  /* XPVGV body -> xnv_u.xgv_stash (HV*) */
	/*
	 * HvAUX(): 5.36+ keep struct xpvhv_aux in the hash's body at hv_aux
	 * (hv_aux_after_array false); 5.34 and older put it after the bucket
	 * array, at HvARRAY (SV -> sv_u) + (HvMAX (body -> hv_max) + 1) * 8.
	 */
	bool hv_aux_after_array;
	uint16_t hv_aux;       /* XPVHV body -> its struct xpvhv_aux (SVf_OOK set), 5.36+ */
	uint16_t sv_u;	       /* SV -> sv_u (HvARRAY of a hash), 5.34 and older */
	uint16_t hv_max;       /* XPVHV body -> xhv_max (STRLEN), 5.34 and older */
	uint16_t hv_aux_name;  /* xpvhv_aux -> xhv_name_u (HEK*, or HEK** when count != 0) */
	uint16_t hv_aux_count; /* xpvhv_aux -> xhv_name_count (I32) */
	uint32_t svf_ook;      /* SVf_OOK: the hash has its aux struct */
	uint16_t hek_len;      /* HEK -> hek_len (I32) */
	uint16_t hek_key;      /* HEK -> hek_key[] */
	/*
	 * COP -> its file: threaded builds, cop_file (char *); unthreaded ones,
	 * cop_filegv (GV *), whose name is "_<" and the file (CopFILE()).
	 */
	uint16_t cop_file;
	bool cop_file_gv;
};

/* The layout of 5.minor (threaded or not) on x86-64, NULL when not known. */
const struct perl_layout *perl_layout__find(unsigned int minor, bool threaded);

/* Do the walker's offsets lie inside the blocks it reads (OP_PERL_CX_BLOCK, OP_PERL_SI_BLOCK)? */
bool perl_layout__fits(const struct op_perl_offsets *o);

#endif
