/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the BPF programs find the kernel's fields: offsets user space reads
 * in the running kernel's BTF (src/util/kernel_btf.c, kernel_offsets__get)
 * and sets in each object's .rodata before load (bpf/kernel_read.h declares
 * it). The objects have no CO-RE relocation and no tp_btf program, so libbpf
 * never loads vmlinux BTF (5.5 MB read, copied and parsed, 2,841 new pages
 * and 20-80 ms per process start, issue 22).
 *
 * Another object that reads these fields includes bpf/kernel_read.h and its
 * loader sets `skel->rodata->kernel_offsets` from kernel_offsets__get(): one
 * look-up per process, whatever the number of objects.
 */
#ifndef OMNIPROF_KERNEL_OFFSETS_H
#define OMNIPROF_KERNEL_OFFSETS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Each field: its member in struct op_kernel_offsets, its path in the
 * kernel's types (struct.member[.member]: anonymous structs and unions on the
 * way are looked through) and its size in bytes, which the BPF reads assume
 * (a kernel whose field has another size is refused, never read wrongly).
 */
#define OP_KERNEL_OFFSET_FIELDS(X)                                                                 \
	X(task_pid, "task_struct.pid", 4)                                                          \
	X(task_tgid, "task_struct.tgid", 4)                                                        \
	X(task_flags, "task_struct.flags", 4)                                                      \
	X(task_mm, "task_struct.mm", 8)                                                            \
	X(task_group_leader, "task_struct.group_leader", 8)                                        \
	X(task_comm, "task_struct.comm", 16)                                                       \
	X(task_sas_ss_sp, "task_struct.sas_ss_sp", 8)                                              \
	X(task_sas_ss_size, "task_struct.sas_ss_size", 8)                                          \
	X(task_fsbase, "task_struct.thread.fsbase", 8)                                             \
	X(mm_start_stack, "mm_struct.start_stack", 8)                                              \
	X(vma_vm_end, "vm_area_struct.vm_end", 8)                                                  \
	X(bprm_interp, "linux_binprm.interp", 8)

#define OP_KERNEL_OFFSET_MEMBER(name, path, size) __u32 name;
struct op_kernel_offsets {
	OP_KERNEL_OFFSET_FIELDS(OP_KERNEL_OFFSET_MEMBER)
};
#undef OP_KERNEL_OFFSET_MEMBER

_Static_assert(sizeof(struct op_kernel_offsets) == 12 * 4, "op_kernel_offsets layout");

/*
 * The x86-64 user registers as the kernel saves them on entry: struct
 * pt_regs, the layout of a perf event program's context (bpf_user_pt_regs_t,
 * UAPI) and of what bpf_task_pt_regs() returns. A fixed ABI on x86-64 (the
 * order of the kernel's entry code and of ptrace's user_regs_struct), read at
 * these offsets; user space checks the running kernel's pt_regs against them
 * (kernel_offsets__get, OP_PT_REGS_FIELDS) and refuses to load otherwise.
 */
struct op_pt_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax;
	__u64 ip, cs, flags, sp, ss;
};

/* A perf event program's context (UAPI struct bpf_perf_event_data). */
struct op_perf_ctx {
	struct op_pt_regs regs;
	__u64 sample_period;
	__u64 addr;
};

/* The registers read, their offsets and their size in the kernel's pt_regs (0: not
 * checked; cs, read from the context only, is a u16 in a union with a u64 since
 * Linux 6.9's FRED, at the same place). */
#define OP_PT_REGS_FIELDS(X)                                                                       \
	X(r15, "pt_regs.r15", 0, 8)                                                                \
	X(r14, "pt_regs.r14", 8, 8)                                                                \
	X(bp, "pt_regs.bp", 32, 8)                                                                 \
	X(bx, "pt_regs.bx", 40, 8)                                                                 \
	X(ip, "pt_regs.ip", 128, 8)                                                                \
	X(cs, "pt_regs.cs", 136, 0)                                                                \
	X(sp, "pt_regs.sp", 152, 8)

#define OP_PT_REGS_ASSERT(name, path, off, size)                                                   \
	_Static_assert(__builtin_offsetof(struct op_pt_regs, name) == (off), "pt_regs "            \
									     "ABI: " path);
OP_PT_REGS_FIELDS(OP_PT_REGS_ASSERT)
#undef OP_PT_REGS_ASSERT
_Static_assert(sizeof(struct op_pt_regs) == 168, "pt_regs ABI size");
_Static_assert(__builtin_offsetof(struct op_perf_ctx, sample_period) == 168,
	       "bpf_perf_event_data ABI");

#endif
