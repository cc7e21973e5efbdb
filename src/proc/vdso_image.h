/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vDSO as a file: the kernel maps the same small ELF image ([vdso] in
 * /proc/PID/maps) into every process of one ABI, with no file behind it. Its
 * bytes are copied out of a process's own mapping into a memfd, so the rest
 * of the profiler (file identity, .eh_frame tables, symbols) treats it like
 * any other ELF file. Read-only: the target process is never written.
 */
#ifndef OMNIPROF_PROC_VDSO_IMAGE_H
#define OMNIPROF_PROC_VDSO_IMAGE_H

#include <stdint.h>
#include <sys/types.h>

/* A vDSO is a few pages; anything larger is not one. */
#define VDSO_IMAGE_MAX (1u << 20)

/*
 * Copies [start, end) of pid's memory (its [vdso] mapping) into a new memfd.
 * Returns the fd (the caller closes it), or -errno: -E2BIG for a mapping
 * larger than VDSO_IMAGE_MAX, -ESRCH when the process is gone.
 */
int vdso_image__copy(pid_t pid, uint64_t start, uint64_t end);

#endif
