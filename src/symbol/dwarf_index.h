/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OMNIPROF_SYMBOL_DWARF_INDEX_H
#define OMNIPROF_SYMBOL_DWARF_INDEX_H

/*
 * What naming a native frame asks libdw, without walking a whole unit per
 * address (issue 22): dwarf_getscopes() and dwarf_getscopes_die() visit
 * every DIE of a compile unit from its root for each call, so naming one
 * new address in a big unit (CPython's ceval.c) cost about 0.5 ms.
 *
 * dwarf_index__scopes() gives exactly the array dwarf_getscopes() gives
 * (libdw 0.188's semantics: the DIEs on the first path of DIEs holding pc,
 * innermost first; when that path goes through inlined calls, it stops at
 * the innermost one and goes on with the scopes enclosing that call's
 * abstract origin, not with the functions it was inlined into). It keeps,
 * per unit, the unit's top-level DIEs with address ranges sorted by
 * address (built on the unit's first lookup, one walk of its top level),
 * and the same for any DIE with many children that a lookup went through
 * (a big function's blocks and inlined calls), so a lookup binary-searches
 * each level instead of visiting everything before it.
 *
 * dwarf_index__prefix() gives the "ns::Class::" prefix that the
 * namespaces, classes, structs and unions enclosing a declaration spell,
 * as dwarf_getscopes_die() would find them, remembered per declaration.
 *
 * One index per Dwarf (native_symbols keeps one per file); not thread-safe.
 */
#include <elfutils/libdw.h>
#include <stddef.h>

struct dwarf_index;

/*
 * An empty index whose tables stay under max_bytes (beyond it lookups
 * still answer, by visiting DIEs as libdw does). NULL when out of memory.
 * Free with dwarf_index__free().
 */
struct dwarf_index *dwarf_index__new(size_t max_bytes);
void dwarf_index__free(struct dwarf_index *di); /* accepts NULL */

/*
 * Same contract as dwarf_getscopes(cu, pc, scopes): the number of scopes
 * and *scopes (malloc'd, the caller frees it) when > 0; 0 when none holds
 * pc, -1 on error. Answers with dwarf_getscopes() itself when the unit's
 * DWARF is one it cannot index exactly (errors, import cycles).
 */
int dwarf_index__scopes(struct dwarf_index *di, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes);

/*
 * The enclosing scopes of decl as "a::B::" (an unnamed one spelled
 * "(anonymous namespace)::") into buf (len bytes, NUL-terminated, cut
 * to fit). Returns the prefix's whole length (>= len when it was cut).
 * Units in C have no such scopes: no walk.
 */
size_t dwarf_index__prefix(struct dwarf_index *di, Dwarf_Die *decl, char *buf, size_t len);

/*
 * The same prefix from libdw's own walk (dwarf_getscopes_die(): the whole
 * unit at every call, slow): the reference the index is checked against
 * (native_symbols' reference path, the tests). No index needed.
 */
size_t dwarf_index__prefix_libdw(Dwarf_Die *decl, char *buf, size_t len);

/* Bytes the index allocated since the last call (to be counted as the file's). */
size_t dwarf_index__growth(struct dwarf_index *di);

/* Bytes it holds now. */
size_t dwarf_index__bytes(const struct dwarf_index *di);

#endif
