/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Demangling of C++ (Itanium ABI) and Rust (legacy and v0) symbol names
 * through libiberty's cplus_demangle, the demangler of binutils and gdb.
 */
#ifndef OMNIPROF_SYMBOL_DEMANGLE_H
#define OMNIPROF_SYMBOL_DEMANGLE_H

#include <stddef.h>

/* The modes Pyroscope's eBPF component offers, with the same meaning. */
enum demangle_mode {
	DEMANGLE_NONE,	     /* names as found in the binary */
	DEMANGLE_SIMPLIFIED, /* ns::Class::method: no parameters, no template arguments */
	DEMANGLE_TEMPLATES,  /* ns::Class<int>::method: template arguments, no parameters */
	DEMANGLE_FULL,	     /* everything: return type, parameters, clone suffixes */
};

/*
 * Why templates by default: template arguments tell instantiations apart
 * (Stage<3> and Stage<4> are different code with different costs), while
 * parameter lists make flame-graph labels several times longer without
 * telling more functions apart than the names already do.
 */
#define DEMANGLE_DEFAULT DEMANGLE_TEMPLATES

/* Parses "none", "simplified", "templates" or "full": 0 and *mode, or -EINVAL. */
int demangle__parse_mode(const char *s, enum demangle_mode *mode);
const char *demangle__mode_name(enum demangle_mode mode);

/*
 * Writes the demangled form of name into buf (len bytes, truncated and
 * NUL-terminated) and returns buf; returns name itself when it is not a
 * mangled name, the mode is DEMANGLE_NONE, or demangling fails.
 */
const char *demangle(const char *name, enum demangle_mode mode, char *buf, size_t len);

/*
 * Removes template argument lists ("<...>", and Rust's "::<...>") from a
 * demangled name in place, leaving operator<, operator<<, operator<=,
 * operator<=> and operator-> alone. Exposed for the tests.
 */
void demangle__strip_templates(char *s);

#endif
