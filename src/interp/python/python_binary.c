// SPDX-License-Identifier: Apache-2.0
#include "interp/python/python_binary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "elf/elf_file.h"
#include "interp/python/python_layout.h"
#include "unwind/interp_ranges.h"
#include "util/log.h"

#define EVAL_FUNC "_PyEval_EvalFrameDefault"

struct wanted_syms {
	uint64_t eval, eval_size;
	uint64_t cold, cold_size;
	uint64_t runtime;     /* _PyRuntime (3.7+) */
	uint64_t version;     /* Py_Version (3.11+): PY_VERSION_HEX */
	uint64_t interp_head; /* static interp_head of pystate.c (3.6, .symtab only) */
	bool symtab;	      /* the file has its full symbol table */
};

/* Copies len bytes at ELF virtual address vaddr out of the file. 0 or -errno. */
static int read_vaddr(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < ef->n_segments; i++) {
		const struct elf_segment *s = &ef->segments[i];
		ssize_t n;

		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		if (len > s->filesz - (vaddr - s->vaddr))
			return -ERANGE;
		n = pread(ef->fd, buf, len, (off_t)(s->offset + (vaddr - s->vaddr)));
		if (n < 0)
			return -errno;
		return (size_t)n == len ? 0 : -EIO;
	}
	return -ERANGE;
}

static void note_symbol(struct wanted_syms *w, const char *name, const GElf_Sym *sym)
{
	if (!strcmp(name, EVAL_FUNC) && GELF_ST_TYPE(sym->st_info) == STT_FUNC) {
		w->eval = sym->st_value;
		w->eval_size = sym->st_size;
	} else if (!strcmp(name, EVAL_FUNC ".cold")) {
		w->cold = sym->st_value;
		w->cold_size = sym->st_size;
	} else if (!strcmp(name, "_PyRuntime")) {
		w->runtime = sym->st_value;
	} else if (!strcmp(name, "Py_Version")) {
		w->version = sym->st_value;
	} else if (!strcmp(name, "interp_head") && GELF_ST_TYPE(sym->st_info) == STT_OBJECT) {
		w->interp_head = sym->st_value;
	}
}

/* Scans the symbol tables of type sh_type (SHT_DYNSYM, SHT_SYMTAB) for the symbols above. */
static void scan_symbols(Elf *elf, uint32_t sh_type, struct wanted_syms *w)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != sh_type || !shdr.sh_entsize)
			continue;
		if (shdr.sh_type == SHT_SYMTAB)
			w->symtab = true;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			/* Cheap filter: every wanted name starts with '_', 'P' or 'i'. */
			if (name && (name[0] == '_' || name[0] == 'P' || name[0] == 'i'))
				note_symbol(w, name, &sym);
		}
	}
}

/* "libpython3.11.so.1.0", "libpython3.6m.so", "python3.11": the version in the name. */
static bool version_from_name(const char *path, unsigned int *major, unsigned int *minor)
{
	const char *base = strrchr(path, '/'), *p;

	base = base ? base + 1 : path;
	p = !strncmp(base, "libpython", 9) ? base + 9
	    : !strncmp(base, "python", 6)  ? base + 6
					   : NULL;
	return p && sscanf(p, "%u.%u", major, minor) == 2 && *major == 3;
}

/* ---- the .cold part without symbols ----------------------------------------- */

struct fde_entry {
	uint64_t start; /* initial location */
	uint64_t fde;	/* address of the FDE */
};

static Elf_Scn *section_by_name(Elf *elf, const char *want, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, shdr))
			continue;
		name = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/*
 * The FDE index of .eh_frame_hdr, sorted by start. Only the encoding GNU ld
 * and lld write is read: udata4 count, table of (datarel sdata4, datarel
 * sdata4) pairs. 0 and *out (caller frees), or -errno.
 */
static int read_fde_index(Elf *elf, struct fde_entry **out, size_t *n_out)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = section_by_name(elf, ".eh_frame_hdr", &shdr);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	const uint8_t *p;
	struct fde_entry *fdes;
	uint32_t count;

	if (!data || data->d_size < 12)
		return -ENOENT;
	p = data->d_buf;
	/* version 1, eh_frame_ptr (any 4-byte encoding), count udata4, table datarel sdata4. */
	if (p[0] != 1 || (p[1] & 0x0f) != 0x0b || p[2] != 0x03 || p[3] != 0x3b)
		return -ENOTSUP;
	count = (uint32_t)le32(p + 8);
	if (!count || 12 + (uint64_t)count * 8 > data->d_size)
		return -EINVAL;
	fdes = malloc(count * sizeof(*fdes));
	if (!fdes)
		return -ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		fdes[i].start = shdr.sh_addr + (uint64_t)(int64_t)le32(p + 12 + 8 * i);
		fdes[i].fde = shdr.sh_addr + (uint64_t)(int64_t)le32(p + 16 + 8 * i);
	}
	*out = fdes;
	*n_out = count;
	return 0;
}

/* Index of the last FDE starting at or below addr, or n when none. */
static size_t fde_before(const struct fde_entry *fdes, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fdes[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : n;
}

/* The address range an FDE covers: pc_range follows pc_begin (both 4 bytes
 * in the pcrel sdata4 encoding compilers use on x86-64). 0 or -errno. */
static int fde_range(const struct elf_file *ef, const struct fde_entry *e, struct op_py_range *r)
{
	uint8_t buf[16];
	int err = read_vaddr(ef, e->fde, buf, sizeof(buf));
	uint32_t len, range;

	if (err)
		return err;
	len = (uint32_t)le32(buf);
	range = (uint32_t)le32(buf + 12);
	if (len == 0xffffffff || len < 12 || !range ||
	    (uint64_t)(e->fde + 8 + le32(buf + 8)) != e->start)
		return -ENOTSUP;
	r->start = e->start;
	r->end = e->start + range;
	return 0;
}

/* Target of a jmp/jcc rel32 encoded at code[i] (code starts at address base). */
static bool rel32_target(const uint8_t *code, size_t len, size_t i, uint64_t base, uint64_t *target)
{
	if (code[i] == 0xe9 && i + 5 <= len) {
		*target = base + i + 5 + (uint64_t)(int64_t)le32(code + i + 1);
		return true;
	}
	if (code[i] == 0x0f && i + 6 <= len && (code[i + 1] & 0xf0) == 0x80) {
		*target = base + i + 6 + (uint64_t)(int64_t)le32(code + i + 2);
		return true;
	}
	return false;
}

/* How many rel32 jump patterns of range r land in [start, end). */
static size_t jumps_into(const struct elf_file *ef, const struct op_py_range *r, uint64_t start,
			 uint64_t end)
{
	size_t len = r->end - r->start, n = 0;
	uint8_t *code = malloc(len);
	uint64_t target;

	if (!code)
		return 0;
	if (!read_vaddr(ef, r->start, code, len))
		for (size_t i = 0; i < len; i++)
			if (rel32_target(code, len, i, r->start, &target) && target >= start &&
			    target < end)
				n++;
	free(code);
	return n;
}

int python_binary__find_cold(const struct elf_file *ef, uint64_t hot_start, uint64_t hot_end,
			     struct op_py_range *cold)
{
	struct fde_entry *fdes = NULL;
	uint32_t *hits = NULL;
	uint8_t *code = NULL;
	size_t n_fdes = 0, len = hot_end - hot_start, best = 0;
	Elf *elf;
	int err;

	if (hot_end <= hot_start || len > (64u << 20))
		return -EINVAL;
	elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	err = read_fde_index(elf, &fdes, &n_fdes);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	code = malloc(len);
	hits = calloc(n_fdes, sizeof(*hits));
	if (!code || !hits)
		goto cleanup;
	err = read_vaddr(ef, hot_start, code, len);
	if (err)
		goto cleanup;
	/*
	 * Every jcc rel32 (0f 8x) and jmp rel32 (e9) byte pattern, decoded or
	 * not: real jumps to the cold part are many and all land in one FDE,
	 * while byte patterns that are not instructions scatter.
	 */
	for (size_t i = 0; i + 5 <= len; i++) {
		uint64_t target;
		size_t at;

		if (!rel32_target(code, len, i, hot_start, &target) ||
		    (target >= hot_start && target < hot_end))
			continue;
		at = fde_before(fdes, n_fdes, target);
		if (at < n_fdes)
			hits[at]++;
	}
	for (size_t i = 1; i < n_fdes; i++)
		if (hits[i] > hits[best])
			best = i;
	err = -ENOENT;
	/* A handful of stray patterns must not pass for a cold part. */
	if (hits[best] < 16 || fdes[best].start == hot_start)
		goto cleanup;
	err = fde_range(ef, &fdes[best], cold);
	if (!err && (cold->end <= cold->start || cold->end - cold->start > (16u << 20)))
		err = -ENOENT;
	/* A cold part jumps back into its function; a function the hot part
	 * merely tail-calls (or a PLT stub) does not. */
	if (!err && jumps_into(ef, cold, hot_start, hot_end) < 16)
		err = -ENOENT;
cleanup:
	free(code);
	free(hits);
	free(fdes);
	elf_end(elf);
	return err;
}

/* ---- inspection --------------------------------------------------------------- */

int python_binary__inspect(const struct elf_file *ef, const char *name, struct python_binary *out)
{
	struct wanted_syms w = {0};
	uint32_t hex = 0;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	/* Mapped, not read: every file a process maps comes through here once. */
	elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	/* Every CPython exports the eval loop (extensions may call it): files
	 * that do not are rejected after their small dynamic symbol table. */
	scan_symbols(elf, SHT_DYNSYM, &w);
	if (w.eval)
		scan_symbols(elf, SHT_SYMTAB, &w);
	elf_end(elf);
	if (!w.eval || !w.eval_size)
		return -ENOENT;
	/* PY_VERSION_HEX: major in bits 24-31, minor in 16-23. */
	if (w.version && !read_vaddr(ef, w.version, &hex, sizeof(hex)) && hex >> 24 == 3) {
		out->major = 3;
		out->minor = (hex >> 16) & 0xff;
	} else if (!version_from_name(name, &out->major, &out->minor)) {
		return -ENOTSUP;
	}
	out->layout = python_layout__find(out->major, out->minor);
	if (!out->layout)
		return -ENOTSUP;
	if (!python_layout__frame_fits(&out->layout->bpf)) {
		pr_warn("%s: CPython %u.%u: interpreter frame fields lie past the %d bytes the "
			"walker reads per frame",
			name, out->major, out->minor, OP_PY_BLOCK);
		return -ENOTSUP;
	}
	if (out->layout->runtime_interp_head != OP_PY_NONE && w.runtime)
		out->interp_head = w.runtime + out->layout->runtime_interp_head;
	else if (out->layout->runtime_interp_head == OP_PY_NONE && w.interp_head)
		out->interp_head = w.interp_head;
	else
		return -ENOTSUP;

	out->eval[0] = (struct op_py_range){w.eval, w.eval + w.eval_size};
	out->n_eval = 1;
	/* With the full symbol table a missing .cold symbol means there is no cold part. */
	if (w.cold && w.cold_size) {
		out->eval[out->n_eval++] = (struct op_py_range){w.cold, w.cold + w.cold_size};
	} else if (!w.symtab && !python_binary__find_cold(ef, w.eval, w.eval + w.eval_size,
							  &out->eval[out->n_eval])) {
		out->n_eval++;
		out->cold_from_cfi = true;
	}
	return 0;
}

void python_binary__proc_info(const struct python_binary *bin, uint64_t bias,
			      struct op_py_proc *out)
{
	memset(out, 0, sizeof(*out));
	out->interp_head = bin->interp_head + bias;
	out->off = bin->layout->bpf;
	out->version = (uint16_t)(bin->major << 8 | bin->minor);
}

void python_binary__interp_ranges(const struct python_binary *bin, uint64_t bias,
				  struct op_interp_proc *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t r = 0; r < bin->n_eval && r < OP_PY_MAX_RANGES; r++)
		op_interp_proc__add(out, OP_INTERP_PYTHON, bin->eval[r].start + bias,
				    bin->eval[r].end + bias, 0);
}
