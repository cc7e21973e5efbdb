/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a HotSpot JVM says about itself: libjvm.so exports gHotSpotVMStructs,
 * gHotSpotVMTypes, gHotSpotVMIntConstants and gHotSpotVMLongConstants
 * (pointers to tables the JVM fills in at start) and the layout of their
 * entries (gHotSpotVM*Entry*Offset, *ArrayStride). hotspot_vm__read() reads
 * them from the live process and keeps the offsets and static addresses the
 * walker and the naming need (struct hotspot_layout). Where the JVM does not
 * describe a value, a fixed value is used and its source is named there.
 */
#ifndef OMNIPROF_INTERP_HOTSPOT_VM_H
#define OMNIPROF_INTERP_HOTSPOT_VM_H

#include <stdbool.h>
#include <stdint.h>

#include "omniprof/interp/hotspot_abi.h"

struct remote_memory;

/* The exported symbols, in this order (hotspot_vm__symbol_names). */
enum hotspot_sym {
	HS_STRUCTS,
	HS_TYPES,
	HS_INTS,
	HS_LONGS,
	HS_ST_STRIDE,
	HS_ST_TYPE_NAME,
	HS_ST_FIELD_NAME,
	HS_ST_IS_STATIC,
	HS_ST_OFFSET,
	HS_ST_ADDRESS,
	HS_TY_STRIDE,
	HS_TY_NAME,
	HS_TY_SIZE,
	HS_IC_STRIDE,
	HS_IC_NAME,
	HS_IC_VALUE,
	HS_LC_STRIDE,
	HS_LC_NAME,
	HS_LC_VALUE,
	HS_SYM__COUNT,
};

extern const char *const hotspot_vm__symbol_names[HS_SYM__COUNT];

/* Offsets (bytes) and static addresses (absolute) of one JVM. */
struct hotspot_layout {
	int major; /* Abstract_VM_Version::_vm_major_version, 0: unknown */
	/* statics */
	uint64_t code_heaps;	/* &CodeCache::_heaps (JDK 9+) */
	uint64_t code_heap;	/* &CodeCache::_heap (JDK 8) */
	uint64_t code_low;	/* &CodeCache::_low_bound */
	uint64_t code_high;	/* &CodeCache::_high_bound */
	uint64_t interp_code;	/* &AbstractInterpreter::_code */
	uint64_t universe_heap; /* &Universe::_collectedHeap, 0: not described */
	/* &JvmtiExport::_can_hotswap_or_post_breakpoint (a bool), 0: not described */
	uint64_t jvmti_hotswap;
	uint64_t perf_prologue; /* &PerfMemory::_prologue (its perf data), 0: not described */
	/* fields */
	uint32_t heap_memory, heap_segmap, heap_log2;
	uint32_t vs_low_boundary, vs_high_boundary;
	uint32_t ga_len, ga_data;
	uint32_t sq_buffer, sq_limit;
	uint32_t blob_name, blob_frame_complete, blob_frame_size, blob_code_begin, blob_code_end;
	uint32_t nmethod_method;
	uint32_t nm_scopes_data, nm_pcs_offset, nm_pcs_end_offset, nm_metadata_offset;
	uint32_t nm_deopt_handler, nm_deopt_mh_handler, nm_orig_pc_offset;
	uint32_t nm_compile_id; /* nmethod::_compile_id (0: not described) */
	/* HeapBlock::_header, its HeapBlock::Header::_length and _used (hb_known: all three) */
	uint32_t hb_header, hb_length, hb_used;
	bool hb_known;
	uint32_t heap_total_collections; /* CollectedHeap::_total_collections, 0: not described */
	/* PerfDataPrologue / PerfDataEntry fields (perf: all five described) */
	uint32_t pp_entry_offset, pp_num_entries;
	uint32_t pe_entry_length, pe_name_offset, pe_data_offset;
	bool perf;
	/* JDK 8's int offsets (from the blob), copied into the fields above when it is JDK 8 */
	uint32_t blob_code_offset, blob_data_offset, nm_scopes_data_offset;
	uint32_t nm_deoptimize_offset, nm_deoptimize_mh_offset;
	bool offsets; /* the fields above are int offsets (OP_JVM_F_OFFSETS) */
	/* nmethod::_immutable_data (JDK 23+: PcDescs and scopes there, not in the blob), 0: none */
	uint32_t nm_immutable_data;
	/* CodeBlob::_mutable_data and _relocation_size (JDK 25: the metadata table at their sum) */
	uint32_t blob_mutable_data, blob_relocation_size;
	uint32_t method_const;
	uint32_t cm_constants, cm_name_index, cm_sig_index, cm_flags, cm_code_size;
	uint32_t cm_flags4;	/* ConstMethod::_flags._flags (JDK 21+: a u4), 0: not described */
	uint32_t cm_flags_size; /* bytes of cm_flags: 2 (a u2 to JDK 20), 4 (JDK 21+) */
	uint32_t cp_holder, cp_source_file; /* cp_source_file: 0 when InstanceKlass has it */
	uint32_t ik_source_file;
	uint32_t klass_name;
	uint32_t sym_length, sym_body;
	/* type sizes */
	uint32_t const_method_size, constant_pool_size, heap_block_size;
	/* constants */
	/* ConstMethod::_has_linenumber_table (to JDK 20),
	 * ConstMethodFlags::_misc_has_linenumber_table (JDK 21+) */
	uint32_t cm_has_linenumbers;
	int ifr_sender_sp, ifr_method, ifr_bcp;
	/* UNSIGNED5's excess in debug info and line tables: 1 from JDK 20, else 0
	 * (OP_JVM_F_UNSIGNED5_X1, which names the sources) */
	uint8_t unsigned5_excess;
};

/*
 * Reads the JVM's tables from mem; sym[i]: absolute address of symbol i.
 * 0, -EAGAIN (the tables are not filled in yet: ask again later), -ENOENT (an
 * entry the walker needs is missing) or -EFAULT (unreadable).
 */
int hotspot_vm__read(const struct remote_memory *mem, const uint64_t sym[HS_SYM__COUNT],
		     struct hotspot_layout *out);

/*
 * The code cache of a JVM whose layout was read: its heaps, the interpreter
 * and the offsets the BPF walker reads with, into *proc; [*low, *high) is
 * the whole reserved code cache. 0, -EAGAIN (not set up yet) or -errno.
 * proc->gc_count stays 0 until the JVM's heap is set up (or when it does
 * not describe its collection count).
 */
int hotspot_vm__code_cache(const struct remote_memory *mem, const struct hotspot_layout *l,
			   struct op_jvm_proc *proc, uint64_t *low, uint64_t *high);

/*
 * Whether the JVM can redefine classes now (JvmtiExport's
 * _can_hotswap_or_post_breakpoint: set while a JVMTI agent holds
 * can_redefine_classes, can_retransform_classes or breakpoints): 1, 0, or
 * -ENOENT (not described), -EFAULT.
 */
int hotspot_vm__can_redefine(const struct remote_memory *mem, const struct hotspot_layout *l);

/*
 * The address of the JVM's safepoint count (the jlong of its perf counter
 * `sun.rt.safepoints`, counted as each safepoint begins) into *addr, found
 * by walking its perf data's entries (each bound). 0, -EAGAIN (not set up
 * yet), -ENOENT (no such counter: -XX:-UsePerfData, or not described) or
 * -EFAULT.
 */
int hotspot_vm__safepoint_counter(const struct remote_memory *mem, const struct hotspot_layout *l,
				  uint64_t *addr);

#endif
