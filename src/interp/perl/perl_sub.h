/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What names a Perl frame, read from the process while it lives: a sub's
 * "Package::name" (from its CV's GV and the GV's stash, or a lexical sub's
 * own name) and file (CvFILE), an eval's or the main program's file (the
 * COP's). One object per (pid, frame address) in the frame store.
 */
#ifndef OMNIPROF_INTERP_PERL_SUB_H
#define OMNIPROF_INTERP_PERL_SUB_H

#include <stddef.h>
#include <stdint.h>

struct perl_layout;
struct remote_memory;

#define PERL_NAME_MAX 256 /* bytes of a package or sub name read */
#define PERL_FILE_MAX 512 /* bytes of a file name read */

struct perl_sub {
	char *name; /* owned; "Package::sub", "(eval)", "(main)" */
	char *file; /* owned; "" when unknown */
};

/*
 * Reads what names frame (addr, data) of perl_abi.h into *out (free with
 * perl_sub__free()). 0, or -errno (-EFAULT: unreadable, -EINVAL: not what
 * a CV or COP looks like).
 */
int perl_sub__read(const struct remote_memory *mem, const struct perl_layout *l, uint64_t addr,
		   uint64_t data, struct perl_sub **out);
void perl_sub__free(struct perl_sub *s); /* accepts NULL */
size_t perl_sub__bytes(const struct perl_sub *s);

#endif
