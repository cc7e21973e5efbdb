// SPDX-License-Identifier: Apache-2.0
/*
 * The Ruby frame reader over hostile memory: the walker of
 * omniprof/interp/ruby_walk.h (through user_unwind__walk, as stack copies
 * and the sampler run it) follows the TLS, execution context and control
 * frames the input's bytes hold, then every Ruby frame it wrote is named
 * with ruby_iseq.c (labels, paths, line tables, classes, IDs) from the same
 * bytes. Whatever they hold, the walk ends within its frame budget with at
 * most one error frame, last, and naming returns or fails cleanly.
 * Input: 16 bytes of offsets into the image (the tls_index, the thread
 * pointer, the first frame pointer, global_symbols; ruby_current_vm_ptr is 8
 * bytes past it), then the image. Each frame is named with 3.1's and 3.2's
 * layouts (3.2 reads class names through the VM's object shapes).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interp/ruby/ruby_iseq.h"
#include "interp/ruby/ruby_layout.h"
#include "interp/ruby/ruby_unwind.h"
#include "unwind/user_unwind.h"

#define MEM_BASE      0x7f0000000000ull
#define VM_EXEC_START 0x600000ull
#define VM_EXEC_END   0x601000ull
#define MAX_FRAMES    64

struct image {
	const uint8_t *bytes;
	size_t len;
};

static int read_image(void *ctx, void *dst, size_t size, uint64_t addr)
{
	const struct image *im = ctx;

	if (addr < MEM_BASE || addr - MEM_BASE > im->len || size > im->len - (addr - MEM_BASE))
		return -14;
	memcpy(dst, im->bytes + (addr - MEM_BASE), size);
	return 0;
}

static int read_remote(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return read_image(ctx, buf, len, addr);
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
	const struct ruby_layout *l = ruby_layout__find(3, 1), *l32 = ruby_layout__find(3, 2);
	struct ruby_roots roots;
	struct op_frame frames[MAX_FRAMES];
	struct user_unwind_ops ops = {read_image, fp_rule, NULL, NULL};
	struct op_interp_proc ranges = {0};
	struct op_rb_proc proc = {0};
	struct ruby_unwind ru = {0};
	struct user_unwind_result r;
	struct remote_memory mem;
	struct image im;
	uint32_t off[4];

	if (!l || !l32 || size < sizeof(off) + 8)
		return 0;
	memcpy(off, data, sizeof(off));
	im.bytes = data + sizeof(off);
	im.len = size - sizeof(off);
	for (int i = 0; i < 4; i++)
		off[i] %= (uint32_t)im.len;
	ops.read_ctx = &im;
	proc.tls_index = MEM_BASE + off[0];
	proc.tls_mode = OP_RB_TLS_DTV;
	proc.off = l->off;
	ranges.ranges[0] = (struct op_interp_range){VM_EXEC_START, VM_EXEC_END, OP_INTERP_RUBY, 0};
	ru.proc = &proc;
	ru.thread_ptr = MEM_BASE + off[1];
	ru.read = read_image;
	ru.read_ctx = &im;
	/* The walk starts in rb_vm_exec: the set-up runs at once. */
	r = user_unwind__walk(
	    &ops,
	    &(struct user_unwind_interp){&ranges, {[OP_INTERP_RUBY] = ruby_unwind__runtime(&ru)}},
	    1, VM_EXEC_START + 0x10, MEM_BASE + off[2], MEM_BASE + off[2], frames, MAX_FRAMES);
	if (r.n_frames > MAX_FRAMES)
		abort();
	for (uint32_t i = 0; i + 1 < r.n_frames; i++)
		if (frames[i].kind == OP_FRAME_ERROR)
			abort(); /* only the last frame may be an error frame */
	mem = (struct remote_memory){read_remote, &im};
	/* ruby_current_vm_ptr: 8 bytes past global_symbols, anywhere in the image. */
	roots = (struct ruby_roots){MEM_BASE + off[3], MEM_BASE + (off[3] + 8) % im.len};
	for (uint32_t i = 0; i < r.n_frames; i++) {
		struct ruby_iseq *is = NULL;
		int err;

		if (frames[i].kind != OP_FRAME_RUBY)
			continue;
		/* Named with 3.1's layout (class ivars in a table) and 3.2's (by shape). */
		for (int k = 0; k < 2; k++) {
			const struct ruby_layout *nl = k ? l32 : l;

			if (frames[i].data & OP_RB_DATA_CFUNC)
				err =
				    ruby_iseq__read_cfunc(&mem, nl, &roots, frames[i].addr,
							  frames[i].data & ~OP_RB_DATA_CFUNC, &is);
			else
				err = ruby_iseq__read(&mem, nl, &roots, frames[i].addr,
						      frames[i].data, &is);
			if (err)
				continue;
			if (!is || !is->name || !is->path ||
			    strlen(is->name) > 4 * RUBY_STR_MAX_CHARS)
				abort();
			(void)ruby_iseq__line(is, frames[i].aux);
			(void)ruby_iseq__line(is, 0);
			ruby_iseq__free(is);
			is = NULL;
		}
	}
	return 0;
}
