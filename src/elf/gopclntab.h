/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Go's own symbol table, .gopclntab: function names, source files and line
 * numbers for every PC of a Go binary. The Go runtime needs it to print
 * stack traces, so it survives `-ldflags='-s -w'` (which removes .symtab and
 * DWARF) and names frames of stripped Go binaries.
 *
 * Formats read: Go 1.2-1.15, 1.16-1.17, 1.18-1.19 and 1.20+ (the magic
 * number at the start tells them apart), little-endian, 4- or 8-byte
 * pointers. The bytes are untrusted (fuzzed): every offset is checked.
 * Inlined calls are not expanded: an inlined PC is named after the function
 * it was inlined into, with the file and line of the inlined code.
 */
#ifndef OMNIPROF_ELF_GOPCLNTAB_H
#define OMNIPROF_ELF_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

enum gopclntab_version {
	GOPCLNTAB_GO12 = 12,   /* Go 1.2 - 1.15 */
	GOPCLNTAB_GO116 = 116, /* Go 1.16 - 1.17 */
	GOPCLNTAB_GO118 = 118, /* Go 1.18 - 1.19 */
	GOPCLNTAB_GO120 = 120, /* Go 1.20 and later */
};

struct gopclntab;

struct gopclntab_frame {
	const char *name; /* function name, e.g. "main.main"; points into the table's bytes */
	const char *file; /* source file, NULL when unknown; points into the table's bytes */
	uint32_t line;	  /* 0 when unknown */
	uint64_t entry;	  /* the function's first PC */
};

/*
 * Parses the header of a .gopclntab of len bytes at data (which must stay
 * valid and unchanged while the table is used). text_start is the address of
 * .text, used when the header leaves it 0 (PIE binaries: it is relocated at
 * run time). Returns 0 and *out (free with gopclntab__free()), -ENOEXEC for
 * bytes that are not a pclntab this reader knows, -ENOMEM.
 */
int gopclntab__open(const uint8_t *data, size_t len, uint64_t text_start, struct gopclntab **out);
void gopclntab__free(struct gopclntab *t); /* accepts NULL */

enum gopclntab_version gopclntab__version(const struct gopclntab *t);
size_t gopclntab__n_funcs(const struct gopclntab *t);

/*
 * The function, file and line of pc (an ELF virtual address). Returns 0 and
 * *out, -ENOENT when no function covers pc, -EINVAL when the entry for pc is
 * malformed.
 */
int gopclntab__lookup(const struct gopclntab *t, uint64_t pc, struct gopclntab_frame *out);

/* One function of the table, as the unwinder needs it. */
struct gopclntab_func {
	uint64_t entry;	  /* first PC (ELF virtual address) */
	uint64_t end;	  /* the next function's entry (or the table's end) */
	const char *name; /* points into the table's bytes; never NULL */
	uint32_t pcsp;	  /* offset of its pc -> SP-delta table; 0: none */
};

/*
 * Function i (0 .. n_funcs - 1) in address order. Returns 0 and *out,
 * -EINVAL when its entry is malformed (entries out of order included).
 */
int gopclntab__func(const struct gopclntab *t, size_t i, struct gopclntab_func *out);

/*
 * Decodes f's pcsp table: calls cb once per run of PCs [start, end) that share
 * one SP delta (bytes the function's frame holds below the return address),
 * in address order (a run may be empty: start == end, so a caller can bound
 * the work a hostile table costs), clipped to [f->entry, f->end) (the table may end
 * before f->end: padding). Stops at cb's first non-zero return and returns
 * it; else 0, or -EINVAL for a malformed table (runs already reported
 * stand).
 */
int gopclntab__pcsp(const struct gopclntab *t, const struct gopclntab_func *f,
		    int (*cb)(void *ctx, uint64_t start, uint64_t end, int32_t sp_delta),
		    void *ctx);

#endif
