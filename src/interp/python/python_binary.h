/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Is an ELF file a CPython interpreter (libpythonX.Y.so, or an executable
 * with the interpreter linked in, such as Debian's /usr/bin/python3.11)?
 * Which version, where its eval loop is (the hot function and its .cold
 * part) and where the interpreters list starts, all in the file's own
 * virtual addresses. Read from the file only: the process is not touched.
 */
#ifndef OMNIPROF_INTERP_PYTHON_BINARY_H
#define OMNIPROF_INTERP_PYTHON_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/abi.h"
#include "omniprof/interp/python_abi.h"

struct elf_file;
struct python_layout;

struct python_binary {
	unsigned int major, minor;
	const struct python_layout *layout;
	/* Address of the pointer to the first interpreter (ELF vaddr). */
	uint64_t interp_head;
	struct op_py_range eval[OP_PY_MAX_RANGES]; /* ELF vaddrs; n_eval used */
	size_t n_eval;
	bool cold_from_cfi; /* the .cold part was found without symbols */
};

/*
 * Fills *out from ef. Returns 0, -ENOENT (not a CPython interpreter),
 * -ENOTSUP (a CPython this version of omniprof has no layout for, or one
 * missing the symbols it needs; *out still holds the version) or -errno.
 * name is the file's path or base name (for versions only found there).
 */
int python_binary__inspect(const struct elf_file *ef, const char *name, struct python_binary *out);

/*
 * The `py_procs` value of a process that maps bin's file with bias (ELF
 * vaddr = address - bias): bin's addresses made absolute, its offsets.
 */
void python_binary__proc_info(const struct python_binary *bin, uint64_t bias,
			      struct op_py_proc *out);

/* The eval loop's ranges in such a process, absolute: the OP_INTERP_PYTHON
 * ranges of its `interp_procs` value (*out is reset first). */
void python_binary__interp_ranges(const struct python_binary *bin, uint64_t bias,
				  struct op_interp_proc *out);

#endif
