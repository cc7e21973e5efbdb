// SPDX-License-Identifier: Apache-2.0
/*
 * The Perl frame walker (bpf/include/omniprof/interp/perl_walk.h through
 * src/interp/perl/perl_unwind.c, the code the BPF sampler runs) and the
 * naming of its frames (src/interp/perl/perl_sub.c) over hostile memory:
 * the input is the interpreter's memory, an image at IMAGE whose first 8
 * bytes are the thread's interpreter pointer (PL_current_context) and the
 * next 8 PL_curinterp; the layout is the real 5.36 one (user space's, not
 * the target's). The machine stack holds three runops frames. Whatever the
 * image holds, the walk ends within its frame budget with at most one
 * error frame, last, and every Perl frame it gives is named or refused
 * cleanly.
 */
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interp/perl/perl_layout.h"
#include "interp/perl/perl_sub.h"
#include "interp/perl/perl_unwind.h"
#include "proc/remote_memory.h"
#include "unwind/user_unwind.h"

#define IMAGE	    0x7f0000100000ull
#define STACK	    0x7ff000000000ull
#define RUNOPS	    0x600000ull
#define RUNOPS_END  0x600100ull
#define XSUB_RA	    0x610010ull
#define MAIN_RA	    0x400100ull
#define MAX_FRAMES  96
#define STACK_BYTES 0x200

struct input {
	const uint8_t *image;
	size_t len;
	uint8_t stack[STACK_BYTES];
};

static int read_mem(const struct input *in, void *dst, size_t size, uint64_t addr)
{
	if (addr >= STACK && addr - STACK <= STACK_BYTES && size <= STACK_BYTES - (addr - STACK)) {
		memcpy(dst, in->stack + (addr - STACK), size);
		return 0;
	}
	if (addr < IMAGE || addr - IMAGE > in->len || size > in->len - (addr - IMAGE))
		return -14;
	memcpy(dst, in->image + (addr - IMAGE), size);
	return 0;
}

static int read_walk(void *ctx, void *dst, size_t size, uint64_t addr)
{
	return read_mem(ctx, dst, size, addr);
}

static int read_remote(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return read_mem(ctx, buf, len, addr);
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
	const uint64_t ras[] = {RUNOPS + 0x10, XSUB_RA, RUNOPS + 0x10, RUNOPS + 0x20, MAIN_RA};
	/* Odd sizes of 2 mod 4: 5.30 unthreaded (globals, the hash aux after the
	 * buckets, the COP's file in a GV); else 5.36 threaded, PL_thr_key too. */
	bool old = size & 2;
	const struct perl_layout *l = perl_layout__find(old ? 30 : 36, !old);
	struct op_interp_proc ranges = {0};
	struct op_frame frames[MAX_FRAMES];
	struct op_perl_proc proc = {0};
	struct user_unwind_result r;
	struct perl_unwind pu;
	struct input in;
	struct user_unwind_ops ops = {read_walk, fp_rule, &in, NULL};
	struct remote_memory mem = {read_remote, &in};

	if (!l)
		abort();
	in.image = data;
	in.len = size;
	memset(in.stack, 0, sizeof(in.stack));
	for (size_t i = 0; i < sizeof(ras) / sizeof(ras[0]); i++) {
		uint64_t fp = 0x40 * i,
			 next = i + 1 < sizeof(ras) / sizeof(ras[0]) ? STACK + 0x40 * (i + 1) : 0;

		memcpy(in.stack + fp, &next, 8);
		memcpy(in.stack + fp + 8, &ras[i], 8);
	}
	ranges.ranges[0] = (struct op_interp_range){RUNOPS, RUNOPS_END, OP_INTERP_PERL, 0};
	proc.tls_context = -8;
	proc.curinterp = IMAGE + 8;
	proc.off = l->bpf;
	proc.je_mustcatch = l->je_mustcatch;
	proc.version = (uint16_t)(5 << 8 | l->minor);
	proc.threaded = !old;
	if (old) {
		proc.curcop = IMAGE + 16;
		proc.curstackinfo = IMAGE + 24;
		proc.op = IMAGE + 32;
	} else {
		proc.thr_key = IMAGE + 16;
		proc.tsd_specific = 0x10;
		proc.tsd_entry = 16;
		proc.tsd_data = 8;
	}
	memset(&pu, 0, sizeof(pu));
	pu.proc = &proc;
	pu.thread_ptr = IMAGE + 8; /* the interpreter pointer: the image's first 8 bytes */
	pu.main_thread = size & 1;
	r = user_unwind__walk(
	    &ops,
	    &(struct user_unwind_interp){&ranges, {[OP_INTERP_PERL] = perl_unwind__runtime(&pu)}},
	    1, RUNOPS + 8, STACK, STACK, frames, MAX_FRAMES);
	if (r.n_frames > MAX_FRAMES || r.n_frames == 0)
		abort();
	for (uint32_t i = 0; i < r.n_frames; i++) {
		const struct op_frame *f = &frames[i];
		struct perl_sub *s = NULL;

		if (f->kind == OP_FRAME_ERROR && i + 1 != r.n_frames)
			abort(); /* only the last frame may be an error frame */
		if (f->kind != OP_FRAME_PERL)
			continue;
		if (!perl_sub__read(&mem, l, f->addr, f->data, &s)) {
			if (!s || !s->name || !s->file || strlen(s->name) > 2 * PERL_NAME_MAX + 2 ||
			    strlen(s->file) >= PERL_FILE_MAX)
				abort();
			perl_sub__free(s);
		} else if (s) {
			abort(); /* a failed read returns nothing */
		}
	}
	return 0;
}
