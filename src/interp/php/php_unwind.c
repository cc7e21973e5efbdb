// SPDX-License-Identifier: Apache-2.0
#include "interp/php/php_unwind.h"

#include <stddef.h>
#include <string.h>

#include "interp/interp.h"

struct op_php_walker;

static int php_read(const struct op_php_walker *php, void *dst, size_t size, uint64_t addr);
static void php_stat(const struct op_php_walker *php, uint32_t which);

#define OP_READ_USER(u, dst, size, addr)      user_unwind__read((u), (dst), (size), (addr))
#define OP_FIND_RULE(u, pc, rule)	      user_unwind__find_rule((u), (pc), (rule))
#define OP_INTERP_STEP(w, interp, frame, res) (res)
#define OP_PHP_READ(php, dst, size, addr)     php_read((php), (dst), (size), (addr))
#define OP_PHP_STAT(php, which)		      php_stat((php), (which))
#include "omniprof/unwind/native.h"
#include "omniprof/unwind/walk.h"
#include "omniprof/interp/php_walk.h"

#define php_unwind_of(php)                                                                         \
	((struct php_unwind *)((uintptr_t)(php)-offsetof(struct php_unwind, walker)))

static int php_read(const struct op_php_walker *php, void *dst, size_t size, uint64_t addr)
{
	struct php_unwind *pu = php_unwind_of(php);

	if (!pu->read)
		return user_unwind__read(&pu->walk->u, dst, size, addr);
	if (pu->read(pu->read_ctx, dst, size, addr)) {
		memset(dst, 0, size);
		return -14; /* -EFAULT */
	}
	return 0;
}

static void php_stat(const struct op_php_walker *php, uint32_t which)
{
	if (which < OP_PHP_STAT__COUNT)
		php_unwind_of(php)->stats[which]++;
}

static int php_unwind__step(void *ctx, struct op_walk *w, struct op_frame *frame, int res)
{
	struct php_unwind *pu = ctx;

	if (!pu->proc)
		return res;
	pu->walk = w;
	if (op_walk__setup_once(w, OP_INTERP_PHP)) {
		if (op_php_begin(&pu->walker, pu->proc))
			op_walk__set_ready(w, OP_INTERP_PHP);
	}
	return op_php_walk_step(&pu->walker, w, frame, res, op_walk__is_ready(w, OP_INTERP_PHP));
}

struct user_unwind_runtime php_unwind__runtime(struct php_unwind *pu)
{
	return (struct user_unwind_runtime){php_unwind__step, pu};
}

struct user_unwind_runtime php_unwind__walk_begin(void *walk, const struct interp_walk_env *env)
{
	struct php_unwind *pu = walk;

	pu->proc = env->state;
	pu->read = env->read;
	pu->read_ctx = env->read_ctx;
	return php_unwind__runtime(pu);
}

void php_unwind__walk_end(const void *walk, struct interp_walk_stats *stats)
{
	const struct php_unwind *pu = walk;

	stats->walks++;
	stats->frames += pu->stats[OP_PHP_STAT_FRAMES];
	stats->no_state += pu->stats[OP_PHP_STAT_NO_FRAME];
	stats->errors += pu->stats[OP_PHP_STAT_READ_ERR];
}
