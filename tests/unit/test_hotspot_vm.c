// SPDX-License-Identifier: Apache-2.0
/*
 * Reading a JVM's self-description (hotspot_vm.c) from memory laid out here
 * as libjvm.so lays it out (gHotSpotVMStructs / Types / IntConstants with the
 * entry strides and offsets JDK 17 exports): every offset, size, static
 * address and constant the walker and the naming need is taken from the
 * tables, the interpreter slots follow from sender_sp, the code cache (two
 * heaps, the interpreter's stub queue) becomes the BPF state. Tables not
 * filled in yet are "not ready", a table without a needed entry is refused,
 * and a table without its terminator ends where memory does, refused.
 *
 * And naming a Method (hotspot.c's resolve) whose class is unloaded and
 * whose Method, ConstMethod and constant pool are taken by the next class
 * at the same addresses (what HotspotUnload.java's plugins do): a frame of
 * the new epoch gets the new class's name, never the cached one; a frame
 * sampled before a collection that ran since, or a read during which the
 * count moved, is not named (counted); a name read again and found the same
 * keeps its id.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interp/hotspot/hotspot.h"
#include "interp/hotspot/hotspot_method.h"
#include "interp/hotspot/hotspot_vm.h"
#include "proc/process_table.h"
#include "proc/remote_memory.h"

#define BASE	0x7f0000000000ull
#define SIZE	0x40000
#define SYMS	(BASE + 0x0)	 /* the exported symbols' values */
#define STRINGS (BASE + 0x1000)	 /* names */
#define STRUCTS (BASE + 0x8000)	 /* 48-byte entries */
#define TYPES	(BASE + 0x10000) /* 40-byte entries */
#define INTS	(BASE + 0x14000) /* 16-byte entries */
#define LONGS	(BASE + 0x15000)
#define STATICS (BASE + 0x16000) /* the VM's static fields */
#define OBJECTS (BASE + 0x18000) /* heaps, growable array, stub queue */

#define JAVA	     (BASE + 0x20000) /* a Java method's metadata */
#define GC_HEAP	     (BASE + 0x30000) /* the CollectedHeap */
#define GC_COUNT_OFF 40

static uint8_t mem[SIZE];
static uint64_t strings_end, n_structs, n_types, n_ints;
static uint64_t bump_at;	  /* a read of this address counts a collection (0: none) */
static bool no_heap_block_fields; /* build() leaves HeapBlock's header fields out */

static void put32(uint64_t addr, uint32_t v);

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr - BASE > SIZE || len > SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, &mem[addr - BASE], len);
	if (bump_at && addr == bump_at) {
		uint32_t count;

		memcpy(&count, &mem[GC_HEAP + GC_COUNT_OFF - BASE], 4);
		put32(GC_HEAP + GC_COUNT_OFF, count + 1);
	}
	return 0;
}

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(&mem[addr - BASE], &v, sizeof(v));
}

static void put32(uint64_t addr, uint32_t v)
{
	memcpy(&mem[addr - BASE], &v, sizeof(v));
}

static uint64_t str(const char *s)
{
	uint64_t at = strings_end;

	memcpy(&mem[at - BASE], s, strlen(s) + 1);
	strings_end += strlen(s) + 1;
	return at;
}

static void field(const char *type, const char *name, uint64_t offset)
{
	uint64_t e = STRUCTS + 48 * n_structs++;

	put64(e, str(type));
	put64(e + 8, str(name));
	put64(e + 32, offset);
}

static void static_field(const char *type, const char *name, uint64_t address)
{
	uint64_t e = STRUCTS + 48 * n_structs++;

	put64(e, str(type));
	put64(e + 8, str(name));
	put32(e + 24, 1);
	put64(e + 40, address);
}

static void type(const char *name, uint64_t size)
{
	uint64_t e = TYPES + 40 * n_types++;

	put64(e, str(name));
	put64(e + 32, size);
}

static void int_constant(const char *name, int32_t v)
{
	uint64_t e = INTS + 16 * n_ints++;

	put64(e, str(name));
	put32(e + 8, (uint32_t)v);
}

/* JDK 17's tables (the offsets of Debian's 17.0 libjvm.so), the symbols pointing at them. */
static void build(void)
{
	const uint64_t values[HS_SYM__COUNT] = {
	    [HS_STRUCTS] = STRUCTS, [HS_TYPES] = TYPES,	    [HS_INTS] = INTS,
	    [HS_LONGS] = LONGS,	    [HS_ST_STRIDE] = 48,    [HS_ST_TYPE_NAME] = 0,
	    [HS_ST_FIELD_NAME] = 8, [HS_ST_IS_STATIC] = 24, [HS_ST_OFFSET] = 32,
	    [HS_ST_ADDRESS] = 40,   [HS_TY_STRIDE] = 40,    [HS_TY_NAME] = 0,
	    [HS_TY_SIZE] = 32,	    [HS_IC_STRIDE] = 16,    [HS_IC_NAME] = 0,
	    [HS_IC_VALUE] = 8,	    [HS_LC_STRIDE] = 16,    [HS_LC_NAME] = 0,
	    [HS_LC_VALUE] = 8,
	};

	memset(mem, 0, sizeof(mem));
	strings_end = STRINGS;
	n_structs = n_types = n_ints = 0;
	for (int i = 0; i < HS_SYM__COUNT; i++)
		put64(SYMS + 8 * i, values[i]);
	static_field("CodeCache", "_heaps", STATICS);
	static_field("CodeCache", "_low_bound", STATICS + 0x20);
	static_field("CodeCache", "_high_bound", STATICS + 0x18);
	static_field("AbstractInterpreter", "_code", STATICS + 0x28);
	static_field("Abstract_VM_Version", "_vm_major_version", STATICS + 0x30);
	field("CodeHeap", "_memory", 8);
	field("CodeHeap", "_segmap", 120);
	field("CodeHeap", "_log2_segment_size", 256);
	field("VirtualSpace", "_low_boundary", 0);
	field("VirtualSpace", "_high_boundary", 8);
	field("GrowableArrayBase", "_len", 0);
	field("GrowableArray<int>", "_data", 8);
	field("StubQueue", "_stub_buffer", 8);
	field("StubQueue", "_buffer_limit", 20);
	field("CodeBlob", "_name", 96);
	field("CodeBlob", "_frame_complete_offset", 20);
	field("CodeBlob", "_frame_size", 28);
	field("CodeBlob", "_code_begin", 32);
	field("CodeBlob", "_code_end", 40);
	field("CompiledMethod", "_method", 112);
	field("CompiledMethod", "_scopes_data_begin", 120);
	field("nmethod", "_scopes_pcs_offset", 268);
	field("nmethod", "_dependencies_offset", 272);
	field("nmethod", "_metadata_offset", 260);
	field("Method", "_constMethod", 8);
	field("ConstMethod", "_constants", 8);
	field("ConstMethod", "_name_index", 34);
	field("ConstMethod", "_signature_index", 36);
	field("ConstMethod", "_flags", 28);
	field("ConstMethod", "_code_size", 32);
	field("ConstantPool", "_pool_holder", 24);
	field("ConstantPool", "_source_file_name_index", 54);
	field("Klass", "_name", 24);
	field("Symbol", "_length", 4);
	field("Symbol", "_body", 6);
	type("ConstMethod", 48);
	type("ConstantPool", 72);
	type("HeapBlock", 16);
	field("nmethod", "_compile_id", 304);
	if (!no_heap_block_fields) {
		field("HeapBlock", "_header", 0);
		field("HeapBlock::Header", "_length", 0);
		field("HeapBlock::Header", "_used", 8);
	}
	int_constant("ConstMethod::_has_linenumber_table", 1);
	int_constant("frame::interpreter_frame_sender_sp_offset", -1);
	put32(STATICS + 0x30, 17);
	static_field("Universe", "_collectedHeap", STATICS + 0x38);
	field("CollectedHeap", "_total_collections", GC_COUNT_OFF);
}

static const struct remote_memory rm = {mem_read, NULL};

static int read_layout(struct hotspot_layout *l)
{
	uint64_t sym[HS_SYM__COUNT];

	for (int i = 0; i < HS_SYM__COUNT; i++)
		sym[i] = SYMS + 8 * i;
	return hotspot_vm__read(&rm, sym, l);
}

static void test_layout(void **state)
{
	struct hotspot_layout l;

	(void)state;
	build();
	assert_int_equal(read_layout(&l), 0);
	assert_int_equal(l.major, 17);
	assert_int_equal(l.code_heaps, STATICS);
	assert_int_equal(l.code_low, STATICS + 0x20);
	assert_int_equal(l.interp_code, STATICS + 0x28);
	assert_int_equal(l.heap_segmap, 120);
	assert_int_equal(l.heap_log2, 256);
	assert_int_equal(l.blob_name, 96);
	assert_int_equal(l.nmethod_method, 112);
	assert_int_equal(l.nm_pcs_end_offset, 272);
	assert_int_equal(l.cm_name_index, 34);
	assert_int_equal(l.cp_source_file, 54);
	assert_int_equal(l.sym_body, 6);
	assert_int_equal(l.const_method_size, 48);
	assert_int_equal(l.constant_pool_size, 72);
	assert_int_equal(l.heap_block_size, 16);
	assert_int_equal(l.cm_has_linenumbers, 1);
	/* frame_x86.hpp's slots from the exported sender_sp (JDK 9+). */
	assert_int_equal(l.ifr_sender_sp, -1);
	assert_int_equal(l.ifr_method, -3);
	assert_int_equal(l.ifr_bcp, -8);
}

/* HeapBlock's header fields read (offsets of 0 are real), or known absent. */
static void test_layout_heap_block(void **state)
{
	struct hotspot_layout l;

	(void)state;
	build();
	assert_int_equal(read_layout(&l), 0);
	assert_true(l.hb_known);
	assert_int_equal(l.hb_header, 0);
	assert_int_equal(l.hb_length, 0);
	assert_int_equal(l.hb_used, 8);
	no_heap_block_fields = true;
	build();
	no_heap_block_fields = false;
	assert_int_equal(read_layout(&l), 0);
	assert_false(l.hb_known);
}

static void test_not_ready_and_refused(void **state)
{
	struct hotspot_layout l;

	(void)state;
	build();
	put64(SYMS + 8 * HS_STRUCTS, 0); /* not filled in yet */
	assert_int_equal(read_layout(&l), -EAGAIN);
	build();
	put64(SYMS + 8 * HS_ST_STRIDE, 0);
	assert_int_equal(read_layout(&l), -EAGAIN);
	/* An entry the walker needs is missing: refused, not guessed. */
	build();
	memcpy(&mem[STRUCTS + 48 * 14 - BASE], &(uint64_t){str("NotCodeBlob")}, 8);
	assert_int_equal(read_layout(&l), -ENOENT);
	/* A table without its terminator: entries to the end of readable memory
	 * (over the other tables): the read ends there, refused. */
	build();
	for (uint64_t i = n_structs; STRUCTS + 48 * (i + 1) <= BASE + SIZE; i++)
		memcpy(&mem[STRUCTS + 48 * i - BASE], &mem[STRUCTS + 48 * 5 - BASE], 48);
	assert_int_not_equal(read_layout(&l), 0);
}

static void test_code_cache(void **state)
{
	const uint64_t heap0 = OBJECTS, heap1 = OBJECTS + 0x200, ga = OBJECTS + 0x400;
	const uint64_t data = OBJECTS + 0x440, queue = OBJECTS + 0x480;
	struct hotspot_layout l;
	struct op_jvm_proc proc;
	uint64_t low, high;

	(void)state;
	build();
	assert_int_equal(read_layout(&l), 0);
	/* Nothing set up yet. */
	assert_int_equal(hotspot_vm__code_cache(&rm, &l, &proc, &low, &high), -EAGAIN);
	put64(STATICS + 0x20, 0x7e0000000000ull);
	put64(STATICS + 0x18, 0x7e0040000000ull);
	put64(STATICS, ga);
	put32(ga, 2);
	put64(ga + 8, data);
	put64(data, heap0);
	put64(data + 8, heap1);
	put64(heap0 + 8, 0x7e0000000000ull);
	put64(heap0 + 16, 0x7e0010000000ull);
	put64(heap0 + 120, 0x7d0000000000ull);
	put32(heap0 + 256, 7);
	put64(heap1 + 8, 0x7e0010000000ull);
	put64(heap1 + 16, 0x7e0040000000ull);
	put64(heap1 + 120, 0x7d0000100000ull);
	put32(heap1 + 256, 7);
	assert_int_equal(hotspot_vm__code_cache(&rm, &l, &proc, &low, &high), -EAGAIN);
	put64(STATICS + 0x28, queue);
	put64(queue + 8, 0x7e0000001000ull);
	put32(queue + 20, 0x30000);
	assert_int_equal(hotspot_vm__code_cache(&rm, &l, &proc, &low, &high), 0);
	assert_int_equal(low, 0x7e0000000000ull);
	assert_int_equal(high, 0x7e0040000000ull);
	assert_int_equal(proc.n_heaps, 2);
	assert_int_equal(proc.heaps[1].low, 0x7e0010000000ull);
	assert_int_equal(proc.heaps[1].segmap, 0x7d0000100000ull);
	assert_int_equal(proc.heaps[1].log2_segment, 7);
	assert_int_equal(proc.interp_start, 0x7e0000001000ull);
	assert_int_equal(proc.interp_end, 0x7e0000031000ull);
	assert_int_equal(proc.blob_frame_size, 28);
	assert_int_equal(proc.nm_metadata_offset, 260);
	assert_int_equal(proc.ifr_bcp, -8);
	/* nmethods remembered: the compile id and the block's length (at 0) and use (at 8). */
	assert_int_equal(proc.nm_compile_id, 304);
	assert_int_equal(proc.hb_fields, 0x80);
	/* JDK 17: UNSIGNED5 without an excess, a size_t block length. */
	assert_int_equal(l.unsigned5_excess, 0);
	assert_int_equal(proc.flags & (OP_JVM_F_UNSIGNED5_X1 | OP_JVM_F_HB_LEN32), 0);
	/* Without the block's header fields described, with a header that does not fit the
	 * HeapBlock, or with a check's read (HeapBlock to the compile id) past the walker's
	 * scratch, nothing is remembered. */
	for (int i = 0; i < 3; i++) {
		struct hotspot_layout l2 = l;

		if (i == 0)
			l2.hb_known = false;
		else if (i == 1)
			l2.hb_used = 16;
		else
			l2.nm_compile_id = OP_JVM_SCRATCH - 16 - 4 + 1;
		assert_int_equal(hotspot_vm__code_cache(&rm, &l2, &proc, &low, &high), 0);
		assert_int_equal(proc.nm_compile_id, 0);
		assert_int_equal(proc.hb_fields, 0);
	}
	/* The longest read that fits: remembered. */
	l.nm_compile_id = OP_JVM_SCRATCH - 16 - 4;
	assert_int_equal(hotspot_vm__code_cache(&rm, &l, &proc, &low, &high), 0);
	assert_int_equal(proc.nm_compile_id, OP_JVM_SCRATCH - 16 - 4);
	/* A heap whose segment size is absurd: refused. */
	put32(heap1 + 256, 40);
	assert_int_equal(hotspot_vm__code_cache(&rm, &l, &proc, &low, &high), -EINVAL);
}

/*
 * JDK 8's tables: the field names of jdk8u's vmStructs.cpp (the offsets here
 * are made up: no JDK 8 runs on this machine): one CodeCache::_heap, no
 * CompiledMethod, and the blob's code, the nmethod's scopes data and deopt
 * handlers as int offsets from the blob. Read in OP_JVM_F_OFFSETS mode, the
 * interpreter's bcp slot one word higher than JDK 9+'s.
 */
static void build8(void)
{
	build();
	memset(&mem[STRUCTS - BASE], 0, TYPES - STRUCTS);
	n_structs = 0;
	static_field("CodeCache", "_heap", STATICS);
	static_field("CodeCache", "_low_bound", STATICS + 0x20);
	static_field("CodeCache", "_high_bound", STATICS + 0x18);
	static_field("AbstractInterpreter", "_code", STATICS + 0x28);
	static_field("Abstract_VM_Version", "_vm_major_version", STATICS + 0x30);
	field("CodeHeap", "_memory", 8);
	field("CodeHeap", "_segmap", 120);
	field("CodeHeap", "_log2_segment_size", 256);
	field("VirtualSpace", "_low_boundary", 0);
	field("VirtualSpace", "_high_boundary", 8);
	field("StubQueue", "_stub_buffer", 8);
	field("StubQueue", "_buffer_limit", 20);
	field("CodeBlob", "_name", 8);
	field("CodeBlob", "_frame_complete_offset", 32);
	field("CodeBlob", "_frame_size", 44);
	field("CodeBlob", "_code_offset", 28);
	field("CodeBlob", "_data_offset", 36);
	field("nmethod", "_method", 64);
	field("nmethod", "_scopes_data_offset", 120);
	field("nmethod", "_scopes_pcs_offset", 124);
	field("nmethod", "_dependencies_offset", 128);
	field("nmethod", "_metadata_offset", 116);
	field("nmethod", "_deoptimize_offset", 100);
	field("nmethod", "_deoptimize_mh_offset", 104);
	field("nmethod", "_orig_pc_offset", 148);
	field("Method", "_constMethod", 8);
	field("ConstMethod", "_constants", 8);
	field("ConstMethod", "_name_index", 34);
	field("ConstMethod", "_signature_index", 36);
	field("ConstMethod", "_flags", 28);
	field("ConstMethod", "_code_size", 32);
	field("ConstantPool", "_pool_holder", 24);
	field("InstanceKlass", "_source_file_name_index", 200);
	field("Klass", "_name", 24);
	field("Symbol", "_length", 4);
	field("Symbol", "_body", 6);
	put32(STATICS + 0x30, 8);
}

static void test_jdk8(void **state)
{
	const uint64_t heap = OBJECTS, queue = OBJECTS + 0x480;
	struct hotspot_layout l;
	struct op_jvm_proc proc;
	uint64_t low, high;

	(void)state;
	build8();
	assert_int_equal(read_layout(&l), 0);
	assert_int_equal(l.major, 8);
	assert_true(l.offsets);
	assert_int_equal(l.code_heap, STATICS);
	assert_int_equal(l.ifr_method, -3);
	assert_int_equal(l.ifr_bcp, -7);
	put64(STATICS + 0x20, 0x7e0000000000ull);
	put64(STATICS + 0x18, 0x7e0010000000ull);
	put64(STATICS, heap);
	put64(heap + 8, 0x7e0000000000ull);
	put64(heap + 16, 0x7e0010000000ull);
	put64(heap + 120, 0x7d0000000000ull);
	put32(heap + 256, 6);
	put64(STATICS + 0x28, queue);
	put64(queue + 8, 0x7e0000001000ull);
	put32(queue + 20, 0x30000);
	assert_int_equal(hotspot_vm__code_cache(&rm, &l, &proc, &low, &high), 0);
	assert_int_equal(proc.n_heaps, 1);
	assert_int_equal(proc.heaps[0].segmap, 0x7d0000000000ull);
	assert_int_equal(proc.flags, OP_JVM_F_OFFSETS);
	assert_int_equal(proc.blob_code_begin, 28);
	assert_int_equal(proc.blob_code_end, 36);
	assert_int_equal(proc.nm_scopes_data, 120);
	assert_int_equal(proc.nm_deopt_handler, 100);
	assert_int_equal(proc.nm_deopt_mh_handler, 104);
	assert_int_equal(proc.nm_orig_pc_offset, 148);
	assert_int_equal(proc.ifr_bcp, -7);
	/* JDK 17's pointers stay pointers. */
	build();
	assert_int_equal(read_layout(&l), 0);
	assert_false(l.offsets);
}

/*
 * JDK 25's tables (field names of openjdk's vmStructs.cpp for 25, made-up
 * offsets): CodeBlob's code as int offsets (JDK 23+), no CompiledMethod, the
 * nmethod's PcDescs and scopes counted from its _immutable_data, ConstMethod's
 * flags a u4 (ConstMethodFlags, JDK 21+).
 */
/* A JDK 23/24 table that does not describe nmethod::_metadata_offset (not settled for 23, 24). */
static bool no_metadata_offset;

static void build_major(int major)
{
	build();
	memset(&mem[STRUCTS - BASE], 0, TYPES - STRUCTS);
	memset(&mem[INTS - BASE], 0, LONGS - INTS);
	n_structs = n_ints = 0;
	static_field("CodeCache", "_heaps", STATICS);
	static_field("CodeCache", "_low_bound", STATICS + 0x20);
	static_field("CodeCache", "_high_bound", STATICS + 0x18);
	static_field("AbstractInterpreter", "_code", STATICS + 0x28);
	static_field("Abstract_VM_Version", "_vm_major_version", STATICS + 0x30);
	field("CodeHeap", "_memory", 8);
	field("CodeHeap", "_segmap", 120);
	field("CodeHeap", "_log2_segment_size", 256);
	field("VirtualSpace", "_low_boundary", 0);
	field("VirtualSpace", "_high_boundary", 8);
	field("GrowableArrayBase", "_len", 0);
	field("GrowableArray<int>", "_data", 8);
	field("StubQueue", "_stub_buffer", 8);
	field("StubQueue", "_buffer_limit", 20);
	field("CodeBlob", "_name", 0);
	field("CodeBlob", "_size", 8);
	field("CodeBlob", "_code_offset", 24);
	field("CodeBlob", "_frame_complete_offset", 28);
	field("CodeBlob", "_data_offset", 32);
	field("CodeBlob", "_frame_size", 36);
	if (major >= 25) {
		/* JDK 25: the metadata table at _mutable_data + _relocation_size. */
		field("CodeBlob", "_relocation_size", 12);
		field("CodeBlob", "_mutable_data", 48);
		/* Temurin 25.0.3's: a uint32_t length, _used right after it. */
		field("HeapBlock", "_header", 0);
		field("HeapBlock::Header", "_length", 0);
		field("HeapBlock::Header", "_used", 4);
		field("nmethod", "_compile_id", 212);
	} else if (!no_metadata_offset) {
		/* JDK 23, 24: at the blob's data + nmethod::_metadata_offset (a u2). */
		field("nmethod", "_metadata_offset", 96);
	}
	field("nmethod", "_method", 72);
	field("nmethod", "_deopt_handler_offset", 84);
	field("nmethod", "_deopt_mh_handler_offset", 88);
	field("nmethod", "_orig_pc_offset", 92);
	field("nmethod", "_scopes_pcs_offset", 100);
	field("nmethod", "_scopes_data_offset", 104);
	field("nmethod", "_immutable_data", 120);
	field("Method", "_constMethod", 8);
	field("ConstMethod", "_constants", 8);
	field("ConstMethod", "_flags._flags", 28);
	field("ConstMethod", "_code_size", 32);
	field("ConstMethod", "_name_index", 34);
	field("ConstMethod", "_signature_index", 36);
	field("ConstantPool", "_pool_holder", 24);
	field("ConstantPool", "_source_file_name_index", 54);
	field("Klass", "_name", 24);
	field("Symbol", "_length", 4);
	field("Symbol", "_body", 6);
	int_constant("ConstMethodFlags::_misc_has_linenumber_table", 1);
	int_constant("frame::interpreter_frame_sender_sp_offset", -1);
	put32(STATICS + 0x30, (uint32_t)major);
}

static void build25(void)
{
	build_major(25);
}

static void build_code_cache(void);
static void load_plugin(char p);

static void test_jdk25(void **state)
{
	struct hotspot_layout l;
	struct op_jvm_proc proc;
	struct hotspot_method *m = NULL;
	uint64_t low, high;

	(void)state;
	build25();
	assert_int_equal(read_layout(&l), 0);
	assert_int_equal(l.major, 25);
	assert_true(l.offsets);
	assert_int_equal(l.cm_flags, 28);
	assert_int_equal(l.cm_flags_size, 4);
	assert_int_equal(l.cm_has_linenumbers, 1);
	assert_int_equal(l.nm_immutable_data, 120);
	assert_int_equal(l.ifr_bcp, -8);
	build_code_cache();
	assert_int_equal(hotspot_vm__code_cache(&rm, &l, &proc, &low, &high), 0);
	assert_int_equal(proc.blob_code_begin, 24);
	assert_int_equal(proc.blob_code_end, 32);
	assert_int_equal(proc.blob_frame_complete, 28);
	assert_int_equal(proc.nmethod_method, 72);
	/* PcDescs [_scopes_pcs_offset, _scopes_data_offset) and scopes counted
	 * from _immutable_data; metadata at _mutable_data + _relocation_size;
	 * deopt handlers as int offsets from the blob. */
	assert_int_equal(l.unsigned5_excess, 1);
	/* And UNSIGNED5 with its excess of 1 (JDK 20+), HeapBlock's length a uint32_t. */
	assert_int_equal(proc.flags, OP_JVM_F_OFFSETS | OP_JVM_F_IMMUTABLE | OP_JVM_F_META_MUTABLE |
					 OP_JVM_F_UNSIGNED5_X1 | OP_JVM_F_HB_LEN32);
	assert_int_equal(proc.nm_compile_id, 212);
	assert_int_equal(proc.hb_fields, 0 | 4 << 4);
	assert_int_equal(proc.nm_immutable_data, 120);
	assert_int_equal(proc.nm_scopes_data, 104);
	assert_int_equal(proc.nm_pcs_offset, 100);
	assert_int_equal(proc.nm_pcs_end_offset, 104);
	assert_int_equal(proc.nm_meta_base, 48);
	assert_int_equal(proc.nm_metadata_offset, 12);
	assert_int_equal(proc.nm_deopt_handler, 84);
	assert_int_equal(proc.nm_deopt_mh_handler, 88);
	assert_int_equal(proc.nm_orig_pc_offset, 92);
	/* JDK 23, 24: metadata from the blob's _data_offset + _metadata_offset. */
	build_major(23);
	assert_int_equal(read_layout(&l), 0);
	build_code_cache();
	assert_int_equal(hotspot_vm__code_cache(&rm, &l, &proc, &low, &high), 0);
	assert_int_equal(proc.flags, OP_JVM_F_OFFSETS | OP_JVM_F_IMMUTABLE | OP_JVM_F_UNSIGNED5_X1);
	assert_int_equal(proc.nm_meta_base, 32);
	assert_int_equal(proc.nm_metadata_offset, 96);
	assert_int_equal(proc.nm_pcs_end_offset, 104);
	/*
	 * JDK 23, 24 without _metadata_offset in vmStructs: the metadata table's
	 * place is not guessed. No debug info is read (compiled frames are named
	 * by their nmethod's method, no line, no inlined frame): none named wrong.
	 */
	no_metadata_offset = true;
	build_major(24);
	no_metadata_offset = false;
	assert_int_equal(read_layout(&l), 0);
	build_code_cache();
	assert_int_equal(hotspot_vm__code_cache(&rm, &l, &proc, &low, &high), 0);
	assert_int_equal(proc.flags, OP_JVM_F_OFFSETS | OP_JVM_F_UNSIGNED5_X1);
	assert_int_equal(proc.nm_scopes_data, 0);
	assert_int_equal(proc.nm_metadata_offset, 0);
	assert_int_equal(proc.nmethod_method, 72);
	build25();
	assert_int_equal(read_layout(&l), 0);

	/* A method named through the u4 flags: bits above 16 set, no line table. */
	load_plugin('A');
	put32(JAVA + 0x100 + 28, 0x00050000u);
	assert_int_equal(hotspot_method__read(&rm, &l, JAVA, JAVA + 0x100, &m), 0);
	assert_string_equal(m->name, "PluginA.spinA");
	assert_int_equal(m->n_lines, 0);
	hotspot_method__free(m);

	/* Neither ConstMethod flag field: refused, not read at a wrong offset. */
	build25();
	memset(&mem[STRUCTS - BASE], 0, TYPES - STRUCTS);
	n_structs = 0;
	field("CodeBlob", "_code_offset", 24);
	assert_int_equal(read_layout(&l), -ENOENT);
}

/* A two-heap code cache and the interpreter, as test_code_cache sets them up. */
static void build_code_cache(void)
{
	const uint64_t heap0 = OBJECTS, heap1 = OBJECTS + 0x200, ga = OBJECTS + 0x400;
	const uint64_t data = OBJECTS + 0x440, queue = OBJECTS + 0x480;

	put64(STATICS + 0x20, 0x7e0000000000ull);
	put64(STATICS + 0x18, 0x7e0040000000ull);
	put64(STATICS, ga);
	put32(ga, 2);
	put64(ga + 8, data);
	put64(data, heap0);
	put64(data + 8, heap1);
	put64(heap0 + 8, 0x7e0000000000ull);
	put64(heap0 + 16, 0x7e0010000000ull);
	put64(heap0 + 120, 0x7d0000000000ull);
	put32(heap0 + 256, 7);
	put64(heap1 + 8, 0x7e0010000000ull);
	put64(heap1 + 16, 0x7e0040000000ull);
	put64(heap1 + 120, 0x7d0000100000ull);
	put32(heap1 + 256, 7);
	put64(STATICS + 0x28, queue);
	put64(queue + 8, 0x7e0000001000ull);
	put32(queue + 20, 0x30000);
}

/* The Method, its ConstMethod, constant pool and holder (offsets of build()). */
#define METHOD (JAVA + 0x0)
#define CMETH  (JAVA + 0x100)
#define CPOOL  (JAVA + 0x200)
#define KLASS  (JAVA + 0x400)
#define SYMS_A (JAVA + 0x800) /* Plugin<p>'s Symbols: 0x100 apart per plugin */

static uint64_t symbol(uint64_t at, const char *text)
{
	uint16_t len = (uint16_t)strlen(text);

	memcpy(&mem[at + 4 - BASE], &len, 2);
	memcpy(&mem[at + 6 - BASE], text, len);
	return at;
}

/* Plugin<p>.spin<p> in Plugin<p>.java at the same Method, ConstMethod, pool and Klass. */
static void load_plugin(char p)
{
	uint64_t syms = SYMS_A + (uint64_t)(p - 'A') * 0x100;
	char klass[] = "PluginX", name[] = "spinX", file[] = "PluginX.java";
	uint16_t name_index = 1, file_index = 2;

	klass[6] = name[4] = file[6] = p;
	put64(METHOD + 8, CMETH);
	put64(CMETH + 8, CPOOL);
	memcpy(&mem[CMETH + 34 - BASE], &name_index, 2);
	memset(&mem[CMETH + 28 - BASE], 0, 2); /* no line table */
	put64(CPOOL + 24, KLASS);
	memcpy(&mem[CPOOL + 54 - BASE], &file_index, 2);
	put64(CPOOL + 72 + 8 * name_index, symbol(syms + 0x40, name));
	put64(CPOOL + 72 + 8 * file_index, symbol(syms + 0x80, file));
	put64(KLASS + 24, symbol(syms, klass));
}

static struct remote_memory fake_memory(void *ctx, uint32_t pid)
{
	(void)ctx;
	(void)pid;
	return rm;
}

/* A compiled frame of METHOD sampled in collection epoch `epoch`. */
static struct op_frame method_frame(uint64_t method, uint64_t cm, uint32_t epoch)
{
	return (struct op_frame){.addr = method,
				 .data = cm | ((uint64_t)OP_JVM_T_COMPILED << OP_JVM_TYPE_SHIFT),
				 .aux =
				     OP_JVM_BCI_NONE | (OP_JVM_T_COMPILED << OP_JVM_AUX_TYPE_SHIFT),
				 .kind = OP_FRAME_HOTSPOT,
				 .reserved = (uint16_t)epoch};
}

static const char *name_of(void *rt, uint32_t id)
{
	const char *name, *file;
	int64_t line;

	hotspot_interp_ops.describe(rt, id, 0, &name, &file, &line);
	return name;
}

static void test_reused_method(void **state)
{
	struct interp_env env = {.memory = fake_memory};
	struct process p = {.pid = 42};
	struct process_mapping m = {0};
	struct hotspot_file hf;
	struct interp_range ranges[4];
	struct op_frame f;
	struct hotspot *hs;
	size_t n = 0;
	uint32_t a, b, a2;
	void *rt = NULL;

	(void)state;
	build();
	build_code_cache();
	put64(STATICS + 0x38, GC_HEAP);
	put32(GC_HEAP + GC_COUNT_OFF, 5);
	load_plugin('A');
	for (int i = 0; i < HS_SYM__COUNT; i++)
		hf.sym[i] = SYMS + 8 * i;
	assert_int_equal(hotspot_interp_ops.new_rt(&env, &rt), 0);
	hs = rt;
	assert_int_equal(hotspot_interp_ops.attach(rt, &p, &m, &hf, ranges, &n), 0);
	assert_int_equal(n, 1);

	/* Read in epoch 5, and found again in it. */
	f = method_frame(METHOD, CMETH, 5);
	a = hotspot_interp_ops.resolve(rt, 42, &f);
	assert_int_not_equal(a, 0);
	assert_string_equal(name_of(rt, a), "PluginA.spinA");
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), a);

	/* Unloaded in collection 6, PluginB loaded at the same addresses: its
	 * frames are PluginB's, never the PluginA cached for the same Method and
	 * ConstMethod. PluginA's frames of epoch 5 keep their name. */
	put32(GC_HEAP + GC_COUNT_OFF, 6);
	load_plugin('B');
	f = method_frame(METHOD, CMETH, 6);
	b = hotspot_interp_ops.resolve(rt, 42, &f);
	assert_int_not_equal(b, 0);
	assert_int_not_equal(b, a);
	assert_string_equal(name_of(rt, b), "PluginB.spinB");
	assert_string_equal(name_of(rt, a), "PluginA.spinA");
	assert_int_equal(hs->stats.reused, 1);

	/* A frame of epoch 6 named after collection 7 gave the memory back to
	 * PluginA: named as read in epoch 6 (what the sample saw). */
	put32(GC_HEAP + GC_COUNT_OFF, 7);
	load_plugin('A');
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), b);

	/* A method first seen in a frame of epoch 6 after collection 7: its
	 * memory may be another's by now, so no name (counted). */
	put64(METHOD + 0x40 + 8, CMETH);
	f = method_frame(METHOD + 0x40, CMETH, 6);
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), 0);
	assert_int_equal(hs->stats.raced, 1);

	/* Epoch 7's frame of the reused Method: read again, PluginA's again. */
	f = method_frame(METHOD, CMETH, 7);
	a2 = hotspot_interp_ops.resolve(rt, 42, &f);
	assert_int_not_equal(a2, 0);
	assert_int_not_equal(a2, b);
	assert_string_equal(name_of(rt, a2), "PluginA.spinA");
	assert_int_equal(hs->stats.reused, 2);

	/* A collection that unloaded nothing: read again, the same, the same id. */
	put32(GC_HEAP + GC_COUNT_OFF, 8);
	f = method_frame(METHOD, CMETH, 8);
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), a2);
	assert_int_equal(hs->stats.rechecked, 1);

	/* A collection during the read (its holder's name read after it): the
	 * parts may come from two classes, so none is kept. */
	put32(GC_HEAP + GC_COUNT_OFF, 9);
	load_plugin('B');
	bump_at = KLASS + 24;
	f = method_frame(METHOD, CMETH, 9);
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), 0);
	assert_int_equal(hs->stats.raced, 2);
	bump_at = 0;

	/* The 16-bit epoch of a frame widened across a wrap of the count. */
	put32(GC_HEAP + GC_COUNT_OFF, 0x10001);
	f = method_frame(METHOD, CMETH, 0x10001);
	b = hotspot_interp_ops.resolve(rt, 42, &f);
	assert_string_equal(name_of(rt, b), "PluginB.spinB");
	f = method_frame(METHOD, CMETH, 0xffff);
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), 0);
	assert_int_equal(hs->stats.raced, 3);
	hotspot_interp_ops.free_rt(rt);
}

/*
 * The perf data of a JVM (PerfMemory::_prologue, PerfDataPrologue and
 * PerfDataEntry as JDK 17 lays them out) with two counters, the second
 * sun.rt.safepoints; and JvmtiExport's can-redefine flag (clear).
 */
#define PERF	   (BASE + 0x34000)
#define HOTSWAP	   (STATICS + 0x40)
#define SAFEPOINTS (PERF + 32 + 56 + 40) /* the second entry's data */
#define PERF_SLOT  (STATICS + 0x48)

static void perf_entry(uint64_t e, const char *name, uint32_t len)
{
	put32(e, len);		/* entry_length */
	put32(e + 4, 20);	/* name_offset */
	put32(e + 16, len - 8); /* data_offset */
	memcpy(&mem[e + 20 - BASE], name, strlen(name) + 1);
}

static void build_perf(void)
{
	static_field("JvmtiExport", "_can_hotswap_or_post_breakpoint", HOTSWAP);
	static_field("PerfMemory", "_prologue", PERF_SLOT);
	field("PerfDataPrologue", "entry_offset", 24);
	field("PerfDataPrologue", "num_entries", 28);
	field("PerfDataEntry", "entry_length", 0);
	field("PerfDataEntry", "name_offset", 4);
	field("PerfDataEntry", "data_offset", 16);
	put64(PERF_SLOT, PERF);
	put32(PERF + 24, 32);
	put32(PERF + 28, 2);
	perf_entry(PERF + 32, "sun.rt.createVmBeginTime", 56);
	perf_entry(PERF + 32 + 56, "sun.rt.safepoints", 48);
}

static void test_safepoint_counter(void **state)
{
	struct hotspot_layout l;
	uint64_t at = 0;

	(void)state;
	build();
	build_perf();
	assert_int_equal(read_layout(&l), 0);
	assert_true(l.perf);
	assert_int_equal(hotspot_vm__can_redefine(&rm, &l), 0);
	put32(HOTSWAP, 1);
	assert_int_equal(hotspot_vm__can_redefine(&rm, &l), 1);
	assert_int_equal(hotspot_vm__safepoint_counter(&rm, &l, &at), 0);
	assert_int_equal(at, SAFEPOINTS);

	/* Hostile or missing perf data: bounded, refused. */
	put32(PERF + 32, 0); /* an entry that does not move the walk */
	assert_int_equal(hotspot_vm__safepoint_counter(&rm, &l, &at), -EINVAL);
	put32(PERF + 32, 56);
	put32(PERF + 28, 1); /* the counter not among the entries */
	assert_int_equal(hotspot_vm__safepoint_counter(&rm, &l, &at), -ENOENT);
	put32(PERF + 28, 0x7fffffff); /* entries past readable memory */
	put32(PERF + 32 + 56 + 4, 0);
	assert_int_not_equal(hotspot_vm__safepoint_counter(&rm, &l, &at), 0);
	put64(PERF_SLOT, 0); /* -XX:-UsePerfData */
	assert_int_equal(hotspot_vm__safepoint_counter(&rm, &l, &at), -ENOENT);

	/* A JVM that does not describe its perf data or JVMTI flags. */
	build();
	assert_int_equal(read_layout(&l), 0);
	assert_false(l.perf);
	assert_int_equal(hotspot_vm__can_redefine(&rm, &l), -ENOENT);
	assert_int_equal(hotspot_vm__safepoint_counter(&rm, &l, &at), -ENOENT);
}

/*
 * A class redefined while no collection runs: its old Methods are freed at
 * a safepoint and the next class's Method and ConstMethod take their
 * addresses. Once the JVM can redefine, its safepoints are in the epoch: a
 * frame sampled before that safepoint is not named, one after it gets the
 * new method's name. A JVM that can redefine without counting its
 * safepoints names none (counted).
 */
static void test_redefined_method(void **state)
{
	struct interp_env env = {.memory = fake_memory};
	struct process p = {.pid = 42};
	struct process_mapping m = {0};
	struct hotspot_file hf;
	struct interp_range ranges[4];
	struct op_frame f;
	struct hotspot *hs;
	size_t n = 0;
	uint32_t a, b;
	void *rt = NULL;

	(void)state;
	build();
	build_perf();
	build_code_cache();
	put64(STATICS + 0x38, GC_HEAP);
	put32(GC_HEAP + GC_COUNT_OFF, 5);
	put64(SAFEPOINTS, 100);
	load_plugin('A');
	for (int i = 0; i < HS_SYM__COUNT; i++)
		hf.sym[i] = SYMS + 8 * i;
	assert_int_equal(hotspot_interp_ops.new_rt(&env, &rt), 0);
	hs = rt;
	assert_int_equal(hotspot_interp_ops.attach(rt, &p, &m, &hf, ranges, &n), 0);
	assert_int_equal(n, 1);

	/* No agent can redefine: the epoch is the collection count alone. */
	f = method_frame(METHOD, CMETH, 5);
	a = hotspot_interp_ops.resolve(rt, 42, &f);
	assert_string_equal(name_of(rt, a), "PluginA.spinA");
	assert_int_equal(hs->stats.redefinable, 0);

	/* An agent that can redefine: at attach the safepoints join the epoch
	 * (the BPF side adds them), and the cached name, read again, stays. */
	put32(HOTSWAP, 1);
	assert_int_equal(hotspot_interp_ops.attach(rt, &p, &m, &hf, ranges, &n), 0);
	assert_int_equal(hs->stats.redefinable, 1);
	f = method_frame(METHOD, CMETH, 105);
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), a);
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), a);

	/* PluginA redefined at safepoint 101, its Method and ConstMethod freed and
	 * taken by PluginB; no collection. A frame of before keeps the name read
	 * in its epoch; one of after gets PluginB's name; a method first seen in
	 * a frame of before is not named (its memory may be another's by now). */
	put64(SAFEPOINTS, 101);
	load_plugin('B');
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), a);
	put64(METHOD + 0x40 + 8, CMETH);
	f = method_frame(METHOD + 0x40, CMETH, 105);
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), 0);
	assert_int_equal(hs->stats.raced, 1);
	f = method_frame(METHOD, CMETH, 106);
	b = hotspot_interp_ops.resolve(rt, 42, &f);
	assert_int_not_equal(b, 0);
	assert_int_not_equal(b, a);
	assert_string_equal(name_of(rt, b), "PluginB.spinB");

	/* A safepoint during the read: refused. */
	put64(SAFEPOINTS, 102);
	load_plugin('A');
	f = method_frame(METHOD, CMETH, 107);
	bump_at = KLASS + 24; /* moves the collection count, which is in the sum too */
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), 0);
	assert_int_equal(hs->stats.raced, 2);
	bump_at = 0;
	hotspot_interp_ops.free_rt(rt);

	/* An agent loaded after attach is seen at the next read of the epoch. */
	build();
	build_perf();
	build_code_cache();
	put64(STATICS + 0x38, GC_HEAP);
	put32(GC_HEAP + GC_COUNT_OFF, 5);
	put64(SAFEPOINTS, 100);
	load_plugin('A');
	assert_int_equal(hotspot_interp_ops.new_rt(&env, &rt), 0);
	hs = rt;
	assert_int_equal(hotspot_interp_ops.attach(rt, &p, &m, &hf, ranges, &n), 0);
	put32(HOTSWAP, 1);
	f = method_frame(METHOD, CMETH, 5); /* sampled before: another epoch now */
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), 0);
	assert_int_equal(hs->stats.redefinable, 1);
	f = method_frame(METHOD, CMETH, 105);
	assert_string_equal(name_of(rt, hotspot_interp_ops.resolve(rt, 42, &f)), "PluginA.spinA");
	hotspot_interp_ops.free_rt(rt);

	/* Can redefine, no perf data (-XX:-UsePerfData): no Java frame is named. */
	build();
	build_perf();
	build_code_cache();
	put64(STATICS + 0x38, GC_HEAP);
	put32(GC_HEAP + GC_COUNT_OFF, 5);
	put64(PERF_SLOT, 0);
	put32(HOTSWAP, 1);
	load_plugin('A');
	assert_int_equal(hotspot_interp_ops.new_rt(&env, &rt), 0);
	hs = rt;
	assert_int_equal(hotspot_interp_ops.attach(rt, &p, &m, &hf, ranges, &n), 0);
	f = method_frame(METHOD, CMETH, 5);
	assert_int_equal(hotspot_interp_ops.resolve(rt, 42, &f), 0);
	assert_int_equal(hs->stats.unsure, 1);
	assert_int_equal(hs->stats.methods, 0);
	hotspot_interp_ops.free_rt(rt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout),
	    cmocka_unit_test(test_layout_heap_block),
	    cmocka_unit_test(test_not_ready_and_refused),
	    cmocka_unit_test(test_code_cache),
	    cmocka_unit_test(test_jdk8),
	    cmocka_unit_test(test_reused_method),
	    cmocka_unit_test(test_safepoint_counter),
	    cmocka_unit_test(test_redefined_method),
	    cmocka_unit_test(test_jdk25),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
