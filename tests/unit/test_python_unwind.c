// SPDX-License-Identifier: Apache-2.0
/*
 * The Python walker (bpf/include/omniprof/interp/python_walk.h, through its plain-C build
 * in user_unwind__walk(), which drives it as the sampler does) over
 * memory built here by hand: a machine stack with frame pointers, thread
 * states and interpreter frames laid out with the real offset table
 * (python_layout.c) of 3.10 (frame objects), 3.11 (is_entry) and 3.12
 * (C-stack-owned entry frames). Checks which native frames are replaced by
 * which Python frames, that the right thread's state is picked, that a bad
 * pointer ends the walk with one clear error frame, that each interpreter
 * frame is read once as one block, and that a frame whose block runs past
 * the end of readable memory is still walked, field by field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interp/python/python_layout.h"
#include "interp/python/python_unwind.h"
#include "unwind/user_unwind.h"

/* "User memory": one readable image; everything else faults. */
#define MEM_BASE 0x7f0000000000ull
#define MEM_SIZE 0x10000
#define MEM_END	 (MEM_BASE + MEM_SIZE)
#define STACK	 (MEM_BASE + 0x1000) /* machine stack: frame records */
#define RUNTIME	 (MEM_BASE + 0x4000) /* the interpreters list head */
#define HEAP	 (MEM_BASE + 0x6000) /* interpreter, thread states, frames, code */
#define BAD_PTR	 0xdead0000ull	     /* never readable */

/* Code addresses: the eval loop (hot and .cold), C glue, a C extension, main. */
#define EVAL_START 0x600000ull
#define EVAL_END   0x601000ull
#define COLD_START 0x680000ull
#define COLD_END   0x680100ull
#define EVAL_PC	   0x600500ull
#define COLD_RA	   0x680010ull
#define GLUE_RA	   0x500100ull
#define CEXT_RA	   0x500200ull
#define MAIN_RA	   0x400100ull

#define OUR_THREAD   0x7f00aaaa0640ull /* the fs base of the walked thread */
#define OTHER_THREAD 0x7f00bbbb0640ull

static uint8_t mem[MEM_SIZE];

static int mem_read(void *ctx, void *dst, size_t size, uint64_t addr)
{
	(void)ctx;
	if (addr < MEM_BASE || addr - MEM_BASE > MEM_SIZE || size > MEM_SIZE - (addr - MEM_BASE))
		return -14;
	memcpy(dst, &mem[addr - MEM_BASE], size);
	return 0;
}

/* The Python walker's reads, counted: all of them, and the frame blocks by address. */
#define MAX_BLOCKS 16
struct read_log {
	int reads;
	int n_blocks;
	uint64_t blocks[MAX_BLOCKS];
};

static int logged_read(void *ctx, void *dst, size_t size, uint64_t addr)
{
	struct read_log *log = ctx;

	log->reads++;
	if (size == OP_PY_BLOCK && log->n_blocks < MAX_BLOCKS)
		log->blocks[log->n_blocks++] = addr;
	return mem_read(NULL, dst, size, addr);
}

/* How many times the walker asked for the block of frame f. */
static int block_reads(const struct read_log *log, uint64_t f)
{
	int n = 0;

	for (int i = 0; i < log->n_blocks; i++)
		n += log->blocks[i] == f;
	return n;
}

/* Every address unwinds with frame pointers. */
static void fp_rule(void *ctx, uint32_t pid, uint64_t pc, struct op_unwind_rule *rule)
{
	(void)ctx;
	(void)pid;
	(void)pc;
	*rule = (struct op_unwind_rule){
	    .cmd = OP_RULE_CFA, .cfa_base = OP_CFA_RBP, .cfa_offset = 16, .fp_offset = -16};
}

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(&mem[addr - MEM_BASE], &v, sizeof(v));
}

static void put32(uint64_t addr, uint32_t v)
{
	memcpy(&mem[addr - MEM_BASE], &v, sizeof(v));
}

static void put8(uint64_t addr, uint8_t v)
{
	mem[addr - MEM_BASE] = v;
}

/*
 * Frame records for return addresses ras[0 .. n), innermost first, each
 * [saved rbp][return address]; the outermost saved rbp is 0 (the end).
 * Returns the first record's address (the walked thread's rbp).
 */
static uint64_t build_stack(const uint64_t *ras, int n)
{
	uint64_t fp = STACK + 0x100;

	for (int i = 0; i < n; i++) {
		put64(fp + 0x40 * i, i + 1 < n ? fp + 0x40 * (i + 1) : 0);
		put64(fp + 0x40 * i + 8, ras[i]);
	}
	return fp;
}

/* A code object at addr whose fingerprint is firstlineno (and 0 after it). */
static void put_code(const struct python_layout *l, uint64_t addr, uint32_t firstlineno)
{
	put32(addr + l->bpf.code_fingerprint, firstlineno);
}

/*
 * The interpreter: RUNTIME holds the first interpreter, whose thread list is
 * another thread's state (running other_frame), then ours (running frame).
 * Fills *proc as python_binary__proc_info() would, and the eval loop's
 * ranges (interp_procs) as python_binary__interp_ranges() would.
 */
static struct op_interp_proc eval_ranges;

static void build_threads(const struct python_layout *l, uint64_t frame, uint64_t other_frame,
			  struct op_py_proc *proc)
{
	const struct op_py_offsets *o = &l->bpf;
	uint64_t interp = HEAP, other = HEAP + 0x100, ours = HEAP + 0x400;
	uint64_t other_cf = HEAP + 0x800, our_cf = HEAP + 0x840;

	put64(RUNTIME, interp);
	put64(interp + o->interp_threads, other);
	put64(other + o->tstate_thread_id, OTHER_THREAD);
	put64(other + o->tstate_next, ours);
	put64(ours + o->tstate_thread_id, OUR_THREAD);
	put64(ours + o->tstate_next, 0);
	if (o->cframe_current == OP_PY_NONE) {
		put64(other + o->tstate_frame, other_frame);
		put64(ours + o->tstate_frame, frame);
	} else {
		/* 3.11, 3.12: tstate->cframe->current_frame */
		put64(other + o->tstate_frame, other_cf);
		put64(other_cf + o->cframe_current, other_frame);
		put64(ours + o->tstate_frame, our_cf);
		put64(our_cf + o->cframe_current, frame);
	}
	memset(proc, 0, sizeof(*proc));
	proc->interp_head = RUNTIME;
	memset(&eval_ranges, 0, sizeof(eval_ranges));
	eval_ranges.ranges[0] = (struct op_interp_range){EVAL_START, EVAL_END, OP_INTERP_PYTHON, 0};
	eval_ranges.ranges[1] = (struct op_interp_range){COLD_START, COLD_END, OP_INTERP_PYTHON, 0};
	proc->off = *o;
	proc->version = (uint16_t)(l->major << 8 | l->minor);
}

/* 3.10: a PyFrameObject running code at instruction offset lasti. */
static void put_frame_object(const struct python_layout *l, uint64_t f, uint64_t code,
			     uint64_t back, int32_t lasti)
{
	put64(f + l->bpf.frame_code, code);
	put64(f + l->bpf.frame_back, back);
	put32(f + l->bpf.frame_instr, (uint32_t)lasti);
}

/* 3.12: a _PyInterpreterFrame at instruction `units` code units into code. */
static void put_interp_frame(const struct python_layout *l, uint64_t f, uint64_t code,
			     uint64_t previous, uint32_t units)
{
	put64(f + l->bpf.frame_code, code);
	put64(f + l->bpf.frame_back, previous);
	put64(f + l->bpf.frame_instr, code + l->bpf.code_instr + 2ull * units);
	put8(f + l->bpf.frame_entry, 0); /* FRAME_OWNED_BY_THREAD */
}

/* 3.11: a _PyInterpreterFrame; is_entry marks the first frame of an eval-loop call. */
static void put_311_frame(const struct python_layout *l, uint64_t f, uint64_t code,
			  uint64_t previous, uint32_t units, uint8_t is_entry)
{
	put_interp_frame(l, f, code, previous, units);
	put8(f + l->bpf.frame_entry, is_entry);
}

/* 3.12: the entry frame an eval-loop call pushes on the C stack first. */
static void put_entry_frame(const struct python_layout *l, uint64_t f, uint64_t previous)
{
	put64(f + l->bpf.frame_code, 0);
	put64(f + l->bpf.frame_back, previous);
	put8(f + l->bpf.frame_entry, l->bpf.cstack_owner);
}

/* Walks our thread; the Python walker's reads go to *log when it is not NULL. */
static struct user_unwind_result walk_logged(const struct op_py_proc *proc, uint64_t pc,
					     uint64_t fp, struct op_frame *frames, uint32_t max,
					     struct python_unwind *py, struct read_log *log)
{
	struct user_unwind_ops ops = {mem_read, fp_rule, NULL, NULL};

	memset(py, 0, sizeof(*py));
	py->proc = proc;
	py->thread_ptr = OUR_THREAD;
	if (log) {
		memset(log, 0, sizeof(*log));
		py->read = logged_read;
		py->read_ctx = log;
	}
	return user_unwind__walk(
	    &ops,
	    &(struct user_unwind_interp){&eval_ranges,
					 {[OP_INTERP_PYTHON] = python_unwind__runtime(py)}},
	    42, pc, STACK, fp, frames, max);
}

static struct user_unwind_result walk(const struct op_py_proc *proc, uint64_t pc, uint64_t fp,
				      struct op_frame *frames, uint32_t max,
				      struct python_unwind *py)
{
	return walk_logged(proc, pc, fp, frames, max, py, NULL);
}

static void assert_native(const struct op_frame *f, uint64_t addr)
{
	assert_int_equal(f->kind, OP_FRAME_NATIVE);
	assert_int_equal(f->addr, addr);
}

static void assert_python(const struct op_frame *f, uint64_t code, uint32_t firstlineno,
			  uint32_t aux)
{
	assert_int_equal(f->kind, OP_FRAME_PYTHON);
	assert_int_equal(f->addr, code);
	assert_int_equal(f->data, firstlineno); /* the fingerprint read from the code object */
	assert_int_equal(f->aux, aux);
}

static int setup(void **state)
{
	(void)state;
	memset(mem, 0, sizeof(mem));
	return 0;
}

/*
 * 3.10: each eval-loop call runs one frame object. Native stack: eval (leaf),
 * glue, eval (.cold part), glue, eval, main; frames leaf -> mid -> outer.
 * The other thread's frame must not show up. Each frame is read as one
 * block, except one whose block does not fit in memory: its fields are read
 * one by one (counted), with the same result.
 */
static void check_310_frame_objects(uint64_t leaf, int unreadable_blocks)
{
	const struct python_layout *l = python_layout__find(3, 10);
	const uint64_t ras[] = {GLUE_RA, COLD_RA, GLUE_RA, EVAL_PC + 0x10, MAIN_RA};
	uint64_t mid = HEAP + 0x1100, outer = HEAP + 0x1200, other = HEAP + 0x1300;
	uint64_t c_leaf = HEAP + 0x2000, c_mid = HEAP + 0x2100, c_outer = HEAP + 0x2200,
		 c_other = HEAP + 0x2300;
	struct op_frame f[32];
	struct python_unwind py;
	struct user_unwind_result r;
	struct read_log log;
	struct op_py_proc proc;
	uint64_t fp;

	assert_non_null(l);
	assert_int_equal(l->bpf.layout, OP_PY_LAYOUT_FRAME_OBJECT);
	put_code(l, c_leaf, 10);
	put_code(l, c_mid, 20);
	put_code(l, c_outer, 30);
	put_code(l, c_other, 99);
	put_frame_object(l, leaf, c_leaf, mid, 6);
	put_frame_object(l, mid, c_mid, outer, 14);
	put_frame_object(l, outer, c_outer, 0, -1); /* before its first instruction */
	put_frame_object(l, other, c_other, 0, 2);
	build_threads(l, leaf, other, &proc);
	fp = build_stack(ras, 5);

	r = walk_logged(&proc, EVAL_PC, fp, f, 32, &py, &log);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 6);
	assert_python(&f[0], c_leaf, 10, 6);
	assert_native(&f[1], GLUE_RA);
	assert_python(&f[2], c_mid, 20, 14); /* an eval frame in the .cold part */
	assert_native(&f[3], GLUE_RA);
	assert_python(&f[4], c_outer, 30, 0xffffffff);
	assert_native(&f[5], MAIN_RA);
	assert_int_equal(py.stats[OP_PY_STAT_WALKS], 1);
	assert_int_equal(py.stats[OP_PY_STAT_FRAMES], 3);
	assert_int_equal(py.stats[OP_PY_STAT_READ_ERR], 0);
	assert_int_equal(py.stats[OP_PY_STAT_FIELD_READS], unreadable_blocks);
	/* One block per frame; the thread search (5 reads), the current frame
	 * (1) and the code objects' fingerprints (3) are the other reads, and a
	 * frame read field by field costs its 3 fields. */
	assert_int_equal(block_reads(&log, leaf), 1);
	assert_int_equal(block_reads(&log, mid), 1);
	assert_int_equal(block_reads(&log, outer), 1);
	assert_int_equal(log.n_blocks, 3);
	assert_int_equal(log.reads, 5 + 1 + 3 + 3 + 3 * unreadable_blocks);
}

static void test_310_frame_objects(void **state)
{
	(void)state;
	check_310_frame_objects(HEAP + 0x1000, 0);
}

/* The leaf frame ends 4 bytes after its f_lasti, at the end of readable
 * memory: its block cannot be read. */
static void test_310_block_past_memory(void **state)
{
	const struct python_layout *l = python_layout__find(3, 10);

	(void)state;
	check_310_frame_objects(MEM_END - l->bpf.frame_instr - 4, 1);
}

/*
 * 3.11: an eval-loop call runs frames up to the one marked is_entry.
 * Interpreter frames, innermost first: c2, c1 (entry), b1 (entry), a2,
 * a1 (entry). Native stack: eval C, glue, eval B, C extension, eval A,
 * main. Expected: c2, c1 for eval C, b1 for eval B, a2, a1 for eval A.
 */
static void test_311_entry_flag(void **state)
{
	const struct python_layout *l = python_layout__find(3, 11);
	const uint64_t ras[] = {GLUE_RA, EVAL_PC + 0x30, CEXT_RA, COLD_RA, MAIN_RA};
	uint64_t c2 = HEAP + 0x1000, c1 = HEAP + 0x1080, b1 = HEAP + 0x1100, a2 = HEAP + 0x1180,
		 a1 = HEAP + 0x1200;
	uint64_t c_c2 = HEAP + 0x2000, c_c1 = HEAP + 0x2400, c_b1 = HEAP + 0x2800,
		 c_a2 = HEAP + 0x2c00, c_a1 = HEAP + 0x3000;
	struct op_frame f[32];
	struct python_unwind py;
	struct user_unwind_result r;
	struct read_log log;
	struct op_py_proc proc;
	uint64_t fp;

	(void)state;
	assert_non_null(l);
	assert_int_equal(l->bpf.layout, OP_PY_LAYOUT_ENTRY_FLAG);
	put_code(l, c_c2, 1);
	put_code(l, c_c1, 2);
	put_code(l, c_b1, 3);
	put_code(l, c_a2, 4);
	put_code(l, c_a1, 5);
	put_311_frame(l, c2, c_c2, c1, 9, 0);
	put_311_frame(l, c1, c_c1, b1, 8, 1);
	put_311_frame(l, b1, c_b1, a2, 7, 1);
	put_311_frame(l, a2, c_a2, a1, 6, 0);
	put_311_frame(l, a1, c_a1, 0, 5, 1);
	build_threads(l, c2, HEAP + 0x1300, &proc);
	fp = build_stack(ras, 5);

	r = walk_logged(&proc, EVAL_PC, fp, f, 32, &py, &log);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 8);
	assert_python(&f[0], c_c2, 1, 9);
	assert_python(&f[1], c_c1, 2, 8);
	assert_native(&f[2], GLUE_RA);
	assert_python(&f[3], c_b1, 3, 7);
	assert_native(&f[4], CEXT_RA);
	assert_python(&f[5], c_a2, 4, 6);
	assert_python(&f[6], c_a1, 5, 5);
	assert_native(&f[7], MAIN_RA);
	assert_int_equal(py.stats[OP_PY_STAT_FRAMES], 5);
	assert_int_equal(py.stats[OP_PY_STAT_FIELD_READS], 0);
	assert_int_equal(log.n_blocks, 5);
	assert_int_equal(block_reads(&log, b1), 1);
}

/*
 * 3.12: Python -> C -> Python -> C -> (an eval loop that has not pushed its
 * first frame yet). Interpreter frames, innermost first:
 *   entry_c (owned by the C stack), b2, b1, entry_b, a1, entry_a
 * Native stack: eval C (just entered), C extension, eval B, C extension,
 * eval A, main. Expected: eval C stays native (no Python frame of its own),
 * then the extension, b2 and b1 for eval B, the extension, a1 for eval A,
 * main; entry frames are never shown.
 */
static void check_312_entry_frames(uint64_t b2, uint64_t entry_b, int unreadable_blocks)
{
	const struct python_layout *l = python_layout__find(3, 12);
	const uint64_t ras[] = {CEXT_RA, EVAL_PC + 0x20, CEXT_RA, COLD_RA, MAIN_RA};
	uint64_t entry_c = STACK + 0x800, b1 = HEAP + 0x1080, a1 = HEAP + 0x1100,
		 entry_a = STACK + 0xa00, other = HEAP + 0x1200;
	uint64_t c_b2 = HEAP + 0x2000, c_b1 = HEAP + 0x2400, c_a1 = HEAP + 0x2800,
		 c_other = HEAP + 0x2c00;
	struct op_frame f[32];
	struct python_unwind py;
	struct user_unwind_result r;
	struct read_log log;
	struct op_py_proc proc;
	uint64_t fp;

	assert_non_null(l);
	assert_int_equal(l->bpf.layout, OP_PY_LAYOUT_CSTACK_OWNER);
	put_code(l, c_b2, 1);
	put_code(l, c_b1, 2);
	put_code(l, c_a1, 3);
	put_code(l, c_other, 4);
	put_entry_frame(l, entry_c, b2);
	put_interp_frame(l, b2, c_b2, b1, 7);
	put_interp_frame(l, b1, c_b1, entry_b, 0);
	put_entry_frame(l, entry_b, a1);
	put_interp_frame(l, a1, c_a1, entry_a, 33);
	put_entry_frame(l, entry_a, 0);
	put_interp_frame(l, other, c_other, 0, 1);
	build_threads(l, entry_c, other, &proc);
	fp = build_stack(ras, 5);

	r = walk_logged(&proc, EVAL_PC, fp, f, 32, &py, &log);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 7);
	assert_native(&f[0], EVAL_PC); /* eval C: its entry frame only */
	assert_native(&f[1], CEXT_RA);
	assert_python(&f[2], c_b2, 1, 7);
	assert_python(&f[3], c_b1, 2, 0);
	assert_native(&f[4], CEXT_RA);
	assert_python(&f[5], c_a1, 3, 33);
	assert_native(&f[6], MAIN_RA);
	assert_int_equal(py.stats[OP_PY_STAT_FRAMES], 3);
	assert_int_equal(py.stats[OP_PY_STAT_EVAL_NO_FRAME], 0);
	assert_int_equal(py.stats[OP_PY_STAT_FIELD_READS], unreadable_blocks);
	/* Each interpreter frame, entry frames included, is read once as one
	 * block (the owner check of the next frame reads the block the next step
	 * uses); the other reads are the thread search (5), the current frame
	 * (2: cframe, current_frame), the fingerprints (3), and 4 fields of
	 * each frame read field by field. */
	assert_int_equal(block_reads(&log, entry_c), 1);
	assert_int_equal(block_reads(&log, b2), 1);
	assert_int_equal(block_reads(&log, b1), 1);
	assert_int_equal(block_reads(&log, entry_b), 1);
	assert_int_equal(block_reads(&log, a1), 1);
	assert_int_equal(block_reads(&log, entry_a), 1);
	assert_int_equal(log.n_blocks, 6);
	assert_int_equal(log.reads, 6 + 5 + 2 + 3 + 4 * unreadable_blocks);
}

static void test_312_entry_frames(void **state)
{
	(void)state;
	check_312_entry_frames(HEAP + 0x1000, STACK + 0x900, 0);
}

/* A Python frame that ends just after its owner byte, at the end of
 * readable memory: read field by field. */
static void test_312_frame_past_memory(void **state)
{
	const struct python_layout *l = python_layout__find(3, 12);

	(void)state;
	check_312_entry_frames(MEM_END - l->bpf.frame_entry - 1, STACK + 0x900, 1);
}

/* The same for an entry frame: its owner and previous frame still count. */
static void test_312_entry_frame_past_memory(void **state)
{
	const struct python_layout *l = python_layout__find(3, 12);

	(void)state;
	check_312_entry_frames(HEAP + 0x1000, MEM_END - l->bpf.frame_entry - 1, 1);
}

/*
 * A frame whose f_back points nowhere: the frame it leads to cannot be read,
 * so the walk stops there with exactly one OP_UNWIND_ERR_INTERP error frame
 * (the step writes it; the driver must not add another), counted.
 */
static void test_bad_pointer_stops_with_error(void **state)
{
	const struct python_layout *l = python_layout__find(3, 10);
	const uint64_t ras[] = {GLUE_RA, EVAL_PC + 0x10, MAIN_RA};
	uint64_t leaf = HEAP + 0x1000, c_leaf = HEAP + 0x2000;
	struct op_frame f[32];
	struct python_unwind py;
	struct user_unwind_result r;
	struct op_py_proc proc;
	uint64_t fp;

	(void)state;
	put_code(l, c_leaf, 10);
	put_frame_object(l, leaf, c_leaf, BAD_PTR, 4);
	build_threads(l, leaf, 0, &proc);
	fp = build_stack(ras, 3);

	r = walk(&proc, EVAL_PC, fp, f, 32, &py);
	assert_int_equal(r.error, OP_UNWIND_ERR_INTERP);
	assert_true(r.flags & OP_TRACE_F_USER_TRUNCATED);
	assert_int_equal(r.n_frames, 3);
	assert_python(&f[0], c_leaf, 10, 4);
	assert_native(&f[1], GLUE_RA);
	assert_int_equal(f[2].kind, OP_FRAME_ERROR);
	assert_int_equal(f[2].addr, OP_UNWIND_ERR_INTERP);
	assert_int_equal(py.stats[OP_PY_STAT_READ_ERR], 1);
}

/* The same bad pointer in 3.12, in the middle of one eval-loop call. */
static void test_312_bad_previous(void **state)
{
	const struct python_layout *l = python_layout__find(3, 12);
	const uint64_t ras[] = {MAIN_RA};
	uint64_t b2 = HEAP + 0x1000, c_b2 = HEAP + 0x2000;
	struct op_frame f[32];
	struct python_unwind py;
	struct user_unwind_result r;
	struct op_py_proc proc;
	uint64_t fp;

	(void)state;
	put_code(l, c_b2, 5);
	put_interp_frame(l, b2, c_b2, BAD_PTR, 1);
	build_threads(l, b2, 0, &proc);
	fp = build_stack(ras, 1);

	r = walk(&proc, EVAL_PC, fp, f, 32, &py);
	assert_int_equal(r.error, OP_UNWIND_ERR_INTERP);
	assert_int_equal(r.n_frames, 2);
	assert_python(&f[0], c_b2, 5, 1);
	assert_int_equal(f[1].kind, OP_FRAME_ERROR);
	assert_int_equal(f[1].addr, OP_UNWIND_ERR_INTERP);
}

/* A thread with no thread state (not created by Python): native frames only. */
static void test_unknown_thread_is_native(void **state)
{
	const struct python_layout *l = python_layout__find(3, 12);
	const uint64_t ras[] = {GLUE_RA, MAIN_RA};
	struct op_frame f[32];
	struct python_unwind py;
	struct user_unwind_result r;
	struct op_py_proc proc;
	uint64_t fp;

	(void)state;
	build_threads(l, HEAP + 0x1000, HEAP + 0x1000, &proc);
	fp = build_stack(ras, 2);
	memset(&py, 0, sizeof(py));
	py.proc = &proc;
	py.thread_ptr = 0x1234; /* no such thread */
	r = user_unwind__walk(&(struct user_unwind_ops){mem_read, fp_rule, NULL, NULL},
			      &(struct user_unwind_interp){
				  &eval_ranges, {[OP_INTERP_PYTHON] = python_unwind__runtime(&py)}},
			      42, EVAL_PC, STACK, fp, f, 32);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_frames, 3);
	assert_native(&f[0], EVAL_PC);
	assert_native(&f[1], GLUE_RA);
	assert_native(&f[2], MAIN_RA);
	assert_int_equal(py.stats[OP_PY_STAT_NO_THREAD], 1);
	assert_int_equal(py.stats[OP_PY_STAT_FRAMES], 0);
}

/*
 * Every layout's frame fields lie in the block the walker reads, at a
 * multiple of their size; one that does not is refused.
 */
static void test_layouts_fit_block(void **state)
{
	const struct python_layout *l312 = python_layout__find(3, 12);
	struct op_py_offsets o;
	int n = 0;

	(void)state;
	for (unsigned int minor = 0; minor < 64; minor++) {
		const struct python_layout *l = python_layout__find(3, minor);

		if (!l)
			continue;
		n++;
		assert_true(python_layout__frame_fits(&l->bpf));
	}
	assert_true(n >= 8); /* 3.6 .. 3.13 */
	o = l312->bpf;
	o.frame_entry = OP_PY_BLOCK; /* the owner byte just past the block */
	assert_false(python_layout__frame_fits(&o));
	o = l312->bpf;
	o.frame_instr = OP_PY_BLOCK - 4; /* a pointer that would end past the block */
	assert_false(python_layout__frame_fits(&o));
	o = l312->bpf;
	o.frame_back = 12; /* not a multiple of 8 */
	assert_false(python_layout__frame_fits(&o));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_310_frame_objects, setup),
	    cmocka_unit_test_setup(test_310_block_past_memory, setup),
	    cmocka_unit_test_setup(test_311_entry_flag, setup),
	    cmocka_unit_test_setup(test_312_entry_frames, setup),
	    cmocka_unit_test_setup(test_312_frame_past_memory, setup),
	    cmocka_unit_test_setup(test_312_entry_frame_past_memory, setup),
	    cmocka_unit_test(test_layouts_fit_block),
	    cmocka_unit_test_setup(test_bad_pointer_stops_with_error, setup),
	    cmocka_unit_test_setup(test_312_bad_previous, setup),
	    cmocka_unit_test_setup(test_unknown_thread_is_native, setup),
	};

	return cmocka_run_group_tests_name("python_unwind", tests, NULL, NULL);
}
