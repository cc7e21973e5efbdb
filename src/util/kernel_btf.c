// SPDX-License-Identifier: Apache-2.0
#include "util/kernel_btf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "util/read_file.h"

#define BTF_MAGIC    0xeB9F
#define BTF_HDR_MIN  24u
#define BTF_TYPE_LEN 12u /* name_off, info, size or type */
/* One indexed place every INDEX_STRIDE types: a look-up walks at most
 * INDEX_STRIDE - 1 records, and the index of a 130,000-type vmlinux is 8 KiB. */
#define INDEX_STRIDE 64u
/* Anonymous members nested in one another, members in a path. */
#define MAX_DEPTH 8
/* typedef / const / volatile / restrict / type tag hops to a real type. */
#define MAX_MODIFIERS 32
/* The largest BTF image read: vmlinux's is 5-6 MB. */
#define BTF_MAX_SIZE (256u << 20)

enum btf_kind {
	KIND_INT = 1,
	KIND_PTR = 2,
	KIND_ARRAY = 3,
	KIND_STRUCT = 4,
	KIND_UNION = 5,
	KIND_ENUM = 6,
	KIND_FWD = 7,
	KIND_TYPEDEF = 8,
	KIND_VOLATILE = 9,
	KIND_CONST = 10,
	KIND_RESTRICT = 11,
	KIND_FUNC = 12,
	KIND_FUNC_PROTO = 13,
	KIND_VAR = 14,
	KIND_DATASEC = 15,
	KIND_FLOAT = 16,
	KIND_DECL_TAG = 17,
	KIND_TYPE_TAG = 18,
	KIND_ENUM64 = 19,
};

struct kernel_btf {
	const uint8_t *types; /* the type section */
	uint32_t types_len;
	const char *strs; /* the string section */
	uint32_t strs_len;
	uint32_t n_types;
	uint32_t *index; /* index[k]: where type 1 + k * INDEX_STRIDE starts in types */
};

/* A type record, its fixed part decoded. */
struct btf_type {
	const uint8_t *p; /* the record (12 bytes, then its kind's data) */
	uint32_t name_off;
	uint32_t kind;
	uint32_t vlen;
	bool kind_flag;
	uint32_t size_or_type;
};

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v)); /* the sections need not be aligned */
	return v;
}

static void decode(const uint8_t *p, struct btf_type *t)
{
	uint32_t info = get_u32(p + 4);

	t->p = p;
	t->name_off = get_u32(p);
	t->vlen = info & 0xffff;
	t->kind = (info >> 24) & 0x1f;
	t->kind_flag = info >> 31;
	t->size_or_type = get_u32(p + 8);
}

/* The length of the record at types[off], or 0 when it is not a known kind or
 * does not fit in the section. */
static uint32_t record_len(const struct kernel_btf *btf, uint32_t off)
{
	struct btf_type t;
	uint64_t len = BTF_TYPE_LEN;

	if (btf->types_len - off < BTF_TYPE_LEN)
		return 0;
	decode(btf->types + off, &t);
	switch (t.kind) {
	case KIND_INT:
	case KIND_VAR:
	case KIND_DECL_TAG:
		len += 4;
		break;
	case KIND_ARRAY:
		len += 12;
		break;
	case KIND_STRUCT:
	case KIND_UNION:
	case KIND_DATASEC:
	case KIND_ENUM64:
		len += 12ull * t.vlen;
		break;
	case KIND_ENUM:
	case KIND_FUNC_PROTO:
		len += 8ull * t.vlen;
		break;
	case KIND_PTR:
	case KIND_FWD:
	case KIND_TYPEDEF:
	case KIND_VOLATILE:
	case KIND_CONST:
	case KIND_RESTRICT:
	case KIND_FUNC:
	case KIND_FLOAT:
	case KIND_TYPE_TAG:
		break;
	default:
		return 0;
	}
	return len <= btf->types_len - off ? (uint32_t)len : 0;
}

/* The name at off in the string section, or NULL when off or its end is out of it. */
static const char *name_at(const struct kernel_btf *btf, uint32_t off)
{
	if (off >= btf->strs_len || !memchr(btf->strs + off, '\0', btf->strs_len - off))
		return NULL;
	return btf->strs + off;
}

/* Type id's record, or false for void (0) and an id out of range. */
static bool type_by_id(const struct kernel_btf *btf, uint32_t id, struct btf_type *t)
{
	uint32_t off, skip;

	if (!id || id > btf->n_types)
		return false;
	off = btf->index[(id - 1) / INDEX_STRIDE];
	/* Every record was checked by kernel_btf__open: the walk stays in the section. */
	for (skip = (id - 1) % INDEX_STRIDE; skip; skip--)
		off += record_len(btf, off);
	decode(btf->types + off, t);
	return true;
}

/* Type id with its typedefs and qualifiers followed, in *t. */
static bool resolve(const struct kernel_btf *btf, uint32_t id, struct btf_type *t)
{
	for (int hops = 0; hops < MAX_MODIFIERS; hops++) {
		if (!type_by_id(btf, id, t))
			return false;
		switch (t->kind) {
		case KIND_TYPEDEF:
		case KIND_VOLATILE:
		case KIND_CONST:
		case KIND_RESTRICT:
		case KIND_TYPE_TAG:
			id = t->size_or_type;
			continue;
		default:
			return true;
		}
	}
	return false;
}

/* The size in bytes of type id, or 0 when it has none (void, functions) or is malformed. */
static uint64_t type_size(const struct kernel_btf *btf, uint32_t id, int depth)
{
	struct btf_type t;
	uint64_t elem, n;

	if (depth > MAX_DEPTH || !resolve(btf, id, &t))
		return 0;
	switch (t.kind) {
	case KIND_INT:
	case KIND_ENUM:
	case KIND_ENUM64:
	case KIND_STRUCT:
	case KIND_UNION:
	case KIND_FLOAT:
		return t.size_or_type;
	case KIND_PTR:
		return sizeof(void *); /* the kernel's: the BPF code runs on this machine */
	case KIND_ARRAY:
		elem = type_size(btf, get_u32(t.p + BTF_TYPE_LEN), depth + 1);
		n = get_u32(t.p + BTF_TYPE_LEN + 8);
		/* A nested array's element can itself be past 2^32: refuse a size
		 * that would wrap rather than return a wrong small one. */
		if (n && elem > UINT64_MAX / n)
			return 0;
		return elem * n;
	default:
		return 0;
	}
}

int kernel_btf__open(const void *data, size_t size, struct kernel_btf **out)
{
	const uint8_t *d = data;
	struct kernel_btf *btf = NULL;
	uint32_t hdr_len, type_off, type_len, str_off, str_len, off, n;
	uint16_t magic;
	int err = -EINVAL;

	*out = NULL;
	if (!d || size < BTF_HDR_MIN || size > BTF_MAX_SIZE)
		return -EINVAL;
	memcpy(&magic, d, sizeof(magic));
	hdr_len = get_u32(d + 4);
	type_off = get_u32(d + 8);
	type_len = get_u32(d + 12);
	str_off = get_u32(d + 16);
	str_len = get_u32(d + 20);
	/* Version 1 in this machine's byte order; sections inside the image. */
	if (magic != BTF_MAGIC || d[2] != 1 || hdr_len < BTF_HDR_MIN || hdr_len > size)
		return -EINVAL;
	if ((uint64_t)type_off + type_len > size - hdr_len ||
	    (uint64_t)str_off + str_len > size - hdr_len || !str_len)
		return -EINVAL;
	btf = calloc(1, sizeof(*btf));
	if (!btf)
		return -ENOMEM;
	btf->types = d + hdr_len + type_off;
	btf->types_len = type_len;
	btf->strs = (const char *)d + hdr_len + str_off;
	btf->strs_len = str_len;
	/* At most one record per 12 bytes: the index's bound. */
	btf->index =
	    malloc(((size_t)type_len / BTF_TYPE_LEN / INDEX_STRIDE + 1) * sizeof(uint32_t));
	if (!btf->index) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (off = 0, n = 0; off < type_len; n++) {
		uint32_t len = record_len(btf, off);

		if (!len)
			goto cleanup;
		if (n % INDEX_STRIDE == 0)
			btf->index[n / INDEX_STRIDE] = off;
		off += len;
	}
	btf->n_types = n;
	*out = btf;
	return 0;
cleanup:
	kernel_btf__free(btf);
	return err;
}

void kernel_btf__free(struct kernel_btf *btf)
{
	if (!btf)
		return;
	free(btf->index);
	free(btf);
}

uint32_t kernel_btf__type_count(const struct kernel_btf *btf)
{
	return btf ? btf->n_types : 0;
}

size_t kernel_btf__find_structs(const struct kernel_btf *btf, const char *const *names,
				uint32_t *ids, size_t n)
{
	struct btf_type t;
	size_t found = 0;
	uint32_t off = 0;

	for (size_t i = 0; i < n; i++)
		ids[i] = 0;
	for (uint32_t id = 1; id <= btf->n_types && found < n; id++) {
		const char *name;

		decode(btf->types + off, &t);
		off += record_len(btf, off);
		/* A forward declaration is a KIND_FWD; a struct without members is not the one. */
		if (t.kind != KIND_STRUCT || !t.vlen || !t.name_off)
			continue;
		name = name_at(btf, t.name_off);
		for (size_t i = 0; name && i < n; i++) {
			if (!ids[i] && !strcmp(name, names[i])) {
				ids[i] = id;
				found++;
			}
		}
	}
	return found;
}

/*
 * The member of struct or union t named name[0, len), looked for in t's
 * anonymous members too: its byte offset from t's start in *offset and its
 * type id in *type.
 */
static int find_member(const struct kernel_btf *btf, const struct btf_type *t, const char *name,
		       size_t len, int depth, uint32_t *offset, uint32_t *type)
{
	if (depth > MAX_DEPTH)
		return -EINVAL;
	for (uint32_t i = 0; i < t->vlen; i++) {
		const uint8_t *m = t->p + BTF_TYPE_LEN + 12 * i;
		uint32_t bits = get_u32(m + 8), bitfield = 0, mtype = get_u32(m + 4);
		const char *mname = name_at(btf, get_u32(m));
		struct btf_type sub;
		uint32_t sub_off;
		int err;

		if (t->kind_flag) {
			bitfield = bits >> 24;
			bits &= 0xffffff;
		}
		if (!mname)
			return -EINVAL;
		if (*mname) {
			if (strlen(mname) != len || memcmp(mname, name, len))
				continue;
			if (bitfield || bits % 8)
				return -EINVAL; /* not a field a byte read can reach */
			*offset = bits / 8;
			*type = mtype;
			return 0;
		}
		/* An anonymous struct or union: its members are t's. */
		if (!resolve(btf, mtype, &sub) ||
		    (sub.kind != KIND_STRUCT && sub.kind != KIND_UNION))
			continue;
		err = find_member(btf, &sub, name, len, depth + 1, &sub_off, type);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		if (bitfield || bits % 8)
			return -EINVAL;
		*offset = bits / 8 + sub_off;
		return 0;
	}
	return -ENOENT;
}

int kernel_btf__member(const struct kernel_btf *btf, uint32_t struct_id, const char *path,
		       uint32_t *offset, uint32_t *size)
{
	struct btf_type t;
	uint64_t total = 0, sz;
	uint32_t type = struct_id;
	const char *p = path;

	for (int depth = 0; depth < MAX_DEPTH; depth++) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		uint32_t off;
		int err;

		if (!len || !resolve(btf, type, &t))
			return -EINVAL;
		if (t.kind != KIND_STRUCT && t.kind != KIND_UNION)
			return -ENOENT;
		err = find_member(btf, &t, p, len, 0, &off, &type);
		if (err)
			return err;
		total += off;
		if (!dot) {
			sz = type_size(btf, type, 0);
			if (!sz || total > UINT32_MAX || sz > UINT32_MAX)
				return -EINVAL;
			*offset = (uint32_t)total;
			*size = (uint32_t)sz;
			return 0;
		}
		p = dot + 1;
	}
	return -EINVAL;
}

struct field_spec {
	const char *path;
	size_t at; /* the offset's place in struct op_kernel_offsets */
	uint32_t size;
};

#define FIELD_SPEC(name, path, size) {path, offsetof(struct op_kernel_offsets, name), size},
static const struct field_spec field_specs[] = {OP_KERNEL_OFFSET_FIELDS(FIELD_SPEC)};
#undef FIELD_SPEC

#define REGS_SPEC(name, path, off, size) {path, off, size},
static const struct field_spec regs_specs[] = {OP_PT_REGS_FIELDS(REGS_SPEC)};
#undef REGS_SPEC

/* The root structs the paths start from, looked up in one pass. */
static const char *const roots[] = {"task_struct", "mm_struct", "vm_area_struct", "linux_binprm",
				    "pt_regs"};
#define N_ROOTS (sizeof(roots) / sizeof(roots[0]))

/* Spec's field: its offset and size in *offset, *size, or why[] says why not. */
static int resolve_spec(const struct kernel_btf *btf, const uint32_t *ids,
			const struct field_spec *spec, uint32_t *offset, char *why, size_t why_len)
{
	const char *dot = strchr(spec->path, '.');
	uint32_t size = 0;
	size_t r;
	int err;

	if (!dot)
		return -EINVAL;
	for (r = 0; r < N_ROOTS; r++)
		if (!strncmp(spec->path, roots[r], (size_t)(dot - spec->path)) &&
		    !roots[r][dot - spec->path])
			break;
	if (r == N_ROOTS || !ids[r]) {
		snprintf(why, why_len, "struct %.*s is not in the kernel's BTF",
			 (int)(dot - spec->path), spec->path);
		return -ENOENT;
	}
	err = kernel_btf__member(btf, ids[r], dot + 1, offset, &size);
	if (err) {
		snprintf(why, why_len, "%s: %s", spec->path,
			 err == -ENOENT ? "no such field in the kernel's BTF"
					: "not a byte-aligned field, or malformed BTF");
		return err;
	}
	if (spec->size && size != spec->size) {
		snprintf(why, why_len, "%s is %u bytes in this kernel, not %u", spec->path, size,
			 spec->size);
		return -ERANGE;
	}
	return 0;
}

int kernel_btf__offsets(const struct kernel_btf *btf, struct op_kernel_offsets *out, char *why,
			size_t why_len)
{
	uint32_t ids[N_ROOTS], offset;
	int err;

	memset(out, 0, sizeof(*out));
	kernel_btf__find_structs(btf, roots, ids, N_ROOTS);
	for (size_t i = 0; i < sizeof(field_specs) / sizeof(field_specs[0]); i++) {
		err = resolve_spec(btf, ids, &field_specs[i], &offset, why, why_len);
		if (err)
			return err;
		memcpy((char *)out + field_specs[i].at, &offset, sizeof(offset));
	}
	/* The registers are read at fixed offsets (the x86-64 ABI): this kernel's must be those. */
	for (size_t i = 0; i < sizeof(regs_specs) / sizeof(regs_specs[0]); i++) {
		err = resolve_spec(btf, ids, &regs_specs[i], &offset, why, why_len);
		if (err)
			return err;
		if (offset != regs_specs[i].at) {
			snprintf(why, why_len, "%s is at %u in this kernel, not at %zu (x86-64's)",
				 regs_specs[i].path, offset, regs_specs[i].at);
			return -ERANGE;
		}
	}
	return 0;
}

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* Resolves the running kernel's offsets into *out; why[] says why not. */
static int load_offsets(struct op_kernel_offsets *out, char *why, size_t why_len)
{
	struct kernel_btf *btf = NULL;
	void *map = MAP_FAILED;
	char *buf = NULL;
	size_t size = 0;
	struct stat st;
	int fd, err;

	fd = open(VMLINUX_BTF, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, why_len, "cannot open %s: %s", VMLINUX_BTF, strerror(-err));
		return err;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size >= BTF_HDR_MIN &&
	    (uint64_t)st.st_size <= BTF_MAX_SIZE) {
		size = (size_t)st.st_size;
		/* Linux 6.16+ maps the kernel's own copy: no read, no new pages. */
		map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	}
	close(fd);
	if (map == MAP_FAILED) {
		err = read_file(VMLINUX_BTF, &buf, &size);
		if (err) {
			snprintf(why, why_len, "cannot read %s: %s", VMLINUX_BTF, strerror(-err));
			return err;
		}
	}
	err = kernel_btf__open(map != MAP_FAILED ? map : buf, size, &btf);
	if (err) {
		snprintf(why, why_len, "%s: %s", VMLINUX_BTF,
			 err == -ENOMEM ? "out of memory" : "not BTF this reader knows");
		goto cleanup;
	}
	err = kernel_btf__offsets(btf, out, why, why_len);
cleanup:
	kernel_btf__free(btf);
	if (map != MAP_FAILED)
		munmap(map, size);
	free(buf);
	return err;
}

static pthread_mutex_t offsets_lock = PTHREAD_MUTEX_INITIALIZER;
static bool offsets_done;
static int offsets_err;
static struct op_kernel_offsets offsets;

int kernel_offsets__get(struct op_kernel_offsets *out)
{
	char why[256];
	int err;

	pthread_mutex_lock(&offsets_lock);
	if (!offsets_done) {
		offsets_err = load_offsets(&offsets, why, sizeof(why));
		offsets_done = true;
		if (offsets_err)
			pr_err("cannot find the kernel's structure offsets: %s", why);
	}
	err = offsets_err;
	if (!err)
		*out = offsets;
	pthread_mutex_unlock(&offsets_lock);
	return err;
}
