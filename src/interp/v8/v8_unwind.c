// SPDX-License-Identifier: Apache-2.0
#include "interp/v8/v8_unwind.h"

#include <string.h>

#include "interp/interp.h"

static int v8_read(struct v8_unwind *vu, void *dst, size_t size, uint64_t addr);
static void v8_stat(struct v8_unwind *vu, uint32_t which);

#define OP_READ_USER(u, dst, size, addr)      user_unwind__read((u), (dst), (size), (addr))
#define OP_FIND_RULE(u, pc, rule)	      user_unwind__find_rule((u), (pc), (rule))
#define OP_INTERP_STEP(w, interp, frame, res) (res)
#define OP_V8_READ(ctx, dst, size, addr)      v8_read((ctx), (dst), (size), (addr))
#define OP_V8_STAT(ctx, which)		      v8_stat((ctx), (which))
#include "omniprof/unwind/native.h"
#include "omniprof/unwind/walk.h"
#include "omniprof/interp/v8_walk.h"

/* bpf_probe_read_user's contract: the destination is zeroed on failure. */
static int v8_read(struct v8_unwind *vu, void *dst, size_t size, uint64_t addr)
{
	if (!vu->read)
		return user_unwind__read(&vu->walk->u, dst, size, addr);
	if (vu->read(vu->read_ctx, dst, size, addr)) {
		memset(dst, 0, size);
		return -14; /* -EFAULT */
	}
	return 0;
}

static void v8_stat(struct v8_unwind *vu, uint32_t which)
{
	if (which < OP_V8_STAT__COUNT)
		vu->stats[which]++;
}

/* v8_step() of bpf/interp/v8.bpf.h. */
static int v8_unwind__step(void *ctx, struct op_walk *w, struct op_frame *frame, int res)
{
	struct v8_unwind *vu = ctx;

	if (res != OP_STEP_RUNTIME_UNWINDS)
		return res;
	if (!vu->proc) {
		v8_stat(vu, OP_V8_STAT_NO_PROC);
		return res;
	}
	vu->walk = w;
	return op_v8_walk_step(vu, vu->proc, &w->u, frame);
}

struct user_unwind_runtime v8_unwind__runtime(struct v8_unwind *vu)
{
	return (struct user_unwind_runtime){v8_unwind__step, vu};
}

struct user_unwind_runtime v8_unwind__walk_begin(void *walk, const struct interp_walk_env *env)
{
	struct v8_unwind *vu = walk;

	vu->proc = env->state;
	vu->read = env->read;
	vu->read_ctx = env->read_ctx;
	return v8_unwind__runtime(vu);
}

void v8_unwind__walk_end(const void *walk, struct interp_walk_stats *stats)
{
	const struct v8_unwind *vu = walk;

	stats->walks++;
	stats->frames += vu->stats[OP_V8_STAT_INTERPRETED] + vu->stats[OP_V8_STAT_JIT];
	stats->no_state += vu->stats[OP_V8_STAT_NO_PROC];
	stats->errors += vu->stats[OP_V8_STAT_READ_ERR];
}
