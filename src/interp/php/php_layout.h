/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Zend engine's struct offsets per PHP minor version (x86-64, NTS
 * builds): what the BPF walker reads (struct op_php_offsets) and what
 * naming reads on the host. Debian's binaries carry no DWARF, so each value
 * is a table entry with its source (php_layout.c).
 */
#ifndef OMNIPROF_INTERP_PHP_LAYOUT_H
#define OMNIPROF_INTERP_PHP_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "omniprof/interp/php_abi.h"

struct php_layout {
	unsigned int major, minor;
	/* Zend extension API number of the version ("API420220829,NTS" in the binary). */
	uint32_t extension_api;
	uint16_t eg_current_execute_data; /* zend_executor_globals -> current_execute_data */
	struct op_php_offsets bpf;
	/* Host side: naming. */
	uint16_t func_scope;	    /* zend_function -> common.scope */
	uint16_t op_array_filename; /* zend_op_array -> filename */
	uint16_t op_array_line_start;
	uint16_t class_name; /* zend_class_entry -> name */
	uint16_t string_len; /* zend_string -> len */
	uint16_t string_val; /* zend_string -> val */
};

/* The layout of PHP major.minor, NULL when there is none. */
const struct php_layout *php_layout__find(unsigned int major, unsigned int minor);
/* The layout whose Zend extension API number is api, NULL when none. */
const struct php_layout *php_layout__by_api(uint32_t api);
/* Do the walker's zend_execute_data fields lie in its OP_PHP_EX_BLOCK-byte read? */
bool php_layout__fits(const struct op_php_offsets *o);

#endif
