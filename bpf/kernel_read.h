/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * Reads of the kernel's fields at the offsets user space found in the
 * running kernel's BTF (omniprof/kernel_offsets.h), instead of CO-RE
 * relocations: an object including this has none, so libbpf does not load
 * vmlinux BTF for it. Its loader sets `kernel_offsets` in .rodata before
 * load (src/util/kernel_btf.h, kernel_offsets__get); the verifier sees the
 * frozen values as constants, so each read costs what a relocated one did.
 */
#ifndef OMNIPROF_BPF_KERNEL_READ_H
#define OMNIPROF_BPF_KERNEL_READ_H

#include "omniprof/kernel_offsets.h"

const volatile struct op_kernel_offsets kernel_offsets;

/*
 * A field read through a pointer the verifier knows by its BTF type
 * (bpf_get_current_task_btf(), a field of it, a bpf_find_vma callback's vma):
 * a plain load, checked by the verifier against the kernel's own BTF at load
 * and made safe by it (a pointer field read at a wrong offset fails the load;
 * a number field is only checked to lie inside some member: the offsets'
 * own checks in user space, kernel_btf.c, are what keep those right).
 */
#define OP_KFIELD(ptr, field, type)                                                                \
	(*(const __typeof__(type) *)((const char *)(ptr) + kernel_offsets.field))

/* The same through a pointer the verifier sees as a number (a raw
 * tracepoint's argument): one bpf_probe_read_kernel of the field's size, 0
 * when it fails. */
#define OP_KREAD(ptr, field, type)                                                                 \
	({                                                                                         \
		type __kr_v = 0;                                                                   \
		bpf_probe_read_kernel(&__kr_v, sizeof(__kr_v),                                     \
				      (const char *)(ptr) + kernel_offsets.field);                 \
		__kr_v;                                                                            \
	})

/* A string field (char[N]) into dst (sizeof(dst) bytes at most, NUL-terminated) by a
 * probe read; dst empty when it fails. */
#define OP_KREAD_STR(dst, ptr, field)                                                              \
	do {                                                                                       \
		if (bpf_probe_read_kernel_str((dst), sizeof(dst),                                  \
					      (const char *)(ptr) + kernel_offsets.field) < 0)     \
			(dst)[0] = '\0';                                                           \
	} while (0)

/* The current task's fs base (its TLS pointer): the runtimes' thread state. */
#define OP_CURRENT_FSBASE() OP_KFIELD(bpf_get_current_task_btf(), task_fsbase, __u64)

/* The user registers a perf event program's context holds (x86-64 pt_regs, UAPI): the
 * context allows only 8-byte loads at fixed offsets. */
#define OP_CTX_REGS(ctx) (&((const struct op_perf_ctx *)(ctx))->regs)

/*
 * Register name of the pt_regs bpf_task_pt_regs() returned (the same x86-64
 * layout, checked by user space): a probe read, as BPF_CORE_READ did. Not a
 * plain load: clang merges the two branches' loads (context or task) into
 * one through a pointer chosen between them, which the verifier refuses for
 * the context ("dereference of modified ctx ptr").
 */
#define OP_TASK_REG(regs, name)                                                                    \
	({                                                                                         \
		__u64 __tr_v = 0;                                                                  \
		bpf_probe_read_kernel(&__tr_v, sizeof(__tr_v), &(regs)->name);                     \
		__tr_v;                                                                            \
	})

#endif
