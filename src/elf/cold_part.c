// SPDX-License-Identifier: Apache-2.0
#include "elf/cold_part.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>
#include <libelf.h>

#include "elf/elf_file.h"

struct code_range {
	uint64_t start;
	uint64_t end; /* exclusive */
};

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
static int fde_range(const struct elf_file *ef, const struct fde_entry *e, struct code_range *r)
{
	uint8_t buf[16];
	int err = elf_file__read_vaddr(ef, e->fde, buf, sizeof(buf));
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
static size_t jumps_into(const struct elf_file *ef, const struct code_range *r, uint64_t start,
			 uint64_t end)
{
	size_t len = r->end - r->start, n = 0;
	uint8_t *code = malloc(len);
	uint64_t target;

	if (!code)
		return 0;
	if (!elf_file__read_vaddr(ef, r->start, code, len))
		for (size_t i = 0; i < len; i++)
			if (rel32_target(code, len, i, r->start, &target) && target >= start &&
			    target < end)
				n++;
	free(code);
	return n;
}

int elf_file__find_cold_part(const struct elf_file *ef, uint64_t hot_start, uint64_t hot_end,
			     uint64_t *cold_start, uint64_t *cold_end)
{
	struct code_range range = {0, 0}, *cold = &range;
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
	err = elf_file__read_vaddr(ef, hot_start, code, len);
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
	if (!err) {
		*cold_start = cold->start;
		*cold_end = cold->end;
	}
cleanup:
	free(code);
	free(hits);
	free(fdes);
	elf_end(elf);
	return err;
}

int elf_file__function_at(const struct elf_file *ef, uint64_t start, uint64_t *end)
{
	struct code_range r = {0, 0};
	struct fde_entry *fdes = NULL;
	size_t n_fdes = 0, at;
	Elf *elf;
	int err;

	elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	err = read_fde_index(elf, &fdes, &n_fdes);
	if (err)
		goto cleanup;
	at = fde_before(fdes, n_fdes, start);
	err = -ENOENT;
	if (at == n_fdes || fdes[at].start != start)
		goto cleanup;
	err = fde_range(ef, &fdes[at], &r);
	if (!err)
		*end = r.end;
cleanup:
	free(fdes);
	elf_end(elf);
	return err;
}
