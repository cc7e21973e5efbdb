/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Is an ELF file a PHP interpreter with the Zend engine linked in (the CLI
 * /usr/bin/php8.2, php-fpm8.2, php-cgi)? Which version, where its VM is
 * (execute_ex and its .cold part) and where executor_globals keeps the
 * current frame, all in the file's own virtual addresses. Read from the file
 * only: the process is not touched.
 */
#ifndef OMNIPROF_INTERP_PHP_BINARY_H
#define OMNIPROF_INTERP_PHP_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/abi.h"
#include "omniprof/interp/php_abi.h"

struct elf_file;
struct php_layout;

#define PHP_VM_MAX_RANGES 2 /* execute_ex and its .cold part */

struct php_binary {
	unsigned int major, minor;
	const struct php_layout *layout;
	uint64_t current_ex; /* executor_globals.current_execute_data (ELF vaddr) */
	uint16_t eg_offset;  /* its offset in executor_globals */
	bool eg_from_code;   /* ... as zend_is_executing() reads it */
	struct {
		uint64_t start, end;
	} vm[PHP_VM_MAX_RANGES]; /* ELF vaddrs; n_vm used */
	size_t n_vm;
	uint64_t vm_body_pc; /* a pc past execute_ex's prologue, 0: none (op_php_proc) */
	bool vm_regs;	     /* execute_ex keeps execute_data in r14, the opline in r15 */
};

/*
 * Fills *out from ef. Returns 0, -ENOENT (not a PHP interpreter), -ENOTSUP
 * (a PHP this build has no layout for, a ZTS build, or one whose
 * executor_globals offset is unknown; *out holds the version when known)
 * or -errno.
 */
int php_binary__inspect(const struct elf_file *ef, struct php_binary *out);

/* The `php_procs` value of a process that maps bin's file with bias. */
void php_binary__proc_info(const struct php_binary *bin, uint64_t bias, struct op_php_proc *out);

/*
 * The offset in executor_globals that code[0 .. len) (the start of
 * zend_is_executing(), at ELF vaddr code_vaddr) compares with NULL, given
 * executor_globals at eg. 0 and *off, or -ENOENT when the code is none of
 * the shapes compilers give it. Exposed for the tests.
 */
int php_binary__decode_eg_offset(const uint8_t *code, size_t len, uint64_t code_vaddr, uint64_t eg,
				 uint16_t *off);

/*
 * Whether code[0 .. len) (the start of execute_ex) is the HYBRID VM built
 * with GCC's global registers: it loads execute_data into r14 (`mov
 * %rdi,%r14`) and dispatches through the opline in r15 (`jmp *(%r15)`).
 * Exposed for the tests.
 */
bool php_binary__vm_uses_regs(const uint8_t *code, size_t len);

/* "API420220829,NTS" in s[0 .. len): the Zend extension API number and NTS/ZTS. 0 or -ENOENT. */
int php_binary__find_api(const char *s, size_t len, uint32_t *api, bool *zts);

#endif
