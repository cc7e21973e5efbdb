// SPDX-License-Identifier: Apache-2.0
/*
 * The V8 frame reader over hostile memory: the walker
 * (bpf/include/omniprof/interp/v8_walk.h through user_unwind__walk, the code
 * the BPF sampler runs) over a stack and heap image, then the host's naming
 * of every V8 frame it gives (src/interp/v8/v8_code.c, v8_heap.c: type
 * checks, strings, ScopeInfos, scripts' line ends, source position tables,
 * the code header search, baseline bytecode walks) over the same image,
 * and the image read as a Maglev safepoint table (V8 12's and 13's
 * headers) and as a deoptimization translation (V8 13.6's opcodes).
 * Input: pc (8 bytes), fp offset (4: its top bit names with node 16's
 * layout, else node 20's), then the image. Whatever the image
 * holds, the walk ends within its frame budget, only the last frame may be
 * an error frame, and naming returns an object or an error.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interp/v8/v8.h"
#include "interp/v8/v8_binary.h"
#include "interp/v8/v8_code.h"
#include "interp/v8/v8_heap.h"
#include "interp/v8/v8_unwind.h"
#include "proc/remote_memory.h"
#include "unwind/user_unwind.h"

#define BASE	       0x7f0000000000ull
#define BUILTINS_START 0x1000000ull
#define BUILTINS_END   0x1100000ull
#define JIT_START      0x2000000ull
#define JIT_END	       0x2100000ull
#define MAX_FRAMES     64

struct image {
	const uint8_t *bytes;
	size_t len;
};

static int image_read(void *ctx, void *dst, size_t size, uint64_t addr)
{
	const struct image *im = ctx;

	if (addr < BASE || addr - BASE > im->len || size > im->len - (addr - BASE))
		return -14;
	memcpy(dst, im->bytes + (addr - BASE), size);
	return 0;
}

static int image_read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return image_read(ctx, buf, len, addr);
}

static void fp_rule(void *ctx, uint32_t pid, uint64_t pc, struct op_unwind_rule *rule)
{
	(void)ctx;
	(void)pid;
	(void)pc;
	*rule = (struct op_unwind_rule){
	    .cmd = OP_RULE_CFA, .cfa_base = OP_CFA_RBP, .cfa_offset = 16, .fp_offset = -16};
}

/* node 20's layout, as v8_binary__inspect() reads it from the binary. */
static void node20(struct v8_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->fp_marker = -8;
	l->fp_function = -16;
	l->fp_bytecode_array = -32;
	l->fp_bytecode_offset = -40;
	l->smi_shift = 32;
	l->map_instance_type = 12;
	l->jsfunction_shared = 24;
	l->jsfunction_code = 48;
	l->sfi_name_or_scope_info = 16;
	l->sfi_function_data = 8;
	l->sfi_script = 32;
	l->script_name = 16;
	l->script_source = 8;
	l->string_length = 12;
	l->seq_string_data = 16;
	l->cons_first = 16;
	l->cons_second = 24;
	l->sliced_parent = 16;
	l->sliced_offset = 24;
	l->thin_actual = 16;
	l->fixed_array_length = 8;
	l->fixed_array_data = 16;
	l->bytecode_array_length = 8;
	l->bytecode_array_positions = 32;
	l->bytecode_array_data = 54;
	l->code_bytecode = 16;
	l->code_positions = 24;
	l->code_stream = 32;
	l->code_entry = 40;
	l->code_flags = 48;
	l->code_size = 56;
	l->code_kind_mask = 15;
	l->code_kind_baseline = 11;
	l->code_kind_interpreted = 10;
	l->scopeinfo_ncontextlocals = 2;
	l->scopeinfo_first_vars = 3;
	l->type_first_nonstring = 128;
	l->type_jsfunction_first = 2066;
	l->type_jsfunction_last = 2096;
	l->type_sfi = 262;
	l->type_script = 167;
	l->type_scope_info = 261;
	l->type_bytecode_array = 191;
	l->type_code = 245;
	l->type_byte_array = 190;
	l->type_trusted_byte_array = 190;
	l->has_function_data = true;
	l->has_code_objects = true;
	l->has_lines = true;
	l->type_fixed_array = 175;
	l->type_instruction_stream = 252;
	l->deopt_sfi_index = 6;
	l->deopt_inlining_index = 7;
	l->str_repr_mask = 7;
	l->str_encoding_mask = 8;
	l->str_one_byte_tag = 8;
	l->str_cons_tag = 1;
	l->str_sliced_tag = 3;
	l->str_thin_tag = 5;
	l->str_external_tag = 2;
	for (int k = 0; k < 3; k++)
		for (int b = 0; b < 200; b++)
			l->bytecode_sizes[k][b] = (uint8_t)(1 + (b % 4) * (1 << k));
	l->n_bytecodes = 200;
}

/* V8 9's (node 16) differences, as derive_v9() gives them: Code objects
 * with their instructions inline, BytecodeArray's bytecodes at 54, baseline
 * code's bytecode through the function's BaselineData. */
static void node16(struct v8_layout *l)
{
	l->code_inline = 96;
	l->code_bytecode = 16;
	l->code_positions = 24;
	l->code_size = 40;
	l->code_flags = 48;
	l->type_instruction_stream = l->type_code;
	l->type_baseline_data = 94;
	l->bytecode_array_data = 54;
	l->bytecode_array_positions = 32;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct op_interp_proc ranges = {
	    .ranges = {{BUILTINS_START, BUILTINS_END, OP_INTERP_V8, OP_INTERP_RANGE_F_UNWINDS},
		       {JIT_START, JIT_END, OP_INTERP_V8, OP_INTERP_RANGE_F_UNWINDS}}};
	const struct op_v8_proc proc = {
	    .builtins_start = {BUILTINS_START},
	    .builtins_end = {BUILTINS_END},
	    .fp_marker = -8,
	    .fp_function = -16,
	    .fp_bytecode_array = -32,
	    .fp_bytecode_offset = -40,
	    .jsfunction_shared = 24,
	    .map_instance_type = 12,
	    .type_bytecode_array = 191,
	    .smi_shift = 32,
	};
	struct op_frame frames[MAX_FRAMES];
	struct user_unwind_ops ops = {image_read, fp_rule, NULL, NULL};
	struct user_unwind_result r;
	struct v8_unwind vu = {0};
	struct image im;
	struct remote_memory mem = {image_read_mem, &im};
	struct v8_layout l;
	struct v8_stats stats = {0};
	struct hashmap scripts;
	uint64_t pc, stream_map = 0;
	uint32_t fp_off;

	if (size < 12)
		return 0;
	memcpy(&pc, data, 8);
	memcpy(&fp_off, data + 8, 4);
	im.bytes = data + 12;
	im.len = size - 12;
	ops.read_ctx = &im;
	vu.proc = &proc;
	vu.read = image_read;
	vu.read_ctx = &im;
	pc = (pc & 1) ? JIT_START + ((pc >> 1) % (JIT_END - JIT_START))
		      : BUILTINS_START + ((pc >> 1) % (BUILTINS_END - BUILTINS_START));
	r = user_unwind__walk(
	    &ops, &(struct user_unwind_interp){&ranges, {[OP_INTERP_V8] = v8_unwind__runtime(&vu)}},
	    1, pc, BASE, BASE + fp_off % (im.len + 1), frames, MAX_FRAMES);
	if (r.n_frames > MAX_FRAMES)
		abort();
	for (uint32_t i = 0; i + 1 < r.n_frames; i++)
		if (frames[i].kind == OP_FRAME_ERROR)
			abort(); /* only the last frame may be an error frame */

	node20(&l);
	if (fp_off & 0x80000000u) /* the fp offset's top bit: node 16's layout */
		node16(&l);
	v8_scripts__init(&scripts);
	for (uint32_t i = 0; i < r.n_frames; i++) {
		struct v8_code_ctx cc = {&mem, &l, &scripts, 1, &stats, &stream_map};
		struct v8_code *code = NULL;
		const char *name, *file;
		int64_t line;
		int err;

		if (frames[i].kind != OP_FRAME_V8)
			continue;
		if (OP_V8_AUX_KIND(frames[i].aux) == OP_V8_FRAME_INTERPRETED)
			err = v8_code__read_interpreted(&cc, frames[i].addr, frames[i].data, &code);
		else if (OP_V8_AUX_KIND(frames[i].aux) == OP_V8_FRAME_JIT)
			err = v8_code__read_jit(&cc, frames[i].addr, frames[i].data, &code);
		else
			continue;
		if (err) {
			if (code)
				abort();
			continue;
		}
		v8_code__describe(code, frames[i].aux, &name, &file, &line);
		if (!name || !file || line < 0 || strlen(name) >= 4 * V8_STR_MAX)
			abort();
		v8_code__free(code);
	}
	v8_scripts__clear(&scripts, 0, true);

	/* The image as a Maglev safepoint table: a deopt index within the
	 * widest configuration's 4 bytes, or none. */
	for (unsigned cw = 0; cw < 2; cw++) {
		int64_t dx = v8_heap__maglev_deopt_index(im.bytes, im.len, cw, (uint32_t)(pc >> 8),
							 (uint32_t)pc & 0xffff);

		if (dx < -1 || dx >= (int64_t)UINT32_MAX ||
		    (im.len >= V8_MAGLEV_SAFEPOINT_HEADER &&
		     v8_heap__maglev_safepoints_size(im.bytes, cw) > V8_SAFEPOINT_BYTES_MAX))
			abort();
	}
	{
		struct v8_deopt_frame f[V8_DEOPT_FRAMES_MAX];
		size_t n = 99;

		if (!v8_heap__translation_frames(im.bytes, im.len, fp_off % (im.len + 1),
						 &v8_translation_v13, f, V8_DEOPT_FRAMES_MAX, &n) &&
		    (!n || n > V8_DEOPT_FRAMES_MAX || f[0].bytecode_offset < 0 || f[0].literal < 0))
			abort();
	}
	return 0;
}
