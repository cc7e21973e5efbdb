/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRuby support on the host side:
 *
 *   - finds the VM of each process whose maps are read (libruby-X.Y.so,
 *     ruby_binary.h; the file inspected once, src/interp/interp.c calls
 *     attach for the process) and tells the in-kernel walker where it is:
 *     one `rb_procs` entry per pid (struct op_rb_proc: where its
 *     ruby_current_ec's tls_index is, the offsets), and rb_vm_exec's range
 *     as the pid's OP_INTERP_RUBY range;
 *   - names Ruby frames while the process lives: each (pid, iseq) or (pid,
 *     method entry) the walker reports is read once (ruby_iseq.h) into a
 *     frame store, read again when its fingerprint says the address now
 *     holds another one, and forgotten with the process.
 */
#ifndef OMNIPROF_INTERP_RUBY_H
#define OMNIPROF_INTERP_RUBY_H

#include <stdbool.h>
#include <stdint.h>

#include "interp/interp.h"

/* Iseqs kept per process between intervals, beyond those just used. */
#define RUBY_ISEQS_PER_PROCESS 4096
/* Byte budgets of what names Ruby frames: per process and for all processes. */
#define RUBY_ISEQ_BYTES_PER_PROCESS (16u << 20)
#define RUBY_ISEQ_BYTES_MAX	    (64u << 20)

/*
 * How far past its first executable page YJIT's code region is taken to
 * reach (ruby__jit_ranges): YJIT reserves the whole region at start-up with
 * no access (--yjit-exec-mem-size: 64 MiB on 3.2, 48 on 3.3, 128 MiB of
 * --yjit-mem-size on 3.4 by default) and makes pages executable as it
 * writes code into them.
 */
#define RUBY_JIT_SPAN (256ull << 20)

/* One executable mapping of a process, as ruby__jit_ranges() reads it. */
struct ruby_exec_map {
	uint64_t start, end;
	bool anon; /* anonymous memory ("[anon...]"), not a file */
};

/*
 * The OP_INTERP_RANGE_F_UNWINDS ranges of YJIT's code in a process whose
 * executable mappings, in address order, are maps[0..n): the anonymous ones
 * with nothing executable between them make one range, which reaches on to
 * RUBY_JIT_SPAN past its start, never into the next executable mapping. So
 * a page that YJIT makes executable after the maps were read is already
 * Ruby's to unwind when a sample meets it: sampled at once, not sent as a
 * stack copy whose Ruby frames would be read later than the sample (the
 * warm-up stacks of issue 18). Writes at most max ranges to out; returns
 * how many.
 */
size_t ruby__jit_ranges(const struct ruby_exec_map *maps, size_t n, struct interp_range *out,
			size_t max);

/* CRuby's entry in the runtime registry (src/interp/registry.c, interp.h). */
extern const struct interp_ops ruby_interp_ops;

#endif
