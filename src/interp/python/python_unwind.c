// SPDX-License-Identifier: Apache-2.0
#include "interp/python/python_unwind.h"

#include <stddef.h>
#include <string.h>

#include "interp/interp.h"

struct op_py_walker;

static int python_read(const struct op_py_walker *py, void *dst, size_t size, uint64_t addr);
static void python_stat(const struct op_py_walker *py, uint32_t which);

/* The walk's macros (this file only calls the Python walker; the native
 * step and the loop run in src/unwind/user_unwind.c). */
#define OP_READ_USER(u, dst, size, addr)      user_unwind__read((u), (dst), (size), (addr))
#define OP_FIND_RULE(u, pc, rule)	      user_unwind__find_rule((u), (pc), (rule))
#define OP_INTERP_STEP(w, interp, frame, res) (res)
#define OP_PY_READ(py, dst, size, addr)	      python_read((py), (dst), (size), (addr))
#define OP_PY_STAT(py, which)		      python_stat((py), (which))
#include "omniprof/unwind/native.h"
#include "omniprof/unwind/walk.h"
#include "omniprof/interp/python_walk.h"

/* The walker is embedded in its struct python_unwind: the walk's context. */
#define python_unwind_of(py)                                                                       \
	((struct python_unwind *)((uintptr_t)(py)-offsetof(struct python_unwind, walker)))

/* bpf_probe_read_user's contract: the destination is zeroed on failure. */
static int python_read(const struct op_py_walker *py, void *dst, size_t size, uint64_t addr)
{
	struct python_unwind *pu = python_unwind_of(py);

	if (!pu->read)
		return user_unwind__read(&pu->walk->u, dst, size, addr);
	if (pu->read(pu->read_ctx, dst, size, addr)) {
		memset(dst, 0, size);
		return -14; /* -EFAULT */
	}
	return 0;
}

static void python_stat(const struct op_py_walker *py, uint32_t which)
{
	if (which < OP_PY_STAT__COUNT)
		python_unwind_of(py)->stats[which]++;
}

/* python_step() of bpf/interp/python.bpf.h: the set-up (the bpf_loop as a loop) the
 * first time the walk meets the eval loop, then op_py_walk_step(). */
static int python_unwind__step(void *ctx, struct op_walk *w, struct op_frame *frame, int res)
{
	struct python_unwind *pu = ctx;
	struct op_py_thread_search search;

	if (!pu->proc)
		return res;
	pu->walk = w;
	if (op_walk__setup_once(w, OP_INTERP_PYTHON) &&
	    !op_py_search_init(&pu->walker, pu->proc, &search, pu->thread_ptr)) {
		for (int i = 0; i < OP_PY_MAX_THREADS; i++)
			if (op_py_search_step(&pu->walker, &search))
				break;
		if (op_py_search_done(&pu->walker, &search))
			op_walk__set_ready(w, OP_INTERP_PYTHON);
	}
	if (!op_walk__is_ready(w, OP_INTERP_PYTHON))
		return res;
	return op_py_walk_step(&pu->walker, w, frame, res);
}

struct user_unwind_runtime python_unwind__runtime(struct python_unwind *pu)
{
	return (struct user_unwind_runtime){python_unwind__step, pu};
}

struct user_unwind_runtime python_unwind__walk_begin(void *walk, const struct interp_walk_env *env)
{
	struct python_unwind *pu = walk;

	pu->proc = env->state;
	pu->thread_ptr = env->thread_ptr;
	pu->read = env->read;
	pu->read_ctx = env->read_ctx;
	return python_unwind__runtime(pu);
}

void python_unwind__walk_end(const void *walk, struct interp_walk_stats *stats)
{
	const struct python_unwind *pu = walk;

	stats->walks++;
	stats->frames += pu->stats[OP_PY_STAT_FRAMES];
	stats->no_state += pu->stats[OP_PY_STAT_NO_THREAD] + pu->stats[OP_PY_STAT_NO_FRAME];
	stats->errors += pu->stats[OP_PY_STAT_READ_ERR];
}
