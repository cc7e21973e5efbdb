/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Is an ELF file CRuby's VM (libruby-X.Y.so, or a ruby executable with the
 * VM linked in)? Which version, where its VM loop is (rb_vm_exec: each entry
 * from C into the VM is one call of it) and where the current execution
 * context is found (the thread-local ruby_current_ec from 3.0, 2.7's global
 * ruby_current_execution_context_ptr), in the file's own virtual addresses. Read
 * from the file only: the process is not touched.
 */
#ifndef OMNIPROF_INTERP_RUBY_BINARY_H
#define OMNIPROF_INTERP_RUBY_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/interp/ruby_abi.h"

struct elf_file;
struct remote_memory;
struct ruby_layout;

struct ruby_binary {
	unsigned int major, minor, teeny;
	const struct ruby_layout *layout;
	uint64_t vm_exec, vm_exec_size; /* rb_vm_exec */
	/*
	 * How the current ec is found (enum op_rb_tls_mode; 0: not found).
	 * OP_RB_TLS_DTV: tls_index is the GOT slot the dynamic linker fills
	 * with ruby_current_ec's tls_index {module id, offset}
	 * (R_X86_64_DTPMOD64 against it). OP_RB_TLS_TP (the VM in the
	 * executable): tp_offset is ruby_current_ec's distance from the
	 * thread pointer. OP_RB_TLS_GLOBAL (2.7): tls_index is
	 * ruby_current_execution_context_ptr's address.
	 */
	int tls_mode;
	uint64_t tls_index;
	int64_t tp_offset;
	/*
	 * OP_RB_TLS_TP in a library reached by initial-exec TLS: tpoff_slot is
	 * the GOT slot of the TPOFF64 relocation against ruby_current_ec, from
	 * which ruby_binary__read_tp_offset() reads tp_offset in the process.
	 */
	uint64_t tpoff_slot;
	/* OP_RB_TLS_DTV_LOCAL (a local ruby_current_ec, 3.3's): tls_index is
	 * the module's own tls_index slot, tls_offset the symbol's offset. */
	uint64_t tls_offset;
	/* global_symbols (ID -> name), found in rb_id2str's code; 0: not found. */
	uint64_t global_symbols;
	/* ruby_current_vm_ptr (exported): 3.2's class names are read through the VM's shapes. */
	uint64_t current_vm_ptr;
};

/*
 * Fills *out from ef. Returns 0, -ENOENT (not CRuby), -ENOTSUP (a CRuby
 * this build has no layout for, or one whose ruby_current_ec it cannot
 * find; *out still holds the version) or -errno.
 */
int ruby_binary__inspect(const struct elf_file *ef, struct ruby_binary *out);

/*
 * The target of the first `cmp %r32, disp32(%rip)` (39 or 3b, either
 * operand order) in code, whose first byte is at vaddr base: where an ID
 * lookup reads global_symbols.last_id. 0: none.
 */
uint64_t ruby_binary__last_id_cmp(const uint8_t *code, size_t len, uint64_t base);

/*
 * Initial exec (bin->tpoff_slot): ruby_current_ec's distance from the thread
 * pointer in the process whose memory is mem, mapping bin's file with bias,
 * read from the GOT slot the dynamic linker filled. 0 and *off; -EAGAIN
 * while the slot holds no such distance (not relocated yet); -ENOENT
 * without a slot; or -errno.
 */
int ruby_binary__read_tp_offset(const struct ruby_binary *bin, const struct remote_memory *mem,
				uint64_t bias, int64_t *off);

/* The `rb_procs` value of a process mapping bin's file with bias (vaddr = address - bias). */
void ruby_binary__proc_info(const struct ruby_binary *bin, uint64_t bias, struct op_rb_proc *out);

#endif
