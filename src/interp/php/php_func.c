// SPDX-License-Identifier: Apache-2.0
#include "interp/php/php_func.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/php/php_layout.h"
#include "omniprof/interp/php_abi.h"
#include "proc/remote_memory.h"

static int read_u64(const struct remote_memory *mem, uint64_t addr, uint64_t *v)
{
	*v = 0;
	return remote_memory__read(mem, addr, v, sizeof(*v));
}

/*
 * The zend_string at addr into buf (at most max chars, NUL-terminated,
 * *cut when longer). Bytes that are not printable become '?': a name goes
 * into reports as text. 0 or -errno.
 */
static int read_string(const struct remote_memory *mem, const struct php_layout *l, uint64_t addr,
		       char *buf, size_t max, bool *cut)
{
	uint64_t len;
	int err;

	buf[0] = '\0';
	if (!addr)
		return -EINVAL;
	err = read_u64(mem, addr + l->string_len, &len);
	if (err)
		return err;
	if (len > max) {
		len = max;
		*cut = true;
	}
	if (len) {
		err = remote_memory__read(mem, addr + l->string_val, buf, (size_t)len);
		if (err)
			return err;
	}
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	return 0;
}

int php_func__read(const struct remote_memory *mem, const struct php_layout *l, uint64_t func,
		   uint64_t fingerprint, struct php_func **out)
{
	char fn[PHP_NAME_MAX_CHARS + 1], cls[PHP_NAME_MAX_CHARS + 1], *file = NULL;
	uint64_t head[3], cls_name, file_addr;
	struct php_func *f = NULL;
	uint32_t line_start = 0;
	bool cut = false;
	uint8_t type;
	int err;

	*out = NULL;
	/* type, fn_flags, function_name, scope: the common head of every zend_function. */
	err = remote_memory__read(mem, func, head, sizeof(head));
	if (err)
		return err;
	type = (uint8_t)head[0];
	if (type != OP_PHP_INTERNAL_FUNCTION && type != OP_PHP_USER_FUNCTION &&
	    type != OP_PHP_EVAL_CODE)
		return -EINVAL;
	if (head[1] != fingerprint)
		return -ESTALE;
	fn[0] = cls[0] = '\0';
	if (head[1] && read_string(mem, l, head[1], fn, PHP_NAME_MAX_CHARS, &cut))
		return -EINVAL;
	if (head[2] && (read_u64(mem, head[2] + l->class_name, &cls_name) ||
			read_string(mem, l, cls_name, cls, PHP_NAME_MAX_CHARS, &cut)))
		cls[0] = '\0'; /* a class we cannot read: the method keeps its own name */
	if (type != OP_PHP_INTERNAL_FUNCTION) {
		file = malloc(PHP_FILE_MAX_CHARS + 1);
		if (!file)
			return -ENOMEM;
		if (read_u64(mem, func + l->op_array_filename, &file_addr) ||
		    read_string(mem, l, file_addr, file, PHP_FILE_MAX_CHARS, &cut))
			file[0] = '\0';
		if (remote_memory__read(mem, func + l->op_array_line_start, &line_start,
					sizeof(line_start)))
			line_start = 0;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		err = -ENOMEM;
		goto cleanup;
	}
	f->internal = type == OP_PHP_INTERNAL_FUNCTION;
	f->line_start = line_start;
	f->cut = cut;
	if (!head[1])
		f->name = strdup(type == OP_PHP_EVAL_CODE ? "{eval}" : "{main}");
	else if (cls[0])
		f->name = malloc(strlen(cls) + 2 + strlen(fn) + 1);
	else
		f->name = strdup(fn);
	if (f->name && head[1] && cls[0])
		sprintf(f->name, "%s::%s", cls, fn);
	f->filename = file ? file : strdup("");
	file = NULL;
	if (!f->name || !f->filename) {
		err = -ENOMEM;
		goto cleanup;
	}
	*out = f;
	f = NULL;
	err = 0;
cleanup:
	php_func__free(f);
	free(file);
	return err;
}

void php_func__free(struct php_func *f)
{
	if (!f)
		return;
	free(f->name);
	free(f->filename);
	free(f);
}

size_t php_func__bytes(const struct php_func *f)
{
	return sizeof(*f) + strlen(f->name) + 1 + strlen(f->filename) + 1;
}
