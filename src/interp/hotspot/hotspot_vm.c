// SPDX-License-Identifier: Apache-2.0
#include "interp/hotspot/hotspot_vm.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "proc/remote_memory.h"

const char *const hotspot_vm__symbol_names[HS_SYM__COUNT] = {
    [HS_STRUCTS] = "gHotSpotVMStructs",
    [HS_TYPES] = "gHotSpotVMTypes",
    [HS_INTS] = "gHotSpotVMIntConstants",
    [HS_LONGS] = "gHotSpotVMLongConstants",
    [HS_ST_STRIDE] = "gHotSpotVMStructEntryArrayStride",
    [HS_ST_TYPE_NAME] = "gHotSpotVMStructEntryTypeNameOffset",
    [HS_ST_FIELD_NAME] = "gHotSpotVMStructEntryFieldNameOffset",
    [HS_ST_IS_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
    [HS_ST_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
    [HS_ST_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
    [HS_TY_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
    [HS_TY_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
    [HS_TY_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
    [HS_IC_STRIDE] = "gHotSpotVMIntConstantEntryArrayStride",
    [HS_IC_NAME] = "gHotSpotVMIntConstantEntryNameOffset",
    [HS_IC_VALUE] = "gHotSpotVMIntConstantEntryValueOffset",
    [HS_LC_STRIDE] = "gHotSpotVMLongConstantEntryArrayStride",
    [HS_LC_NAME] = "gHotSpotVMLongConstantEntryNameOffset",
    [HS_LC_VALUE] = "gHotSpotVMLongConstantEntryValueOffset",
};

/* Entries read from one table at most: JDK 17 has about 1,000 structs, 700 types. */
#define HS_MAX_ENTRIES 20000
#define HS_NAME_MAX    80 /* longer type and field names are none we need */

enum want_kind { W_OFFSET, W_STATIC, W_SIZE, W_INT };

struct want {
	const char *type;
	const char *field; /* NULL for W_SIZE; the constant's name for W_INT */
	enum want_kind kind;
	size_t dst; /* offsetof(struct hotspot_layout, ...) */
	bool required;
};

#define L(f) offsetof(struct hotspot_layout, f)
static const struct want wants[] = {
    {"CodeCache", "_heaps", W_STATIC, L(code_heaps), false},
    {"CodeCache", "_heap", W_STATIC, L(code_heap), false},
    {"CodeCache", "_low_bound", W_STATIC, L(code_low), true},
    {"CodeCache", "_high_bound", W_STATIC, L(code_high), true},
    {"AbstractInterpreter", "_code", W_STATIC, L(interp_code), true},
    /* The collection count: what tells a name read before a class unloading apart. */
    {"Universe", "_collectedHeap", W_STATIC, L(universe_heap), false},
    {"CollectedHeap", "_total_collections", W_OFFSET, L(heap_total_collections), false},
    /* A class redefinition frees Methods without a collection, at a safepoint: whether
     * the JVM can redefine, and its safepoint count (a perf counter) if it can. */
    {"JvmtiExport", "_can_hotswap_or_post_breakpoint", W_STATIC, L(jvmti_hotswap), false},
    {"PerfMemory", "_prologue", W_STATIC, L(perf_prologue), false},
    {"PerfDataPrologue", "entry_offset", W_OFFSET, L(pp_entry_offset), false},
    {"PerfDataPrologue", "num_entries", W_OFFSET, L(pp_num_entries), false},
    {"PerfDataEntry", "entry_length", W_OFFSET, L(pe_entry_length), false},
    {"PerfDataEntry", "name_offset", W_OFFSET, L(pe_name_offset), false},
    {"PerfDataEntry", "data_offset", W_OFFSET, L(pe_data_offset), false},
    {"CodeHeap", "_memory", W_OFFSET, L(heap_memory), true},
    {"CodeHeap", "_segmap", W_OFFSET, L(heap_segmap), true},
    {"CodeHeap", "_log2_segment_size", W_OFFSET, L(heap_log2), true},
    {"VirtualSpace", "_low_boundary", W_OFFSET, L(vs_low_boundary), true},
    {"VirtualSpace", "_high_boundary", W_OFFSET, L(vs_high_boundary), true},
    {"GrowableArrayBase", "_len", W_OFFSET, L(ga_len), false},
    {"GrowableArray<int>", "_data", W_OFFSET, L(ga_data), false},
    {"StubQueue", "_stub_buffer", W_OFFSET, L(sq_buffer), true},
    {"StubQueue", "_buffer_limit", W_OFFSET, L(sq_limit), true},
    {"CodeBlob", "_name", W_OFFSET, L(blob_name), true},
    {"CodeBlob", "_frame_complete_offset", W_OFFSET, L(blob_frame_complete), true},
    {"CodeBlob", "_frame_size", W_OFFSET, L(blob_frame_size), true},
    {"CodeBlob", "_code_begin", W_OFFSET, L(blob_code_begin), false},
    {"CodeBlob", "_code_end", W_OFFSET, L(blob_code_end), false},
    /* JDK 8: int offsets from the blob where JDK 9+ has pointers. */
    {"CodeBlob", "_code_offset", W_OFFSET, L(blob_code_offset), false},
    {"CodeBlob", "_data_offset", W_OFFSET, L(blob_data_offset), false},
    {"nmethod", "_scopes_data_offset", W_OFFSET, L(nm_scopes_data_offset), false},
    {"nmethod", "_deoptimize_offset", W_OFFSET, L(nm_deoptimize_offset), false},
    {"nmethod", "_deoptimize_mh_offset", W_OFFSET, L(nm_deoptimize_mh_offset), false},
    {"CompiledMethod", "_method", W_OFFSET, L(nmethod_method), false},
    {"nmethod", "_method", W_OFFSET, L(nmethod_method), false},
    {"CompiledMethod", "_scopes_data_begin", W_OFFSET, L(nm_scopes_data), false},
    {"nmethod", "_scopes_pcs_offset", W_OFFSET, L(nm_pcs_offset), false},
    {"nmethod", "_dependencies_offset", W_OFFSET, L(nm_pcs_end_offset), false},
    {"nmethod", "_metadata_offset", W_OFFSET, L(nm_metadata_offset), false},
    {"CompiledMethod", "_deopt_handler_begin", W_OFFSET, L(nm_deopt_handler), false},
    {"nmethod", "_deopt_handler_begin", W_OFFSET, L(nm_deopt_handler), false},
    {"CompiledMethod", "_deopt_mh_handler_begin", W_OFFSET, L(nm_deopt_mh_handler), false},
    {"nmethod", "_deopt_mh_handler_begin", W_OFFSET, L(nm_deopt_mh_handler), false},
    {"nmethod", "_orig_pc_offset", W_OFFSET, L(nm_orig_pc_offset), false},
    {"nmethod", "_compile_id", W_OFFSET, L(nm_compile_id), false},
    {"nmethod", "_immutable_data", W_OFFSET, L(nm_immutable_data), false},
    /* JDK 23+: deopt handlers as int offsets, metadata in the mutable data (JDK 25). */
    {"nmethod", "_deopt_handler_offset", W_OFFSET, L(nm_deoptimize_offset), false},
    {"nmethod", "_deopt_mh_handler_offset", W_OFFSET, L(nm_deoptimize_mh_offset), false},
    {"CodeBlob", "_mutable_data", W_OFFSET, L(blob_mutable_data), false},
    {"CodeBlob", "_relocation_size", W_OFFSET, L(blob_relocation_size), false},
    {"Method", "_constMethod", W_OFFSET, L(method_const), true},
    {"ConstMethod", "_constants", W_OFFSET, L(cm_constants), true},
    {"ConstMethod", "_name_index", W_OFFSET, L(cm_name_index), true},
    {"ConstMethod", "_signature_index", W_OFFSET, L(cm_sig_index), true},
    /* JDK 21 made ConstMethod's flags a ConstMethodFlags (its u4 _flags). */
    {"ConstMethod", "_flags", W_OFFSET, L(cm_flags), false},
    {"ConstMethod", "_flags._flags", W_OFFSET, L(cm_flags4), false},
    {"ConstMethod", "_code_size", W_OFFSET, L(cm_code_size), true},
    {"ConstantPool", "_pool_holder", W_OFFSET, L(cp_holder), true},
    {"ConstantPool", "_source_file_name_index", W_OFFSET, L(cp_source_file), false},
    {"InstanceKlass", "_source_file_name_index", W_OFFSET, L(ik_source_file), false},
    {"Klass", "_name", W_OFFSET, L(klass_name), true},
    {"Symbol", "_length", W_OFFSET, L(sym_length), true},
    {"Symbol", "_body", W_OFFSET, L(sym_body), true},
    {"ConstMethod", NULL, W_SIZE, L(const_method_size), true},
    {"ConstantPool", NULL, W_SIZE, L(constant_pool_size), true},
    {"HeapBlock", NULL, W_SIZE, L(heap_block_size), true},
    /* A block's length and use: a remembered nmethod's block must still be it (hb_known). */
    {"HeapBlock", "_header", W_OFFSET, L(hb_header), false},
    {"HeapBlock::Header", "_length", W_OFFSET, L(hb_length), false},
    {"HeapBlock::Header", "_used", W_OFFSET, L(hb_used), false},
    {NULL, "ConstMethod::_has_linenumber_table", W_INT, L(cm_has_linenumbers), false},
    {NULL, "ConstMethodFlags::_misc_has_linenumber_table", W_INT, L(cm_has_linenumbers), false},
    {NULL, "frame::interpreter_frame_sender_sp_offset", W_INT, L(ifr_sender_sp), true},
};
#undef L
#define N_WANTS (sizeof(wants) / sizeof(wants[0]))

static int read_u64(const struct remote_memory *m, uint64_t addr, uint64_t *v)
{
	return remote_memory__read(m, addr, v, sizeof(*v));
}

/* The C string at addr into buf (cap bytes with its NUL): 0, -EFAULT, -ENAMETOOLONG. */
static int read_str(const struct remote_memory *m, uint64_t addr, char *buf, size_t cap)
{
	size_t got = 0;

	if (!addr)
		return -EFAULT;
	while (got < cap) {
		size_t len = 4096 - ((addr + got) & 4095);

		if (len > cap - got)
			len = cap - got;
		if (remote_memory__read(m, addr + got, buf + got, len))
			return -EFAULT;
		if (memchr(buf + got, 0, len))
			return 0;
		got += len;
	}
	buf[cap - 1] = 0;
	return -ENAMETOOLONG;
}

static void put(struct hotspot_layout *l, const struct want *w, uint64_t v, bool *found)
{
	char *dst = (char *)l + w->dst;

	*found = true;
	if (w->kind == W_STATIC) {
		memcpy(dst, &v, sizeof(v));
	} else if (w->kind == W_INT) {
		int32_t i = (int32_t)v;

		memcpy(dst, &i, sizeof(i));
	} else {
		uint32_t u = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;

		memcpy(dst, &u, sizeof(u));
	}
}

static int read_structs(const struct remote_memory *m, const uint64_t *s, struct hotspot_layout *l,
			bool *found)
{
	uint64_t base = s[HS_STRUCTS], stride = s[HS_ST_STRIDE];
	uint64_t major_addr = 0;

	if (!base || !stride || stride > 4096)
		return -EAGAIN;
	for (uint64_t i = 0; i < HS_MAX_ENTRIES; i++) {
		uint64_t e = base + i * stride, tp, fp, value;
		char type[HS_NAME_MAX], field[HS_NAME_MAX];
		int32_t is_static = 0;

		if (read_u64(m, e + s[HS_ST_TYPE_NAME], &tp))
			return -EFAULT;
		if (!tp)
			break;
		if (read_u64(m, e + s[HS_ST_FIELD_NAME], &fp) || !fp ||
		    read_str(m, tp, type, sizeof(type)) || read_str(m, fp, field, sizeof(field)))
			continue;
		if (remote_memory__read(m, e + s[HS_ST_IS_STATIC], &is_static, sizeof(is_static)) ||
		    read_u64(m, e + (is_static ? s[HS_ST_ADDRESS] : s[HS_ST_OFFSET]), &value))
			continue;
		if (is_static && !strcmp(type, "Abstract_VM_Version") &&
		    !strcmp(field, "_vm_major_version"))
			major_addr = value;
		for (size_t w = 0; w < N_WANTS; w++) {
			if (wants[w].kind != (is_static ? W_STATIC : W_OFFSET) || !wants[w].type ||
			    strcmp(wants[w].type, type) || strcmp(wants[w].field, field))
				continue;
			put(l, &wants[w], value, &found[w]);
		}
	}
	if (major_addr) {
		int32_t major = 0;

		if (!remote_memory__read(m, major_addr, &major, sizeof(major)) && major > 0 &&
		    major < 1000)
			l->major = major;
	}
	return 0;
}

static int read_types(const struct remote_memory *m, const uint64_t *s, struct hotspot_layout *l,
		      bool *found)
{
	uint64_t base = s[HS_TYPES], stride = s[HS_TY_STRIDE];

	if (!base || !stride || stride > 4096)
		return -EAGAIN;
	for (uint64_t i = 0; i < HS_MAX_ENTRIES; i++) {
		uint64_t e = base + i * stride, tp, size;
		char type[HS_NAME_MAX];

		if (read_u64(m, e + s[HS_TY_NAME], &tp))
			return -EFAULT;
		if (!tp)
			break;
		if (read_str(m, tp, type, sizeof(type)) || read_u64(m, e + s[HS_TY_SIZE], &size))
			continue;
		for (size_t w = 0; w < N_WANTS; w++)
			if (wants[w].kind == W_SIZE && !strcmp(wants[w].type, type))
				put(l, &wants[w], size, &found[w]);
	}
	return 0;
}

static int read_ints(const struct remote_memory *m, const uint64_t *s, struct hotspot_layout *l,
		     bool *found)
{
	uint64_t base = s[HS_INTS], stride = s[HS_IC_STRIDE];

	if (!base || !stride || stride > 4096)
		return -EAGAIN;
	for (uint64_t i = 0; i < HS_MAX_ENTRIES; i++) {
		uint64_t e = base + i * stride, np;
		char name[HS_NAME_MAX];
		int32_t value;

		if (read_u64(m, e + s[HS_IC_NAME], &np))
			return -EFAULT;
		if (!np)
			break;
		if (read_str(m, np, name, sizeof(name)) ||
		    remote_memory__read(m, e + s[HS_IC_VALUE], &value, sizeof(value)))
			continue;
		for (size_t w = 0; w < N_WANTS; w++)
			if (wants[w].kind == W_INT && !strcmp(wants[w].field, name))
				put(l, &wants[w], (uint64_t)(uint32_t)value, &found[w]);
	}
	return 0;
}

int hotspot_vm__read(const struct remote_memory *mem, const uint64_t sym[HS_SYM__COUNT],
		     struct hotspot_layout *out)
{
	uint64_t s[HS_SYM__COUNT];
	bool found[N_WANTS] = {0};
	struct hotspot_layout l;
	int err;

	/* Every symbol holds a pointer or a number the JVM set at start. */
	for (int i = 0; i < HS_SYM__COUNT; i++)
		if (!sym[i] || read_u64(mem, sym[i], &s[i]))
			return -EFAULT;
	for (int i = HS_ST_TYPE_NAME; i < HS_SYM__COUNT; i++)
		if (s[i] > 4096)
			return -EINVAL;
	memset(&l, 0, sizeof(l));
	err = read_structs(mem, s, &l, found);
	if (!err)
		err = read_types(mem, s, &l, found);
	if (!err)
		err = read_ints(mem, s, &l, found);
	if (err)
		return err;
	for (size_t w = 0; w < N_WANTS; w++)
		if (wants[w].required && !found[w])
			return -ENOENT;
	if (!l.code_heaps && !l.code_heap)
		return -ENOENT;
	/* An offset of 0 is a real one (PerfDataEntry starts with entry_length). */
	l.perf = l.perf_prologue != 0;
	for (size_t w = 0; w < N_WANTS; w++)
		if (wants[w].type && !strncmp(wants[w].type, "PerfData", 8) && !found[w])
			l.perf = false;
	/* Offsets of 0 are real here too (the header starts the block, its length the header). */
	l.hb_known = true;
	for (size_t w = 0; w < N_WANTS; w++)
		if (wants[w].type && !strncmp(wants[w].type, "HeapBlock", 9) && wants[w].field &&
		    !found[w])
			l.hb_known = false;
	if (!l.blob_code_begin && !l.blob_code_end && l.blob_code_offset && l.blob_data_offset) {
		/* JDK 8: the code, scopes and deopt handlers as offsets from the blob. */
		l.offsets = true;
		l.blob_code_begin = l.blob_code_offset;
		l.blob_code_end = l.blob_data_offset;
		l.nm_scopes_data = l.nm_scopes_data_offset;
		l.nm_deopt_handler = l.nm_deoptimize_offset;
		l.nm_deopt_mh_handler = l.nm_deoptimize_mh_offset;
	}
	if (!l.nmethod_method || !l.blob_code_begin)
		return -ENOENT;
	if (!l.blob_code_end)
		return -ENOENT;
	/* GrowableArray<T>: its length (GrowableArrayBase) then its data pointer; older
	 * JDKs do not describe them (JDK 9-15 GenericGrowableArray: the same layout). */
	if (!l.ga_data) {
		l.ga_len = 0;
		l.ga_data = 8;
	}
	if (!l.cp_source_file && !l.ik_source_file)
		return -ENOENT;
	/* ConstMethod's flags: a u2 to JDK 20, ConstMethodFlags' u4 from JDK 21. */
	l.cm_flags_size = 2;
	if (l.cm_flags4) {
		l.cm_flags = l.cm_flags4;
		l.cm_flags_size = 4;
	}
	if (!l.cm_flags || !l.cm_has_linenumbers)
		return -ENOENT;
	/*
	 * The template interpreter's frame slots, in words from rbp: not in the
	 * tables (only sender_sp and last_sp are). From
	 * src/hotspot/cpu/x86/frame_x86.hpp: method is last_sp - 1 in every JDK;
	 * JDK 9 added the mirror slot after it, so bcp is method - 5 (JDK 9+)
	 * or method - 4 (JDK 8: mdx, cache, locals, bcx).
	 */
	l.ifr_method = l.ifr_sender_sp - 2;
	l.ifr_bcp = l.ifr_method - (l.major == 8 ? 4 : 5);
	/* Not described by the JVM: its version (OP_JVM_F_UNSIGNED5_X1 names the sources). */
	l.unsigned5_excess = l.major >= 20 ? 1 : 0;
	*out = l;
	return 0;
}

static bool fits_u16(uint32_t v)
{
	return v < 0x10000;
}

/* proc's debug info fields for a JDK 23+ nmethod (see OP_JVM_F_IMMUTABLE); none when not all known.
 */
static void immutable_debug_info(const struct hotspot_layout *l, struct op_jvm_proc *proc)
{
	uint32_t base, meta;
	uint8_t flag;

	if (l->blob_mutable_data && l->blob_relocation_size) {
		base = l->blob_mutable_data;
		meta = l->blob_relocation_size;
		flag = OP_JVM_F_META_MUTABLE;
	} else {
		base = l->blob_data_offset;
		meta = l->nm_metadata_offset;
		flag = 0;
	}
	if (!l->nm_pcs_offset || !l->nm_scopes_data_offset || !base || !meta ||
	    !fits_u16(l->nm_immutable_data) || !fits_u16(l->nm_pcs_offset) ||
	    !fits_u16(l->nm_scopes_data_offset) || !fits_u16(base) || !fits_u16(meta))
		return;
	proc->flags |= OP_JVM_F_IMMUTABLE | flag;
	proc->nm_immutable_data = (uint16_t)l->nm_immutable_data;
	proc->nm_scopes_data = (uint16_t)l->nm_scopes_data_offset;
	proc->nm_pcs_offset = (uint16_t)l->nm_pcs_offset;
	proc->nm_pcs_end_offset = (uint16_t)l->nm_scopes_data_offset;
	proc->nm_meta_base = (uint16_t)base;
	proc->nm_metadata_offset = (uint16_t)meta;
}

int hotspot_vm__code_cache(const struct remote_memory *mem, const struct hotspot_layout *l,
			   struct op_jvm_proc *proc, uint64_t *low, uint64_t *high)
{
	uint64_t heaps[OP_JVM_MAX_HEAPS] = {0}, code = 0, buffer = 0, heap = 0;
	uint32_t n = 0;
	int32_t limit = 0;

	memset(proc, 0, sizeof(*proc));
	if (read_u64(mem, l->code_low, low) || read_u64(mem, l->code_high, high))
		return -EFAULT;
	if (!*low || *high <= *low)
		return -EAGAIN;
	if (l->code_heaps) {
		uint64_t ga = 0, data = 0;
		int32_t len = 0;

		if (read_u64(mem, l->code_heaps, &ga) || !ga)
			return -EAGAIN;
		if (remote_memory__read(mem, ga + l->ga_len, &len, sizeof(len)) ||
		    read_u64(mem, ga + l->ga_data, &data))
			return -EFAULT;
		if (len <= 0 || !data)
			return -EAGAIN;
		n = len > OP_JVM_MAX_HEAPS ? OP_JVM_MAX_HEAPS : (uint32_t)len;
		if (remote_memory__read(mem, data, heaps, n * sizeof(heaps[0])))
			return -EFAULT;
	} else {
		if (read_u64(mem, l->code_heap, &heaps[0]) || !heaps[0])
			return -EAGAIN;
		n = 1;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct op_jvm_heap *h = &proc->heaps[proc->n_heaps];
		int32_t log2 = 0;

		if (!heaps[i] ||
		    remote_memory__read(mem, heaps[i] + l->heap_memory + l->vs_low_boundary,
					&h->low, 8) ||
		    remote_memory__read(mem, heaps[i] + l->heap_memory + l->vs_high_boundary,
					&h->high, 8) ||
		    remote_memory__read(mem, heaps[i] + l->heap_segmap + l->vs_low_boundary,
					&h->segmap, 8) ||
		    remote_memory__read(mem, heaps[i] + l->heap_log2, &log2, sizeof(log2)))
			return -EFAULT;
		if (h->high <= h->low || !h->segmap || log2 < 4 || log2 > 20)
			return -EINVAL;
		h->log2_segment = (uint32_t)log2;
		proc->n_heaps++;
	}
	if (read_u64(mem, l->interp_code, &code) || !code)
		return -EAGAIN;
	if (read_u64(mem, code + l->sq_buffer, &buffer) ||
	    remote_memory__read(mem, code + l->sq_limit, &limit, sizeof(limit)))
		return -EFAULT;
	if (!buffer || limit <= 0)
		return -EAGAIN;
	proc->interp_start = buffer;
	proc->interp_end = buffer + (uint32_t)limit;
	if (!fits_u16(l->blob_name) || !fits_u16(l->blob_frame_complete) ||
	    !fits_u16(l->blob_frame_size) || !fits_u16(l->blob_code_begin) ||
	    !fits_u16(l->blob_code_end) || !fits_u16(l->nmethod_method) ||
	    !fits_u16(l->method_const) || !fits_u16(l->const_method_size) ||
	    !fits_u16(l->heap_block_size) || l->ifr_bcp < -64 || l->ifr_sender_sp > 0)
		return -EINVAL;
	proc->blob_name = (uint16_t)l->blob_name;
	proc->blob_frame_complete = (uint16_t)l->blob_frame_complete;
	proc->blob_frame_size = (uint16_t)l->blob_frame_size;
	proc->blob_code_begin = (uint16_t)l->blob_code_begin;
	proc->blob_code_end = (uint16_t)l->blob_code_end;
	proc->nmethod_method = (uint16_t)l->nmethod_method;
	proc->method_const = (uint16_t)l->method_const;
	proc->const_method_size = (uint16_t)l->const_method_size;
	proc->heap_block_size = (uint16_t)l->heap_block_size;
	proc->flags = l->offsets ? OP_JVM_F_OFFSETS : 0;
	/*
	 * Inlined frames only when every field of the nmethod's debug info is
	 * known. JDK 23+ keeps PcDescs and scopes in the nmethod's immutable
	 * data: _scopes_pcs_offset and _scopes_data_offset count from
	 * nmethod::_immutable_data, the PcDescs ending where the scopes begin
	 * (no _dependencies_offset: the dependencies start the block). Its
	 * metadata table is at CodeBlob::_mutable_data + _relocation_size (JDK
	 * 25) or at the blob's data + nmethod::_metadata_offset (23, 24).
	 */
	if (l->nm_immutable_data)
		immutable_debug_info(l, proc);
	else if (l->nm_scopes_data && l->nm_pcs_offset && l->nm_pcs_end_offset &&
		 l->nm_metadata_offset && fits_u16(l->nm_scopes_data) &&
		 fits_u16(l->nm_pcs_offset) && fits_u16(l->nm_pcs_end_offset) &&
		 fits_u16(l->nm_metadata_offset)) {
		proc->nm_scopes_data = (uint16_t)l->nm_scopes_data;
		proc->nm_pcs_offset = (uint16_t)l->nm_pcs_offset;
		proc->nm_pcs_end_offset = (uint16_t)l->nm_pcs_end_offset;
		proc->nm_metadata_offset = (uint16_t)l->nm_metadata_offset;
	}
	/*
	 * nmethods remembered across samples only where each can be proven the
	 * same: its compile id, and its CodeHeap block's header (its length a
	 * size_t, its use a bool, both within the HeapBlock before the blob),
	 * and where the one read that checks a hit, from the HeapBlock to the
	 * later of the id and Method*, fits the walker's scratch (else every hit
	 * would be refused after its put).
	 */
	if (l->nm_compile_id && fits_u16(l->nm_compile_id) &&
	    (uint64_t)l->heap_block_size + l->nm_compile_id + 4 <= OP_JVM_SCRATCH &&
	    (uint64_t)l->heap_block_size + l->nmethod_method + 8 <= OP_JVM_SCRATCH && l->hb_known &&
	    l->hb_header < 16 && l->hb_length < 16 && l->hb_used < 16 &&
	    l->hb_header + l->hb_length + 8 <= 16 && l->hb_header + l->hb_used < 16 &&
	    l->hb_header + l->hb_length + 8 <= l->heap_block_size &&
	    l->hb_header + l->hb_used < l->heap_block_size) {
		proc->nm_compile_id = (uint16_t)l->nm_compile_id;
		proc->hb_fields =
		    (uint8_t)((l->hb_header + l->hb_length) | ((l->hb_header + l->hb_used) << 4));
		/* _used 4 bytes after _length: a uint32_t length (JDK 25), else a size_t. */
		if (l->hb_used > l->hb_length && l->hb_used - l->hb_length < 8)
			proc->flags |= OP_JVM_F_HB_LEN32;
	}
	if (l->unsigned5_excess)
		proc->flags |= OP_JVM_F_UNSIGNED5_X1;
	/* Deoptimised frames named from their original pc when all three are known. */
	if (l->nm_orig_pc_offset && l->nm_deopt_handler && l->nm_deopt_mh_handler &&
	    fits_u16(l->nm_orig_pc_offset) && fits_u16(l->nm_deopt_handler) &&
	    fits_u16(l->nm_deopt_mh_handler)) {
		proc->nm_deopt_handler = (uint16_t)l->nm_deopt_handler;
		proc->nm_deopt_mh_handler = (uint16_t)l->nm_deopt_mh_handler;
		proc->nm_orig_pc_offset = (uint16_t)l->nm_orig_pc_offset;
	}
	proc->ifr_sender_sp = (int8_t)l->ifr_sender_sp;
	proc->ifr_method = (int8_t)l->ifr_method;
	proc->ifr_bcp = (int8_t)l->ifr_bcp;
	/* The heap is made once at start and never moves: its count's address with it. */
	if (l->universe_heap && l->heap_total_collections &&
	    !read_u64(mem, l->universe_heap, &heap) && heap)
		proc->gc_count = heap + l->heap_total_collections;
	return 0;
}

int hotspot_vm__can_redefine(const struct remote_memory *mem, const struct hotspot_layout *l)
{
	uint8_t v;

	if (!l->jvmti_hotswap)
		return -ENOENT;
	if (remote_memory__read(mem, l->jvmti_hotswap, &v, sizeof(v)))
		return -EFAULT;
	return v != 0;
}

/* Entries of a perf data walked at most (JDK 17 has about 300), and bytes one may span. */
#define HS_PERF_ENTRIES	   4096
#define HS_PERF_ENTRY_MAX  4096
#define HS_SAFEPOINTS_NAME "sun.rt.safepoints"

int hotspot_vm__safepoint_counter(const struct remote_memory *mem, const struct hotspot_layout *l,
				  uint64_t *addr)
{
	uint64_t prologue = 0, e;
	int32_t entry_offset = 0, n = 0;

	if (!l->perf)
		return -ENOENT;
	if (read_u64(mem, l->perf_prologue, &prologue))
		return -EFAULT;
	if (!prologue)
		return -ENOENT; /* -XX:-UsePerfData: PerfMemory never set up */
	if (remote_memory__read(mem, prologue + l->pp_entry_offset, &entry_offset,
				sizeof(entry_offset)) ||
	    remote_memory__read(mem, prologue + l->pp_num_entries, &n, sizeof(n)))
		return -EFAULT;
	if (entry_offset <= 0 || n <= 0)
		return -EAGAIN;
	e = prologue + (uint32_t)entry_offset;
	for (int32_t i = 0; i < n && i < HS_PERF_ENTRIES; i++) {
		int32_t len = 0, name_off = 0, data_off = 0;
		char name[sizeof(HS_SAFEPOINTS_NAME)];

		if (remote_memory__read(mem, e + l->pe_entry_length, &len, sizeof(len)) ||
		    remote_memory__read(mem, e + l->pe_name_offset, &name_off, sizeof(name_off)) ||
		    remote_memory__read(mem, e + l->pe_data_offset, &data_off, sizeof(data_off)))
			return -EFAULT;
		/* Each entry ends after its name and its data: a walk that cannot move is over. */
		if (len <= 0 || len > HS_PERF_ENTRY_MAX)
			return -EINVAL;
		if (name_off > 0 && name_off + (int32_t)sizeof(name) <= len && data_off > 0 &&
		    data_off + 8 <= len &&
		    !remote_memory__read(mem, e + (uint32_t)name_off, name, sizeof(name)) &&
		    !memcmp(name, HS_SAFEPOINTS_NAME, sizeof(HS_SAFEPOINTS_NAME))) {
			*addr = e + (uint32_t)data_off;
			return 0;
		}
		e += (uint32_t)len;
	}
	return -ENOENT;
}
