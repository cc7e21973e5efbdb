// SPDX-License-Identifier: Apache-2.0
/*
 * x86-64 PLT stubs, from the instructions ld.bfd and lld write (the psABI's
 * and the CET/IBT supplement's layouts):
 *   lazy .plt           ff 25 <GOT>  68 <index>  e9 <PLT0>
 *   .plt.got (8 bytes)  ff 25 <GOT>  66 90
 *   IBT .plt            f3 0f 1e fa  68 <index>  f2 e9 <PLT0>  (jump in .plt.sec)
 *   IBT .plt.sec/.got   f3 0f 1e fa  f2 ff 25 <GOT>  ...
 *   bnd (MPX) .plt      68 <index>  f2 e9 ...  /  f2 ff 25 <GOT>
 * A stub is named by the GOT slot its indirect jump reads (the slot's
 * JUMP_SLOT or GLOB_DAT relocation names the symbol), else by the
 * .rela.plt index it pushes. PLT0 jumps through GOT+16, which no
 * relocation names, so it stays unnamed, as in objdump.
 */
#include "elf/plt.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A GOT slot and the symbol its relocation names. */
struct got_slot {
	uint64_t addr;
	const char *name; /* libelf's string table data */
};

struct plt_reader {
	Elf *elf;
	struct got_slot *slots; /* sorted by addr once read */
	size_t n_slots, cap_slots;
	const char **by_index; /* .rela.plt's names in relocation order (NULL: none) */
	size_t n_index;
	struct plt_stub *stubs; /* names are libelf's until copied */
	size_t n_stubs, cap_stubs;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static const char *slot_name(const struct plt_reader *r, uint64_t addr)
{
	size_t lo = 0, hi = r->n_slots;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->slots[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n_slots && r->slots[lo].addr == addr ? r->slots[lo].name : NULL;
}

static int add_slot(struct plt_reader *r, uint64_t addr, const char *name)
{
	if (r->n_slots == r->cap_slots) {
		size_t cap = r->cap_slots ? r->cap_slots * 2 : 64;
		struct got_slot *grown = realloc(r->slots, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		r->slots = grown;
		r->cap_slots = cap;
	}
	r->slots[r->n_slots++] = (struct got_slot){addr, name};
	return 0;
}

/* The name of symbol ndx of the symbol table section symtab, or NULL. */
static const char *symbol_name(Elf *elf, Elf_Scn *symtab, size_t ndx)
{
	GElf_Shdr shdr;
	Elf_Data *data;
	GElf_Sym sym;
	const char *name;

	if (!symtab || !gelf_getshdr(symtab, &shdr) ||
	    (shdr.sh_type != SHT_DYNSYM && shdr.sh_type != SHT_SYMTAB))
		return NULL;
	data = elf_getdata(symtab, NULL);
	if (!data || ndx > INT32_MAX || !gelf_getsym(data, (int)ndx, &sym) || !sym.st_name)
		return NULL;
	/* elf_strptr checks the offset and that the string ends inside its section. */
	name = elf_strptr(elf, shdr.sh_link, sym.st_name);
	return name && name[0] ? name : NULL;
}

/* One RELA section: its JUMP_SLOT and GLOB_DAT slots; .rela.plt's order too. */
static int read_relocs(struct plt_reader *r, Elf_Scn *scn, const GElf_Shdr *shdr, bool is_plt)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Scn *symtab = elf_getscn(r->elf, shdr->sh_link);
	size_t n;
	int err;

	if (!data || !shdr->sh_entsize || !symtab)
		return 0;
	n = data->d_size / sizeof(Elf64_Rela);
	if (is_plt && !r->by_index && n) {
		r->by_index = calloc(n, sizeof(*r->by_index));
		if (!r->by_index)
			return -ENOMEM;
		r->n_index = n;
	}
	for (size_t i = 0; i < n && i <= INT32_MAX; i++) {
		GElf_Rela rela;
		unsigned long type;
		const char *name;

		if (!gelf_getrela(data, (int)i, &rela))
			break;
		type = GELF_R_TYPE(rela.r_info);
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		name = symbol_name(r->elf, symtab, GELF_R_SYM(rela.r_info));
		if (!name)
			continue;
		if (is_plt && r->n_index == n)
			r->by_index[i] = name;
		err = add_slot(r, rela.r_offset, name);
		if (err)
			return err;
	}
	return 0;
}

static int add_stub(struct plt_reader *r, uint64_t start, uint64_t size, uint64_t end,
		    const char *name)
{
	if (r->n_stubs == r->cap_stubs) {
		size_t cap = r->cap_stubs ? r->cap_stubs * 2 : 64;
		struct plt_stub *grown = realloc(r->stubs, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		r->stubs = grown;
		r->cap_stubs = cap;
	}
	r->stubs[r->n_stubs++] = (struct plt_stub){start, size, end, name};
	return 0;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The symbol the stub of len bytes at addr jumps to, or NULL. */
static const char *decode_stub(const struct plt_reader *r, const unsigned char *p, size_t len,
			       uint64_t addr)
{
	static const unsigned char endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t at = 0;

	if (len >= 4 && !memcmp(p, endbr64, 4))
		at = 4;
	if (at < len && p[at] == 0xf2) /* bnd prefix */
		at++;
	if (at + 6 <= len && p[at] == 0xff && p[at + 1] == 0x25) {
		/* jmp *disp32(%rip): the slot is relative to the next instruction. */
		int32_t disp = (int32_t)le32(p + at + 2);

		return slot_name(r, addr + at + 6 + (uint64_t)(int64_t)disp);
	}
	if (at + 5 <= len && p[at] == 0x68) {
		uint32_t index = le32(p + at + 1);

		return index < r->n_index ? r->by_index[index] : NULL;
	}
	return NULL;
}

static int read_stubs(struct plt_reader *r, Elf_Scn *scn, const GElf_Shdr *shdr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	uint64_t entsize = shdr->sh_entsize == 8 || shdr->sh_entsize == 16 ? shdr->sh_entsize : 16;
	uint64_t end;
	size_t size;
	int err;

	if (!data || !data->d_buf || shdr->sh_type != SHT_PROGBITS)
		return 0;
	size = data->d_size < shdr->sh_size ? data->d_size : shdr->sh_size;
	if (shdr->sh_addr > UINT64_MAX - size)
		return 0;
	end = shdr->sh_addr + size;
	for (size_t off = 0; off + entsize <= size; off += entsize) {
		const char *name = decode_stub(r, (const unsigned char *)data->d_buf + off, entsize,
					       shdr->sh_addr + off);

		if (!name)
			continue;
		err = add_stub(r, shdr->sh_addr + off, entsize, end, name);
		if (err)
			return err;
	}
	return 0;
}

/* Copies the names into one buffer as "name@plt"; the stubs point there. */
static int copy_names(struct plt_reader *r, struct plt_stubs *out)
{
	static const char suffix[] = "@plt";
	size_t total = 0, at = 0;

	for (size_t i = 0; i < r->n_stubs; i++)
		total += strlen(r->stubs[i].name) + sizeof(suffix);
	out->names = malloc(total ? total : 1);
	if (!out->names)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_stubs; i++) {
		int n = snprintf(out->names + at, total - at, "%s%s", r->stubs[i].name, suffix);

		r->stubs[i].name = out->names + at;
		at += (size_t)n + 1;
	}
	out->stubs = r->stubs;
	out->n = r->n_stubs;
	r->stubs = NULL;
	return 0;
}

int plt_stubs__read(Elf *elf, struct plt_stubs *out)
{
	struct plt_reader r = {.elf = elf};
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr ehdr;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
	    gelf_getclass(elf) != ELFCLASS64 || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	/* Relocations first: the stubs are named from them. */
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		err = read_relocs(&r, scn, &shdr, name && !strcmp(name, ".rela.plt"));
		if (err)
			goto cleanup;
	}
	if (!r.n_slots)
		goto cleanup;
	qsort(r.slots, r.n_slots, sizeof(*r.slots), slot_cmp);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name ||
		    (strcmp(name, ".plt") && strcmp(name, ".plt.sec") && strcmp(name, ".plt.got")))
			continue;
		err = read_stubs(&r, scn, &shdr);
		if (err)
			goto cleanup;
	}
	if (r.n_stubs)
		err = copy_names(&r, out);

cleanup:
	if (err)
		plt_stubs__free(out);
	free(r.stubs);
	free(r.slots);
	free(r.by_index);
	return err;
}

void plt_stubs__free(struct plt_stubs *stubs)
{
	if (!stubs)
		return;
	free(stubs->stubs);
	free(stubs->names);
	memset(stubs, 0, sizeof(*stubs));
}
