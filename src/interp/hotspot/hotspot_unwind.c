// SPDX-License-Identifier: Apache-2.0
#include "interp/hotspot/hotspot_unwind.h"

#include <errno.h>
#include <string.h>

#include "interp/interp.h"

struct op_jvm_walker;

static int hotspot_read(struct op_jvm_walker *jw, void *dst, size_t size, uint64_t addr);
static void hotspot_stat(struct op_jvm_walker *jw, uint32_t which);
static const struct op_jvm_pc_entry *hotspot_pc_get(struct op_jvm_walker *jw, uint64_t pc);
static void hotspot_pc_put(struct op_jvm_walker *jw, const struct op_jvm_proc *proc, uint64_t pc,
			   const struct op_jvm_blob *b);
static struct op_jvm_chain *hotspot_chain_slot(struct op_jvm_walker *jw, uint32_t i);

/* The walk's macros (this file only calls the HotSpot reader; the native
 * step and the loop run in src/unwind/user_unwind.c). */
#define OP_READ_USER(u, dst, size, addr)      user_unwind__read((u), (dst), (size), (addr))
#define OP_FIND_RULE(u, pc, rule)	      user_unwind__find_rule((u), (pc), (rule))
#define OP_INTERP_STEP(w, interp, frame, res) (res)
#define OP_JVM_READ(jw, dst, size, addr)      hotspot_read((jw), (dst), (size), (addr))
#define OP_JVM_STAT(jw, which)		      hotspot_stat((jw), (which))
#define OP_JVM_PC_CACHE_GET(jw, pc)	      hotspot_pc_get((jw), (pc))
#define OP_JVM_PC_CACHE_PUT(jw, proc, pc, b)  hotspot_pc_put((jw), (proc), (pc), (b))
#define OP_JVM_CHAIN_SLOT(jw, i)	      hotspot_chain_slot((jw), (i))
#include "omniprof/unwind/native.h"
#include "omniprof/unwind/walk.h"
#include "omniprof/interp/hotspot_walk.h"

/* The walker is the first member of its struct hotspot_unwind. */
static struct hotspot_unwind *unwind_of(struct op_jvm_walker *jw)
{
	return (struct hotspot_unwind *)(void *)jw;
}

/* bpf_probe_read_user's contract: the destination is zeroed on failure. */
static int hotspot_read(struct op_jvm_walker *jw, void *dst, size_t size, uint64_t addr)
{
	struct hotspot_unwind *hu = unwind_of(jw);

	if (!hu->read) {
		if (!hu->walk) {
			memset(dst, 0, size);
			return -EFAULT;
		}
		return user_unwind__read(&hu->walk->u, dst, size, addr);
	}
	if (hu->read(hu->read_ctx, dst, size, addr)) {
		memset(dst, 0, size);
		return -EFAULT;
	}
	return 0;
}

static void hotspot_stat(struct op_jvm_walker *jw, uint32_t which)
{
	if (which < OP_JVM_STAT__COUNT)
		unwind_of(jw)->stats[which]++;
}

/* The walk's pid, as BPF keys the cache by the sampled process. */
static uint32_t hotspot_pid(const struct hotspot_unwind *hu)
{
	return hu->walk ? hu->walk->u.pid : 0;
}

static const struct op_jvm_pc_entry *hotspot_pc_get(struct op_jvm_walker *jw, uint64_t pc)
{
	struct hotspot_unwind *hu = unwind_of(jw);

	if (!hu->pc_cache)
		return NULL;
	return hu->pc_cache->get(hu->pc_cache->ctx, hotspot_pid(hu), pc);
}

static void hotspot_pc_put(struct op_jvm_walker *jw, const struct op_jvm_proc *proc, uint64_t pc,
			   const struct op_jvm_blob *b)
{
	struct hotspot_unwind *hu = unwind_of(jw);
	struct op_jvm_pc_entry e;

	if (!hu->pc_cache)
		return;
	memset(&e, 0, sizeof(e));
	op_jvm_pc_entry__fill(&e, jw, proc, b);
	hu->pc_cache->put(hu->pc_cache->ctx, hotspot_pid(hu), pc, &e);
}

static struct op_jvm_chain *hotspot_chain_slot(struct op_jvm_walker *jw, uint32_t i)
{
	struct hotspot_unwind *hu = unwind_of(jw);

	if (!hu->chain_cache || i >= OP_JVM_CHAIN_SLOTS)
		return NULL;
	return hu->chain_cache->slot(hu->chain_cache->ctx, i);
}

static int hotspot_unwind__step(void *ctx, struct op_walk *w, struct op_frame *frame, int res)
{
	struct hotspot_unwind *hu = ctx;

	hu->walk = w;
	if (op_walk__setup_once(w, OP_INTERP_HOTSPOT)) {
		op_jvm_walker__begin(&hu->walker);
		/* As BPF's: the walked process, the chain cache's key. */
		hu->walker.pid = hotspot_pid(hu);
		if (hu->proc)
			op_jvm_walker__epoch(&hu->walker, hu->proc);
	}
	return op_jvm_walk_step(w, hu->proc, &hu->walker, frame, res);
}

struct user_unwind_runtime hotspot_unwind__runtime(struct hotspot_unwind *hu)
{
	return (struct user_unwind_runtime){hotspot_unwind__step, hu};
}

struct user_unwind_runtime hotspot_unwind__walk_begin(void *walk, const struct interp_walk_env *env)
{
	struct hotspot_unwind *hu = walk;

	hu->proc = env->state;
	hu->read = env->read;
	hu->read_ctx = env->read_ctx;
	return hotspot_unwind__runtime(hu);
}

void hotspot_unwind__walk_end(const void *walk, struct interp_walk_stats *stats)
{
	const struct hotspot_unwind *hu = walk;

	stats->walks++;
	stats->frames += (uint64_t)hu->stats[OP_JVM_STAT_INTERPRETED] +
			 hu->stats[OP_JVM_STAT_COMPILED] + hu->stats[OP_JVM_STAT_INLINED] +
			 hu->stats[OP_JVM_STAT_STUB];
	stats->no_state += hu->stats[OP_JVM_STAT_NO_PROC];
	stats->errors += hu->stats[OP_JVM_STAT_READ_ERR];
}
