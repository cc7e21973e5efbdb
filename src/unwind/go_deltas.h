/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stack deltas of Go code from .gopclntab: Go binaries carry no .eh_frame
 * for Go functions (and `-ldflags=-w` drops .debug_frame), but the runtime's
 * own table gives, for every PC of every function, how many bytes the frame
 * holds below the return address (the pcsp table). That is a CFA rule
 * (CFA = rsp + delta + 8, return address at CFA - 8), so Go frames are
 * walked by the same native unwinder, without frame pointers.
 *
 * The runtime's assembly functions that end a stack or switch stacks get
 * rules of their own, chosen by name (names are in every Go binary, stripped
 * or not):
 *   runtime.goexit, runtime.mstart, runtime.rt0_go    OP_RULE_STOP: a
 *     goroutine's root, a thread's g0 root, the main thread's
 *   runtime.mcall, runtime.morestack                  OP_RULE_STOP: they
 *     switch to g0 and call a function that never returns (the scheduler,
 *     newstack); the goroutine they left is not on this stack (Go's own
 *     profiler shows them as roots too)
 *   runtime.systemstack, runtime.asmcgocall           OP_RULE_GO_SWITCH: on
 *     g0, the walk goes back to the goroutine's stack by the registers the
 *     switch saved in g.m.curg.sched (g from TLS at tp - 8, m.curg's offset
 *     in the rule), the switch's direct caller included; where that cannot
 *     be read (a stack copy has no fs base), by the goroutine's frame
 *     pointer, still in rbp, which skips the direct caller
 *   runtime.sigreturn, runtime.sigreturn__sigaction   OP_RULE_SIGNAL: the
 *     signal return trampoline Go installs as sa_restorer
 *   runtime.nanotime1, walltime(1), vgetrandom1        OP_RULE_FP_SWITCH once
 *     their frame is set (pcsp > 0): they call the vDSO on g0's stack,
 *     realigned, with rbp on their own frame, so rbp gives the exact caller
 *   runtime.systemstack_switch                          its own pcsp rule, and
 *     the byte before its entry too: a cgo callback's frame on the goroutine's
 *     stack (runtime.cgocallback) returns to g.sched.pc, its entry in Go
 *     1.19-1.20, looked up as pc - 1; from there the walk reaches
 *     runtime.cgocall and the goroutine's root (C → Go → ... → goexit)
 */
#ifndef OMNIPROF_UNWIND_GO_DELTAS_H
#define OMNIPROF_UNWIND_GO_DELTAS_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/stack_deltas.h"

struct gopclntab;

struct go_delta_stats {
	uint64_t funcs;	     /* functions turned into deltas */
	uint64_t bad_funcs;  /* functions skipped: malformed record or pcsp table */
	uint64_t special;    /* functions with a root / switch / signal rule */
	uint64_t bad_deltas; /* runs with an impossible SP delta (negative, huge): INVALID */
};

/*
 * Builds the deltas of the .gopclntab of len bytes at data (text_start: the
 * address of .text, for tables whose header leaves it 0) into *out (sorted,
 * OP_RULE_INVALID between functions and after the last; free with
 * stack_delta_table__free(); out->stats is not used, *stats is filled).
 * Returns 0, -ENOEXEC for bytes that are not a pclntab, give no function
 * at all or take more decoding steps than half their size (a hostile table
 * whose functions share one long pcsp table), -ENOMEM.
 */
int go_deltas__build(const uint8_t *data, size_t len, uint64_t text_start,
		     struct stack_delta_table *out, struct go_delta_stats *stats);

/*
 * Looks for a pclntab in bytes that are not a section (a binary without
 * section headers): a 4-byte aligned Go 1.16+ magic whose header opens, with
 * its first functions inside [text_lo, text_hi). Returns the offset into
 * data, or -ENOENT.
 */
long go_deltas__find_pclntab(const uint8_t *data, size_t len, uint64_t text_lo, uint64_t text_hi);

/*
 * One function at a time (issue 17): a held stack copy of a Go process whose
 * file's table is not built yet is walked from .gopclntab at once. The
 * function covering vaddr is found by the function table's binary search and
 * run through the build's own per-function code, so its rule is the table's
 * there. Only where the table's answer is Go's alone: a pc in no function, in
 * a function the build drops (malformed record or pcsp table) or in a run
 * with an impossible SP delta is CFI's (the build fills those gaps with
 * .eh_frame / .debug_frame): no answer. A table the build rejects whole (more
 * decoding steps than half its size, functions out of order) is the one case
 * they may differ: a hostile file only lies to its own process's samples.
 *
 * The rows of the function covering vaddr (the byte before its entry, and its
 * last byte, as the build gives them) into *out (free with fde_rows__free();
 * fde_off: the function's entry): OP_RULE_INVALID rows are no answer (wait
 * for the table). 0, -ENOENT (no answer from Go's table alone), -ENOMEM, or
 * a read error of t (gopclntab__read_error, -E2BIG included).
 */
int go_deltas__func_rows(const struct gopclntab *t, uint64_t vaddr, struct fde_rows *out);

/* Where a file's .gopclntab lies, and .text's address (for tables that leave it 0). */
struct go_index {
	uint64_t off, size; /* file offset and size of .gopclntab */
	uint64_t text_addr; /* 0 when no .text */
};

/* Reads exactly len bytes at file offset off into buf: 0 or -errno. */
typedef int (*go_read_fn)(void *ctx, uint64_t off, void *buf, size_t len);

/*
 * The file's .gopclntab from its section headers, read through read over a
 * file of file_size bytes (by elf_sections: 4096 sections, 64 KiB of names). 0 with
 * *out, -ENOENT (not a Go file), -EOPNOTSUPP (no section headers, not
 * x86-64, a compressed or empty section: wait for the table), -ENOEXEC,
 * -ENOMEM, or read's error.
 */
int go_deltas__index_read(go_read_fn read, void *ctx, uint64_t file_size, struct go_index *out);

#endif
