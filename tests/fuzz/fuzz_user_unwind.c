// SPDX-License-Identifier: Apache-2.0
/*
 * The native unwinder over hostile stack memory (user_unwind__run, the code
 * the BPF sampler runs): the input is the registers (24 bytes), eight rules
 * (64 bytes, picked by address) and the stack's bytes. Whatever they hold,
 * the walk ends within its frame budget and the record stays well formed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/user_unwind.h"

#define STACK_BASE 0x7ff000000000ull
#define MAX_FRAMES 64

struct input {
	const uint8_t *stack;
	size_t len;
	struct op_unwind_rule rules[8];
};

static int read_stack(void *ctx, void *dst, size_t size, uint64_t addr)
{
	const struct input *in = ctx;

	if (addr < STACK_BASE || addr - STACK_BASE > in->len ||
	    size > in->len - (addr - STACK_BASE))
		return -1;
	memcpy(dst, in->stack + (addr - STACK_BASE), size);
	return 0;
}

static void find_rule(void *ctx, uint32_t pid, uint64_t pc, struct op_unwind_rule *rule)
{
	const struct input *in = ctx;

	(void)pid;
	*rule = in->rules[(pc >> 4) & 7];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct op_frame frames[MAX_FRAMES];
	struct user_unwind_ops ops = {read_stack, find_rule, NULL, NULL};
	struct user_unwind_result r;
	struct input in;
	uint64_t regs[3];

	if (size < sizeof(regs) + sizeof(in.rules))
		return 0;
	memcpy(regs, data, sizeof(regs));
	memcpy(in.rules, data + sizeof(regs), sizeof(in.rules));
	in.stack = data + sizeof(regs) + sizeof(in.rules);
	in.len = size - sizeof(regs) - sizeof(in.rules);
	ops.read_ctx = ops.rule_ctx = &in;
	/* sp and fp inside the stack image most of the time, anywhere sometimes. */
	if (regs[0] & 1) {
		regs[1] = STACK_BASE + (regs[1] % (in.len + 1));
		regs[2] = STACK_BASE + (regs[2] % (in.len + 1));
	}
	r = user_unwind__run(&ops, 1, regs[0], regs[1], regs[2], frames, MAX_FRAMES);
	if (r.n_frames > MAX_FRAMES || (r.error && !(r.flags & OP_TRACE_F_USER_TRUNCATED)))
		abort();
	for (uint32_t i = 0; i + 1 < r.n_frames; i++)
		if (frames[i].kind != OP_FRAME_NATIVE)
			abort(); /* only the last frame may be an error frame */
	return 0;
}
