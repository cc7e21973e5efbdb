// SPDX-License-Identifier: Apache-2.0
#include "interp/ruby/ruby_layout.h"

#include <stddef.h>

/*
 * Ruby 3.1: every figure is offsetof()/sizeof() of the structures in
 * rb_mjit_min_header-3.1.7.h (Debian's ruby-dev: the internal headers
 * libruby-3.1.so.3.1 was built with, vm_core.h and iseq.h included),
 * computed by a C file including it (st_table_entry and rb_symbols_t, not
 * in it, from st.c and symbol.h of 3.1), and checked against a live ruby 3.1.7
 * by tests/e2e/test_ruby.c (frame names and lines). The frame flags
 * (omniprof/interp/ruby_abi.h) are that header's VM_FRAME_* values.
 */
static const struct ruby_layout layouts[] = {
    {
	.major = 3,
	.minor = 1,
	.off =
	    {
		.ec_vm_stack = 0,
		.ec_vm_stack_size = 8,
		.ec_cfp = 16,
		.cfp_size = 64, /* pc, sp, iseq, self, ep, block_code, __bp__, jit_return */
		.cfp_pc = 0,
		.cfp_iseq = 16,
		.cfp_ep = 32,
		.iseq_body = 16,
		.body_encoded = 8,
		.me_def = 16,
	    },
	.body_iseq_size = 4,
	.body_pathobj = 64,
	.body_label = 80,
	.body_first_lineno = 88,
	.body_insns_info = 120,
	.body_positions = 128,
	.body_insns_size = 136,
	.body_succ_table = 144,
	.body_read = 152,
	.insn_info_size = 12, /* line_no, node_id, events */
	.str_embed_ary = 16,
	.str_heap_len = 16,
	.str_heap_ptr = 24,
	.str_noembed = 0x2000,
	.str_embed_len_mask = 0x7c000,
	.str_embed_len_shift = 14,
	.ary_embed_ary = 16,
	.ary_heap_len = 16,
	.ary_heap_ptr = 32,
	.ary_embed_flag = 0x2000,
	.ary_embed_len_mask = 0x18000,
	.ary_embed_len_shift = 15,
	.def_original_id = 32,
	.me_owner = 32,
	.class_ext = 24,
	.ext_iv_tbl = 8,
	.st_entries_start = 32,
	.st_entries_bound = 40,
	.st_entries = 48,
	.st_entry_size = 24, /* st.c's st_table_entry */
	.fl_singleton = 0x1000,
	.symbols_ids = 16, /* symbol.h: last_id, str_sym, ids */
	.id_last_op = 0xa9,
    },
};

const struct ruby_layout *ruby_layout__find(unsigned int major, unsigned int minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}
