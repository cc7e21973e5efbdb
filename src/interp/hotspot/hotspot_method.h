/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names a Java method from the JVM's memory: Method* -> ConstMethod ->
 * ConstantPool -> its holder's name, the method's name, the source file and
 * the line number table (the compressed stream after the bytecodes), with
 * every size bounded. One struct hotspot_method per (process, Method*), kept
 * in the runtime's frame store.
 */
#ifndef OMNIPROF_INTERP_HOTSPOT_METHOD_H
#define OMNIPROF_INTERP_HOTSPOT_METHOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hotspot_layout;
struct remote_memory;

#define HOTSPOT_NAME_MAX  1024	      /* bytes of a symbol read */
#define HOTSPOT_LINES_MAX (64 * 1024) /* bytes of a line number table read */

struct hotspot_line {
	uint32_t bci;
	int32_t line;
};

struct hotspot_method {
	char *name;		    /* "pkg.Class.method", or a stub's name; owned */
	char *filename;		    /* "Main.java", "" when unknown; owned */
	struct hotspot_line *lines; /* owned, n_lines */
	uint32_t n_lines;
	/* The JVM's collection count when this was last read (hotspot.c's epochs). */
	uint32_t epoch;
	size_t bytes;
};

/*
 * Reads the method at method_addr whose ConstMethod is const_method (the
 * walker's fingerprint). *out freed with hotspot_method__free(). 0 or -errno
 * (-ESTALE: the Method no longer has that ConstMethod).
 */
int hotspot_method__read(const struct remote_memory *mem, const struct hotspot_layout *l,
			 uint64_t method_addr, uint64_t const_method, struct hotspot_method **out);
/* A code blob's name (a C string at name_addr), as a hotspot_method without lines. */
int hotspot_method__read_stub(const struct remote_memory *mem, uint64_t name_addr,
			      struct hotspot_method **out);
void hotspot_method__free(struct hotspot_method *m); /* accepts NULL */
/* Whether a and b name the same method the same way (name, file, line table). */
bool hotspot_method__same(const struct hotspot_method *a, const struct hotspot_method *b);

/* The line of bytecode index bci (the entry with the greatest start <= bci), 0: unknown. */
int64_t hotspot_method__line(const struct hotspot_method *m, uint32_t bci);

/*
 * Decodes a compressed line number table (HotSpot's
 * CompressedLineNumberReadStream: one byte (bci delta << 3 | line delta), or
 * 0xff then two signed UNSIGNED5 numbers, each byte its bits + excess
 * (hotspot_layout.unsigned5_excess: 1 from JDK 20); 0 ends it) of len bytes
 * into lines (at most max). Returns how many entries, or -EINVAL when the
 * bytes end before the table does.
 */
int hotspot_method__decode_lines(const uint8_t *p, size_t len, unsigned int excess,
				 struct hotspot_line *lines, size_t max);

#endif
