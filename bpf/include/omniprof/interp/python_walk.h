/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPython frame walker, written once for two targets like
 * omniprof/unwind/native.h (include it and omniprof/unwind/walk.h first): the BPF
 * sampler and ordinary C. It
 * reads the interpreter's memory only through OP_PY_READ(py, dst, size,
 * addr) (OP_READ_USER's contract; py, the struct op_py_walker, is the
 * includer's context: user space finds its read source from it), and the
 * includer may define OP_PY_STAT(py, which) to count enum op_py_stat events.
 *
 * How Python frames join the native stack. The native unwinder walks the
 * machine stack; each frame of CPython's eval loop (_PyEval_EvalFrameDefault,
 * hot and .cold parts) is one invocation of the interpreter, and the Python
 * frames that invocation runs are, innermost first, the next ones on the
 * thread's chain of interpreter frames:
 *   3.6-3.10  exactly one PyFrameObject per invocation (follow f_back);
 *   3.11      frames up to and including the one marked is_entry;
 *   3.12+     frames up to the C-stack-owned "entry" frame the invocation
 *             pushed first (skipped: it is no Python code).
 * So the walker replaces each eval-loop native frame by that invocation's
 * Python frames, then the native walk resumes from the eval loop's caller:
 * Python -> C extension -> Python callback comes out interleaved in order.
 *
 * One frame is written per step (the caller gives each step its own slot),
 * so a deep Python stack costs one bpf_loop iteration per frame.
 *
 * Reads: an interpreter frame's fields are taken from one read of its first
 * OP_PY_BLOCK bytes (in BPF each read is a bpf_probe_read_user call), and
 * the code object's fingerprint is a second read. The block of the frame that
 * comes next is kept in the walker: 3.12+ reads it to see whether that frame
 * is an entry frame, and the next step takes its fields from it without
 * reading again. So a Python frame costs two reads, one more when an entry
 * frame is skipped. When a block cannot be read (a frame near the end of a
 * mapping), that frame's fields are read one by one, as they always could be.
 *
 * The whole walk, as both targets drive it: the generic walk
 * (omniprof/unwind/walk.h) meets a native frame in the eval loop (the pid's
 * OP_INTERP_PYTHON ranges) and calls CPython's step, which the first time
 * in the sample runs the set-up
 *   op_py_search_init()           the pid's struct op_py_proc, the thread pointer
 *   op_py_search_step() x N       one thread state per call (bpf_loop in BPF)
 *   op_py_search_done()           the thread's current frame: Python frames or not
 * and then, when the set-up succeeded, op_py_walk_step() for this frame
 * and for every pending frame of the invocation.
 * An interpreter frame that cannot be read ends the walk with an
 * OP_UNWIND_ERR_INTERP error frame, written by the step itself (see
 * op_py_walk_step()): the rest of the chain cannot be trusted.
 */
#ifndef OMNIPROF_INTERP_PYTHON_WALK_H
#define OMNIPROF_INTERP_PYTHON_WALK_H

#include "omniprof/interp/python_abi.h"
#include "omniprof/abi.h"

#ifndef OMNIPROF_UNWIND_WALK_H
#error "include omniprof/unwind/walk.h before omniprof/interp/python_walk.h"
#endif

#ifndef OP_PY_READ
#error "define OP_PY_READ before including omniprof/interp/python_walk.h"
#endif
#ifndef OP_PY_STAT
#define OP_PY_STAT(py, which) ((void)0)
#endif

/* How op_py_block_fill() is defined: BPF makes it a global function, which
 * the verifier checks once instead of at each place the walk loads a block. */
#ifndef OP_PY_FILL_FN
#define OP_PY_FILL_FN static __always_inline int
#endif

static __always_inline int op_py_read_ptr(const struct op_py_walker *py, __u64 *dst, __u64 addr)
{
	*dst = 0;
	return OP_PY_READ(py, dst, sizeof(*dst), addr);
}

/*
 * Where the field at frame offset off is in the block. off is a frame_*
 * offset of the pid's layout, which user space publishes only when it lies
 * in the block at a multiple of the field's size (python_layout__frame_fits()):
 * the masks only keep the verifier, and a corrupt map entry, inside the block.
 */
static __always_inline __u64 *op_py_block_u64(struct op_py_walker *py, __u16 off)
{
	return &py->block.q[(off / 8) & (OP_PY_BLOCK / 8 - 1)];
}

static __always_inline __u32 *op_py_block_u32(struct op_py_walker *py, __u16 off)
{
	return &py->block.d[(off / 4) & (OP_PY_BLOCK / 4 - 1)];
}

static __always_inline __u8 *op_py_block_u8(struct op_py_walker *py, __u16 off)
{
	return &py->block.b[off & (OP_PY_BLOCK - 1)];
}

/* Forgets the block: the per-CPU walker outlives the sample, and the frame
 * at that address in another process is another frame. */
static __always_inline void op_py_block_reset(struct op_py_walker *py)
{
	py->block_frame = 0;
	py->block_ok = 0;
}

/*
 * For a frame whose block cannot be read (one near the end of a mapping):
 * the fields the walk uses, read one by one into their places in the block.
 * A field that cannot be read gets the value that means "not known", which
 * the walk treats as it treated a failed read: code and previous frame 0,
 * f_lasti -1 and instruction pointer 0 (no instruction offset), is_entry
 * set (the invocation ends here), owner not the C stack. Returns 1 when code
 * and previous frame were read, else 0 (the frame is unreadable).
 */
OP_PY_FILL_FN op_py_block_fill(struct op_py_walker *py, __u64 f)
{
	const struct op_py_offsets *o;
	__u64 *code, *back, *instr;
	__u32 *lasti;
	__u8 *entry;
	int ok = 1;

	if (!py) /* a global function's pointer may be NULL for the verifier */
		return 0;
	o = &py->proc.off;
	code = op_py_block_u64(py, o->frame_code);
	back = op_py_block_u64(py, o->frame_back);
	instr = op_py_block_u64(py, o->frame_instr);
	lasti = op_py_block_u32(py, o->frame_instr);
	entry = op_py_block_u8(py, o->frame_entry);
	if (OP_PY_READ(py, code, sizeof(*code), f + o->frame_code)) {
		*code = 0;
		ok = 0;
	}
	if (OP_PY_READ(py, back, sizeof(*back), f + o->frame_back)) {
		*back = 0;
		ok = 0;
	}
	switch (o->layout) {
	case OP_PY_LAYOUT_FRAME_OBJECT:
		if (OP_PY_READ(py, lasti, sizeof(*lasti), f + o->frame_instr))
			*lasti = 0xffffffff;
		return ok;
	case OP_PY_LAYOUT_ENTRY_FLAG:
		if (OP_PY_READ(py, entry, sizeof(*entry), f + o->frame_entry))
			*entry = 1;
		break;
	default:
		if (OP_PY_READ(py, entry, sizeof(*entry), f + o->frame_entry))
			*entry = (__u8)~o->cstack_owner;
		break;
	}
	if (OP_PY_READ(py, instr, sizeof(*instr), f + o->frame_instr))
		*instr = 0;
	return ok;
}

/* Makes py->block interpreter frame f's: one read, unless it already is. */
static __always_inline void op_py_block_load(struct op_py_walker *py, __u64 f)
{
	if (py->block_frame == f)
		return;
	py->block_frame = f;
	if (!OP_PY_READ(py, &py->block, sizeof(py->block), f)) {
		py->block_ok = 1;
		return;
	}
	OP_PY_STAT(py, OP_PY_STAT_FIELD_READS);
	py->block_ok = (__u8)op_py_block_fill(py, f);
}

/* The first thread state of the first interpreter, in *tstate. 0 or -1. */
static __always_inline int op_py_first_thread(const struct op_py_walker *py, __u64 *tstate)
{
	__u64 interp;

	*tstate = 0;
	if (op_py_read_ptr(py, &interp, py->proc.interp_head) || !interp)
		return -1;
	if (op_py_read_ptr(py, tstate, interp + py->proc.off.interp_threads))
		return -1;
	return 0;
}

/*
 * Is tstate the thread whose thread pointer is thread_ptr? CPython stores
 * pthread_self() in thread_id, and on x86-64 glibc and musl a pthread_t is
 * the thread's TCB address, the fs base. Returns 1 (match), 0 (no: *next is
 * the following thread state, 0 at the end) or -1 (unreadable).
 */
static __always_inline int op_py_thread_matches(const struct op_py_walker *py, __u64 tstate,
						__u64 thread_ptr, __u64 *next)
{
	__u64 id;

	*next = 0;
	if (op_py_read_ptr(py, &id, tstate + py->proc.off.tstate_thread_id))
		return -1;
	if (id == thread_ptr)
		return 1;
	if (op_py_read_ptr(py, next, tstate + py->proc.off.tstate_next))
		return -1;
	return 0;
}

/* The search for the sampled thread's thread state (op_py_search_*). */
struct op_py_thread_search {
	__u64 tstate;	  /* next candidate, 0: none left */
	__u64 thread_ptr; /* the sampled thread's fs base */
	__u64 found;	  /* its thread state, 0: not found (yet) */
};

/* Sets py->frame to the frame tstate runs now (0 when none). 0 or -1. */
static __always_inline int op_py_begin(struct op_py_walker *py, __u64 tstate)
{
	const struct op_py_offsets *o = &py->proc.off;
	__u64 p;

	py->frame = 0;
	py->deferred = OP_STEP_END;
	op_py_block_reset(py);
	if (op_py_read_ptr(py, &p, tstate + o->tstate_frame))
		return -1;
	if (o->cframe_current != OP_PY_NONE && p && op_py_read_ptr(py, &p, p + o->cframe_current))
		return -1;
	py->frame = p;
	return 0;
}

/* Starts a walk of a process running proc: resets py and the search (no read). */
static __always_inline void op_py_search_reset(struct op_py_walker *py,
					       const struct op_py_proc *proc,
					       struct op_py_thread_search *s, __u64 thread_ptr)
{
	OP_PY_STAT(py, OP_PY_STAT_WALKS);
	py->proc = *proc;
	py->frame = 0;
	py->deferred = OP_STEP_END;
	op_py_block_reset(py);
	s->thread_ptr = thread_ptr;
	s->tstate = 0;
	s->found = 0;
}

/* Points the search at the first thread state. Returns 0, or -1 when the
 * interpreter has no thread state to search (counted: OP_PY_STAT_NO_THREAD). */
static __always_inline int op_py_search_first(struct op_py_walker *py,
					      struct op_py_thread_search *s)
{
	if (op_py_first_thread(py, &s->tstate) || !s->tstate) {
		OP_PY_STAT(py, OP_PY_STAT_NO_THREAD);
		return -1;
	}
	return 0;
}

/* op_py_search_reset() then op_py_search_first(). */
static __always_inline int op_py_search_init(struct op_py_walker *py, const struct op_py_proc *proc,
					     struct op_py_thread_search *s, __u64 thread_ptr)
{
	op_py_search_reset(py, proc, s, thread_ptr);
	return op_py_search_first(py, s);
}

/*
 * After op_py_search_reset(): a thread state remembered from an earlier
 * search of this thread is the result when its thread id is still the
 * thread's (one read instead of the walk of the list). 1 when it is, 0 when
 * the list must be searched.
 */
static __always_inline int op_py_search_try(const struct op_py_walker *py,
					    struct op_py_thread_search *s, __u64 tstate)
{
	__u64 next;

	if (!tstate || op_py_thread_matches(py, tstate, s->thread_ptr, &next) != 1)
		return 0;
	s->found = tstate;
	return 1;
}

/* Checks one thread state. Returns 1 when the search is over (found, end of
 * the list, unreadable), 0 to go on: at most OP_PY_MAX_THREADS calls. */
static __always_inline int op_py_search_step(const struct op_py_walker *py,
					     struct op_py_thread_search *s)
{
	__u64 next;
	int r;

	if (!s->tstate)
		return 1;
	r = op_py_thread_matches(py, s->tstate, s->thread_ptr, &next);
	if (r == 1)
		s->found = s->tstate;
	s->tstate = next;
	return r != 0;
}

/* Ends the search: 1 when the walk must use op_py_walk_step() (the thread runs
 * Python code), 0 when plain native steps will do (counted). */
static __always_inline int op_py_search_done(struct op_py_walker *py,
					     const struct op_py_thread_search *s)
{
	if (!s->found) {
		OP_PY_STAT(py, OP_PY_STAT_NO_THREAD);
		return 0;
	}
	if (op_py_begin(py, s->found) || !py->frame) {
		OP_PY_STAT(py, OP_PY_STAT_NO_FRAME);
		return 0;
	}
	return 1;
}

/* 3.12+: is frame f the C-stack-owned entry frame of an invocation? Leaves
 * f's block loaded: f is the frame the walk reads next. */
static __always_inline int op_py_is_cstack(struct op_py_walker *py, __u64 f)
{
	const struct op_py_offsets *o = &py->proc.off;

	if (o->layout != OP_PY_LAYOUT_CSTACK_OWNER || !f)
		return 0;
	op_py_block_load(py, f);
	return *op_py_block_u8(py, o->frame_entry) == o->cstack_owner;
}

/* Frame f's previous frame (entry frames are skipped through this), 0 when unreadable. */
static __always_inline __u64 op_py_back(struct op_py_walker *py, __u64 f)
{
	op_py_block_load(py, f);
	return *op_py_block_u64(py, py->proc.off.frame_back);
}

/*
 * Writes interpreter frame py->frame into *frame and moves py->frame to the
 * next one. Returns 1 when the same eval-loop invocation has more frames, 0
 * when it has no more, -1 when the frame could not be read (*frame is then
 * an OP_UNWIND_ERR_INTERP error frame).
 */
static __always_inline int op_py_emit(struct op_py_walker *py, struct op_frame *frame)
{
	const struct op_py_offsets *o = &py->proc.off;
	__u64 f = py->frame, code, back, instr, fingerprint = 0;
	__u32 aux = 0xffffffff;
	int more = 1;

	frame->addr = 0;
	frame->data = 0;
	frame->aux = aux;
	frame->kind = OP_FRAME_PYTHON;
	frame->flags = 0;
	frame->reserved = 0;
	py->frame = 0;
	op_py_block_load(py, f);
	if (!py->block_ok) {
		/* A bad pointer in the chain: nothing past it can be trusted. */
		OP_PY_STAT(py, OP_PY_STAT_READ_ERR);
		op_frame__set_error(frame, OP_UNWIND_ERR_INTERP);
		return -1;
	}
	code = *op_py_block_u64(py, o->frame_code);
	back = *op_py_block_u64(py, o->frame_back);
	switch (o->layout) {
	case OP_PY_LAYOUT_FRAME_OBJECT:
		aux = *op_py_block_u32(py, o->frame_instr); /* f_lasti, -1 before the first */
		more = 0;
		break;
	case OP_PY_LAYOUT_ENTRY_FLAG:
		if (*op_py_block_u8(py, o->frame_entry))
			more = 0;
		/* fall through */
	default:
		instr = *op_py_block_u64(py, o->frame_instr);
		if (instr >= code + o->code_instr &&
		    instr - (code + o->code_instr) < 0x1ffffffffull)
			aux = (__u32)((instr - (code + o->code_instr)) / 2);
		break;
	}
	if (op_py_is_cstack(py, back)) {
		/* The invocation's first frame: the chain goes on past its entry frame. */
		more = 0;
		back = op_py_back(py, back);
	}
	if (code)
		OP_PY_READ(py, &fingerprint, sizeof(fingerprint), code + o->code_fingerprint);
	frame->addr = code;
	frame->data = fingerprint;
	frame->aux = aux;
	py->frame = back;
	OP_PY_STAT(py, OP_PY_STAT_FRAMES);
	return back ? more : 0;
}

/*
 * CPython's step (OP_INTERP_STEP of omniprof/unwind/walk.h for
 * OP_INTERP_PYTHON, after the includer's lazy set-up found the thread's
 * frame): a pending Python frame, or the native eval-loop frame in *frame
 * (res: its native step result) replaced by the first Python frame of its
 * invocation. An OP_UNWIND_ERR_INTERP error comes with its error frame
 * already in *frame: the walk adds no other.
 */
static __always_inline int op_py_walk_step(struct op_py_walker *py, struct op_walk *w,
					   struct op_frame *frame, int res)
{
	int more;

	if (w->active == OP_INTERP_PYTHON) {
		more = op_py_emit(py, frame);
		if (more < 0) {
			w->active = 0;
			return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_INTERP;
		}
		if (more)
			return OP_STEP_CONTINUE;
		w->active = 0;
		return py->deferred;
	}
	if (op_py_is_cstack(py, py->frame)) {
		/* An invocation that has not pushed a Python frame yet (3.12+): keep
		 * the native frame, the next invocation's frames are past the entry. */
		py->frame = op_py_back(py, py->frame);
		return res;
	}
	if (!py->frame) {
		/* Keep the native frame: better than nothing. */
		OP_PY_STAT(py, OP_PY_STAT_EVAL_NO_FRAME);
		return res;
	}
	more = op_py_emit(py, frame);
	if (more < 0)
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_INTERP;
	if (!more)
		return res;
	py->deferred = res;
	w->active = OP_INTERP_PYTHON;
	return OP_STEP_CONTINUE;
}

#endif
