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

#include "interp/interp.h"

/* Iseqs kept per process between intervals, beyond those just used. */
#define RUBY_ISEQS_PER_PROCESS 4096
/* Byte budgets of what names Ruby frames: per process and for all processes. */
#define RUBY_ISEQ_BYTES_PER_PROCESS (16u << 20)
#define RUBY_ISEQ_BYTES_MAX	    (64u << 20)

/* CRuby's entry in the runtime registry (src/interp/registry.c, interp.h). */
extern const struct interp_ops ruby_interp_ops;

#endif
