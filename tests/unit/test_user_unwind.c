// SPDX-License-Identifier: Apache-2.0
/*
 * user_unwind: the BPF unwinder run in user space. The test unwinds its own
 * live stack with tables built from its own mapped files by the real ELF code
 * (no hand-made rules), names the frames, and checks the walk's edge cases
 * (depth limit, unreadable memory) against what walk_user_stack() emits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "proc/proc_maps.h"
#include "symbol/native_symbols.h"
#include "unwind/user_unwind.h"

#define MAX_FILES 64

/* Reads this process's memory without touching it directly (ASan redzones). */
static int self_read(void *ctx, void *dst, size_t size, uint64_t addr)
{
	struct iovec local = {dst, size}, remote = {(void *)(uintptr_t)addr, size};

	(void)ctx;
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)size ? 0 : -EFAULT;
}

struct self_maps {
	struct user_unwind_tables *tables;
	struct elf_file *files[MAX_FILES];
	struct native_symbols *syms[MAX_FILES];
	uint64_t start[MAX_FILES], end[MAX_FILES], bias[MAX_FILES];
	int n;
};

static void self_maps__load(struct self_maps *sm)
{
	struct proc_map *maps = NULL;
	size_t n = 0;

	memset(sm, 0, sizeof(*sm));
	assert_int_equal(user_unwind_tables__new(&sm->tables), 0);
	assert_int_equal(proc_maps__read(getpid(), &maps, &n), 0);
	for (size_t i = 0; i < n && sm->n < MAX_FILES; i++) {
		struct elf_file *ef;
		uint64_t vaddr;

		if (!(maps[i].perms & PROC_MAP_X) || maps[i].path[0] != '/')
			continue;
		if (elf_file__open(maps[i].path, -1, &ef))
			continue;
		if (!elf_file__mapping_bias(ef, maps[i].offset, maps[i].end - maps[i].start, PF_X,
					    &vaddr)) {
			elf_file__close(ef);
			continue;
		}
		sm->files[sm->n] = ef;
		sm->start[sm->n] = maps[i].start;
		sm->end[sm->n] = maps[i].end;
		sm->bias[sm->n] = maps[i].start - vaddr;
		native_symbols__open(ef, &sm->syms[sm->n]);
		/* Files without CFI fall back to frame pointers, as in the agent. */
		user_unwind_tables__add(sm->tables, maps[i].start, maps[i].end, sm->bias[sm->n],
					ef);
		sm->n++;
	}
	proc_maps__free(maps, n);
}

static void self_maps__clear(struct self_maps *sm)
{
	user_unwind_tables__free(sm->tables);
	for (int i = 0; i < sm->n; i++) {
		native_symbols__free(sm->syms[i]);
		elf_file__close(sm->files[i]);
	}
}

static const char *self_maps__name(struct self_maps *sm, const struct op_frame *f)
{
	uint64_t addr = f->addr - (f->flags & OP_FRAME_F_RETURN_ADDRESS ? 1 : 0), off;

	for (int i = 0; i < sm->n; i++)
		if (addr >= sm->start[i] && addr < sm->end[i] && sm->syms[i]) {
			const char *name =
			    native_symbols__lookup(sm->syms[i], addr - sm->bias[i], &off);

			return name ? name : "?";
		}
	return "?";
}

static struct op_frame frames[OP_MAX_USER_FRAMES];
static struct user_unwind_result result;

/* Unwinds the live stack from inside the innermost function. */
static void __attribute__((noinline)) unwind_here(uint64_t pc, uint64_t sp, uint64_t fp)
{
	struct self_maps sm;
	struct user_unwind_ops ops = {self_read, user_unwind_tables__find_rule, NULL, NULL};
	const char *want[] = {"uu_leaf", "uu_mid", "uu_outer", "test_unwinds_own_stack"};
	int main_at = -1;

	self_maps__load(&sm);
	ops.rule_ctx = sm.tables;
	result = user_unwind__run(&ops, (uint32_t)getpid(), pc, sp, fp, frames, OP_MAX_USER_FRAMES);
	for (uint32_t i = 0; i < result.n_frames; i++) {
		const char *name = self_maps__name(&sm, &frames[i]);

		if (i < 4 && strcmp(name, want[i]))
			fail_msg("frame %u is %s, expected %s", i, name, want[i]);
		if (!strcmp(name, "main"))
			main_at = (int)i;
	}
	assert_int_equal(result.error, 0);
	assert_int_equal(result.flags, 0);
	assert_true(main_at > 4);
	assert_int_equal(frames[0].flags, 0);
	assert_int_equal(frames[1].flags, OP_FRAME_F_RETURN_ADDRESS);
	/* Most frames came from tables: libc, cmocka and this file all have CFI. */
	assert_true(user_unwind_tables__stats(sm.tables)->frames_cfi >= (uint64_t)main_at);
	assert_true(user_unwind_tables__stats(sm.tables)->tables_built >= 2);
	self_maps__clear(&sm);
}

/* The innermost function reads its own registers; no frame pointer (rbp is garbage to it). */
__attribute__((noinline, optimize("omit-frame-pointer"))) void uu_leaf(int x)
{
	uint64_t pc, sp, fp;
	volatile uint64_t pad[8];

	pad[x & 7] = (uint64_t)x;
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(pc), "=r"(sp), "=r"(fp));
	unwind_here(pc, sp, fp);
	pad[(x + 1) & 7] = pad[x & 7];
}

__attribute__((noinline, optimize("omit-frame-pointer"))) void uu_mid(int x)
{
	volatile char buf[100];

	buf[x % 100] = (char)x;
	uu_leaf(x + buf[(x + 1) % 100]);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void uu_outer(int x)
{
	uu_mid(x * 2);
	__asm__ volatile("" ::: "memory");
}

static void __attribute__((noinline)) test_unwinds_own_stack(void **state)
{
	(void)state;
	uu_outer(3);
	__asm__ volatile("" ::: "memory");
}

/* ---- walk edge cases, on a fake stack of frame-pointer records ------------- */

#define FAKE_BASE 0x7ff000000000ull
static uint64_t fake_stack[64];

static int fake_read(void *ctx, void *dst, size_t size, uint64_t addr)
{
	(void)ctx;
	if (addr < FAKE_BASE || addr + size > FAKE_BASE + sizeof(fake_stack))
		return -EFAULT;
	memcpy(dst, (char *)fake_stack + (addr - FAKE_BASE), size);
	return 0;
}

/* n frame-pointer records; the last saved rbp is `outer`. Returns the first rbp. */
static uint64_t fake_chain(int n, uint64_t outer)
{
	memset(fake_stack, 0, sizeof(fake_stack));
	for (int i = 0; i < n; i++) {
		fake_stack[2 * i] = i + 1 < n ? FAKE_BASE + 16 * (i + 1) : outer;
		fake_stack[2 * i + 1] = 0x401000 + (uint64_t)i;
	}
	return FAKE_BASE;
}

static void test_depth_limit(void **state)
{
	struct user_unwind_tables *t;
	struct user_unwind_ops ops = {fake_read, user_unwind_tables__find_rule, NULL, NULL};
	struct op_frame f[4];
	struct user_unwind_result r;

	(void)state;
	assert_int_equal(user_unwind_tables__new(&t), 0);
	ops.rule_ctx = t;
	/* Deeper than the buffer: the outermost slot says the stack was cut, as in
	 * the BPF record, so a cut stack never passes for a whole one. */
	r = user_unwind__run(&ops, 1, 0x400000, FAKE_BASE, fake_chain(10, 0), f, 4);
	assert_int_equal(r.n_frames, 4);
	assert_int_equal(r.error, OP_UNWIND_ERR_MAX_DEPTH);
	assert_int_equal(r.flags, OP_TRACE_F_USER_TRUNCATED);
	assert_int_equal(f[2].kind, OP_FRAME_NATIVE);
	assert_int_equal(f[3].kind, OP_FRAME_ERROR);
	assert_int_equal(f[3].addr, OP_UNWIND_ERR_MAX_DEPTH);
	/* Exactly as deep as the buffer: three frames then rbp 0 ends it cleanly. */
	r = user_unwind__run(&ops, 1, 0x400000, FAKE_BASE, fake_chain(3, 0), f, 4);
	assert_int_equal(r.n_frames, 4);
	assert_int_equal(r.error, 0);
	/* Every lookup fell back to frame pointers: no mapping. */
	assert_int_equal(user_unwind_tables__stats(t)->fp_no_mapping, 4 + 4);
	user_unwind_tables__free(t);
}

static void test_read_error_frame(void **state)
{
	struct user_unwind_ops ops = {fake_read, user_unwind_tables__find_rule, NULL, NULL};
	struct user_unwind_tables *t;
	struct op_frame f[8];
	struct user_unwind_result r;

	(void)state;
	assert_int_equal(user_unwind_tables__new(&t), 0);
	ops.rule_ctx = t;
	r = user_unwind__run(&ops, 1, 0x400000, FAKE_BASE, fake_chain(2, FAKE_BASE + 4096), f, 8);
	assert_int_equal(r.error, OP_UNWIND_ERR_READ);
	assert_int_equal(r.n_frames, 4); /* pc, two return addresses, the error frame */
	assert_int_equal(f[3].kind, OP_FRAME_ERROR);
	assert_int_equal(f[3].addr, OP_UNWIND_ERR_READ);
	/* No user registers at all. */
	r = user_unwind__run(&ops, 1, 0, 0, 0, f, 8);
	assert_int_equal(r.n_frames, 0);
	assert_int_equal(r.flags, OP_TRACE_F_NO_USER);
	user_unwind_tables__free(t);
}

static void test_table_gap_is_invalid(void **state)
{
	struct user_unwind_tables *t;
	struct op_unwind_rule rule;
	struct elf_file *ef;
	uint64_t vaddr;
	struct proc_map *maps = NULL;
	size_t n = 0;
	int added = 0;

	(void)state;
	/* This test binary: its table covers its code and says nothing below its first FDE. */
	assert_int_equal(user_unwind_tables__new(&t), 0);
	assert_int_equal(elf_file__open("/proc/self/exe", -1, &ef), 0);
	assert_int_equal(proc_maps__read(getpid(), &maps, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (!(maps[i].perms & PROC_MAP_X) ||
		    !elf_file__mapping_bias(ef, maps[i].offset, maps[i].end - maps[i].start, PF_X,
					    &vaddr))
			continue;
		if (maps[i].start <= (uintptr_t)test_table_gap_is_invalid &&
		    (uintptr_t)test_table_gap_is_invalid < maps[i].end) {
			assert_int_equal(user_unwind_tables__add(t, maps[i].start, maps[i].end,
								 maps[i].start - vaddr, ef),
					 0);
			added = 1;
		}
	}
	assert_true(added);
	user_unwind_tables__find_rule(t, 0, (uintptr_t)test_table_gap_is_invalid, &rule);
	assert_int_equal(rule.cmd, OP_RULE_CFA);
	/* Past the end of every mapping: frame pointers. */
	user_unwind_tables__find_rule(t, 0, 8, &rule);
	assert_int_equal(rule.cmd, OP_RULE_CFA);
	assert_int_equal(rule.cfa_base, OP_CFA_RBP);
	assert_int_equal(user_unwind_tables__stats(t)->frames_cfi, 1);
	assert_int_equal(user_unwind_tables__stats(t)->fp_no_mapping, 1);
	/* Another process of the same file: the mapping goes, the table stays built. */
	user_unwind_tables__reset_mappings(t);
	user_unwind_tables__find_rule(t, 0, (uintptr_t)test_table_gap_is_invalid, &rule);
	assert_int_equal(user_unwind_tables__stats(t)->fp_no_mapping, 2);
	assert_int_equal(user_unwind_tables__add(t, 0x1000, 0x2000, 0, ef), 0);
	assert_int_equal(user_unwind_tables__stats(t)->tables_built, 1);
	/* Anonymous code (JIT): the frame-pointer rule that stops with its own error. */
	assert_int_equal(user_unwind_tables__add_anon(t, 0x3000, 0x4000), 0);
	user_unwind_tables__find_rule(t, 0, 0x3800, &rule);
	assert_int_equal(rule.cmd, OP_RULE_ANON);
	assert_int_equal(user_unwind_tables__stats(t)->frames_anon, 1);
	proc_maps__free(maps, n);
	user_unwind_tables__free(t);
	elf_file__close(ef);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unwinds_own_stack),
	    cmocka_unit_test(test_depth_limit),
	    cmocka_unit_test(test_read_error_frame),
	    cmocka_unit_test(test_table_gap_is_invalid),
	};

	return cmocka_run_group_tests_name("user_unwind", tests, NULL, NULL);
}
