// SPDX-License-Identifier: Apache-2.0
/*
 * The per-version offset table. Sources: each version's own headers, where
 * the structures are declared (named per column below), with every figure
 * checked against the DWARF of a build of that version (pyenv's 3.6.15,
 * 3.7.16, 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1, 3.13.0, x86-64, release
 * builds, printed with gdb `ptype /o`). The layouts are internal to CPython
 * but do not change within a minor version of a release build.
 *
 *   interp_threads    PyInterpreterState.tstate_head (<=3.10, Include/pystate.h,
 *                     Include/internal/pycore_pystate.h, ..._interp.h),
 *                     .threads.head (3.11+, Include/internal/pycore_interp.h)
 *   tstate_*          PyThreadState (Include/pystate.h 3.6, Include/cpython/pystate.h 3.7+):
 *                     next, thread_id, frame (<=3.10) / cframe (3.11, 3.12) /
 *                     current_frame (3.13)
 *   cframe_current    _PyCFrame.current_frame (Include/cpython/pystate.h 3.11, 3.12)
 *   frame_*           PyFrameObject f_back, f_code, f_lasti (Include/frameobject.h,
 *                     Include/cpython/frameobject.h 3.9, 3.10);
 *                     _PyInterpreterFrame previous, f_code / f_executable,
 *                     prev_instr / instr_ptr, is_entry (3.11) / owner (3.12+)
 *                     (Include/internal/pycore_frame.h)
 *   code_*            PyCodeObject (Include/code.h, Include/cpython/code.h 3.8+)
 *   unicode sizes     sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject)
 *                     (Include/cpython/unicodeobject.h; 3.12 dropped wstr)
 *   runtime head      _PyRuntimeState.interpreters.head
 *                     (Include/internal/pycore_pystate.h 3.7, pycore_runtime.h 3.8+)
 *
 * code_fingerprint is co_firstlineno and the 4 bytes after it (the low half
 * of co_code up to 3.7, padding in 3.8-3.10, co_nlocalsplus from 3.11): fixed
 * for a code object's life, so a different value at the same address means a
 * different code object. FRAME_OWNED_BY_CSTACK is 3 in enum _frameowner
 * (pycore_frame.h 3.12, 3.13).
 */
#include "interp/python/python_layout.h"

#include <stddef.h>

#define N OP_PY_NONE

static const struct python_layout layouts[] = {
    {
	.major = 3,
	.minor = 6,
	.runtime_interp_head = N, /* static interp_head in Python/pystate.c */
	.bpf = {.interp_threads = 8,
		.tstate_next = 8,
		.tstate_thread_id = 152,
		.tstate_frame = 24,
		.cframe_current = N,
		.frame_back = 24,
		.frame_code = 32,
		.frame_instr = 120,
		.frame_entry = N,
		.code_instr = N,
		.code_fingerprint = 36,
		.layout = OP_PY_LAYOUT_FRAME_OBJECT},
	.code_filename = 96,
	.code_name = 104,
	.code_qualname = N,
	.code_firstlineno = 36,
	.code_line_table = 112,
	.line_table = PYTHON_LNOTAB,
	.unicode_ascii_size = 48,
	.unicode_compact_size = 72,
    },
    {
	.major = 3,
	.minor = 7,
	.runtime_interp_head = 24,
	.bpf = {.interp_threads = 8,
		.tstate_next = 8,
		.tstate_thread_id = 176,
		.tstate_frame = 24,
		.cframe_current = N,
		.frame_back = 24,
		.frame_code = 32,
		.frame_instr = 104,
		.frame_entry = N,
		.code_instr = N,
		.code_fingerprint = 36,
		.layout = OP_PY_LAYOUT_FRAME_OBJECT},
	.code_filename = 96,
	.code_name = 104,
	.code_qualname = N,
	.code_firstlineno = 36,
	.code_line_table = 112,
	.line_table = PYTHON_LNOTAB,
	.unicode_ascii_size = 48,
	.unicode_compact_size = 72,
    },
    {
	.major = 3,
	.minor = 8,
	.runtime_interp_head = 32,
	.bpf = {.interp_threads = 8,
		.tstate_next = 8,
		.tstate_thread_id = 176,
		.tstate_frame = 24,
		.cframe_current = N,
		.frame_back = 24,
		.frame_code = 32,
		.frame_instr = 104,
		.frame_entry = N,
		.code_instr = N,
		.code_fingerprint = 40,
		.layout = OP_PY_LAYOUT_FRAME_OBJECT},
	.code_filename = 104,
	.code_name = 112,
	.code_qualname = N,
	.code_firstlineno = 40,
	.code_line_table = 120,
	.line_table = PYTHON_LNOTAB,
	.unicode_ascii_size = 48,
	.unicode_compact_size = 72,
    },
    {
	.major = 3,
	.minor = 9,
	.runtime_interp_head = 32,
	.bpf = {.interp_threads = 8,
		.tstate_next = 8,
		.tstate_thread_id = 176,
		.tstate_frame = 24,
		.cframe_current = N,
		.frame_back = 24,
		.frame_code = 32,
		.frame_instr = 104,
		.frame_entry = N,
		.code_instr = N,
		.code_fingerprint = 40,
		.layout = OP_PY_LAYOUT_FRAME_OBJECT},
	.code_filename = 104,
	.code_name = 112,
	.code_qualname = N,
	.code_firstlineno = 40,
	.code_line_table = 120,
	.line_table = PYTHON_LNOTAB,
	.unicode_ascii_size = 48,
	.unicode_compact_size = 72,
    },
    {
	.major = 3,
	.minor = 10,
	.runtime_interp_head = 32,
	.bpf = {.interp_threads = 8,
		.tstate_next = 8,
		.tstate_thread_id = 176,
		.tstate_frame = 24,
		.cframe_current = N,
		.frame_back = 24,
		.frame_code = 32,
		.frame_instr = 96,
		.frame_entry = N,
		.code_instr = N,
		.code_fingerprint = 40,
		.layout = OP_PY_LAYOUT_FRAME_OBJECT},
	.code_filename = 104,
	.code_name = 112,
	.code_qualname = N,
	.code_firstlineno = 40,
	.code_line_table = 120,
	.line_table = PYTHON_LINETABLE_310,
	.unicode_ascii_size = 48,
	.unicode_compact_size = 72,
    },
    {
	.major = 3,
	.minor = 11,
	.runtime_interp_head = 40,
	.bpf = {.interp_threads = 16,
		.tstate_next = 8,
		.tstate_thread_id = 152,
		.tstate_frame = 56, /* cframe */
		.cframe_current = 8,
		.frame_back = 48,
		.frame_code = 32,
		.frame_instr = 56,
		.frame_entry = 68, /* is_entry */
		.code_instr = 184,
		.code_fingerprint = 72,
		.layout = OP_PY_LAYOUT_ENTRY_FLAG},
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_firstlineno = 72,
	.code_line_table = 136,
	.line_table = PYTHON_LOCATIONS_311,
	.unicode_ascii_size = 48,
	.unicode_compact_size = 72,
    },
    {
	.major = 3,
	.minor = 12,
	.runtime_interp_head = 40,
	.bpf = {.interp_threads = 72,
		.tstate_next = 8,
		.tstate_thread_id = 136,
		.tstate_frame = 56, /* cframe */
		.cframe_current = 0,
		.frame_back = 8,
		.frame_code = 0,
		.frame_instr = 56,
		.frame_entry = 70, /* owner */
		.code_instr = 192,
		.code_fingerprint = 68,
		.layout = OP_PY_LAYOUT_CSTACK_OWNER,
		.cstack_owner = 3},
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_firstlineno = 68,
	.code_line_table = 136,
	.line_table = PYTHON_LOCATIONS_311,
	.unicode_ascii_size = 40,
	.unicode_compact_size = 56,
    },
    {
	.major = 3,
	.minor = 13,
	.runtime_interp_head = 632,
	.bpf = {.interp_threads = 7344,
		.tstate_next = 8,
		.tstate_thread_id = 152,
		.tstate_frame = 72, /* current_frame */
		.cframe_current = N,
		.frame_back = 8,
		.frame_code = 0,
		.frame_instr = 56,
		.frame_entry = 70, /* owner */
		.code_instr = 200,
		.code_fingerprint = 68,
		.layout = OP_PY_LAYOUT_CSTACK_OWNER,
		.cstack_owner = 3},
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_firstlineno = 68,
	.code_line_table = 136,
	.line_table = PYTHON_LOCATIONS_311,
	.unicode_ascii_size = 40,
	.unicode_compact_size = 56,
    },
};

const struct python_layout *python_layout__find(unsigned int major, unsigned int minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

static bool field_fits(uint16_t off, uint16_t size)
{
	return off <= OP_PY_BLOCK - size && off % size == 0;
}

bool python_layout__frame_fits(const struct op_py_offsets *o)
{
	bool frame_object = o->layout == OP_PY_LAYOUT_FRAME_OBJECT;

	return field_fits(o->frame_back, 8) && field_fits(o->frame_code, 8) &&
	       field_fits(o->frame_instr, frame_object ? 4 : 8) && /* int f_lasti / a pointer */
	       (frame_object || field_fits(o->frame_entry, 1));	   /* is_entry / owner: 3.11+ */
}
