// SPDX-License-Identifier: Apache-2.0
#include "interp/v8/v8_binary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "elf/elf_file.h"
#include "elf/elf_pages.h"
#include "proc/process_table.h"

/* A v8dbg_* value not found: the field must be derived or the file refused. */
#define V8_ABSENT INT64_MIN
/* Instance types a file may list for the one-pass type search (V8 13: about 300). */
#define V8_MAX_TYPES 1024

/* The v8dbg_* values this build reads, by name (without the prefix). */
enum v8_sym {
	S_FP_MARKER,
	S_FP_CONTEXT,
	S_FP_FUNCTION,
	S_FP_BYTECODE_ARRAY,
	S_FP_BYTECODE_OFFSET,
	S_SMI_SHIFT,
	S_TAGGED_SIZE,
	S_HEAP_OBJECT_TAG,
	S_MAP_TYPE,
	S_FN_SHARED,
	S_FN_FEEDBACK_CELL,
	S_SFI_NAME,
	S_SFI_DATA,
	S_SFI_SCRIPT,
	S_SCRIPT_NAME,
	S_SCRIPT_SOURCE,
	S_STRING_LENGTH,
	S_CONS_FIRST,
	S_CONS_SECOND,
	S_SLICED_PARENT,
	S_SLICED_OFFSET,
	S_THIN_ACTUAL,
	S_FIXED_ARRAY_DATA,
	S_BYTECODE_DATA,
	S_CODE_BYTECODE,
	S_CODE_POSITIONS,
	S_CODE_KIND_MASK,
	S_CODE_KIND_BASELINE,
	S_CODE_KIND_INTERPRETED,
	S_SCOPE_NLOCALS,
	S_SCOPE_FIRST_VARS,
	S_FIRST_NONSTRING,
	S_T_JSFUNCTION,
	S_T_SFI,
	S_T_SCRIPT,
	S_T_SCOPE_INFO,
	S_T_BYTECODE_ARRAY,
	S_T_CODE,
	S_T_BYTE_ARRAY,
	S_T_FIXED_ARRAY,
	S_T_INSTRUCTION_STREAM,
	S_T_MAP,
	S_EXTERNAL_RESOURCE,
	S_DEOPT_SFI,
	S_DEOPT_INLINING,
	S_DEOPT_LITERALS,
	S_STR_REPR_MASK,
	S_STR_ENC_MASK,
	S_STR_ONE_BYTE,
	S_STR_SEQ,
	S_STR_CONS,
	S_STR_SLICED,
	S_STR_THIN,
	S_STR_EXTERNAL,
	S_FT_ENTRY,
	S_FT_EXIT,
	S_FT_STUB,
	/* Optional: V8 12, 13 (Node 22, 24), where the fields above are not
	 * described; the derivations below use them. */
	S_BA_WRAPPER,
	S_CODE_WRAPPER,
	S_CODE_STREAM,
	S_CODE_START,
	S_CODE_FLAGS,
	S_CODE_SIZE,
	S_T_TRUSTED_BYTE_ARRAY,
	S_DEOPT_WRAPPED_SFI,
	S_SFI_WRAPPER_SFI,
	S_CODE_HEADER,	   /* V8 10: instructions inline, after the Code's header */
	S_T_BASELINE_DATA, /* V8 9: a function's baseline code and bytecode */
	S__COUNT,
};

/* Every value has its name (a missing one would be read as a NULL name). */
static const char *const sym_names[S__COUNT] = {
    [S_FP_MARKER] = "off_fp_context_or_frame_type",
    [S_FP_CONTEXT] = "off_fp_context",
    [S_FP_FUNCTION] = "off_fp_function",
    [S_FP_BYTECODE_ARRAY] = "off_fp_bytecode_array",
    [S_FP_BYTECODE_OFFSET] = "off_fp_bytecode_offset",
    [S_SMI_SHIFT] = "SmiShiftSize",
    [S_TAGGED_SIZE] = "TaggedSize",
    [S_HEAP_OBJECT_TAG] = "HeapObjectTag",
    [S_MAP_TYPE] = "class_Map__instance_type__uint16_t",
    [S_FN_SHARED] = "class_JSFunction__shared__SharedFunctionInfo",
    [S_FN_FEEDBACK_CELL] = "class_JSFunction__raw_feedback_cell__FeedbackCell",
    [S_SFI_NAME] = "class_SharedFunctionInfo__name_or_scope_info__Object",
    [S_SFI_DATA] = "class_SharedFunctionInfo__function_data__Object",
    [S_SFI_SCRIPT] = "class_SharedFunctionInfo__script_or_debug_info__HeapObject",
    [S_SCRIPT_NAME] = "class_Script__name__Object",
    [S_SCRIPT_SOURCE] = "class_Script__source__Object",
    [S_STRING_LENGTH] = "class_String__length__int32_t",
    [S_CONS_FIRST] = "class_ConsString__first__String",
    [S_CONS_SECOND] = "class_ConsString__second__String",
    [S_SLICED_PARENT] = "class_SlicedString__parent__String",
    [S_SLICED_OFFSET] = "class_SlicedString__offset__SMI",
    [S_THIN_ACTUAL] = "class_ThinString__actual__String",
    [S_FIXED_ARRAY_DATA] = "class_FixedArray__data__uintptr_t",
    [S_BYTECODE_DATA] = "class_BytecodeArray__data__uintptr_t",
    [S_CODE_BYTECODE] = "class_Code__bytecode_or_interpreter_data__HeapObject",
    [S_CODE_POSITIONS] = "class_Code__source_position_table__ByteArray",
    [S_CODE_KIND_MASK] = "CodeKindFieldMask",
    [S_CODE_KIND_BASELINE] = "CodeKindBaseline",
    [S_CODE_KIND_INTERPRETED] = "CodeKindInterpretedFunction",
    [S_SCOPE_NLOCALS] = "scopeinfo_idx_ncontextlocals",
    [S_SCOPE_FIRST_VARS] = "scopeinfo_idx_first_vars",
    [S_FIRST_NONSTRING] = "FirstNonstringType",
    [S_T_JSFUNCTION] = "type_JSFunction__JS_FUNCTION_TYPE",
    [S_T_SFI] = "type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE",
    [S_T_SCRIPT] = "type_Script__SCRIPT_TYPE",
    [S_T_SCOPE_INFO] = "type_ScopeInfo__SCOPE_INFO_TYPE",
    [S_T_BYTECODE_ARRAY] = "type_BytecodeArray__BYTECODE_ARRAY_TYPE",
    [S_T_CODE] = "type_Code__CODE_TYPE",
    [S_T_BYTE_ARRAY] = "type_ByteArray__BYTE_ARRAY_TYPE",
    [S_T_FIXED_ARRAY] = "type_FixedArray__FIXED_ARRAY_TYPE",
    [S_T_INSTRUCTION_STREAM] = "type_InstructionStream__INSTRUCTION_STREAM_TYPE",
    [S_T_MAP] = "type_Map__MAP_TYPE",
    [S_EXTERNAL_RESOURCE] = "class_ExternalString__resource__Object",
    [S_DEOPT_SFI] = "DeoptimizationDataSharedFunctionInfoIndex",
    [S_DEOPT_INLINING] = "DeoptimizationDataInliningPositionsIndex",
    [S_DEOPT_LITERALS] = "DeoptimizationDataLiteralArrayIndex",
    [S_STR_REPR_MASK] = "StringRepresentationMask",
    [S_STR_ENC_MASK] = "StringEncodingMask",
    [S_STR_ONE_BYTE] = "OneByteStringTag",
    [S_STR_SEQ] = "SeqStringTag",
    [S_STR_CONS] = "ConsStringTag",
    [S_STR_SLICED] = "SlicedStringTag",
    [S_STR_THIN] = "ThinStringTag",
    [S_STR_EXTERNAL] = "ExternalStringTag",
    [S_FT_ENTRY] = "frametype_EntryFrame",
    [S_FT_EXIT] = "frametype_ExitFrame",
    [S_FT_STUB] = "frametype_StubFrame",
    [S_BA_WRAPPER] = "class_BytecodeArray__wrapper__Tagged_BytecodeWrapper_",
    [S_CODE_WRAPPER] = "class_Code__wrapper__Tagged_CodeWrapper_",
    [S_CODE_STREAM] = "class_Code__instruction_stream__Tagged_InstructionStream_",
    [S_CODE_START] = "class_Code__instruction_start__Address",
    [S_CODE_FLAGS] = "class_Code__flags__uint32_t",
    [S_CODE_SIZE] = "class_Code__instruction_size__int",
    [S_T_TRUSTED_BYTE_ARRAY] = "type_TrustedByteArray__TRUSTED_BYTE_ARRAY_TYPE",
    [S_DEOPT_WRAPPED_SFI] = "DeoptimizationDataWrappedSharedFunctionInfoIndex",
    [S_SFI_WRAPPER_SFI] =
	"class_SharedFunctionInfoWrapper__shared_info__Tagged_SharedFunctionInfo_",
    [S_CODE_HEADER] = "class_Code__instruction_start__uintptr_t",
    [S_T_BASELINE_DATA] = "type_BaselineData__BASELINE_DATA_TYPE",
};

/* Names later V8s (12, 13: Node 22, 24) give the same fields: "Tagged<T>" types. */
static const struct {
	enum v8_sym sym;
	const char *name;
} sym_aliases[] = {
    {S_FN_FEEDBACK_CELL, "class_JSFunction__raw_feedback_cell__Tagged_FeedbackCell_"},
    {S_SFI_NAME, "class_SharedFunctionInfo__name_or_scope_info__Tagged_Object_"},
    {S_SFI_NAME, "class_SharedFunctionInfo__name_or_scope_info__Tagged_NameOrScopeInfoT_"},
    {S_SFI_SCRIPT, "class_SharedFunctionInfo__script__Tagged_HeapObject_"},
};

/* Values only the code objects' reading needs (JIT frames' lines, inlining,
 * the bytecode behind baseline code): without them, JIT frames are named
 * by their function alone, without a line. */
static bool code_only(int i)
{
	return i == S_CODE_BYTECODE || i == S_CODE_POSITIONS || i == S_CODE_KIND_MASK ||
	       i == S_CODE_KIND_BASELINE || i == S_CODE_KIND_INTERPRETED || i == S_DEOPT_SFI ||
	       i == S_DEOPT_INLINING || i == S_DEOPT_LITERALS || i == S_T_INSTRUCTION_STREAM;
}

struct scan {
	int64_t v[S__COUNT];
	/* The smallest instance type above JS_FUNCTION_TYPE: JSFunction's subclasses
	 * (class constructors, ...) are the unlisted types in between. */
	int64_t type_after_jsfunction;
	uint64_t blob, blob_size_sym;
	uint64_t builtins_lo, builtins_hi; /* the Builtins_* symbols' span */
	uint64_t sizes, sizes_len;	   /* Bytecodes::kBytecodeSizes */
	uint64_t tramp, tramp_size;	   /* Builtins_InterpreterEntryTrampoline */
	unsigned int found;
	/*
	 * The .dynsym pass keeps every v8dbg_type_* value here, so that the type
	 * after JS_FUNCTION_TYPE is found once that one is known without a third
	 * pass over node's 75,000 dynamic symbols (issue 22). Bounded: past
	 * V8_MAX_TYPES (a file claiming that many) that pass is made as before.
	 */
	int32_t types[V8_MAX_TYPES];
	size_t n_types;
	bool collect_types, types_overflow;
};

#define BYTECODE_SIZES_SYM "_ZN2v88internal11interpreter9Bytecodes14kBytecodeSizesE"

/* Copies len bytes at ELF virtual address vaddr; bytes past the file's part
 * of a segment (.bss) read as 0. 0 or -errno. */
static int read_vaddr(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < ef->n_segments; i++) {
		const struct elf_segment *s = &ef->segments[i];
		uint64_t off = vaddr - s->vaddr;
		ssize_t n;

		if (vaddr < s->vaddr || off >= s->memsz || len > s->memsz - off)
			continue;
		memset(buf, 0, len);
		if (off >= s->filesz)
			return 0;
		if (len > s->filesz - off)
			len = s->filesz - off;
		n = pread(ef->fd, buf, len, (off_t)(s->offset + off));
		if (n < 0)
			return -errno;
		return (size_t)n == len ? 0 : -EIO;
	}
	return -ERANGE;
}

static void note_symbol(const struct elf_file *ef, struct scan *sc, const char *name,
			const GElf_Sym *sym)
{
	int32_t v32 = 0;

	if (!strcmp(name, "v8_Default_embedded_blob_code_")) {
		sc->blob = sym->st_value;
		return;
	}
	if (!strcmp(name, "v8_Default_embedded_blob_code_size_")) {
		sc->blob_size_sym = sym->st_value;
		return;
	}
	if (!strncmp(name, "Builtins_", 9) && GELF_ST_TYPE(sym->st_info) == STT_FUNC) {
		if (!strcmp(name, "Builtins_InterpreterEntryTrampoline")) {
			sc->tramp = sym->st_value;
			sc->tramp_size = sym->st_size;
		}
		if (!sc->builtins_lo || sym->st_value < sc->builtins_lo)
			sc->builtins_lo = sym->st_value;
		if (sym->st_value + sym->st_size > sc->builtins_hi)
			sc->builtins_hi = sym->st_value + sym->st_size;
		return;
	}
	if (!strcmp(name, BYTECODE_SIZES_SYM)) {
		sc->sizes = sym->st_value;
		sc->sizes_len = sym->st_size;
		return;
	}
	if (strncmp(name, "v8dbg_", 6))
		return;
	name += 6;
	/* Every value this build reads is a 4-byte int. */
	if (sym->st_size != 4 || read_vaddr(ef, sym->st_value, &v32, 4))
		return;
	sc->found++;
	if (!strncmp(name, "type_", 5)) {
		if (v32 > sc->v[S_T_JSFUNCTION] &&
		    (sc->type_after_jsfunction == V8_ABSENT || v32 < sc->type_after_jsfunction))
			sc->type_after_jsfunction =
			    v32; /* refined once JS_FUNCTION_TYPE is known */
		if (sc->collect_types) {
			if (sc->n_types < V8_MAX_TYPES)
				sc->types[sc->n_types++] = v32;
			else
				sc->types_overflow = true;
		}
	}
	for (int i = 0; i < S__COUNT; i++) {
		if (!strcmp(name, sym_names[i])) {
			sc->v[i] = v32;
			return;
		}
	}
	for (size_t i = 0; i < sizeof(sym_aliases) / sizeof(sym_aliases[0]); i++) {
		if (!strcmp(name, sym_aliases[i].name)) {
			sc->v[sym_aliases[i].sym] = v32;
			return;
		}
	}
}

static void scan_symbols(const struct elf_file *ef, Elf *elf, uint32_t sh_type, struct scan *sc,
			 bool types_pass)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != sh_type || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			/* Large tables: the pages read so far given back (issue 22). */
			elf_pages__drop_symbols_every(elf, scn, i);
			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (!name || (name[0] != 'v' && name[0] != '_' && name[0] != 'B'))
				continue;
			if (types_pass) {
				if (!strncmp(name, "v8dbg_type_", 11))
					note_symbol(ef, sc, name, &sym);
			} else {
				note_symbol(ef, sc, name, &sym);
			}
		}
	}
}

static bool fits_frame(int64_t off)
{
	return off >= -OP_V8_BLOCK_BELOW && off <= -8 && !(off % 8);
}

static bool field(int64_t v)
{
	return v >= 0 && v < 4096;
}

/* Values V8 12 and 13 (Node 22, 24) added, read when present. */
static bool optional(int i)
{
	return i >= S_BA_WRAPPER;
}

/*
 * V8 10 (Node 18): a Code holds its instructions inline after its header
 * (no InstructionStream); it describes the header's size, the instruction
 * size and the flags, not its tables nor the deoptimization indexes. The
 * tables are the two tagged fields before the code data container, which
 * precedes the instruction size (relocation info, deoptimization or
 * interpreter data, source positions, container); the indexes are V8 11's
 * (the function's is checked: it must be the frame's). The header is
 * found, as V8 11's InstructionStream is, by its map: the Code map.
 */
static void derive_v10(struct scan *sc, struct v8_layout *l)
{
	int64_t *v = sc->v;

	if (v[S_T_INSTRUCTION_STREAM] != V8_ABSENT ||
	    (v[S_CODE_POSITIONS] != V8_ABSENT && v[S_CODE_POSITIONS] != v[S_CODE_SIZE] - 16) ||
	    v[S_CODE_BYTECODE] != V8_ABSENT || !field(v[S_CODE_HEADER]) || !field(v[S_CODE_SIZE]) ||
	    v[S_CODE_SIZE] < 32 || !field(v[S_CODE_FLAGS]) || v[S_T_CODE] == V8_ABSENT ||
	    v[S_DEOPT_SFI] != V8_ABSENT || v[S_DEOPT_INLINING] != V8_ABSENT ||
	    v[S_DEOPT_LITERALS] != V8_ABSENT)
		return;
	v[S_CODE_BYTECODE] = v[S_CODE_SIZE] - 24;
	v[S_CODE_POSITIONS] = v[S_CODE_SIZE] - 16;
	v[S_T_INSTRUCTION_STREAM] = v[S_T_CODE];
	v[S_DEOPT_SFI] = 6;
	v[S_DEOPT_INLINING] = 7;
	v[S_DEOPT_LITERALS] = 2;
	l->code_inline = (uint16_t)v[S_CODE_HEADER];
}

/* Bytes of the interpreter's entry trampoline scanned for its first offset. */
#define V8_TRAMPOLINE_SCAN 1024

int64_t v8_binary__bytecode_start(const uint8_t *code, size_t len)
{
	/* x86-64 "mov $imm32, %r9d" (41 b9 imm32): r9 is V8's
	 * kInterpreterBytecodeOffsetRegister; the first such load in the
	 * trampoline is BytecodeArray::kHeaderSize - kHeapObjectTag. */
	for (size_t i = 0; i + 6 <= len; i++) {
		uint32_t imm;

		if (code[i] != 0x41 || code[i + 1] != 0xb9)
			continue;
		memcpy(&imm, code + i + 2, 4);
		return imm < 4096 ? (int64_t)imm + 1 : -1;
	}
	return -1;
}

/*
 * V8 9 (Node 16) describes neither the interpreter's two frame slots, the
 * script's source, where a BytecodeArray's bytecodes start, nor its Code's
 * flags and kinds. Its layouts are V8 9.4's, recognised by what it does
 * describe, and derived only when all of it matches:
 * - the interpreter's slots follow the standard frame's context, function
 *   and argument count (-32, -40), as V8 10 and 11 describe them (the walk
 *   proves them: a BytecodeArray, then a Smi);
 * - Script: the source is the one tagged field between the map and the name
 *   (name at 16; V8 10 describes source 8, name 16, as here);
 * - BytecodeArray: FixedArrayBase's header (the FixedArray's data offset),
 *   three tagged tables (constant pool, handler table, source positions),
 *   three int32 (frame size, parameter size, new target register) and two
 *   int8 (OSR loop nesting level, bytecode age): bytecodes at 54 (V8 10
 *   widened the last two to 16 bits: 56, which it describes), taken only
 *   when node's InterpreterEntryTrampoline loads 53 (54 less the heap
 *   object tag) as the first bytecode's offset (v8_binary__bytecode_start;
 *   Node 18's loads 55, for its described 56);
 * - Code: the instruction size, metadata size and flags are three int32
 *   after the four tagged fields (relocation info, deoptimization data,
 *   source positions at 24, described; code data container), header 96
 *   (described); the kind in the flags' low 4 bits, INTERPRETED_FUNCTION 10
 *   and BASELINE 11 (CodeKind's order, as V8 10 describes it); the rest as
 *   V8 10 (derive_v10 below).
 * Each derived field is checked where it is read (the objects' instance
 * types, a frame's function running that bytecode, deoptimization data
 * naming the frame's function), so a wrong one names nothing.
 */
static void derive_v9(const struct elf_file *ef, struct scan *sc, struct v8_layout *l)
{
	uint8_t code[V8_TRAMPOLINE_SCAN];
	size_t len = sc->tramp_size < sizeof(code) ? sc->tramp_size : sizeof(code);
	int64_t *v = sc->v;

	if (v[S_FP_BYTECODE_ARRAY] != V8_ABSENT || v[S_FP_BYTECODE_OFFSET] != V8_ABSENT ||
	    v[S_FP_CONTEXT] != -8 || v[S_FP_FUNCTION] != -16)
		return;
	v[S_FP_BYTECODE_ARRAY] = -32;
	v[S_FP_BYTECODE_OFFSET] = -40;
	/* BaselineData: V8 9 only (V8 10 keeps baseline code in the function's data). */
	if (v[S_T_BASELINE_DATA] == V8_ABSENT)
		return;
	l->type_baseline_data = (uint16_t)v[S_T_BASELINE_DATA];
	if (v[S_SCRIPT_SOURCE] == V8_ABSENT && v[S_SCRIPT_NAME] == 16)
		v[S_SCRIPT_SOURCE] = 8;
	/* Checked against node's own code: the interpreter's entry loads the
	 * first bytecode's offset (untagged) into its offset register. A build
	 * whose code says otherwise, or none found, gets no lines. */
	if (v[S_BYTECODE_DATA] == V8_ABSENT && v[S_FIXED_ARRAY_DATA] == 16 && sc->tramp && len &&
	    !read_vaddr(ef, sc->tramp, code, len) &&
	    v8_binary__bytecode_start(code, len) == 16 + 3 * 8 + 3 * 4 + 2)
		v[S_BYTECODE_DATA] = 16 + 3 * 8 + 3 * 4 + 2;
	if (v[S_CODE_FLAGS] == V8_ABSENT && v[S_CODE_KIND_MASK] == V8_ABSENT &&
	    v[S_CODE_SIZE] == 40 && v[S_CODE_POSITIONS] == 24 && v[S_CODE_HEADER] == 96) {
		v[S_CODE_FLAGS] = v[S_CODE_SIZE] + 8;
		v[S_CODE_KIND_MASK] = 15;
		v[S_CODE_KIND_INTERPRETED] = 10;
		v[S_CODE_KIND_BASELINE] = 11;
	}
}

/*
 * V8 12 and 13 (their BytecodeArray has a wrapper) describe less of their
 * SharedFunctionInfo and Code than V8 11, but enough to derive the rest;
 * every derived field is checked where it is used (instance types, objects
 * pointing back to each other), so a wrong one names nothing:
 * - the SharedFunctionInfo's (trusted) function data is its first field,
 *   after the map (V8 11 describes it there too: 8);
 * - a Code's deoptimization (or interpreter) data and source position table
 *   are the two tagged fields before its wrapper; its instruction stream,
 *   start, flags and size are described;
 * - V8 13's deoptimization data holds the function through a
 *   SharedFunctionInfoWrapper (its index and field are described).
 */
static void derive_v12(struct scan *sc, struct v8_layout *l)
{
	int64_t *v = sc->v;

	if (v[S_BA_WRAPPER] == V8_ABSENT || !field(v[S_BA_WRAPPER])) {
		derive_v10(sc, l);
		return;
	}
	if (v[S_SFI_DATA] == V8_ABSENT && field(v[S_SFI_NAME]) && v[S_SFI_NAME] >= 16)
		v[S_SFI_DATA] = 8;
	if (v[S_CODE_POSITIONS] == V8_ABSENT && v[S_CODE_BYTECODE] == V8_ABSENT &&
	    field(v[S_CODE_WRAPPER]) && v[S_CODE_WRAPPER] >= 24 && field(v[S_CODE_STREAM]) &&
	    field(v[S_CODE_START]) && field(v[S_CODE_FLAGS]) && field(v[S_CODE_SIZE])) {
		v[S_CODE_BYTECODE] = v[S_CODE_WRAPPER] - 16;
		v[S_CODE_POSITIONS] = v[S_CODE_WRAPPER] - 8;
		l->code_described = true;
	}
	if (v[S_DEOPT_SFI] == V8_ABSENT && v[S_DEOPT_WRAPPED_SFI] != V8_ABSENT &&
	    field(v[S_SFI_WRAPPER_SFI])) {
		v[S_DEOPT_SFI] = v[S_DEOPT_WRAPPED_SFI];
		l->sfi_wrapper_sfi = (uint16_t)v[S_SFI_WRAPPER_SFI];
	}
}

int v8_binary__inspect(const struct elf_file *ef, struct v8_binary *out)
{
	struct v8_layout *l = &out->layout;
	struct scan sc;
	uint32_t blob_size = 0;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	l->has_lines = true;
	for (int i = 0; i < S__COUNT; i++)
		sc.v[i] = V8_ABSENT;
	sc.type_after_jsfunction = V8_ABSENT;
	sc.blob = sc.blob_size_sym = 0;
	sc.builtins_lo = sc.builtins_hi = 0;
	sc.sizes = sc.sizes_len = 0;
	sc.tramp = sc.tramp_size = 0;
	sc.found = 0;
	sc.n_types = 0;
	sc.types_overflow = false;
	elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOENT;
	/* .dynsym first (node exports them), .symtab for what a strip left. */
	sc.collect_types = true;
	scan_symbols(ef, elf, SHT_DYNSYM, &sc, false);
	sc.collect_types = false;
	scan_symbols(ef, elf, SHT_SYMTAB, &sc, false);
	if (sc.found && sc.v[S_T_JSFUNCTION] != V8_ABSENT) {
		/* Now that JS_FUNCTION_TYPE is known, the next type .dynsym lists. */
		sc.type_after_jsfunction = V8_ABSENT;
		if (sc.types_overflow) {
			scan_symbols(ef, elf, SHT_DYNSYM, &sc, true);
		} else {
			for (size_t i = 0; i < sc.n_types; i++)
				if (sc.types[i] > sc.v[S_T_JSFUNCTION] &&
				    (sc.type_after_jsfunction == V8_ABSENT ||
				     sc.types[i] < sc.type_after_jsfunction))
					sc.type_after_jsfunction = sc.types[i];
		}
	}
	elf_end(elf);
	out->symbols = sc.found;
	if (!sc.found)
		return -ENOENT;

	/* Values in .bss (0) have no symbol value in the file: read as 0 above. */
	if (sc.v[S_FP_MARKER] == V8_ABSENT)
		sc.v[S_FP_MARKER] = sc.v[S_FP_CONTEXT];
	derive_v9(ef, &sc, l);
	for (int i = 0; i < S__COUNT; i++) {
		/* Zero-valued tags and offsets live in .bss: their symbols exist, read as 0. */
		if (sc.v[i] == V8_ABSENT && (i == S_STR_SEQ || i == S_HEAP_OBJECT_TAG ||
					     i == S_FT_ENTRY || i == S_FT_EXIT || i == S_FT_STUB))
			sc.v[i] = 0;
	}
	derive_v12(&sc, l);
	l->has_code_objects = true;
	l->has_function_data = true;
	for (int i = 0; i < S__COUNT; i++) {
		/* Neither the script's source nor where a bytecode array's
		 * bytecodes start known: frames are named without lines. */
		if (sc.v[i] == V8_ABSENT && (i == S_SCRIPT_SOURCE || i == S_BYTECODE_DATA)) {
			sc.v[i] = 0;
			l->has_lines = false;
			continue;
		}
		if (sc.v[i] != V8_ABSENT || i == S_FP_CONTEXT || optional(i))
			continue;
		if (i == S_EXTERNAL_RESOURCE) {
			sc.v[i] = 0; /* external strings not read */
			continue;
		}
		if (i == S_SFI_DATA) {
			/* V8 12, 13 keep bytecode in trusted space, not described: an
			 * interpreted frame cannot be checked, so stays unnamed. */
			sc.v[i] = 0;
			l->has_function_data = false;
			continue;
		}
		if (!code_only(i))
			return -ENOTSUP;
		l->has_code_objects = false;
	}
	if (!l->has_code_objects)
		for (int i = 0; i < S__COUNT; i++)
			if (code_only(i))
				sc.v[i] = 0;
	/* Pointer compression (4-byte tagged fields) is not read yet. */
	if (sc.v[S_TAGGED_SIZE] != 8 || sc.v[S_HEAP_OBJECT_TAG] != 1)
		return -ENOTSUP;
	if (!fits_frame(sc.v[S_FP_MARKER]) || !fits_frame(sc.v[S_FP_FUNCTION]) ||
	    !fits_frame(sc.v[S_FP_BYTECODE_ARRAY]) || !fits_frame(sc.v[S_FP_BYTECODE_OFFSET]))
		return -ENOTSUP;
	for (int i = S_MAP_TYPE; i <= S_CODE_POSITIONS; i++)
		if (!field(sc.v[i]))
			return -ENOTSUP;

	l->fp_marker = (int16_t)sc.v[S_FP_MARKER];
	l->fp_function = (int16_t)sc.v[S_FP_FUNCTION];
	l->fp_bytecode_array = (int16_t)sc.v[S_FP_BYTECODE_ARRAY];
	l->fp_bytecode_offset = (int16_t)sc.v[S_FP_BYTECODE_OFFSET];
	l->smi_shift = (uint32_t)sc.v[S_SMI_SHIFT] + 1;
	l->map_instance_type = (uint16_t)sc.v[S_MAP_TYPE];
	l->jsfunction_shared = (uint16_t)sc.v[S_FN_SHARED];
	/* V8 11 does not describe JSFunction's code: it follows the feedback cell
	 * (checked on every read: the object there must be a Code). */
	l->jsfunction_code = (uint16_t)(sc.v[S_FN_FEEDBACK_CELL] + 8);
	l->sfi_name_or_scope_info = (uint16_t)sc.v[S_SFI_NAME];
	l->sfi_function_data = (uint16_t)sc.v[S_SFI_DATA];
	l->sfi_script = (uint16_t)sc.v[S_SFI_SCRIPT];
	l->script_name = (uint16_t)sc.v[S_SCRIPT_NAME];
	l->script_source = (uint16_t)sc.v[S_SCRIPT_SOURCE];
	l->string_length = (uint16_t)sc.v[S_STRING_LENGTH];
	l->seq_string_data = (uint16_t)(sc.v[S_STRING_LENGTH] + 4);
	l->cons_first = (uint16_t)sc.v[S_CONS_FIRST];
	l->cons_second = (uint16_t)sc.v[S_CONS_SECOND];
	l->sliced_parent = (uint16_t)sc.v[S_SLICED_PARENT];
	l->sliced_offset = (uint16_t)sc.v[S_SLICED_OFFSET];
	l->thin_actual = (uint16_t)sc.v[S_THIN_ACTUAL];
	l->fixed_array_data = (uint16_t)sc.v[S_FIXED_ARRAY_DATA];
	l->fixed_array_length = (uint16_t)(sc.v[S_FIXED_ARRAY_DATA] - 8);
	l->bytecode_array_data = (uint16_t)sc.v[S_BYTECODE_DATA];
	l->bytecode_array_length = (uint16_t)(sc.v[S_FIXED_ARRAY_DATA] - 8);
	/* BytecodeArray: length, constant pool, handler table, then the source
	 * position table (V8 11: not described by v8dbg_*); V8 12, 13: length,
	 * wrapper, then the source position table. */
	l->bytecode_array_positions = sc.v[S_BA_WRAPPER] != V8_ABSENT && field(sc.v[S_BA_WRAPPER])
					  ? (uint16_t)(sc.v[S_BA_WRAPPER] + 8)
					  : (uint16_t)(l->bytecode_array_length + 24);
	l->code_bytecode = (uint16_t)sc.v[S_CODE_BYTECODE];
	l->code_positions = (uint16_t)sc.v[S_CODE_POSITIONS];
	/* V8 11's Code after the source position table: the instruction stream,
	 * the entry point, the flags (kind), and after them the instruction size. */
	l->code_entry = (uint16_t)(l->code_positions + 16);
	l->code_flags = (uint16_t)(l->code_positions + 24);
	l->code_size = (uint16_t)(l->code_positions + 32);
	l->code_stream = (uint16_t)(l->code_positions + 8);
	if (l->code_inline) {
		l->code_flags = (uint16_t)sc.v[S_CODE_FLAGS];
		l->code_size = (uint16_t)sc.v[S_CODE_SIZE];
	}
	if (l->code_described) {
		l->code_stream = (uint16_t)sc.v[S_CODE_STREAM];
		l->code_entry = (uint16_t)sc.v[S_CODE_START];
		l->code_flags = (uint16_t)sc.v[S_CODE_FLAGS];
		l->code_size = (uint16_t)sc.v[S_CODE_SIZE];
	}
	l->code_kind_mask = (uint32_t)sc.v[S_CODE_KIND_MASK];
	l->code_kind_baseline = (uint32_t)sc.v[S_CODE_KIND_BASELINE];
	l->code_kind_interpreted = (uint32_t)sc.v[S_CODE_KIND_INTERPRETED];
	l->scopeinfo_ncontextlocals = (uint32_t)sc.v[S_SCOPE_NLOCALS];
	l->scopeinfo_first_vars = (uint32_t)sc.v[S_SCOPE_FIRST_VARS];
	/*
	 * ScopeType (not in v8dbg_*): V8 9 to 12 number CLASS_SCOPE,
	 * EVAL_SCOPE, FUNCTION_SCOPE, ... from 0 (Node 22's process: a method's
	 * own scope 2, its outer 0 at "class Ring"); V8 13 (its deoptimization
	 * data's wrapped function is its sign) puts SCRIPT_SCOPE and
	 * REPL_MODE_SCOPE first: CLASS_SCOPE 2, FUNCTION_SCOPE 4, keeps the
	 * flags as a raw 32-bit field and the positions before the context
	 * locals (Node 24's process: own 4, outer 2, its start at "class"). A
	 * later V8 numbering them otherwise fails the checks made where they
	 * are used (the method's own scope a function's, "class" in the source
	 * at the class's start): bare names.
	 */
	if (sc.v[S_DEOPT_WRAPPED_SFI] != V8_ABSENT) {
		l->scope_class = 2;
		l->scope_function = 4;
		l->scope_flags_raw = true;
	} else {
		l->scope_class = 0;
		l->scope_function = 2;
	}
	l->type_first_nonstring = (uint16_t)sc.v[S_FIRST_NONSTRING];
	l->type_jsfunction_first = (uint16_t)sc.v[S_T_JSFUNCTION];
	l->type_jsfunction_last =
	    (uint16_t)(sc.type_after_jsfunction != V8_ABSENT &&
			       sc.type_after_jsfunction - sc.v[S_T_JSFUNCTION] <= 32
			   ? sc.type_after_jsfunction - 1
			   : sc.v[S_T_JSFUNCTION]);
	l->type_sfi = (uint16_t)sc.v[S_T_SFI];
	l->type_script = (uint16_t)sc.v[S_T_SCRIPT];
	l->type_scope_info = (uint16_t)sc.v[S_T_SCOPE_INFO];
	l->type_bytecode_array = (uint16_t)sc.v[S_T_BYTECODE_ARRAY];
	l->type_code = (uint16_t)sc.v[S_T_CODE];
	l->type_byte_array = (uint16_t)sc.v[S_T_BYTE_ARRAY];
	/* V8 12, 13 keep code's and bytecode's tables in trusted space. */
	l->type_trusted_byte_array = sc.v[S_T_TRUSTED_BYTE_ARRAY] != V8_ABSENT
					 ? (uint16_t)sc.v[S_T_TRUSTED_BYTE_ARRAY]
					 : l->type_byte_array;
	l->type_fixed_array = (uint16_t)sc.v[S_T_FIXED_ARRAY];
	l->type_instruction_stream = (uint16_t)sc.v[S_T_INSTRUCTION_STREAM];
	l->type_map = (uint16_t)sc.v[S_T_MAP];
	l->external_resource =
	    field(sc.v[S_EXTERNAL_RESOURCE]) ? (uint16_t)sc.v[S_EXTERNAL_RESOURCE] : 0;
	l->deopt_sfi_index = (uint32_t)sc.v[S_DEOPT_SFI];
	l->deopt_inlining_index = (uint32_t)sc.v[S_DEOPT_INLINING];
	l->deopt_literal_index = (uint32_t)sc.v[S_DEOPT_LITERALS];
	l->str_repr_mask = (uint32_t)sc.v[S_STR_REPR_MASK];
	l->str_encoding_mask = (uint32_t)sc.v[S_STR_ENC_MASK];
	l->str_one_byte_tag = (uint32_t)sc.v[S_STR_ONE_BYTE];
	l->str_seq_tag = (uint32_t)sc.v[S_STR_SEQ];
	l->str_cons_tag = (uint32_t)sc.v[S_STR_CONS];
	l->str_sliced_tag = (uint32_t)sc.v[S_STR_SLICED];
	l->str_thin_tag = (uint32_t)sc.v[S_STR_THIN];
	l->str_external_tag = (uint32_t)sc.v[S_STR_EXTERNAL];
	l->frametype_entry = (int32_t)sc.v[S_FT_ENTRY];
	l->frametype_exit = (int32_t)sc.v[S_FT_EXIT];
	l->frametype_stub = (int32_t)sc.v[S_FT_STUB];

	/* The embedded builtins, in node's text (and remapped by V8 from the file). */
	if (sc.blob && sc.blob_size_sym && !read_vaddr(ef, sc.blob_size_sym, &blob_size, 4) &&
	    blob_size) {
		for (size_t i = 0; i < ef->n_segments; i++) {
			const struct elf_segment *s = &ef->segments[i];

			if (sc.blob >= s->vaddr && sc.blob + blob_size <= s->vaddr + s->filesz) {
				out->blob_vaddr = sc.blob;
				out->blob_size = blob_size;
				out->blob_offset = s->offset + (sc.blob - s->vaddr);
			}
		}
	}
	/* V8 10 (Node 18) exports the blob as a pointer, without its size: the
	 * span of the builtins' symbols is the blob's code. */
	if (!out->blob_size && sc.builtins_lo && sc.builtins_hi > sc.builtins_lo) {
		for (size_t i = 0; i < ef->n_segments; i++) {
			const struct elf_segment *s = &ef->segments[i];

			if (sc.builtins_lo >= s->vaddr && sc.builtins_hi <= s->vaddr + s->filesz) {
				out->blob_vaddr = sc.builtins_lo;
				out->blob_size = sc.builtins_hi - sc.builtins_lo;
				out->blob_offset = s->offset + (sc.builtins_lo - s->vaddr);
			}
		}
	}
	if (!out->blob_size)
		return -ENOTSUP;
	/* uint8_t [3][count]: lines of baseline frames when present. */
	if (sc.sizes && sc.sizes_len && !(sc.sizes_len % 3) && sc.sizes_len / 3 <= 256) {
		uint8_t buf[3 * 256];
		uint32_t n = (uint32_t)(sc.sizes_len / 3);

		if (!read_vaddr(ef, sc.sizes, buf, sc.sizes_len)) {
			for (int k = 0; k < 3; k++)
				memcpy(l->bytecode_sizes[k], buf + k * n, n);
			l->n_bytecodes = n;
		}
	}
	return 0;
}

struct range {
	uint64_t start, end;
};

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Does p map executable code other than V8's JIT code in [lo, hi)? */
static bool gap_has_code(const struct process *p, const bool *anon, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < p->n_maps; i++)
		if (!anon[i] && p->maps[i].start < hi && p->maps[i].end > lo)
			return true;
	return false;
}

size_t v8_binary__proc_info(const struct v8_binary *bin, const struct process *p, const bool *anon,
			    uint32_t file_slot, struct op_v8_proc *proc, uint64_t *starts,
			    uint64_t *ends, size_t max_ranges)
{
	const struct v8_layout *l = &bin->layout;
	struct range *r = calloc(p->n_maps + 1, sizeof(*r));
	size_t n = 0, n_builtins = 0;

	memset(proc, 0, sizeof(*proc));
	proc->fp_marker = l->fp_marker;
	proc->fp_function = l->fp_function;
	proc->fp_bytecode_array = l->fp_bytecode_array;
	proc->fp_bytecode_offset = l->fp_bytecode_offset;
	proc->jsfunction_shared = l->jsfunction_shared;
	proc->map_instance_type = l->map_instance_type;
	proc->type_bytecode_array = l->type_bytecode_array;
	proc->smi_shift = (uint16_t)l->smi_shift;
	if (!r)
		return 0;
	for (size_t i = 0; i < p->n_maps; i++) {
		const struct process_mapping *m = &p->maps[i];
		uint64_t lo, hi;

		if (anon[i]) {
			r[n++] = (struct range){m->start, m->end};
			continue;
		}
		if (m->file_slot != file_slot)
			continue;
		/* The part of this mapping holding the blob's file bytes. */
		lo = bin->blob_offset > m->offset ? bin->blob_offset : m->offset;
		hi = bin->blob_offset + bin->blob_size;
		if (m->offset + (m->end - m->start) < hi)
			hi = m->offset + (m->end - m->start);
		if (lo >= hi)
			continue;
		if (n_builtins < OP_V8_MAX_BUILTINS) {
			proc->builtins_start[n_builtins] = m->start + (lo - m->offset);
			proc->builtins_end[n_builtins] = m->start + (hi - m->offset);
			n_builtins++;
		}
		r[n++] = (struct range){m->start + (lo - m->offset), m->start + (hi - m->offset)};
	}
	qsort(r, n, sizeof(*r), range_cmp);
	/* Too many: merge the two neighbours with the smallest gap that holds no
	 * other executable mapping (V8's code range is one reservation), until
	 * they fit; else the last ones are left out (their frames stay native). */
	while (n > max_ranges && n > 1) {
		size_t best = n;

		for (size_t i = 0; i + 1 < n; i++) {
			if (gap_has_code(p, anon, r[i].end, r[i + 1].start))
				continue;
			if (best == n ||
			    r[i + 1].start - r[i].end < r[best + 1].start - r[best].end)
				best = i;
		}
		if (best == n) {
			n = max_ranges;
			break;
		}
		r[best].end = r[best + 1].end > r[best].end ? r[best + 1].end : r[best].end;
		memmove(&r[best + 1], &r[best + 2], (n - best - 2) * sizeof(*r));
		n--;
	}
	for (size_t i = 0; i < n; i++) {
		starts[i] = r[i].start;
		ends[i] = r[i].end;
	}
	free(r);
	return n;
}
