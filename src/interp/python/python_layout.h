/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What omniprof knows of each CPython minor version's memory layout: the
 * offsets the in-kernel walker needs (struct op_py_offsets) and the ones the
 * host needs to name code objects. One row per version in python_layout.c,
 * each figure with where it comes from.
 */
#ifndef OMNIPROF_INTERP_PYTHON_LAYOUT_H
#define OMNIPROF_INTERP_PYTHON_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "omniprof/interp/python_abi.h"

enum python_line_table {
	PYTHON_LNOTAB = 1,    /* 3.6-3.9 co_lnotab: (byte delta, line delta) pairs */
	PYTHON_LINETABLE_310, /* 3.10 co_linetable: (byte delta, line delta or -128) pairs */
	PYTHON_LOCATIONS_311, /* 3.11+ co_linetable: the location table (PEP 657) */
};

struct python_layout {
	uint8_t major;
	uint8_t minor;
	/*
	 * Where the list of interpreters starts: offset of interpreters.head in
	 * _PyRuntime (3.7+), or OP_PY_NONE when it is the static `interp_head`
	 * of Python/pystate.c (3.6, found in .symtab).
	 */
	uint16_t runtime_interp_head;
	struct op_py_offsets bpf;
	/* Code objects (PyCodeObject). */
	uint16_t code_filename;
	uint16_t code_name;
	uint16_t code_qualname; /* OP_PY_NONE before 3.11: co_name is shown */
	uint16_t code_firstlineno;
	uint16_t code_line_table; /* co_lnotab (<3.10) / co_linetable */
	uint8_t line_table;	  /* enum python_line_table */
	/* Strings: sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject). */
	uint16_t unicode_ascii_size;
	uint16_t unicode_compact_size;
};

/* The layout of major.minor, or NULL when this version is not supported. */
const struct python_layout *python_layout__find(unsigned int major, unsigned int minor);

/*
 * Does every interpreter-frame field of o lie in the OP_PY_BLOCK bytes the
 * walker reads per frame, at a multiple of its size? A layout that does not
 * cannot be walked (python_binary__inspect() refuses it).
 */
bool python_layout__frame_fits(const struct op_py_offsets *o);

/*
 * Fixed by the CPython object model in every supported version (x86-64):
 * PyObject is (ob_refcnt, ob_type), PyVarObject adds ob_size, and a bytes
 * object's data follows ob_shash (Include/bytesobject.h,
 * Include/cpython/bytesobject.h).
 */
#define PYTHON_OB_TYPE	  8
#define PYTHON_OB_SIZE	  16
#define PYTHON_TP_NAME	  24 /* PyTypeObject: PyVarObject head, then tp_name */
#define PYTHON_BYTES_DATA 32
#define PYTHON_STR_STATE  32 /* PyASCIIObject: ob_base (16), length, hash, state */

#endif
