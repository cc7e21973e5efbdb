// SPDX-License-Identifier: Apache-2.0
/*
 * Finding a CRuby VM's execution context from its file
 * (src/interp/ruby/ruby_binary.c), on real files: Debian's libruby 3.1
 * (ruby_current_ec by general-dynamic TLS: its tls_index GOT slot) and
 * build/workloads/lib/ruby_ie_tls.so, a stand-in libruby built with
 * initial-exec TLS (a TPOFF64 relocation), and ruby_ie_tls_local.so, the
 * same with a local ruby_current_ec (as 3.3's). Each stand-in is loaded into
 * this process: the distance read from its GOT slot, through the same
 * process_vm_readv path a profiled process is read by, must lead from this
 * thread's thread pointer to the variable the library's own code returns.
 * ruby_stripped.so stands in for a stripped 3.3+ libruby (ruby_current_ec
 * and rb_vm_exec hidden, no .symtab): both are found from exported
 * functions' code, and checked the same way.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "interp/ruby/ruby_binary.h"
#include "omniprof/interp/ruby_abi.h"
#include "proc/remote_memory.h"
#include "testutil.h"

#define DEBIAN_LIBRUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1"

static void inspect(const char *path, struct ruby_binary *bin)
{
	struct elf_file *ef;

	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	assert_int_equal(ruby_binary__inspect(ef, bin), 0);
	elf_file__close(ef);
}

static void test_general_dynamic(void **state)
{
	struct ruby_binary bin;

	(void)state;
	inspect(DEBIAN_LIBRUBY, &bin);
	assert_int_equal(bin.major, 3);
	assert_int_equal(bin.minor, 1);
	assert_int_equal(bin.tls_mode, OP_RB_TLS_DTV);
	assert_int_not_equal(bin.tls_index, 0);
	assert_int_equal(bin.tpoff_slot, 0);
	assert_int_not_equal(bin.current_vm_ptr, 0); /* exported: 3.2's class names need it */
}

/* The stand-in at build/workloads/lib/<name>.so (ruby_current_ec global or local). */
static void check_initial_exec(const char *name)
{
	char path[512];
	struct ruby_binary bin;
	struct remote_memory mem = remote_memory__live((uint32_t)getpid());
	struct op_rb_proc proc;
	struct link_map *lm = NULL;
	void **(*ec_addr)(void);
	uint64_t tp;
	int64_t off;
	void *h;

	snprintf(path, sizeof(path), "%s/workloads/lib/%s.so", tu_build_dir(), name);
	inspect(path, &bin);
	assert_int_equal(bin.tls_mode, OP_RB_TLS_TP);
	assert_int_not_equal(bin.tpoff_slot, 0);
	assert_int_equal(bin.tls_index, 0);

	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	assert_int_equal(dlinfo(h, RTLD_DI_LINKMAP, &lm), 0);
	*(void **)&ec_addr = dlsym(h, "ruby_ie_tls_ec");
	assert_non_null(ec_addr);
	/* Not this library's file mapped at that bias: no distance there. */
	assert_int_not_equal(ruby_binary__read_tp_offset(&bin, &mem, 0x1000, &off), 0);
	assert_int_equal(ruby_binary__read_tp_offset(&bin, &mem, lm->l_addr, &off), 0);
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	assert_int_equal(tp + (uint64_t)off, (uint64_t)(uintptr_t)ec_addr());
	/* What the walker gets: the thread pointer's distance, wherever the file is. */
	bin.tp_offset = off;
	ruby_binary__proc_info(&bin, lm->l_addr, &proc);
	assert_int_equal(proc.tls_mode, OP_RB_TLS_TP);
	assert_int_equal((int64_t)proc.tls_index, off);
	dlclose(h);
}

static void test_initial_exec(void **state)
{
	(void)state;
	check_initial_exec("ruby_ie_tls");
}

/* A local ruby_current_ec: the relocation names no symbol, its addend is the offset. */
static void test_initial_exec_local(void **state)
{
	(void)state;
	check_initial_exec("ruby_ie_tls_local");
}

/*
 * A stripped 3.3+: the module's tls_index slot and ruby_current_ec's
 * offset decoded from rb_errinfo/rb_thread_current, rb_vm_exec from the
 * calls of rb_iseq_eval(_main). Read as the walker reads them (the slot's
 * module id, this thread's DTV at fs:8, its block + the offset), they must
 * give the variable the library's own code returns, and rb_vm_exec the
 * function its own code names.
 */
static void test_stripped(void **state)
{
	char path[512];
	struct ruby_binary bin;
	struct remote_memory mem = remote_memory__live((uint32_t)getpid());
	struct op_rb_proc proc;
	struct link_map *lm = NULL;
	void **(*ec_addr)(void);
	void *(*vm_exec_addr)(void);
	uint64_t tp, dtv, block, modid = 0, want_modid = 0;
	void *h;

	(void)state;
	snprintf(path, sizeof(path), "%s/workloads/lib/ruby_stripped.so", tu_build_dir());
	inspect(path, &bin);
	assert_int_equal(bin.major, 3);
	assert_int_equal(bin.minor, 3);
	assert_int_equal(bin.tls_mode, OP_RB_TLS_DTV_LOCAL);
	assert_int_not_equal(bin.tls_offset, 0); /* ruby_nt_serial comes first */

	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	assert_int_equal(dlinfo(h, RTLD_DI_LINKMAP, &lm), 0);
	*(void **)&ec_addr = dlsym(h, "ruby_stripped_ec");
	*(void **)&vm_exec_addr = dlsym(h, "ruby_stripped_vm_exec");
	assert_non_null(ec_addr);
	assert_non_null(vm_exec_addr);
	assert_int_equal(bin.vm_exec + lm->l_addr, (uint64_t)(uintptr_t)vm_exec_addr());
	/* The larger of the two functions both callers call, not the error path. */
	assert_true(bin.vm_exec_size >= 32 && bin.vm_exec_size < 4096);
	ec_addr(); /* this thread's block of the module allocated */

	ruby_binary__proc_info(&bin, lm->l_addr, &proc);
	assert_int_equal(proc.tls_mode, OP_RB_TLS_DTV_LOCAL);
	assert_int_equal(remote_memory__read(&mem, proc.tls_index, &modid, sizeof(modid)), 0);
	assert_int_equal(dlinfo(h, RTLD_DI_TLS_MODID, &want_modid), 0);
	assert_int_equal(modid, want_modid);
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	assert_int_equal(remote_memory__read(&mem, tp + 8, &dtv, sizeof(dtv)), 0);
	assert_int_equal(remote_memory__read(&mem, dtv + modid * 16, &block, sizeof(block)), 0);
	assert_int_equal(block + proc.tls_offset, (uint64_t)(uintptr_t)ec_addr());
	dlclose(h);
}

/* A copy of ruby_stripped.so in dir whose GOT pair for ruby_current_ec holds offset. */
static void patched_copy(const char *dir, const char *to, uint64_t offset)
{
	char path[512];
	struct ruby_binary bin;
	struct elf_file *ef;
	int fd;

	snprintf(path, sizeof(path), "%s/workloads/lib/ruby_stripped.so", tu_build_dir());
	TU_SH("cp %s %s/%s", path, dir, to);
	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	assert_int_equal(ruby_binary__inspect(ef, &bin), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, to);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	for (size_t i = 0; i < ef->n_segments; i++) {
		const struct elf_segment *seg = &ef->segments[i];
		uint64_t at = bin.tls_index + 8; /* the pair's second word: the offset */

		if (at >= seg->vaddr && at + 8 <= seg->vaddr + seg->filesz)
			assert_int_equal(
			    pwrite(fd, &offset, 8, (off_t)(seg->offset + (at - seg->vaddr))), 8);
	}
	close(fd);
	elf_file__close(ef);
}

/*
 * A hostile or unexpected file: a decoded offset outside the TLS block or
 * not 8-aligned is refused (the VM is not walked: -ENOTSUP, no mode), never
 * published.
 */
static void test_stripped_bad_offsets_refused(void **state)
{
	const uint64_t bad[] = {0x1000, 4, ~0ull, ~7ull}; /* ~7: offset + 8 wraps to 0 */
	char *dir = tu_mkdtemp(), path[512];
	struct ruby_binary bin;
	struct elf_file *ef;

	(void)state;
	assert_non_null(dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		patched_copy(dir, "libruby.so", bad[i]);
		snprintf(path, sizeof(path), "%s/libruby.so", dir);
		assert_int_equal(elf_file__open(path, -1, &ef), 0);
		assert_int_equal(ruby_binary__inspect(ef, &bin), -ENOTSUP);
		assert_int_equal(bin.tls_mode, 0);
		assert_int_not_equal(bin.vm_exec, 0); /* found from other code */
		elf_file__close(ef);
	}
	tu_rmtree(dir);
	free(dir);
}

/*
 * 3.3.10's rb_id2str inlines the ID lookup: its first 73 bytes (as built
 * from the release source, -O3) hold `cmp $0xa9,%rdi` (not RIP-relative)
 * and then, at byte 67, `cmp %ebx,0x249157(%rip)`: global_symbols.last_id
 * at 0x4d4d80, as its .symtab says.
 */
static void test_last_id_inlined(void **state)
{
	static const uint8_t code[] = {
	    0x41, 0x54, 0x55, 0x53, 0x48, 0x89, 0xfb, 0x48, 0xc1, 0xeb, 0x04, 0x48, 0x83,
	    0xec, 0x10, 0x48, 0x8d, 0x2d, 0x0a, 0x9c, 0x25, 0x00, 0x64, 0x48, 0x8b, 0x04,
	    0x25, 0x28, 0x00, 0x00, 0x00, 0x48, 0x89, 0x44, 0x24, 0x08, 0x31, 0xc0, 0x48,
	    0x81, 0xff, 0xa9, 0x00, 0x00, 0x00, 0x4c, 0x8b, 0x65, 0x00, 0x0f, 0x46, 0xdf,
	    0x4d, 0x85, 0xe4, 0x0f, 0x84, 0x9b, 0x00, 0x00, 0x00, 0x31, 0xed, 0x85, 0xdb,
	    0x74, 0x65, 0x39, 0x1d, 0x57, 0x91, 0x24, 0x00};

	(void)state;
	assert_int_equal(ruby_binary__last_id_cmp(code, sizeof(code), 0x28bbe0), 0x4d4d80);
	/* The first 32 bytes alone (what was read before): no compare. */
	assert_int_equal(ruby_binary__last_id_cmp(code, 32, 0x28bbe0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_last_id_inlined),
	    cmocka_unit_test(test_general_dynamic),
	    cmocka_unit_test(test_initial_exec),
	    cmocka_unit_test(test_initial_exec_local),
	    cmocka_unit_test(test_stripped),
	    cmocka_unit_test(test_stripped_bad_offsets_refused),
	};

	return cmocka_run_group_tests_name("ruby_binary", tests, NULL, NULL);
}
