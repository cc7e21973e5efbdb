// SPDX-License-Identifier: Apache-2.0
/*
 * The HotSpot frame reader over hostile JVM memory (hotspot_walk.h through
 * src/interp/hotspot/hotspot_unwind.c, the code the BPF step runs) and the
 * method reader (hotspot_method.c: symbols, constant pool, line table). The
 * input is the per-pid state (struct op_jvm_proc, its addresses folded into
 * the image), the registers (24 bytes) and the image of the JVM's memory.
 * Whatever they hold, the walk ends within its frame budget with only
 * HotSpot and native frames, an error frame last at most, and every read of
 * the method reader stays inside what it was given. The walk runs twice with
 * the cross-sample nmethod cache (BPF's jvm_pc_cache): the second takes
 * what the first remembered, under the same rules.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interp/hotspot/hotspot_method.h"
#include "interp/hotspot/hotspot_unwind.h"
#include "interp/hotspot/hotspot_vm.h"
#include "proc/remote_memory.h"
#include "unwind/user_unwind.h"

#define BASE	   0x7f0000000000ull
#define MAX_FRAMES 64

struct image {
	const uint8_t *bytes;
	size_t len;
};

static int read_image(void *ctx, void *dst, size_t size, uint64_t addr)
{
	const struct image *im = ctx;

	if (addr < BASE || addr - BASE > im->len || size > im->len - (addr - BASE))
		return -1;
	memcpy(dst, im->bytes + (addr - BASE), size);
	return 0;
}

static int read_remote(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return read_image(ctx, buf, len, addr) ? -14 : 0;
}

static void fp_rule(void *ctx, uint32_t pid, uint64_t pc, struct op_unwind_rule *rule)
{
	(void)ctx;
	(void)pid;
	(void)pc;
	*rule = (struct op_unwind_rule){
	    .cmd = OP_RULE_CFA, .cfa_base = OP_CFA_RBP, .cfa_offset = 16, .fp_offset = -16};
}

/* The cross-sample nmethod cache, emptied for each input. */
#define PC_CACHE_N 16

static struct {
	uint32_t pid;
	uint64_t pc;
	struct op_jvm_pc_entry e;
} pc_slots[PC_CACHE_N];
static unsigned int pc_used;

static const struct op_jvm_pc_entry *pc_get(void *ctx, uint32_t pid, uint64_t pc)
{
	(void)ctx;
	for (unsigned int i = 0; i < pc_used; i++)
		if (pc_slots[i].pid == pid && pc_slots[i].pc == pc)
			return &pc_slots[i].e;
	return NULL;
}

static void pc_put(void *ctx, uint32_t pid, uint64_t pc, const struct op_jvm_pc_entry *e)
{
	unsigned int i;

	(void)ctx;
	for (i = 0; i < pc_used; i++)
		if (pc_slots[i].pid == pid && pc_slots[i].pc == pc)
			break;
	if (i == pc_used) {
		if (pc_used == PC_CACHE_N)
			return;
		pc_used++;
	}
	pc_slots[i].pid = pid;
	pc_slots[i].pc = pc;
	pc_slots[i].e = *e;
}

static const struct hotspot_pc_cache pc_cache = {pc_get, pc_put, NULL};

/* An address inside the image most of the time. */
static uint64_t fold(uint64_t v, size_t len)
{
	return v & 1 ? v : BASE + (v % (len + 1));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct op_frame frames[MAX_FRAMES];
	struct user_unwind_ops ops = {read_image, fp_rule, NULL, NULL};
	struct op_interp_proc ranges = {0};
	struct hotspot_layout layout = {0};
	struct hotspot_method *m = NULL;
	struct user_unwind_result r;
	struct remote_memory mem;
	struct hotspot_unwind hu;
	struct op_jvm_proc proc;
	struct image im;
	uint64_t regs[3];

	if (size < sizeof(proc) + sizeof(regs))
		return 0;
	memcpy(&proc, data, sizeof(proc));
	memcpy(regs, data + sizeof(proc), sizeof(regs));
	im.bytes = data + sizeof(proc) + sizeof(regs);
	im.len = size - sizeof(proc) - sizeof(regs);
	for (int h = 0; h < OP_JVM_MAX_HEAPS; h++) {
		proc.heaps[h].low = fold(proc.heaps[h].low, im.len);
		proc.heaps[h].high = proc.heaps[h].low + (proc.heaps[h].high & 0xffff);
		proc.heaps[h].segmap = fold(proc.heaps[h].segmap, im.len);
	}
	proc.interp_start = fold(proc.interp_start, im.len);
	proc.interp_end = proc.interp_start + (proc.interp_end & 0xfff);
	for (int i = 0; i < 3; i++)
		regs[i] = fold(regs[i], im.len);
	ranges.ranges[0] = (struct op_interp_range){BASE, BASE + im.len + 1, OP_INTERP_HOTSPOT,
						    OP_INTERP_RANGE_F_UNWINDS};
	ops.read_ctx = &im;
	pc_used = 0;
	for (int pass = 0; pass < 2; pass++) {
		memset(&hu, 0, sizeof(hu));
		hu.proc = &proc;
		hu.read = read_image;
		hu.read_ctx = &im;
		hu.pc_cache = &pc_cache;
		r = user_unwind__walk(
		    &ops,
		    &(struct user_unwind_interp){
			&ranges, {[OP_INTERP_HOTSPOT] = hotspot_unwind__runtime(&hu)}},
		    1, regs[0], regs[1], regs[2], frames, MAX_FRAMES);
		if (r.n_frames > MAX_FRAMES || (r.error && !(r.flags & OP_TRACE_F_USER_TRUNCATED)))
			abort();
		for (uint32_t i = 0; i + 1 < r.n_frames; i++)
			if (frames[i].kind != OP_FRAME_NATIVE && frames[i].kind != OP_FRAME_HOTSPOT)
				abort(); /* only the last frame may be an error frame */
	}

	/* The method reader, with offsets from the same bytes. */
	layout.method_const = proc.method_const;
	layout.cm_constants = proc.blob_name;
	layout.cm_name_index = proc.blob_frame_complete;
	layout.cm_flags = proc.blob_frame_size;
	layout.cm_code_size = proc.blob_code_begin;
	layout.cp_holder = proc.blob_code_end;
	layout.cp_source_file = proc.nmethod_method;
	layout.klass_name = proc.heap_block_size & 0xff;
	layout.sym_length = proc.nm_pcs_offset & 0xff;
	layout.sym_body = proc.nm_pcs_end_offset & 0xff;
	layout.const_method_size = proc.const_method_size;
	layout.constant_pool_size = proc.nm_metadata_offset;
	layout.cm_has_linenumbers = 1;
	mem = (struct remote_memory){read_remote, &im};
	if (!hotspot_method__read(&mem, &layout, regs[0], regs[1], &m)) {
		if (!m->name || !m->filename)
			abort();
		(void)hotspot_method__line(m, (uint32_t)regs[2]);
	}
	hotspot_method__free(m);
	m = NULL;
	if (!hotspot_method__read_stub(&mem, regs[1], &m) && !m->name)
		abort();
	hotspot_method__free(m);
	return 0;
}
