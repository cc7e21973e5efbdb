// SPDX-License-Identifier: Apache-2.0
/*
 * The kernel's structure offsets read by our own BTF reader (util/kernel_btf.h):
 * on the running kernel's BTF, every field the BPF code reads is where
 * libbpf's BTF API (btf__load_vmlinux_btf, btf__find_by_name_kind, in this test
 * only) finds it, anonymous structs and unions looked through; on BTF images
 * built here, typedef chains, arrays, nested paths, bitfields, missing fields,
 * sizes the BPF code does not read, loops and malformed images give the
 * answers and errors documented, never a guess.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "util/kernel_btf.h"
#include "util/read_file.h"

/* libbpf's answer: the byte offset of member name in composite type id, anonymous
 * members looked through; -1 when absent. *member_type: its type id. */
static long libbpf_member(const struct btf *btf, uint32_t id, const char *name,
			  uint32_t *member_type)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *mname = btf__name_by_offset(btf, m->name_off);
		uint32_t bits = btf_member_bit_offset(t, i);

		if (mname && *mname) {
			if (strcmp(mname, name))
				continue;
			*member_type = m->type;
			return bits / 8;
		}
		const struct btf_type *sub = btf__type_by_id(btf, m->type);
		if (btf_is_composite(sub)) {
			long off = libbpf_member(btf, m->type, name, member_type);

			if (off >= 0)
				return bits / 8 + off;
		}
	}
	return -1;
}

/* libbpf's offset of path ("thread.fsbase") in struct root, and its size. */
static long libbpf_path(const struct btf *btf, const char *root, const char *path, uint32_t *size)
{
	int id = btf__find_by_name_kind(btf, root, BTF_KIND_STRUCT);
	char buf[128], *save = NULL;
	long total = 0;
	uint32_t type = (uint32_t)id;

	assert_true(id > 0);
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *name = strtok_r(buf, ".", &save); name; name = strtok_r(NULL, ".", &save)) {
		long off = libbpf_member(btf, btf__resolve_type(btf, type), name, &type);

		if (off < 0)
			return -1;
		total += off;
	}
	*size = (uint32_t)btf__resolve_size(btf, type);
	return total;
}

static void test_offsets_equal_libbpf(void **state)
{
	struct op_kernel_offsets ours, again;
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct kernel_btf *kb;
	char *image;
	size_t len;
	uint32_t off, size, lsize;
	struct {
		const char *root, *path;
		uint32_t ours;
	} fields[] = {
	    {"task_struct", "pid", 0},		 {"task_struct", "tgid", 0},
	    {"task_struct", "flags", 0},	 {"task_struct", "mm", 0},
	    {"task_struct", "group_leader", 0},	 {"task_struct", "comm", 0},
	    {"task_struct", "sas_ss_sp", 0},	 {"task_struct", "sas_ss_size", 0},
	    {"task_struct", "thread.fsbase", 0}, {"mm_struct", "start_stack", 0},
	    {"vm_area_struct", "vm_end", 0},	 {"linux_binprm", "interp", 0},
	};

	(void)state;
	/* This machine's kernel has BTF (the sampler needs it): no BTF is a failure. */
	assert_non_null(vmlinux);
	assert_int_equal(kernel_offsets__get(&ours), 0);
	/* Once per process: the second answer is the first. */
	assert_int_equal(kernel_offsets__get(&again), 0);
	assert_memory_equal(&ours, &again, sizeof(ours));
	fields[0].ours = ours.task_pid;
	fields[1].ours = ours.task_tgid;
	fields[2].ours = ours.task_flags;
	fields[3].ours = ours.task_mm;
	fields[4].ours = ours.task_group_leader;
	fields[5].ours = ours.task_comm;
	fields[6].ours = ours.task_sas_ss_sp;
	fields[7].ours = ours.task_sas_ss_size;
	fields[8].ours = ours.task_fsbase;
	fields[9].ours = ours.mm_start_stack;
	fields[10].ours = ours.vma_vm_end;
	fields[11].ours = ours.bprm_interp;

	/* The same image through the reader's own API: offsets and sizes. */
	assert_int_equal(read_file("/sys/kernel/btf/vmlinux", &image, &len), 0);
	assert_int_equal(kernel_btf__open(image, len, &kb), 0);
	assert_int_equal(kernel_btf__type_count(kb), btf__type_cnt(vmlinux) - 1);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *root = fields[i].root;
		uint32_t id;
		long lib = libbpf_path(vmlinux, fields[i].root, fields[i].path, &lsize);

		assert_int_equal(kernel_btf__find_structs(kb, &root, &id, 1), 1);
		assert_int_equal(id, btf__find_by_name_kind(vmlinux, root, BTF_KIND_STRUCT));
		assert_int_equal(kernel_btf__member(kb, id, fields[i].path, &off, &size), 0);
		printf("%s.%s: %u (%u bytes), libbpf %ld (%u bytes)\n", root, fields[i].path, off,
		       size, lib, lsize);
		assert_true(lib > 0);
		assert_int_equal(off, lib);
		assert_int_equal(size, lsize);
		assert_int_equal(fields[i].ours, off);
	}
	/* (vm_end lies in an anonymous struct in Linux 6.x: found through it, above.) The
	 * registers the BPF code reads at fixed offsets. */
	{
		const char *root = "pt_regs";
		uint32_t id;

		assert_int_equal(kernel_btf__find_structs(kb, &root, &id, 1), 1);
		assert_int_equal(kernel_btf__member(kb, id, "ip", &off, &size), 0);
		assert_int_equal(off, 128);
		assert_int_equal(kernel_btf__member(kb, id, "no_such_register", &off, &size),
				 -ENOENT);
	}
	kernel_btf__free(kb);
	free(image);
	btf__free(vmlinux);
}

/* ---- BTF images built here -------------------------------------------------- */

struct image {
	uint8_t types[4096];
	size_t types_len;
	char strs[1024];
	size_t strs_len;
	uint32_t n;
	uint8_t out[8192];
	size_t out_len;
};

static uint32_t str(struct image *im, const char *s)
{
	uint32_t off = (uint32_t)im->strs_len;

	if (!*s)
		return 0;
	memcpy(im->strs + off, s, strlen(s) + 1);
	im->strs_len += strlen(s) + 1;
	return off;
}

static void put32(struct image *im, uint32_t v)
{
	memcpy(im->types + im->types_len, &v, 4);
	im->types_len += 4;
}

/* A type record's fixed part; returns its id. */
static uint32_t type(struct image *im, const char *name, uint32_t kind, uint32_t vlen, bool kflag,
		     uint32_t size_or_type)
{
	put32(im, str(im, name));
	put32(im, (kflag ? 1u << 31 : 0) | kind << 24 | vlen);
	put32(im, size_or_type);
	return ++im->n;
}

static void member(struct image *im, const char *name, uint32_t type_id, uint32_t bits)
{
	put32(im, str(im, name));
	put32(im, type_id);
	put32(im, bits);
}

/* The image's bytes: header, types, strings. */
static void finish(struct image *im)
{
	uint32_t hdr[6] = {0x0001eB9F,
			   24,
			   0,
			   (uint32_t)im->types_len,
			   (uint32_t)im->types_len,
			   (uint32_t)im->strs_len};

	memcpy(im->out, hdr, sizeof(hdr));
	memcpy(im->out + 24, im->types, im->types_len);
	memcpy(im->out + 24 + im->types_len, im->strs, im->strs_len);
	im->out_len = 24 + im->types_len + im->strs_len;
}

/*
 * int (1, 4 bytes), u32 (2, typedef of 1), const u32 (3), char (4, 1 byte),
 * char[16] (5), ptr (6), anonymous union { u32 a; u64-like ptr p; } (7),
 * struct inner { int x; int y; } (8), struct task_struct (9, kind_flag:
 * pid at 0, a 3-bit field at 32, union at 64, comm at 128, thread at 256,
 * odd at 388 bits; at byte 164 of the types), a typedef loop (10 -> 11 -> 10),
 * a second struct task_struct (12) whose one member's type is that loop.
 */
static void build(struct image *im)
{
	memset(im, 0, sizeof(*im));
	im->strs_len = 1; /* "" at 0 */
	type(im, "int", 1, 0, false, 4);
	put32(im, 32);
	type(im, "u32", 8, 0, false, 1);
	type(im, "", 10, 0, false, 2);
	type(im, "char", 1, 0, false, 1);
	put32(im, 8);
	type(im, "", 3, 0, false, 0);
	put32(im, 4);
	put32(im, 1);
	put32(im, 16);
	type(im, "", 2, 0, false, 1);
	type(im, "", 5, 2, false, 8);
	member(im, "a", 3, 0);
	member(im, "p", 6, 0);
	type(im, "inner", 4, 2, false, 8);
	member(im, "x", 1, 0);
	member(im, "y", 1, 32);
	type(im, "task_struct", 4, 6, true, 64);
	member(im, "pid", 2, 0);
	member(im, "bits", 1, 3u << 24 | 32);
	member(im, "", 7, 64);
	member(im, "comm", 5, 128);
	member(im, "thread", 8, 256);
	member(im, "odd", 1, 388);
	type(im, "loop_a", 8, 0, false, 11);
	type(im, "loop_b", 8, 0, false, 10);
	type(im, "task_struct", 4, 1, false, 4);
	member(im, "loop", 10, 0);
	finish(im);
}

static void test_built_image(void **state)
{
	struct image im;
	struct kernel_btf *kb;
	const char *names[] = {"task_struct", "inner", "nothing"};
	uint32_t ids[3], off, size;
	struct op_kernel_offsets ko;
	char why[256] = "";

	(void)state;
	build(&im);
	assert_int_equal(kernel_btf__open(im.out, im.out_len, &kb), 0);
	assert_int_equal(kernel_btf__type_count(kb), 12);
	assert_int_equal(kernel_btf__find_structs(kb, names, ids, 3), 2);
	assert_int_equal(ids[0], 9); /* the first with members */
	assert_int_equal(ids[1], 8);
	assert_int_equal(ids[2], 0);

	assert_int_equal(kernel_btf__member(kb, 9, "pid", &off, &size), 0);
	assert_int_equal(off, 0);
	assert_int_equal(size, 4); /* through the typedef */
	assert_int_equal(kernel_btf__member(kb, 9, "a", &off, &size), 0);
	assert_int_equal(off, 8); /* in the anonymous union, through const and typedef */
	assert_int_equal(size, 4);
	assert_int_equal(kernel_btf__member(kb, 9, "p", &off, &size), 0);
	assert_int_equal(off, 8);
	assert_int_equal(size, sizeof(void *));
	assert_int_equal(kernel_btf__member(kb, 9, "comm", &off, &size), 0);
	assert_int_equal(off, 16);
	assert_int_equal(size, 16);
	assert_int_equal(kernel_btf__member(kb, 9, "thread.y", &off, &size), 0);
	assert_int_equal(off, 36);
	assert_int_equal(size, 4);
	/* Not readable with a byte read: refused, not rounded. */
	assert_int_equal(kernel_btf__member(kb, 9, "bits", &off, &size), -EINVAL);
	assert_int_equal(kernel_btf__member(kb, 9, "odd", &off, &size), -EINVAL);
	/* Missing, a path through a non-struct, empty components. */
	assert_int_equal(kernel_btf__member(kb, 9, "nothing", &off, &size), -ENOENT);
	assert_int_equal(kernel_btf__member(kb, 9, "thread.z", &off, &size), -ENOENT);
	assert_int_equal(kernel_btf__member(kb, 9, "pid.x", &off, &size), -ENOENT);
	assert_int_equal(kernel_btf__member(kb, 9, "thread..x", &off, &size), -EINVAL);
	assert_int_equal(kernel_btf__member(kb, 9, "", &off, &size), -EINVAL);
	/* Ids out of range, a typedef loop: bounded, an error. */
	assert_int_equal(kernel_btf__member(kb, 0, "pid", &off, &size), -EINVAL);
	assert_int_equal(kernel_btf__member(kb, 99, "pid", &off, &size), -EINVAL);
	assert_int_equal(kernel_btf__member(kb, 12, "loop", &off, &size), -EINVAL);
	/* The sampler's set: the first field the image lacks is named, nothing guessed. */
	assert_int_equal(kernel_btf__offsets(kb, &ko, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "task_struct.tgid"));
	kernel_btf__free(kb);

	/* A field of another size than the BPF code reads: refused with its sizes. */
	build(&im);
	memcpy(im.types + 8, &(uint32_t){8}, 4); /* int is 8 bytes now */
	finish(&im);
	assert_int_equal(kernel_btf__open(im.out, im.out_len, &kb), 0);
	assert_int_equal(kernel_btf__offsets(kb, &ko, why, sizeof(why)), -ERANGE);
	assert_non_null(strstr(why, "task_struct.pid is 8 bytes"));
	kernel_btf__free(kb);
}

static void test_malformed_images(void **state)
{
	struct image im;
	struct kernel_btf *kb = (void *)1;
	uint8_t copy[8192];
	uint32_t v;

	(void)state;
	build(&im);
	/* Too short, no data. */
	assert_int_equal(kernel_btf__open(im.out, 23, &kb), -EINVAL);
	assert_null(kb);
	assert_int_equal(kernel_btf__open(NULL, 0, &kb), -EINVAL);
	/* Each header field broken in turn. */
	for (int field = 0; field < 6; field++) {
		memcpy(copy, im.out, im.out_len);
		v = field == 0 ? 0x0001B9EB /* the other byte order */ : 0x7fffffff;
		memcpy(copy + 4 * field, &v, 4);
		if (field == 2 || field == 4) /* an offset past the end */
			v = (uint32_t)im.out_len;
		memcpy(copy + 4 * field, &v, 4);
		assert_int_equal(kernel_btf__open(copy, im.out_len, &kb), -EINVAL);
	}
	/* Version 2. */
	memcpy(copy, im.out, im.out_len);
	copy[2] = 2;
	assert_int_equal(kernel_btf__open(copy, im.out_len, &kb), -EINVAL);
	/* A record running past the type section: the struct's vlen raised. */
	memcpy(copy, im.out, im.out_len);
	memcpy(&v, copy + 24 + 164 + 4, 4); /* struct task_struct's info (type 9) */
	assert_int_equal((v >> 24) & 0x1f, 4);
	v += 200;
	memcpy(copy + 24 + 164 + 4, &v, 4);
	assert_int_equal(kernel_btf__open(copy, im.out_len, &kb), -EINVAL);
	/* An unknown kind. */
	memcpy(copy, im.out, im.out_len);
	v = 25u << 24;
	memcpy(copy + 24 + 4, &v, 4);
	assert_int_equal(kernel_btf__open(copy, im.out_len, &kb), -EINVAL);
	/* A name past the string section: the look-ups refuse it, no read past the end. */
	memcpy(copy, im.out, im.out_len);
	v = 0xfffff;
	memcpy(copy + 24 + 164 + 12, &v, 4); /* task_struct's first member's name */
	assert_int_equal(kernel_btf__open(copy, im.out_len, &kb), 0);
	{
		uint32_t off, size;

		assert_int_equal(kernel_btf__member(kb, 9, "pid", &off, &size), -EINVAL);
	}
	kernel_btf__free(kb);
	kernel_btf__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_offsets_equal_libbpf),
	    cmocka_unit_test(test_built_image),
	    cmocka_unit_test(test_malformed_images),
	};

	return cmocka_run_group_tests_name("kernel_btf", tests, NULL, NULL);
}
