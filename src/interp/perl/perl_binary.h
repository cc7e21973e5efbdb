/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Is an ELF file a Perl interpreter (libperl.so.5.N, or an executable with
 * the interpreter linked in, such as Debian's /usr/bin/perl)? Which
 * version and build, where its runops loops are, and where the
 * interpreter's variables are, all in the file's own virtual addresses.
 * Read from the file only: the process is not touched.
 */
#ifndef OMNIPROF_INTERP_PERL_BINARY_H
#define OMNIPROF_INTERP_PERL_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/abi.h"
#include "omniprof/interp/perl_abi.h"

struct elf_file;
struct perl_layout;

#define PERL_MAX_RUNOPS 2 /* Perl_runops_standard, Perl_runops_debug */

struct perl_binary {
	unsigned int minor; /* 5.minor */
	bool threaded;
	const struct perl_layout *layout;
	uint64_t curinterp;    /* PL_curinterp (threaded), ELF vaddr */
	uint64_t thr_key;      /* PL_thr_key (threaded) */
	uint64_t curcop;       /* PL_curcop (unthreaded) */
	uint64_t curstackinfo; /* PL_curstackinfo (unthreaded) */
	uint64_t op;	       /* PL_op (unthreaded) */
	/* Threaded executables: PL_current_context's offset from the thread pointer, 0: none. */
	int64_t tls_context;
	uint64_t runops[PERL_MAX_RUNOPS][2]; /* [start, end), ELF vaddrs; n_runops used */
	size_t n_runops;
};

/*
 * Fills *out from ef. Returns 0, -ENOENT (not a Perl interpreter),
 * -ENOTSUP (a Perl this version of omniprof has no layout for, or one
 * missing the symbols it needs; *out still holds the version) or -errno.
 * name is the file's path (for versions only found there).
 */
int perl_binary__inspect(const struct elf_file *ef, const char *name, struct perl_binary *out);

/* Where glibc keeps a thread's pthread_getspecific() values (struct op_perl_proc's tsd_*). */
struct perl_tsd {
	uint16_t specific; /* struct pthread -> specific[] (pointers to blocks of entries) */
	uint8_t entry;	   /* sizeof(struct pthread_key_data) */
	uint8_t data;	   /* struct pthread_key_data -> data */
};

/*
 * Fills *out from a C library's thread_db descriptors (the
 * `_thread_db_pthread_specific` family glibc exports for libthread_db):
 * 0, -ENOENT (not such a library) or -EINVAL (a layout the walker does not
 * read: not two levels of OP_PERL_TSD_L2 entries).
 */
int perl_binary__glibc_tsd(const struct elf_file *ef, struct perl_tsd *out);

/* The `perl_procs` value of a process that maps bin's file with bias. */
void perl_binary__proc_info(const struct perl_binary *bin, uint64_t bias, struct op_perl_proc *out);

/* Adds PL_thr_key (bin mapped with bias) and its C library's layout tsd to *out. */
void perl_binary__proc_tsd(const struct perl_binary *bin, uint64_t bias, const struct perl_tsd *tsd,
			   struct op_perl_proc *out);

/*
 * The thread-pointer offset of a TLS variable at offset sym_off of an
 * executable's PT_TLS segment (memsz, align, vaddr): x86-64's variant II,
 * where the executable's block ends at the thread pointer. Exposed for tests.
 */
int64_t perl_binary__exec_tls_offset(uint64_t memsz, uint64_t align, uint64_t vaddr,
				     uint64_t sym_off);

#endif
