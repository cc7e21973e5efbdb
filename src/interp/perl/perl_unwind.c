// SPDX-License-Identifier: Apache-2.0
#include "interp/perl/perl_unwind.h"

#include <stddef.h>
#include <string.h>

#include "interp/interp.h"

struct op_perl_walker;

static int perl_read(const struct op_perl_walker *pw, void *dst, size_t size, uint64_t addr);
static void perl_stat(const struct op_perl_walker *pw, uint32_t which);

/* The walk's macros (this file only calls the Perl walker; the native step
 * and the loop run in src/unwind/user_unwind.c). */
#define OP_READ_USER(u, dst, size, addr)      user_unwind__read((u), (dst), (size), (addr))
#define OP_FIND_RULE(u, pc, rule)	      user_unwind__find_rule((u), (pc), (rule))
#define OP_INTERP_STEP(w, interp, frame, res) (res)
#define OP_PERL_READ(pw, dst, size, addr)     perl_read((pw), (dst), (size), (addr))
#define OP_PERL_STAT(pw, which)		      perl_stat((pw), (which))
#include "omniprof/unwind/native.h"
#include "omniprof/unwind/walk.h"
#include "omniprof/interp/perl_walk.h"

/* The walker is embedded in its struct perl_unwind: the walk's context. */
#define perl_unwind_of(pw)                                                                         \
	((struct perl_unwind *)((uintptr_t)(pw)-offsetof(struct perl_unwind, walker)))

/* bpf_probe_read_user's contract: the destination is zeroed on failure. */
static int perl_read(const struct op_perl_walker *pw, void *dst, size_t size, uint64_t addr)
{
	struct perl_unwind *pu = perl_unwind_of(pw);

	if (!pu->read)
		return user_unwind__read(&pu->walk->u, dst, size, addr);
	if (pu->read(pu->read_ctx, dst, size, addr)) {
		memset(dst, 0, size);
		return -14; /* -EFAULT */
	}
	return 0;
}

static void perl_stat(const struct op_perl_walker *pw, uint32_t which)
{
	if (which < OP_PERL_STAT__COUNT)
		perl_unwind_of(pw)->stats[which]++;
}

/* perl_step() of bpf/interp/perl.bpf.h. */
static int perl_unwind__step(void *ctx, struct op_walk *w, struct op_frame *frame, int res)
{
	struct perl_unwind *pu = ctx;

	if (!pu->proc)
		return res;
	pu->walk = w;
	if (op_walk__setup_once(w, OP_INTERP_PERL) &&
	    op_perl_setup(&pu->walker, pu->proc, pu->thread_ptr, pu->main_thread))
		op_walk__set_ready(w, OP_INTERP_PERL);
	if (!op_walk__is_ready(w, OP_INTERP_PERL))
		return res;
	return op_perl_walk_step(&pu->walker, w, frame, res);
}

struct user_unwind_runtime perl_unwind__runtime(struct perl_unwind *pu)
{
	return (struct user_unwind_runtime){perl_unwind__step, pu};
}

struct user_unwind_runtime perl_unwind__walk_begin(void *walk, const struct interp_walk_env *env)
{
	struct perl_unwind *pu = walk;

	pu->proc = env->state;
	pu->thread_ptr = env->thread_ptr;
	/* A copy does not say which thread it is: PL_curinterp only serves builds
	 * without the thread-local context, which rarely run threads. */
	pu->main_thread = true;
	pu->read = env->read;
	pu->read_ctx = env->read_ctx;
	return perl_unwind__runtime(pu);
}

void perl_unwind__walk_end(const void *walk, struct interp_walk_stats *stats)
{
	const struct perl_unwind *pu = walk;

	stats->walks++;
	stats->frames += pu->stats[OP_PERL_STAT_FRAMES];
	stats->no_state += pu->stats[OP_PERL_STAT_NO_INTERP] + pu->stats[OP_PERL_STAT_NO_STACK];
	stats->errors += pu->stats[OP_PERL_STAT_READ_ERR];
}
