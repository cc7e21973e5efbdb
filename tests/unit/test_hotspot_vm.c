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
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interp/hotspot/hotspot_vm.h"
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

static uint8_t mem[SIZE];
static uint64_t strings_end, n_structs, n_types, n_ints;

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr - BASE > SIZE || len > SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, &mem[addr - BASE], len);
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
	int_constant("ConstMethod::_has_linenumber_table", 1);
	int_constant("frame::interpreter_frame_sender_sp_offset", -1);
	put32(STATICS + 0x30, 17);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout),
	    cmocka_unit_test(test_not_ready_and_refused),
	    cmocka_unit_test(test_code_cache),
	    cmocka_unit_test(test_jdk8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
