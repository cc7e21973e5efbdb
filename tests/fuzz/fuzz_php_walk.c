// SPDX-License-Identifier: Apache-2.0
/*
 * The PHP frame reader over hostile memory: the walker
 * (bpf/include/omniprof/interp/php_walk.h, through src/interp/php/php_unwind.c
 * and user_unwind__walk, the code the BPF sampler runs) and the host's
 * function reader (src/interp/php/php_func.c) over a process image the input
 * holds: byte 0 is flags (bit 0: every address reads the image, folded, so
 * chains loop), bytes 1-8 the first pc, the rest the memory at MEM_BASE,
 * which starts with executor_globals.current_execute_data; the machine stack
 * is at MEM_BASE + 0x100 and unwinds with frame pointers. Whatever the bytes,
 * the walk ends within its frame budget with only the last frame an error,
 * and every frame the walker reports is named with bounded strings or not
 * at all.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interp/php/php_func.h"
#include "interp/php/php_layout.h"
#include "interp/php/php_unwind.h"
#include "proc/remote_memory.h"
#include "unwind/user_unwind.h"

#define MEM_BASE   0x7f0000000000ull
#define VM_START   0x600000ull
#define VM_END	   0x610000ull
#define VM_BODY	   0x600800ull
#define JIT_START  0x7e0000000000ull
#define JIT_END	   0x7e0000100000ull
#define MAX_FRAMES 128

struct image {
	const uint8_t *bytes;
	size_t len;
	int fold;
};

static int image_read(const struct image *im, void *dst, size_t size, uint64_t addr)
{
	if (im->fold && im->len) {
		/* Every address lands somewhere: loops and aliasing on purpose. */
		for (size_t i = 0; i < size; i++)
			((uint8_t *)dst)[i] = im->bytes[(addr - MEM_BASE + i) % im->len];
		return 0;
	}
	if (addr < MEM_BASE || addr - MEM_BASE > im->len || size > im->len - (addr - MEM_BASE))
		return -1;
	memcpy(dst, im->bytes + (addr - MEM_BASE), size);
	return 0;
}

static int walk_read(void *ctx, void *dst, size_t size, uint64_t addr)
{
	return image_read(ctx, dst, size, addr);
}

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return image_read(ctx, buf, len, addr) ? -14 : 0;
}

static void fp_rule(void *ctx, uint32_t pid, uint64_t pc, struct op_unwind_rule *rule)
{
	(void)ctx;
	(void)pid;
	(void)pc;
	*rule = (struct op_unwind_rule){
	    .cmd = OP_RULE_CFA, .cfa_base = OP_CFA_RBP, .cfa_offset = 16, .fp_offset = -16};
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct php_layout *l = php_layout__find(8, 2);
	struct user_unwind_ops ops = {walk_read, fp_rule, NULL, NULL};
	struct op_interp_proc ranges = {0};
	struct op_frame frames[MAX_FRAMES];
	struct user_unwind_result r;
	struct remote_memory mem;
	struct op_php_proc proc = {0};
	static struct php_unwind pu;
	struct image im;
	uint64_t pc;

	if (!l || size < 9)
		return 0;
	im = (struct image){data + 9, size - 9, data[0] & 1};
	memcpy(&pc, data + 1, sizeof(pc));
	if (!(pc >= VM_START && pc < VM_END) && !(pc >= JIT_START && pc < JIT_END))
		pc = VM_START + (pc % (VM_END - VM_START));
	ops.read_ctx = &im;
	proc.current_ex = MEM_BASE;
	proc.vm_body_pc = VM_BODY;
	proc.off = l->bpf;
	ranges.ranges[0] = (struct op_interp_range){VM_START, VM_END, OP_INTERP_PHP, 0};
	ranges.ranges[1] =
	    (struct op_interp_range){JIT_START, JIT_END, OP_INTERP_PHP, OP_INTERP_RANGE_F_UNWINDS};
	memset(&pu, 0, sizeof(pu));
	pu.proc = &proc;
	r = user_unwind__walk(
	    &ops,
	    &(struct user_unwind_interp){&ranges, {[OP_INTERP_PHP] = php_unwind__runtime(&pu)}}, 1,
	    pc, MEM_BASE + 0x100, MEM_BASE + 0x100, frames, MAX_FRAMES);
	if (r.n_frames > MAX_FRAMES)
		abort();
	mem = (struct remote_memory){mem_read, &im};
	for (uint32_t i = 0; i < r.n_frames; i++) {
		struct php_func *f = NULL;

		if (frames[i].kind == OP_FRAME_ERROR && i + 1 != r.n_frames)
			abort(); /* only the last frame may be an error frame */
		if (frames[i].kind != OP_FRAME_PHP ||
		    php_func__read(&mem, l, frames[i].addr, frames[i].data, &f))
			continue;
		if (strlen(f->name) > 2 * PHP_NAME_MAX_CHARS + 2 ||
		    strlen(f->filename) > PHP_FILE_MAX_CHARS)
			abort();
		php_func__free(f);
	}
	return 0;
}
