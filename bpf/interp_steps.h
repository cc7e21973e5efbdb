/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * The walk with its runtimes, in the kernel: the dispatch to each runtime's
 * step (OP_INTERP_STEP of omniprof/unwind/walk.h), generated from the
 * runtimes' table (OP_INTERPS in omniprof/frame_kinds.h), then the walk,
 * then each runtime's kernel header (its maps and its step). A kernel-only
 * fragment, not a unit: included by bpf/sampler.bpf.c only, after
 * omniprof/unwind/native.h (the runtimes' reads use the sampler's
 * OP_READ_USER).
 *
 * Each step is a global __noinline function: the verifier checks it once,
 * on its own, not once per path through the walk.
 */
#ifndef OMNIPROF_BPF_INTERP_STEPS_H
#define OMNIPROF_BPF_INTERP_STEPS_H

struct op_walk;

#define OP_INTERP_STEP_DECLARE(name, value, step)                                                  \
	__noinline int step(struct op_walk *w, struct op_frame *frame, int res);
OP_INTERPS(OP_INTERP_STEP_DECLARE)

#define OP_INTERP_STEP_CALL(name, value, step)                                                     \
	if (interp == OP_INTERP_##name)                                                            \
		return step(w, frame, res);

/* Runtime interp's step for frame; res when no runtime has that id. */
static __always_inline int op_interp_step(struct op_walk *w, __u32 interp, struct op_frame *frame,
					  int res)
{
	OP_INTERPS(OP_INTERP_STEP_CALL)
	return res;
}

#define OP_INTERP_STEP(w, interp, frame, res) op_interp_step((w), (interp), (frame), (res))
#include "omniprof/unwind/walk.h"

/* The runtimes' kernel headers: one line per runtime. */
#include "interp/python.bpf.h"
#include "interp/ruby.bpf.h"
#include "interp/hotspot.bpf.h"
#include "interp/perl.bpf.h"
#include "interp/v8.bpf.h"
#include "interp/php.bpf.h"

#endif
