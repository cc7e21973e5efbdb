/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finding V8 in a file: node (or a libnode) that exports V8's post-mortem
 * metadata, the v8dbg_* symbols whose values (in the file's data) describe
 * V8's frames and objects: frame slot offsets, class field offsets,
 * instance types, string tags. Read once per file, no process needed.
 * What V8 does not describe (a few Code fields) comes from the layout of
 * V8 11 (Node 20), checked when an object is read (instance types, kinds).
 */
#ifndef OMNIPROF_INTERP_V8_V8_BINARY_H
#define OMNIPROF_INTERP_V8_V8_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/interp/v8_abi.h"

struct elf_file;
struct op_interp_proc;
struct process;

/* Offsets and constants of one V8 build (v8dbg_* values, or derived). */
struct v8_layout {
	/* Frames: slots from fp. */
	int16_t fp_marker, fp_function, fp_bytecode_array, fp_bytecode_offset;
	uint32_t smi_shift; /* SmiShiftSize + 1 */
	/* Heap objects: field offsets from the untagged address. */
	uint16_t map_instance_type;
	uint16_t jsfunction_shared, jsfunction_code;
	uint16_t sfi_name_or_scope_info, sfi_function_data, sfi_script;
	uint16_t script_name, script_source;
	uint16_t string_length, seq_string_data;
	uint16_t cons_first, cons_second, sliced_parent, sliced_offset, thin_actual;
	/* ExternalString's resource; its cached data pointer follows. 0: not read. */
	uint16_t external_resource;
	uint16_t fixed_array_length, fixed_array_data;
	uint16_t bytecode_array_length, bytecode_array_positions, bytecode_array_data;
	uint16_t code_bytecode, code_positions, code_entry, code_flags, code_size;
	uint32_t code_kind_mask, code_kind_baseline, code_kind_interpreted;
	uint32_t scopeinfo_ncontextlocals, scopeinfo_first_vars;
	/* ScopeType numbers of a class's and a function's scope (the low 4 bits
	 * of a ScopeInfo's flags): not described, known per V8 major. V8 13's
	 * flags are a raw 32-bit field, a Smi before (scope_flags_raw false),
	 * and its positions come before the context locals. */
	uint8_t scope_class, scope_function;
	bool scope_flags_raw;
	/* Instance types. */
	uint16_t type_first_nonstring, type_jsfunction_first, type_jsfunction_last;
	uint16_t type_sfi, type_script, type_scope_info, type_bytecode_array, type_code;
	uint16_t type_byte_array, type_fixed_array, type_instruction_stream, type_map;
	/* TrustedByteArray (V8 12, 13: source position tables); type_byte_array before. */
	uint16_t type_trusted_byte_array;
	/* DeoptimizationData (a FixedArray) indexes. */
	uint32_t deopt_sfi_index, deopt_inlining_index, deopt_literal_index;
	uint16_t code_stream; /* Code -> its InstructionStream */
	/* V8 13: the deoptimization data's function is a SharedFunctionInfoWrapper
	 * whose function is at this offset; 0: the function itself. */
	uint16_t sfi_wrapper_sfi;
	/* Code's stream, entry, flags and size are described (V8 12, 13), not
	 * derived from V8 11's layout. */
	bool code_described;
	/* V8 10: a Code holds its instructions at this offset (its header's
	 * size), no InstructionStream (type_instruction_stream is the Code's);
	 * 0: V8 11 on. */
	uint16_t code_inline;
	/* Code objects described (V8 11): JIT frames get lines and inlined
	 * functions; false: named by their function alone. */
	bool has_code_objects;
	/* SharedFunctionInfo's function data described: interpreted frames are
	 * checked against it and named; false: they stay unnamed. */
	bool has_function_data;
	/* The script's source and the bytecodes' start known (described from
	 * V8 10, derived for V8 9): false: frames are named without a line. */
	bool has_lines;
	/* V8 9: a SharedFunctionInfo with baseline code holds a BaselineData
	 * (its code at 8, its bytecode or interpreter data at 16); 0: none. */
	uint16_t type_baseline_data;
	/* Bytecode sizes by operand scale (1, 2, 4) and bytecode, from node's
	 * interpreter tables (Bytecodes::kBytecodeSizes): baseline code's pcs map
	 * to bytecodes by walking them. n_bytecodes 0: not found. */
	uint8_t bytecode_sizes[3][256];
	uint32_t n_bytecodes;
	/* String tags. */
	uint32_t str_repr_mask, str_encoding_mask, str_one_byte_tag;
	uint32_t str_seq_tag, str_cons_tag, str_sliced_tag, str_thin_tag, str_external_tag;
	/* Frame type markers (v8dbg_frametype_*), for reports. */
	int32_t frametype_entry, frametype_exit, frametype_stub;
};

struct v8_binary {
	struct v8_layout layout;
	/* The embedded builtins: ELF virtual address, size and file offset. */
	uint64_t blob_vaddr, blob_size, blob_offset;
	unsigned int symbols; /* v8dbg_* symbols read */
};

/*
 * Is ef a V8 whose metadata is complete enough to walk and name frames?
 * 0 and *out; -ENOENT when it has no v8dbg_* symbols; -ENOTSUP when it has
 * but they miss something needed (logged by the caller).
 */
int v8_binary__inspect(const struct elf_file *ef, struct v8_binary *out);

/*
 * The untagged offset of a BytecodeArray's first bytecode as x86-64 code of
 * V8's InterpreterEntryTrampoline (len bytes from its start) loads it into
 * its bytecode offset register, or -1 when no such load is found.
 */
int64_t v8_binary__bytecode_start(const uint8_t *code, size_t len);

/*
 * The process's `v8_procs` value and its code ranges: the builtins as node
 * maps them (every mapping of the file holding the blob's file offsets:
 * node's text, and the copy V8 remaps into its code range) and p's
 * anonymous executable mappings (JIT code), merged into at most max_ranges
 * ranges. anon[i]: p->maps[i] is anonymous memory. file_slot: the slot of
 * the file bin was read from. Returns how many ranges were written.
 */
size_t v8_binary__proc_info(const struct v8_binary *bin, const struct process *p, const bool *anon,
			    uint32_t file_slot, struct op_v8_proc *proc, uint64_t *starts,
			    uint64_t *ends, size_t max_ranges);

#endif
