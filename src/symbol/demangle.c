// SPDX-License-Identifier: Apache-2.0
#include "symbol/demangle.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

static const char *const mode_names[] = {
    [DEMANGLE_NONE] = "none",
    [DEMANGLE_SIMPLIFIED] = "simplified",
    [DEMANGLE_TEMPLATES] = "templates",
    [DEMANGLE_FULL] = "full",
};

int demangle__parse_mode(const char *s, enum demangle_mode *mode)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
		if (s && !strcmp(s, mode_names[i])) {
			*mode = (enum demangle_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *demangle__mode_name(enum demangle_mode mode)
{
	return (unsigned)mode < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[mode] : "?";
}

/* Only names that can be mangled are handed to libiberty: "_Z..." and Rust's "_R...". */
static bool looks_mangled(const char *name)
{
	return name[0] == '_' &&
	       (name[1] == 'Z' || name[1] == 'R' || (name[1] == '_' && name[2] == 'Z'));
}

static bool is_ident(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/*
 * Bytes of "operator" plus the operator's symbol at p (operator<, operator<<,
 * operator<=>, operator->, ...), 0 when p does not start an operator name.
 */
static size_t operator_len(const char *start, const char *p)
{
	static const char kw[] = "operator";
	size_t n = sizeof(kw) - 1;

	/* Longest first, so "operator<<=" is not read as "operator<" + "<=". */
	static const char *const ops[] = {"<=>", "<<=", ">>=", "->*", "<<", ">>",
					  "<=",	 ">=",	"->",  "<",   ">"};

	if (strncmp(p, kw, n) || (p > start && is_ident(p[-1])))
		return 0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(p + n, ops[i], strlen(ops[i])))
			return n + strlen(ops[i]);
	return n;
}

void demangle__strip_templates(char *s)
{
	char *out = s;
	int depth = 0;

	for (const char *p = s; *p;) {
		size_t op = depth == 0 ? operator_len(s, p) : 0;

		if (op) {
			memmove(out, p, op);
			out += op;
			p += op;
			continue;
		}
		if (*p == '<') {
			/* Rust writes generic arguments as "path::<T>": drop the "::" too. */
			if (depth == 0 && out - s >= 2 && out[-1] == ':' && out[-2] == ':')
				out -= 2;
			depth++;
		} else if (*p == '>' && depth > 0) {
			depth--;
		} else if (depth == 0) {
			*out++ = *p;
		}
		p++;
	}
	*out = '\0';
}

const char *demangle(const char *name, enum demangle_mode mode, char *buf, size_t len)
{
	int flags;
	char *d;

	if (mode == DEMANGLE_NONE || !name || !looks_mangled(name) || !len)
		return name;
	/*
	 * Without DMGL_PARAMS libiberty leaves out the parameters, the return
	 * type and clone suffixes; DMGL_AUTO recognises Rust legacy and v0.
	 */
	flags = DMGL_AUTO | DMGL_ANSI;
	if (mode == DEMANGLE_FULL)
		flags |= DMGL_PARAMS;
	d = cplus_demangle(name, flags);
	if (!d)
		return name;
	if (mode == DEMANGLE_SIMPLIFIED)
		demangle__strip_templates(d);
	snprintf(buf, len, "%s", d);
	free(d);
	return buf;
}
