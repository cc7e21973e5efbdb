/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What names a PHP frame: one zend_function of a process, read once (through
 * struct remote_memory, never writing or stopping the process) while the
 * process lives: "Class::method", "function", "{closure}", "{main}" for a
 * file's top-level code, internal functions by their names; the file of
 * user code.
 */
#ifndef OMNIPROF_INTERP_PHP_FUNC_H
#define OMNIPROF_INTERP_PHP_FUNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct php_layout;
struct remote_memory;

/* Characters kept of a name (class and function each) and of a file name. */
#define PHP_NAME_MAX_CHARS 256
#define PHP_FILE_MAX_CHARS 1024

struct php_func {
	char *name;	     /* owned */
	char *filename;	     /* owned; "" for internal functions */
	uint32_t line_start; /* user code: the function's first line */
	bool internal;
	bool cut; /* a name or the file name was cut */
};

/*
 * Reads the zend_function at func whose function_name the walker read as
 * fingerprint. 0 and *out (free with php_func__free()), -ESTALE when the
 * function there has another name now, -EINVAL for bytes that are no
 * function, -ENOMEM or a read's -errno.
 */
int php_func__read(const struct remote_memory *mem, const struct php_layout *layout, uint64_t func,
		   uint64_t fingerprint, struct php_func **out);
void php_func__free(struct php_func *f); /* accepts NULL */
size_t php_func__bytes(const struct php_func *f);

#endif
