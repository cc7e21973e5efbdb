/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel's structure offsets the BPF programs need, read from the
 * running kernel's BTF (/sys/kernel/btf/vmlinux) by a small bounded reader of
 * our own instead of libbpf's full load of it (5.5 MB read, copied and
 * parsed for every process start, issue 22). The reader walks the type
 * section once to index it (every 64th type's place) and looks the few
 * structs up by name; the bytes are treated as untrusted (every length and
 * id checked, recursion and typedef chains bounded).
 *
 * The BTF format: the kernel's Documentation/bpf/btf.rst.
 */
#ifndef OMNIPROF_UTIL_KERNEL_BTF_H
#define OMNIPROF_UTIL_KERNEL_BTF_H

#include <stddef.h>
#include <stdint.h>

#include "omniprof/kernel_offsets.h"

struct kernel_btf;

/*
 * Opens a BTF image held in data[0, size), which must outlive the result (the
 * reader keeps pointers into it). 0 and *out (free with kernel_btf__free), or
 * -EINVAL (not BTF in this machine's byte order, or malformed), -ENOMEM.
 */
int kernel_btf__open(const void *data, size_t size, struct kernel_btf **out);
void kernel_btf__free(struct kernel_btf *btf);

/* How many types the image defines (ids 1..n). */
uint32_t kernel_btf__type_count(const struct kernel_btf *btf);

/*
 * The ids of the structs named names[0..n) (ids[i] = 0 for one not found;
 * a struct declared without its members does not count), in one pass over
 * the types. Returns how many were found.
 */
size_t kernel_btf__find_structs(const struct kernel_btf *btf, const char *const *names,
				uint32_t *ids, size_t n);

/*
 * The byte offset and size of member path ("thread.fsbase": members of
 * members; anonymous structs and unions on the way looked through) in struct
 * or union struct_id. 0, or -ENOENT (no such member), -EINVAL (malformed,
 * too deep, or a bitfield or a member not on a byte boundary).
 */
int kernel_btf__member(const struct kernel_btf *btf, uint32_t struct_id, const char *path,
		       uint32_t *offset, uint32_t *size);

/*
 * Every OP_KERNEL_OFFSET_FIELDS field into *out, and the check of
 * OP_PT_REGS_FIELDS against the x86-64 layout the BPF code reads. 0, or a
 * negative errno with why[] (NUL-terminated) naming the field and what is
 * wrong with it.
 */
int kernel_btf__offsets(const struct kernel_btf *btf, struct op_kernel_offsets *out, char *why,
			size_t why_len);

/*
 * The running kernel's offsets: /sys/kernel/btf/vmlinux mapped read-only
 * (read into a buffer where the kernel cannot map it, before 6.16) and
 * resolved once per process; later calls copy the first answer (an error
 * too: logged once, with its one line). Thread-safe. 0 or a negative errno.
 */
int kernel_offsets__get(struct op_kernel_offsets *out);

#endif
