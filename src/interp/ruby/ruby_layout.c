// SPDX-License-Identifier: Apache-2.0
#include "interp/ruby/ruby_layout.h"

#include <stddef.h>

/*
 * Where the figures come from. Each is offsetof()/sizeof() or a macro's
 * value, computed by a C file that includes the version's own internal
 * headers (vm_core.h, iseq.h, method.h, id.h, internal/class.h,
 * internal/string.h; internal.h for 2.7) from its release source, compiled
 * for x86-64 Linux with gcc 12 (Debian's ruby 3.1 config.h standing in for
 * the platform's; no figure below depends on a configure choice):
 *   2.7.8, 3.0.7, 3.1.7, 3.2.9, 3.3.10, 3.4.8.
 * Checked against a live process by tests/e2e/test_ruby.c: 3.1 (Debian's
 * ruby 3.1.7, whose rb_mjit_min_header-3.1.7.h gives the same figures);
 * by hand (docs/architecture.md): 2.7.8, 3.0.7, 3.2.9, 3.3.10 and 3.4.8
 * built from their release trees. Not in those headers: st_table_entry {hash, key,
 * record} (st.c, 24 bytes in every version) and rb_symbols_t {last_id, str_sym, ids, ...}
 * (symbol.h, ids at 16 in every version; chunks of ID_ENTRY_UNIT 512 IDs,
 * 2 VALUEs each). The frame flags (omniprof/interp/ruby_abi.h) and ep[-2..0]
 * are the same in all six (vm_core.h).
 *
 * What changes between versions:
 *   rb_control_frame_t: 56 bytes (2.7, 3.0: no jit_return; 3.3, 3.4:
 *     __bp__ gone), 64 (3.1, 3.2: __bp__ and jit_return).
 *   rb_iseq_constant_body: insns_info moves 8 bytes down in 3.2 (the
 *     mjit_unit pointer left the fields before it).
 *   iseq_insn_info_entry: 8 bytes {line_no, events} in 2.7 and 3.0; 12 from
 *     3.1 (node_id joins).
 *   RString: the embedded length is in the flags up to 3.1
 *     (RSTRING_EMBED_LEN_MASK), a field from 3.2 (as.embed.len at 16; 3.3
 *     moves it out of the union as len, at 16 for both kinds), the
 *     embedded bytes then at 24.
 *   RArray: RARRAY_EMBED_LEN_MASK widens to 7 bits in 3.2 (variable width
 *     allocation).
 *   Classes: rb_classext_t behind RClass.ptr up to 3.1, inline after the
 *     32-byte RClass from 3.2 (RCLASS_EXT_EMBEDDED); a class's name and a
 *     singleton's object are instance variables (__classpath__,
 *     __attached__) up to 3.2, fields of rb_classext_t from 3.3. 3.2 keeps
 *     a class's ivars by object shape (shape.h): rb_classext_t.iv_ptr[i],
 *     i from the shape tree at rb_vm_t.shape_list (ruby_current_vm_ptr,
 *     exported), the class's shape id in its flags' upper 32 bits.
 *     shape_list's offset counts vm.main_altstack, there wherever
 *     sigaltstack is (HAVE_SIGALTSTACK: every Linux); not checked live.
 *   FL_SINGLETON: FL_USER0 (0x1000) up to 3.3, FL_USER1 (0x2000) in 3.4.
 *   tLAST_OP_ID (id.h): 168 (2.7, 3.0), 169 (3.1-3.3), 170 (3.4).
 *   The current ec: the global ruby_current_execution_context_ptr in 2.7
 *     (ec_thread_ptr, th_thread_id tell whose it is), the thread-local
 *     ruby_current_ec from 3.0 (ruby_binary.c).
 */
static const struct ruby_layout layouts[] = {
    {
	.major = 2,
	.minor = 7,
	.off =
	    {
		.ec_vm_stack = 0,
		.ec_vm_stack_size = 8,
		.ec_cfp = 16,
		.cfp_size = 56, /* pc, sp, iseq, self, ep, block_code, __bp__ */
		.cfp_pc = 0,
		.cfp_iseq = 16,
		.cfp_ep = 32,
		.iseq_body = 16,
		.body_encoded = 8,
		.me_def = 16,
		.ec_thread_ptr = 56,
		.th_thread_id = 72,
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
	.insn_info_size = 8, /* line_no first */
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
	.class_ext = 24, /* RClass.ptr */
	.ext_iv_tbl = 8,
	.st_entries_start = 32,
	.st_entries_bound = 40,
	.st_entries = 48,
	.st_entry_size = 24,
	.fl_singleton = 0x1000,
	.symbols_ids = 16,
	.id_last_op = 168,
    },
    {
	.major = 3,
	.minor = 0,
	.off =
	    {
		.ec_vm_stack = 0,
		.ec_vm_stack_size = 8,
		.ec_cfp = 16,
		.cfp_size = 56, /* pc, sp, iseq, self, ep, block_code, __bp__ */
		.cfp_pc = 0,
		.cfp_iseq = 16,
		.cfp_ep = 32,
		.iseq_body = 16,
		.body_encoded = 8,
		.me_def = 16,
		.ec_thread_ptr = 56,
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
	.insn_info_size = 8, /* line_no first */
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
	.class_ext = 24, /* RClass.ptr */
	.ext_iv_tbl = 8,
	.st_entries_start = 32,
	.st_entries_bound = 40,
	.st_entries = 48,
	.st_entry_size = 24,
	.fl_singleton = 0x1000,
	.symbols_ids = 16,
	.id_last_op = 168,
    },
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
		.ec_thread_ptr = 48,
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
	.insn_info_size = 12, /* line_no first */
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
	.class_ext = 24, /* RClass.ptr */
	.ext_iv_tbl = 8,
	.st_entries_start = 32,
	.st_entries_bound = 40,
	.st_entries = 48,
	.st_entry_size = 24,
	.fl_singleton = 0x1000,
	.symbols_ids = 16,
	.id_last_op = 169,
    },
    {
	.major = 3,
	.minor = 2,
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
		.ec_thread_ptr = 48,
	    },
	.body_iseq_size = 4,
	.body_pathobj = 64,
	.body_label = 80,
	.body_first_lineno = 88,
	.body_insns_info = 112,
	.body_positions = 120,
	.body_insns_size = 128,
	.body_succ_table = 136,
	.body_read = 144,
	.insn_info_size = 12, /* line_no first */
	.str_embed_ary = 24,
	.str_heap_len = 16,
	.str_heap_ptr = 24,
	.str_embed_len = 16,
	.str_noembed = 0x2000,
	.ary_embed_ary = 16,
	.ary_heap_len = 16,
	.ary_heap_ptr = 32,
	.ary_embed_flag = 0x2000,
	.ary_embed_len_mask = 0x3f8000,
	.ary_embed_len_shift = 15,
	.def_original_id = 32,
	.me_owner = 32,
	.class_ext = 32, /* sizeof(struct RClass) */
	.class_ext_inline = true,
	.vm_shape_list = 376,
	.vm_next_shape_id = 392,
	.ext_iv_ptr = 0,
	.shape_size = 32,
	.shape_edge_name = 8,
	.shape_next_iv_index = 16,
	.shape_type = 24,
	.shape_parent_id = 28,
	.shape_id_shift = 32, /* SHAPE_FLAG_SHIFT: 64-bit VALUEs keep a 32-bit id in the flags */
	.st_entries_start = 32,
	.st_entries_bound = 40,
	.st_entries = 48,
	.st_entry_size = 24,
	.fl_singleton = 0x1000,
	.symbols_ids = 16,
	.id_last_op = 169,
    },
    {
	.major = 3,
	.minor = 3,
	.off =
	    {
		.ec_vm_stack = 0,
		.ec_vm_stack_size = 8,
		.ec_cfp = 16,
		.cfp_size = 56, /* pc, sp, iseq, self, ep, block_code, jit_return */
		.cfp_pc = 0,
		.cfp_iseq = 16,
		.cfp_ep = 32,
		.iseq_body = 16,
		.body_encoded = 8,
		.me_def = 16,
		.ec_thread_ptr = 48,
	    },
	.body_iseq_size = 4,
	.body_pathobj = 64,
	.body_label = 80,
	.body_first_lineno = 88,
	.body_insns_info = 112,
	.body_positions = 120,
	.body_insns_size = 128,
	.body_succ_table = 136,
	.body_read = 144,
	.insn_info_size = 12, /* line_no first */
	.str_embed_ary = 24,
	.str_heap_len = 16,
	.str_heap_ptr = 24,
	.str_embed_len = 16,
	.str_noembed = 0x2000,
	.ary_embed_ary = 16,
	.ary_heap_len = 16,
	.ary_heap_ptr = 32,
	.ary_embed_flag = 0x2000,
	.ary_embed_len_mask = 0x3f8000,
	.ary_embed_len_shift = 15,
	.def_original_id = 32,
	.me_owner = 32,
	.class_ext = 32, /* RClass_and_rb_classext_t.classext */
	.class_ext_inline = true,
	.ext_classpath = 120,
	.ext_attached = 96, /* as.singleton_class.attached_object */
	.st_entries_start = 32,
	.st_entries_bound = 40,
	.st_entries = 48,
	.st_entry_size = 24,
	.fl_singleton = 0x1000,
	.symbols_ids = 16,
	.id_last_op = 169,
    },
    {
	.major = 3,
	.minor = 4,
	.off =
	    {
		.ec_vm_stack = 0,
		.ec_vm_stack_size = 8,
		.ec_cfp = 16,
		.cfp_size = 56, /* pc, sp, iseq, self, ep, block_code, jit_return */
		.cfp_pc = 0,
		.cfp_iseq = 16,
		.cfp_ep = 32,
		.iseq_body = 16,
		.body_encoded = 8,
		.me_def = 16,
		.ec_thread_ptr = 48,
	    },
	.body_iseq_size = 4,
	.body_pathobj = 64,
	.body_label = 80,
	.body_first_lineno = 88,
	.body_insns_info = 112,
	.body_positions = 120,
	.body_insns_size = 128,
	.body_succ_table = 136,
	.body_read = 144,
	.insn_info_size = 12, /* line_no first */
	.str_embed_ary = 24,
	.str_heap_len = 16,
	.str_heap_ptr = 24,
	.str_embed_len = 16,
	.str_noembed = 0x2000,
	.ary_embed_ary = 16,
	.ary_heap_len = 16,
	.ary_heap_ptr = 32,
	.ary_embed_flag = 0x2000,
	.ary_embed_len_mask = 0x3f8000,
	.ary_embed_len_shift = 15,
	.def_original_id = 32,
	.me_owner = 32,
	.class_ext = 32, /* RClass_and_rb_classext_t.classext */
	.class_ext_inline = true,
	.ext_classpath = 120,
	.ext_attached = 96, /* as.singleton_class.attached_object */
	.st_entries_start = 32,
	.st_entries_bound = 40,
	.st_entries = 48,
	.st_entry_size = 24,
	.fl_singleton = 0x2000,
	.symbols_ids = 16,
	.id_last_op = 170,
    },
};

const struct ruby_layout *ruby_layout__find(unsigned int major, unsigned int minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}
