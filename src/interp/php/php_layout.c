// SPDX-License-Identifier: Apache-2.0
/*
 * One row per PHP minor version. Sources, per value:
 *   - zend_execute_data (opline 0, func 24, This 32 so its u1.type_info 40,
 *     prev_execute_data 48), zend_function's common head (type 0,
 *     function_name 8, scope 16), zend_op.lineno 24, zend_class_entry.name
 *     8, zend_string (len 16, val 24), ZEND_CALL_TOP (1 << 17 of the call
 *     info: 7.4 shifts (1 << 1) by ZEND_CALL_INFO_SHIFT 16, 8.x defines it
 *     as is): Zend/zend_compile.h and Zend/zend_types.h, unchanged 7.4 to
 *     8.4 in these fields.
 *   - zend_op_array.filename / line_start: Zend/zend_compile.h of each
 *     branch: 7.4 136/144 (common head ends at arg_info, 48 bytes); 8.0 and
 *     8.1 144/152 (attributes added to the head); 8.2 and 8.3 152/160 (T
 *     and run_time_cache moved into the head); 8.4 168/176 (the head also
 *     holds doc_comment and prop_info).
 *   - executor_globals.current_execute_data: from the binary (php_binary.c
 *     decodes zend_is_executing(), which reads it); the table holds it only
 *     where it was measured (0: the binary must tell).
 *   - Zend extension API numbers: ZEND_EXTENSION_API_NO of
 *     Zend/zend_extensions.h.
 * Checked against a running binary (the e2e tests, gdb on the live
 * process): 8.2 (Debian's php8.2 and php-fpm8.2, 8.2.36: current_execute_data
 * 0x1e8 in both, every offset above). The other rows are from the headers
 * only.
 */
#include "interp/php/php_layout.h"

#include <stddef.h>

#define PHP_BPF_OFFSETS                                                                            \
	{                                                                                          \
		.ex_opline = 0, .ex_func = 24, .ex_call_info = 40, .ex_prev = 48, .func_type = 0,  \
		.func_name = 8, .op_lineno = 24, .call_top = 1u << 17,                             \
	}

#define PHP_ROW(maj, min, api, eg, filename)                                                       \
	{                                                                                          \
		.major = maj, .minor = min, .extension_api = api, .eg_current_execute_data = eg,   \
		.bpf = PHP_BPF_OFFSETS, .func_scope = 16, .op_array_filename = filename,           \
		.op_array_line_start = (filename) + 8, .class_name = 8, .string_len = 16,          \
		.string_val = 24,                                                                  \
	}

static const struct php_layout layouts[] = {
    PHP_ROW(7, 4, 320190902, 0, 136), PHP_ROW(8, 0, 420200930, 0, 144),
    PHP_ROW(8, 1, 420210902, 0, 144), PHP_ROW(8, 2, 420220829, 0x1e8, 152),
    PHP_ROW(8, 3, 420230831, 0, 152), PHP_ROW(8, 4, 420240924, 0, 168),
};

const struct php_layout *php_layout__find(unsigned int major, unsigned int minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

const struct php_layout *php_layout__by_api(uint32_t api)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].extension_api == api)
			return &layouts[i];
	return NULL;
}

static bool field_fits(uint16_t off, uint16_t size)
{
	return off % size == 0 && off + size <= OP_PHP_EX_BLOCK;
}

bool php_layout__fits(const struct op_php_offsets *o)
{
	/* The walker reads the function's head as {type, function_name}. */
	return field_fits(o->ex_opline, 8) && field_fits(o->ex_func, 8) &&
	       field_fits(o->ex_call_info, 4) && field_fits(o->ex_prev, 8) && o->func_type == 0 &&
	       o->func_name == 8;
}
