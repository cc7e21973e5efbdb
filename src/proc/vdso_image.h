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

#include <stddef.h>
#include <stdint.h>

#include "proc/remote_memory.h"

/* A vDSO is a few pages; anything larger is not one. */
#define VDSO_IMAGE_MAX (1u << 20)

/*
 * Copies [start, end) of a process's memory (its [vdso] mapping), read
 * through mem (remote_memory__live(pid) for a running process), into a new
 * memfd. Returns the fd (the caller closes it), or -errno: -E2BIG for a
 * mapping larger than VDSO_IMAGE_MAX, -ESRCH when the process is gone,
 * -EFAULT when not all of the range is readable.
 */
int vdso_image__copy(const struct remote_memory *mem, uint64_t start, uint64_t end);
/*
 * The same read without the memfd: *bytes is a new buffer of end - start
 * bytes (the caller frees it), NULL on error. 0 or -errno as above.
 */
int vdso_image__read(const struct remote_memory *mem, uint64_t start, uint64_t end,
		     uint8_t **bytes);
/* A new memfd holding len bytes (the caller closes it), or -errno. */
int vdso_image__memfd(const uint8_t *bytes, size_t len);

#endif
