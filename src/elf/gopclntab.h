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

/* Reads exactly len bytes at offset off of the table into buf: 0 or -errno. */
typedef int (*gopclntab_read_fn)(void *ctx, uint64_t off, void *buf, size_t len);
/* The bytes a table read through a read function keeps (its largest access). */
#define GOPCLNTAB_WINDOW 4096

/*
 * The same over a table of len bytes that is not in memory (a file's
 * section, before its stack table is built: issue 17): every access goes
 * through read, at offsets and counts inside len, at most GOPCLNTAB_WINDOW
 * bytes at a time, kept until the next access. Names returned point into
 * those bytes: valid until the next call on the table; one longer than
 * GOPCLNTAB_WINDOW - 1 bytes is not read (-E2BIG). Returns as
 * gopclntab__open(), or read's error. ctx must outlive the table.
 */
int gopclntab__open_read(gopclntab_read_fn read, void *ctx, uint64_t len, uint64_t text_start,
			 struct gopclntab **out);
/*
 * The first error of read (or -E2BIG) since the last call, 0 when none: a
 * table read through read answers -EINVAL / -ENOENT for bytes it could not
 * read, which this tells from malformed ones. Clears it.
 */
int gopclntab__read_error(const struct gopclntab *t);
/* Where the function table lies in the table: offset and size (bytes). */
void gopclntab__functab(const struct gopclntab *t, uint64_t *off, uint64_t *len);

/*
 * The index of the function whose entries' range holds pc (binary search of
 * the function table, at most 64 probes). 0 with *index, -ENOENT outside the
 * table's first and last pc, -EINVAL for an unreadable entry.
 */
int gopclntab__find_func(const struct gopclntab *t, uint64_t pc, size_t *index);

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
