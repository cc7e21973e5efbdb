// SPDX-License-Identifier: Apache-2.0
/*
 * Stack copies (samples of processes whose tables were not loaded) turned
 * into the record the kernel would have sent: the walk over the copied
 * bytes, the stop where the copy ends, the process that was never read, and
 * malformed records counted rather than trusted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "interp/python/python_layout.h"
#include "proc/process_table.h"
#include "engine/stack_copy.h"

#define SP 0x7ffd00001000ull

/* A record as the BPF side sends it: header, 2 kernel frames, then the stack. */
static struct op_stack_copy *new_copy(void)
{
	struct op_stack_copy *c = calloc(1, OP_STACK_COPY_MAX_SIZE);
	uint64_t kernel[2] = {0xffffffff81000010ull, 0xffffffff81000020ull};

	assert_non_null(c);
	c->hdr.type = OP_EVENT_STACK_COPY;
	c->hdr.pid = 4242;
	c->tid = 4243;
	c->n_kernel = 2;
	memcpy(c + 1, kernel, sizeof(kernel));
	c->pc = 0x401000;
	c->sp = SP;
	return c;
}

/* The copied stack, after the kernel frames. */
static uint8_t *stack_of(struct op_stack_copy *c)
{
	return (uint8_t *)((uint64_t *)(c + 1) + c->n_kernel);
}

static void put(struct op_stack_copy *c, uint64_t addr, uint64_t value)
{
	memcpy(&stack_of(c)[addr - SP], &value, sizeof(value));
}

static size_t copy_size(const struct op_stack_copy *c)
{
	return OP_STACK_COPY_SIZE(c->n_kernel, c->stack_len);
}

static const uint64_t *kernel_of(const struct op_trace *t)
{
	return (const uint64_t *)(t + 1);
}

static const struct op_frame *user_of(const struct op_trace *t)
{
	return (const struct op_frame *)(kernel_of(t) + t->n_kernel);
}

/* A process with one mapping and no tables: frame pointers, as in the kernel. */
static void test_frame_pointer_walk_over_copy(void **state)
{
	struct process_mapping map = {.start = 0x400000, .end = 0x500000, .file_slot = 1};
	struct process p = {.pid = 4242, .maps = &map, .n_maps = 1, .refreshes = 1};
	struct process_table pt = {0};
	struct stack_copy_stats st = {0};
	struct op_stack_copy *c = new_copy();
	struct op_trace *t = malloc(OP_TRACE_MAX_SIZE);
	long n;

	(void)state;
	assert_non_null(t);
	/* rbp chain: SP+0x40 -> SP+0x80 -> 0 (outermost), return addresses above each. */
	c->fp = SP + 0x40;
	put(c, SP + 0x40, SP + 0x80);
	put(c, SP + 0x48, 0x401100);
	put(c, SP + 0x80, 0);
	put(c, SP + 0x88, 0x401200);
	c->stack_len = 0x100;
	n = stack_copy__to_trace(c, copy_size(c), &pt, &p, NULL, NULL, t, &st, NULL, 0);
	assert_int_equal(n, sizeof(*t) + 2 * 8 + 3 * sizeof(struct op_frame));
	assert_int_equal(t->hdr.type, OP_EVENT_TRACE);
	assert_int_equal(t->hdr.pid, 4242);
	assert_int_equal(t->tid, 4243);
	assert_int_equal(t->n_kernel, 2);
	assert_int_equal(kernel_of(t)[1], 0xffffffff81000020ull);
	assert_int_equal(t->n_user, 3);
	assert_int_equal(user_of(t)[0].addr, 0x401000);
	assert_int_equal(user_of(t)[1].addr, 0x401100);
	assert_int_equal(user_of(t)[2].addr, 0x401200);
	assert_int_equal(t->flags & OP_TRACE_F_USER_TRUNCATED, 0);
	assert_int_equal(st.complete, 1);
	assert_int_equal(st.frames_fp, 3);

	/* The copy ends before the second frame record: stop there, and say so. */
	c->stack_len = 0x60;
	n = stack_copy__to_trace(c, copy_size(c), &pt, &p, NULL, NULL, t, &st, NULL, 0);
	assert_true(n > 0);
	assert_int_equal(t->n_user, 3);
	assert_int_equal(user_of(t)[2].kind, OP_FRAME_ERROR);
	assert_int_equal(user_of(t)[2].addr, OP_UNWIND_ERR_READ);
	assert_true(t->flags & OP_TRACE_F_USER_TRUNCATED);
	assert_int_equal(st.truncated, 1);
	assert_int_equal(st.beyond_copy, 1);
	free(t);
	free(c);
}

/* Maps never read (the process exited first): the first frame and the reason. */
static void test_process_never_read(void **state)
{
	struct process_table pt = {0};
	struct stack_copy_stats st = {0};
	struct op_stack_copy *c = new_copy();
	struct op_trace *t = malloc(OP_TRACE_MAX_SIZE);
	struct process gone = {.pid = 4242, .gone = true, .refreshes = 1};

	(void)state;
	assert_non_null(t);
	assert_true(stack_copy__to_trace(c, copy_size(c), &pt, NULL, NULL, NULL, t, &st, NULL, 0) >
		    0);
	assert_int_equal(t->n_user, 2);
	assert_int_equal(user_of(t)[0].addr, 0x401000);
	assert_int_equal(user_of(t)[1].kind, OP_FRAME_ERROR);
	assert_int_equal(user_of(t)[1].addr, OP_UNWIND_ERR_NO_MAPS);
	assert_true(stack_copy__to_trace(c, copy_size(c), &pt, &gone, NULL, NULL, t, &st, NULL, 0) >
		    0);
	assert_int_equal(st.no_maps, 2);
	free(t);
	free(c);
}

static void test_malformed_copies(void **state)
{
	struct process_table pt = {0};
	struct stack_copy_stats st = {0};
	struct op_stack_copy *c = new_copy();
	struct op_trace *t = malloc(OP_TRACE_MAX_SIZE);

	(void)state;
	assert_non_null(t);
	c->stack_len = 64;
	/* Shorter than its header, shorter or longer than its counts say, a stack
	 * too large, too many kernel frames. */
	assert_int_equal(stack_copy__to_trace(c, 10, &pt, NULL, NULL, NULL, t, &st, NULL, 0),
			 -EINVAL);
	assert_int_equal(
	    stack_copy__to_trace(c, copy_size(c) - 1, &pt, NULL, NULL, NULL, t, &st, NULL, 0),
	    -EINVAL);
	assert_int_equal(
	    stack_copy__to_trace(c, copy_size(c) + 8, &pt, NULL, NULL, NULL, t, &st, NULL, 0),
	    -EINVAL);
	c->stack_len = OP_STACK_COPY_MAX + 8;
	assert_int_equal(
	    stack_copy__to_trace(c, copy_size(c), &pt, NULL, NULL, NULL, t, &st, NULL, 0), -EINVAL);
	c->stack_len = 0;
	c->n_kernel = OP_MAX_KERNEL_FRAMES + 2;
	assert_int_equal(
	    stack_copy__to_trace(c, copy_size(c), &pt, NULL, NULL, NULL, t, &st, NULL, 0), -EINVAL);
	assert_int_equal(st.bad_records, 5);
	assert_int_equal(st.received, 0);
	free(t);
	free(c);
}

static void put_heap(uint8_t *heap, uint64_t addr, uint64_t value, size_t size)
{
	memcpy(heap + (addr - (uintptr_t)heap), &value, size);
}

/*
 * A copy's Go switch fields (bpf/stack_copy.h) from a hostile record: a
 * goroutine stack longer than OP_STACK_COPY_GO_MAX, or past the record's
 * size, or bytes without the flag that says they are the goroutine's, are
 * refused whole; a record whose size counts them is walked.
 */
static void test_go_switch_fields_malformed(void **state)
{
	struct process_table pt = {0};
	struct stack_copy_stats st = {0};
	struct op_stack_copy *c = new_copy();
	struct op_trace *t = malloc(OP_TRACE_MAX_SIZE);

	(void)state;
	assert_non_null(t);
	c->stack_len = 64;
	c->go_flags = OP_STACK_COPY_F_GO;
	c->go_sched_sp = 0xc000100000ull;
	c->go_stack_len = OP_STACK_COPY_GO_MAX + 8;
	assert_int_equal(stack_copy__to_trace(c, copy_size(c) + c->go_stack_len, &pt, NULL, NULL,
					      NULL, t, &st, NULL, 0),
			 -EINVAL);
	c->go_stack_len = UINT32_MAX;
	assert_int_equal(stack_copy__to_trace(c, copy_size(c) + c->go_stack_len, &pt, NULL, NULL,
					      NULL, t, &st, NULL, 0),
			 -EINVAL);
	/* Its bytes past the size the record has, or the size without them. */
	c->go_stack_len = 64;
	assert_int_equal(
	    stack_copy__to_trace(c, copy_size(c), &pt, NULL, NULL, NULL, t, &st, NULL, 0), -EINVAL);
	assert_int_equal(stack_copy__to_trace(c, copy_size(c) + c->go_stack_len + 8, &pt, NULL,
					      NULL, NULL, t, &st, NULL, 0),
			 -EINVAL);
	/* Goroutine bytes the flag does not vouch for. */
	c->go_flags = 0;
	assert_int_equal(stack_copy__to_trace(c, copy_size(c) + c->go_stack_len, &pt, NULL, NULL,
					      NULL, t, &st, NULL, 0),
			 -EINVAL);
	assert_int_equal(st.bad_records, 5);
	assert_int_equal(st.received, 0);
	/* Counted in the size, with the flag: a record (its walk: no maps here). */
	c->go_flags = OP_STACK_COPY_F_GO;
	assert_true(stack_copy__to_trace(c, copy_size(c) + c->go_stack_len, &pt, NULL, NULL, NULL,
					 t, &st, NULL, 0) > 0);
	assert_int_equal(st.received, 1);
	assert_int_equal(st.stack_bytes, 64);
	/* A signal's interrupted stack (OP_STACK_COPY_F_SIGNAL) is such bytes too,
	 * but never together with a Go switch's. */
	c->go_flags = OP_STACK_COPY_F_SIGNAL;
	assert_true(stack_copy__to_trace(c, copy_size(c) + c->go_stack_len, &pt, NULL, NULL, NULL,
					 t, &st, NULL, 0) > 0);
	c->go_flags = OP_STACK_COPY_F_GO | OP_STACK_COPY_F_SIGNAL;
	assert_int_equal(stack_copy__to_trace(c, copy_size(c) + c->go_stack_len, &pt, NULL, NULL,
					      NULL, t, &st, NULL, 0),
			 -EINVAL);
	assert_int_equal(st.received, 2);
	assert_int_equal(st.bad_records, 6);
	free(t);
	free(c);
}

/*
 * A copy of a CPython 3.12 process: Python -> C -> Python. The interpreter's
 * thread state and frames live in this test's heap (read live, as the
 * agent reads a young process with process_vm_readv: the copy's pid is the
 * test's own), while the C-stack-owned entry frames live only in the copied
 * stack, so they must be read from the copy. Expected: each eval-loop frame
 * becomes its Python frame, the C extension between them stays.
 */
static void test_python_frames_from_copy(void **state)
{
	const struct python_layout *l = python_layout__find(3, 12);
	const struct op_py_offsets *o = &l->bpf;
	struct process_mapping map = {.start = 0x400000, .end = 0x700000, .file_slot = 1};
	struct process p = {.pid = 4242, .maps = &map, .n_maps = 1, .refreshes = 1};
	struct process_table pt = {0};
	struct stack_copy_stats st = {0};
	struct op_stack_copy *c = new_copy();
	struct op_trace *t = malloc(OP_TRACE_MAX_SIZE);
	uint8_t *heap = calloc(1, 0x4000);
	uint64_t h = (uintptr_t)heap, head = h, interp = h + 0x100, tstate = h + 0x400,
		 cframe = h + 0x800, b1 = h + 0x1000, a1 = h + 0x1100, code_b = h + 0x2000,
		 code_a = h + 0x2400, entry_b = SP + 0x200, entry_a = SP + 0x300;
	struct op_py_proc py = {.interp_head = head, .off = *o, .version = 0x30c};
	struct op_interp_proc ranges = {0};

	(void)state;
	assert_non_null(t);
	assert_non_null(heap);
	ranges.ranges[0] = (struct op_interp_range){0x600000, 0x601000, OP_INTERP_PYTHON, 0};
	c->hdr.pid = (uint32_t)getpid();
	c->tls_base = 0x7f0012340640ull;
	c->pc = 0x600500; /* eval B */
	c->fp = SP + 0x40;
	put(c, SP + 0x40, SP + 0x80);
	put(c, SP + 0x48, 0x500200); /* the C extension */
	put(c, SP + 0x80, SP + 0xc0);
	put(c, SP + 0x88, 0x600700); /* eval A */
	put(c, SP + 0xc0, 0);
	put(c, SP + 0xc8, 0x400100); /* main */
	/* Entry frames: owner FRAME_OWNED_BY_CSTACK, previous = the caller's frame. */
	put(c, entry_b + o->frame_back, a1);
	stack_of(c)[entry_b + o->frame_entry - SP] = o->cstack_owner;
	put(c, entry_a + o->frame_back, 0);
	stack_of(c)[entry_a + o->frame_entry - SP] = o->cstack_owner;
	c->stack_len = 0x400;
	put_heap(heap, head, interp, 8);
	put_heap(heap, interp + o->interp_threads, tstate, 8);
	put_heap(heap, tstate + o->tstate_thread_id, c->tls_base, 8);
	put_heap(heap, tstate + o->tstate_frame, cframe, 8);
	put_heap(heap, cframe + o->cframe_current, b1, 8);
	put_heap(heap, b1 + o->frame_code, code_b, 8);
	put_heap(heap, b1 + o->frame_back, entry_b, 8);
	put_heap(heap, b1 + o->frame_instr, code_b + o->code_instr + 2 * 5, 8);
	put_heap(heap, a1 + o->frame_code, code_a, 8);
	put_heap(heap, a1 + o->frame_back, entry_a, 8);
	put_heap(heap, a1 + o->frame_instr, code_a + o->code_instr + 2 * 9, 8);
	put_heap(heap, code_b + o->code_fingerprint, 11, 4);
	put_heap(heap, code_a + o->code_fingerprint, 22, 4);

	assert_true(stack_copy__to_trace(c, copy_size(c), &pt, &p, &ranges,
					 (const void *[OP_INTERP__COUNT]){[OP_INTERP_PYTHON] = &py},
					 t, &st, NULL, 0) > 0);
	assert_int_equal(t->n_user, 4);
	assert_int_equal(user_of(t)[0].kind, OP_FRAME_PYTHON);
	assert_int_equal(user_of(t)[0].addr, code_b);
	assert_int_equal(user_of(t)[0].aux, 5);
	assert_int_equal(user_of(t)[0].data, 11);
	assert_int_equal(user_of(t)[1].kind, OP_FRAME_NATIVE);
	assert_int_equal(user_of(t)[1].addr, 0x500200);
	assert_int_equal(user_of(t)[2].kind, OP_FRAME_PYTHON);
	assert_int_equal(user_of(t)[2].addr, code_a);
	assert_int_equal(user_of(t)[2].aux, 9);
	assert_int_equal(user_of(t)[3].addr, 0x400100);
	assert_int_equal(t->flags & OP_TRACE_F_USER_TRUNCATED, 0);
	assert_int_equal(st.interp[OP_INTERP_PYTHON].walks, 1);
	assert_int_equal(st.interp[OP_INTERP_PYTHON].frames, 2);
	assert_true(st.interp_reads > 0);

	/* Another thread (no thread state has its thread pointer): native only. */
	c->tls_base = 0x7f00ffff0640ull;
	assert_true(stack_copy__to_trace(c, copy_size(c), &pt, &p, &ranges,
					 (const void *[OP_INTERP__COUNT]){[OP_INTERP_PYTHON] = &py},
					 t, &st, NULL, 0) > 0);
	assert_int_equal(t->n_user, 4);
	assert_int_equal(user_of(t)[0].kind, OP_FRAME_NATIVE);
	assert_int_equal(user_of(t)[0].addr, 0x600500);
	assert_int_equal(st.interp[OP_INTERP_PYTHON].no_state, 1);
	free(heap);
	free(t);
	free(c);
}

/*
 * A 3.12 entry frame near the end of the copy: its block runs past the copy
 * into memory the process still has. The copy's bytes must win over the
 * live ones (here, the live stack has moved on: another owner, another
 * previous frame), so the entry frame is still skipped. The copy's "stack"
 * is a buffer of this test, which the walk reads live past the copy.
 */
static void test_python_block_past_copy_end(void **state)
{
	const struct python_layout *l = python_layout__find(3, 12);
	const struct op_py_offsets *o = &l->bpf;
	struct process_mapping map = {.start = 0x400000, .end = 0x700000, .file_slot = 1};
	struct process p = {.pid = 4242, .maps = &map, .n_maps = 1, .refreshes = 1};
	struct process_table pt = {0};
	struct stack_copy_stats st = {0};
	struct op_stack_copy *c = new_copy();
	struct op_trace *t = malloc(OP_TRACE_MAX_SIZE);
	uint8_t *heap = calloc(1, 0x4000), *live = calloc(1, 0x1000);
	uint64_t h = (uintptr_t)heap, sp = (uintptr_t)live, interp = h + 0x100, tstate = h + 0x400,
		 cframe = h + 0x800, a1 = h + 0x1000, code_a = h + 0x2000, stray = h + 0x3000,
		 entry_a;
	struct op_py_proc py = {.interp_head = h, .off = *o, .version = 0x30c};
	struct op_interp_proc ranges = {0};
	uint64_t v;

	(void)state;
	assert_non_null(t);
	assert_non_null(heap);
	assert_non_null(live);
	ranges.ranges[0] = (struct op_interp_range){0x600000, 0x601000, OP_INTERP_PYTHON, 0};
	c->hdr.pid = (uint32_t)getpid();
	c->tls_base = 0x7f0012340640ull;
	c->pc = 0x600500; /* eval A, running a1 */
	c->sp = sp;
	c->stack_len = 0x400;
	c->fp = sp + 0x40;
	entry_a = sp + c->stack_len - o->frame_entry - 1; /* owner: the copy's last byte */
	v = 0;
	memcpy(&stack_of(c)[0x40], &v, 8);
	v = 0x400100; /* main */
	memcpy(&stack_of(c)[0x48], &v, 8);
	v = 0;
	memcpy(&stack_of(c)[entry_a + o->frame_back - sp], &v, 8);
	stack_of(c)[entry_a + o->frame_entry - sp] = o->cstack_owner;
	/* What the process's stack holds there now. */
	put_heap(live, entry_a + o->frame_back, stray, 8);
	live[entry_a + o->frame_entry - sp] = 0;
	put_heap(heap, h, interp, 8);
	put_heap(heap, interp + o->interp_threads, tstate, 8);
	put_heap(heap, tstate + o->tstate_thread_id, c->tls_base, 8);
	put_heap(heap, tstate + o->tstate_frame, cframe, 8);
	put_heap(heap, cframe + o->cframe_current, a1, 8);
	put_heap(heap, a1 + o->frame_code, code_a, 8);
	put_heap(heap, a1 + o->frame_back, entry_a, 8);
	put_heap(heap, a1 + o->frame_instr, code_a + o->code_instr + 2 * 3, 8);
	put_heap(heap, code_a + o->code_fingerprint, 33, 4);
	put_heap(heap, stray + o->frame_code, code_a, 8);

	assert_true(stack_copy__to_trace(c, copy_size(c), &pt, &p, &ranges,
					 (const void *[OP_INTERP__COUNT]){[OP_INTERP_PYTHON] = &py},
					 t, &st, NULL, 0) > 0);
	assert_int_equal(t->n_user, 2);
	assert_int_equal(user_of(t)[0].kind, OP_FRAME_PYTHON);
	assert_int_equal(user_of(t)[0].addr, code_a);
	assert_int_equal(user_of(t)[0].aux, 3);
	assert_int_equal(user_of(t)[0].data, 33);
	assert_int_equal(user_of(t)[1].kind, OP_FRAME_NATIVE);
	assert_int_equal(user_of(t)[1].addr, 0x400100);
	assert_int_equal(t->flags & OP_TRACE_F_USER_TRUNCATED, 0);
	assert_int_equal(st.interp[OP_INTERP_PYTHON].frames, 1);
	free(live);
	free(heap);
	free(t);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame_pointer_walk_over_copy),
	    cmocka_unit_test(test_process_never_read),
	    cmocka_unit_test(test_malformed_copies),
	    cmocka_unit_test(test_go_switch_fields_malformed),
	    cmocka_unit_test(test_python_frames_from_copy),
	    cmocka_unit_test(test_python_block_past_copy_end),
	};

	return cmocka_run_group_tests_name("stack_copy", tests, NULL, NULL);
}
