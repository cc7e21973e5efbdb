/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Perl on the runtime seam (src/interp/interp.h): finds the interpreter in
 * a file (perl_binary.c), publishes each process's `perl_procs` entry and
 * its runops loops as OP_INTERP_PERL ranges, and names the frames the BPF
 * walker (omniprof/interp/perl_walk.h) emits through a frame store
 * (perl_sub.c) while the process lives.
 */
#ifndef OMNIPROF_INTERP_PERL_H
#define OMNIPROF_INTERP_PERL_H

#include "interp/interp.h"

extern const struct interp_ops perl_interp_ops;

/* Frame-store bounds: subs named per process and bytes. */
#define PERL_SUBS_PER_PROCESS	   4096
#define PERL_SUB_BYTES_PER_PROCESS (4u << 20)
#define PERL_SUB_BYTES_MAX	   (16u << 20)

#endif
