/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRuby's struct layouts, per minor version: what the in-kernel walker needs
 * (struct op_rb_offsets) and what naming a frame on the host reads (iseq
 * body, location, line table, strings, arrays, method entries). Each row
 * says where its figures come from.
 */
#ifndef OMNIPROF_INTERP_RUBY_LAYOUT_H
#define OMNIPROF_INTERP_RUBY_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "omniprof/interp/ruby_abi.h"

struct ruby_layout {
	unsigned int major, minor;
	struct op_rb_offsets off;
	/* rb_iseq_constant_body */
	uint16_t body_iseq_size;    /* unsigned int */
	uint16_t body_pathobj;	    /* location.pathobj: String, or Array [path, realpath] */
	uint16_t body_label;	    /* location.label: String */
	uint16_t body_first_lineno; /* location.first_lineno: Fixnum */
	uint16_t body_insns_info;   /* insns_info.body: struct iseq_insn_info_entry[] */
	uint16_t body_positions;    /* insns_info.positions: unsigned int[] or NULL */
	uint16_t body_insns_size;   /* insns_info.size: unsigned int */
	uint16_t body_succ_table;   /* insns_info.succ_index_table (VM_INSN_INFO_TABLE_IMPL 2) */
	uint16_t body_read;	    /* bytes of the body read at once (covers the fields above) */
	uint16_t insn_info_size;    /* sizeof(struct iseq_insn_info_entry); line_no first */
	/* RString */
	uint16_t str_embed_ary;	     /* as.embed.ary */
	uint16_t str_heap_len;	     /* as.heap.len */
	uint16_t str_heap_ptr;	     /* as.heap.ptr */
	uint16_t str_embed_len;	     /* an embedded String's length field (3.2+); 0: in the flags */
	uint64_t str_noembed;	     /* RSTRING_NOEMBED flag */
	uint64_t str_embed_len_mask; /* RSTRING_EMBED_LEN_MASK (in flags) */
	unsigned int str_embed_len_shift;
	/* RArray */
	uint16_t ary_embed_ary;	     /* as.ary */
	uint16_t ary_heap_len;	     /* as.heap.len */
	uint16_t ary_heap_ptr;	     /* as.heap.ptr */
	uint64_t ary_embed_flag;     /* RARRAY_EMBED_FLAG */
	uint64_t ary_embed_len_mask; /* RARRAY_EMBED_LEN_MASK */
	unsigned int ary_embed_len_shift;
	/* rb_method_definition_t */
	uint16_t def_original_id; /* original_id (ID) */
	/* rb_callable_method_entry_t */
	uint16_t me_owner; /* owner: the class or module that defines the method */
	/*
	 * Classes: RClass -> ptr (rb_classext_t; from 3.2 inline at class_ext)
	 * -> iv_tbl (st_table of ID -> VALUE; 0: none, 3.2's shapes) or, from
	 * 3.3, the classpath and attached_object fields.
	 */
	uint16_t class_ext;
	bool class_ext_inline;
	uint16_t ext_iv_tbl;
	uint16_t ext_classpath; /* 0: the __classpath__ instance variable */
	uint16_t ext_attached;	/* 0: the __attached__ instance variable */
	/*
	 * 3.2's object shapes (vm_shape_list 0: none): a class's instance
	 * variables are rb_classext_t.iv_ptr[i], i found by walking the
	 * shape tree from the class's shape (the flags' upper bits) up to the
	 * root for the edge named after the variable. rb_vm_t -> shape_list
	 * (rb_shape_t[]) and next_shape_id (how many there are).
	 */
	uint16_t vm_shape_list;
	uint16_t vm_next_shape_id;
	uint16_t ext_iv_ptr;
	uint16_t shape_size; /* sizeof(rb_shape_t) */
	uint16_t shape_edge_name;
	uint16_t shape_next_iv_index; /* attr_index_t (u32) */
	uint16_t shape_type;	      /* u8; SHAPE_IVAR 1 */
	uint16_t shape_parent_id;     /* shape_id_t (u32); INVALID_SHAPE_ID: the root */
	unsigned int shape_id_shift;  /* flags >> shift: the shape id */
	uint16_t st_entries_start;    /* st_table -> entries_start, entries_bound, entries */
	uint16_t st_entries_bound;
	uint16_t st_entries;
	uint16_t st_entry_size; /* {hash, key, record} */
	uint64_t fl_singleton;	/* FL_SINGLETON: a singleton class */
	/* IDs: rb_symbols_t global_symbols -> ids, chunks of 512 {String, Symbol} */
	uint16_t symbols_ids;
	uint32_t id_last_op; /* tLAST_OP_ID: IDs above it hold their serial << 4 */
};

/* The layout of CRuby major.minor, NULL when this build has none. */
const struct ruby_layout *ruby_layout__find(unsigned int major, unsigned int minor);

/* Ruby's object types (flags & 0x1f) the host reads. */
#define RUBY_T_STRING	     0x05
#define RUBY_T_ARRAY	     0x07
#define RUBY_T_MASK	     0x1f
#define RUBY_T_CLASS	     0x02
#define RUBY_T_MODULE	     0x03
#define RUBY_T_IMEMO	     0x1a
#define RUBY_ISEQ_METHOD     1 /* rb_iseq_constant_body.type */
#define RUBY_ISEQ_BLOCK	     2
#define RUBY_ISEQ_RESCUE     4 /* a rescue clause's iseq: "rescue in <its parent's label>" */
#define RUBY_ISEQ_ENSURE     5 /* an ensure clause's (run on an exception): "ensure in ..." */
#define RUBY_IMEMO_MENT	     6 /* imemo_ment: (flags >> 12) & 15 of a method entry */
#define RUBY_IMEMO_CREF	     1 /* imemo_cref: ep[-2] of a class body or top-level frame */
#define RUBY_IMEMO_SVAR	     2 /* imemo_svar: a method's $~/$_ holder, wraps ep[-2] */
#define RUBY_SVAR_CREF_OR_ME 8 /* vm_svar.cref_or_me (after flags), 2.7 to 3.4 */
/* rb_method_definition_t, 2.7 to 3.4 (method.h): its type in the low 4 bits of
 * the first word, then, 8-aligned, body.iseq.iseqptr of an ISEQ method. */
#define RUBY_METHOD_TYPE_ISEQ  0
#define RUBY_METHOD_TYPE_CFUNC 1
#define RUBY_DEF_ISEQPTR       8
#define RUBY_SHAPE_IVAR	       1	   /* rb_shape_t.type of an ivar's edge (3.2) */
#define RUBY_SHAPE_INVALID     0xffffffffu /* INVALID_SHAPE_ID: the root's parent */

#endif
