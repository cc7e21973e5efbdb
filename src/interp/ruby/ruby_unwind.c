// SPDX-License-Identifier: Apache-2.0
#include "interp/ruby/ruby_unwind.h"

#include <stddef.h>
#include <string.h>

#include "interp/interp.h"

struct op_rb_walker;
static int ruby_read(const struct op_rb_walker *rb, void *dst, size_t size, uint64_t addr);
static void ruby_stat(const struct op_rb_walker *rb, uint32_t which);

/* The walk's macros (this file only calls the Ruby walker; the native step
 * and the loop run in src/unwind/user_unwind.c). */
#define OP_READ_USER(u, dst, size, addr)      user_unwind__read((u), (dst), (size), (addr))
#define OP_FIND_RULE(u, pc, rule)	      user_unwind__find_rule((u), (pc), (rule))
#define OP_INTERP_STEP(w, interp, frame, res) (res)
#define OP_RB_READ(rb, dst, size, addr)	      ruby_read((rb), (dst), (size), (addr))
#define OP_RB_STAT(rb, which)		      ruby_stat((rb), (which))
#include "omniprof/unwind/native.h"
#include "omniprof/unwind/walk.h"
#include "omniprof/interp/ruby_walk.h"

/* The walker is embedded in its struct ruby_unwind: the walk's context. */
#define ruby_unwind_of(rb)                                                                         \
	((struct ruby_unwind *)((uintptr_t)(rb)-offsetof(struct ruby_unwind, walker)))

/* bpf_probe_read_user's contract: the destination is zeroed on failure. */
static int ruby_read(const struct op_rb_walker *rb, void *dst, size_t size, uint64_t addr)
{
	struct ruby_unwind *ru = ruby_unwind_of(rb);

	if (!ru->read)
		return user_unwind__read(&ru->walk->u, dst, size, addr);
	if (ru->read(ru->read_ctx, dst, size, addr)) {
		memset(dst, 0, size);
		return -14; /* -EFAULT */
	}
	return 0;
}

static void ruby_stat(const struct op_rb_walker *rb, uint32_t which)
{
	if (which < OP_RB_STAT__COUNT)
		ruby_unwind_of(rb)->stats[which]++;
}

/* ruby_step() of bpf/interp/ruby.bpf.h: the set-up the first time the walk
 * meets rb_vm_exec, then op_rb_walk_step(). */
static int ruby_unwind__step(void *ctx, struct op_walk *w, struct op_frame *frame, int res)
{
	struct ruby_unwind *ru = ctx;

	if (!ru->proc)
		return res;
	ru->walk = w;
	if (op_walk__setup_once(w, OP_INTERP_RUBY) &&
	    op_rb_begin(&ru->walker, ru->proc, ru->thread_ptr))
		op_walk__set_ready(w, OP_INTERP_RUBY);
	if (!op_walk__is_ready(w, OP_INTERP_RUBY))
		return res == OP_STEP_RUNTIME_UNWINDS ? op_rb_jit_alone(w, frame) : res;
	if (ru->marked == 1) {
		/* The first Ruby frame, held back for the marker. */
		ru->marked = 2;
		*frame = ru->held;
		w->active = ru->held_active;
		return ru->held_res;
	}
	res = op_rb_walk_step(&ru->walker, w, frame, res);
	if (ru->late && !ru->marked && frame->kind == OP_FRAME_RUBY) {
		/*
		 * A stack copy's native frames are the sample's, but the control
		 * frames are read from the live process milliseconds later (more
		 * while it waits to be published): a thread that called or
		 * returned since shows other methods and lines (seen on 3.2's
		 * YJIT warm-up: a sample inside a `require` named as the loop
		 * the process ran later). No check of the copy can tell, so
		 * the Ruby part says so: the marker, then the frames.
		 */
		ru->held = *frame;
		ru->held_res = res;
		ru->held_active = w->active;
		ru->marked = 1;
		frame->kind = OP_FRAME_RUBY;
		frame->flags = 0;
		frame->reserved = 0;
		frame->addr = OP_RB_LATE_ADDR;
		frame->data = OP_RB_DATA_LATE;
		frame->aux = OP_RB_NO_POS;
		w->active = OP_INTERP_RUBY;
		return OP_STEP_CONTINUE;
	}
	return res;
}

struct user_unwind_runtime ruby_unwind__runtime(struct ruby_unwind *ru)
{
	return (struct user_unwind_runtime){ruby_unwind__step, ru};
}

struct user_unwind_runtime ruby_unwind__walk_begin(void *walk, const struct interp_walk_env *env)
{
	struct ruby_unwind *ru = walk;

	ru->proc = env->state;
	ru->thread_ptr = env->thread_ptr;
	ru->read = env->read;
	ru->read_ctx = env->read_ctx;
	ru->late = env->late;
	return ruby_unwind__runtime(ru);
}

void ruby_unwind__walk_end(const void *walk, struct interp_walk_stats *stats)
{
	const struct ruby_unwind *ru = walk;

	stats->walks++;
	stats->frames += ru->stats[OP_RB_STAT_FRAMES] + ru->stats[OP_RB_STAT_CFUNCS];
	stats->no_state += ru->stats[OP_RB_STAT_NO_EC];
	stats->errors += ru->stats[OP_RB_STAT_READ_ERR];
}
