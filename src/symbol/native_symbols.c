// SPDX-License-Identifier: Apache-2.0
/*
 * libdwfl finds the symbols (.symtab, else .dynsym, plus a .gnu_debugdata
 * MiniDebugInfo table or a separate debug file found by build id); this file
 * keeps the function symbols in a sorted table. dwfl_module_addrinfo() would
 * answer lookups too, but it scans every symbol on each call and also
 * returns data and untyped symbols, while a profiler looks up thousands of
 * addresses in files with up to a million symbols and wants functions only.
 */
#include "symbol/native_symbols.h"

#include "elf/elf_file.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How many earlier symbols a lookup tries when the closest one ends too soon. */
#define NESTED_LOOKBACK 8
/* Distinct ELF files one module's symbols come from: main, debug, aux. */
#define MAX_SYM_FILES 4

struct native_func {
	uint64_t start;	  /* ELF virtual address */
	uint64_t end;	  /* exclusive */
	const char *name; /* in libelf's string table data, alive with the Dwfl */
};

struct native_symbols {
	const struct elf_file *ef;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct native_func *funcs; /* sorted by start, one per address */
	size_t n_funcs;
};

/* A symbol as read, before aliases are merged and ends are decided. */
struct sym_candidate {
	uint64_t start;
	uint64_t size;
	uint64_t section_end; /* 0 when unknown */
	const char *name;
	int rank;	 /* binding: lower wins among aliases */
	int underscores; /* leading '_': fewer wins ("malloc" over "__libc_malloc") */
	int ndx;
};

/* String tables of the files symbols come from, to bound names (see below). */
struct strtab_span {
	Elf *elf;
	const char *buf;
	size_t size;
};

struct name_guard {
	Elf *scanned[MAX_SYM_FILES];
	size_t n_scanned;
	struct strtab_span *spans;
	size_t n_spans, cap_spans;
};

/* The module is reported with its fd, so libdwfl never has to look for it. */
static int find_elf_none(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			 char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)elfp;
	return -1;
}

/*
 * Local lookup by build id under /usr/lib/debug only. The standard callback
 * would fall back to debuginfod (network) when DEBUGINFOD_URLS is set; a
 * profiler must not block on the network per file, so it is not used.
 */
static int find_debuginfo_offline(Dwfl_Module *mod, void **userdata, const char *modname,
				  Dwarf_Addr base, const char *file_name, const char *debuglink,
				  GElf_Word crc, char **debuginfo_file_name)
{
	return dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink, crc,
					    debuginfo_file_name);
}

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = find_elf_none,
    .find_debuginfo = find_debuginfo_offline,
    .section_address = dwfl_offline_section_address,
};

static int guard_scan(struct name_guard *g, Elf *elf)
{
	Elf_Scn *scn = NULL;

	if (g->n_scanned == MAX_SYM_FILES)
		return -E2BIG;
	g->scanned[g->n_scanned++] = elf;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_STRTAB)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || !data->d_size)
			continue;
		if (g->n_spans == g->cap_spans) {
			size_t cap = g->cap_spans ? g->cap_spans * 2 : 8;
			struct strtab_span *spans = realloc(g->spans, cap * sizeof(*spans));

			if (!spans)
				return -ENOMEM;
			g->spans = spans;
			g->cap_spans = cap;
		}
		g->spans[g->n_spans++] = (struct strtab_span){elf, data->d_buf, data->d_size};
	}
	return 0;
}

/*
 * libdwfl checks a name's offset against its string table but not that a
 * NUL follows inside it, so a crafted file could make us read past the
 * table. A name counts only when it ends inside a string section of the
 * file it came from. (Files without section headers, whose .dynsym libdwfl
 * finds through PT_DYNAMIC, have no such section: their names are refused.)
 * Returns 1 for a good name, 0 for a bad one, -ENOMEM.
 */
static int guard_check(struct name_guard *g, Elf *elf, const char *name)
{
	size_t i;
	int err;

	for (i = 0; i < g->n_scanned && g->scanned[i] != elf; i++)
		;
	if (i == g->n_scanned) {
		err = guard_scan(g, elf);
		if (err == -E2BIG)
			return 0;
		if (err)
			return err;
	}
	for (i = 0; i < g->n_spans; i++) {
		const struct strtab_span *s = &g->spans[i];
		uintptr_t p = (uintptr_t)name, b = (uintptr_t)s->buf;

		if (s->elf != elf || p < b || p - b >= s->size)
			continue;
		return memchr(name, '\0', s->size - (p - b)) != NULL;
	}
	return 0;
}

static int binding_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
	case STB_GNU_UNIQUE:
		return 1;
	default:
		return 2;
	}
}

static int candidate_cmp(const void *a, const void *b)
{
	const struct sym_candidate *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Among aliases, one that states its size tells us more. */
	if ((x->size == 0) != (y->size == 0))
		return x->size == 0 ? 1 : -1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->underscores != y->underscores)
		return x->underscores < y->underscores ? -1 : 1;
	return (x->ndx > y->ndx) - (x->ndx < y->ndx);
}

/* End of the section holding the symbol, in module addresses; 0 when unknown. */
static uint64_t section_end(Elf *elf, GElf_Word shndx, const GElf_Sym *sym, Dwarf_Addr symbias)
{
	GElf_Shdr shdr;
	uint64_t end;

	if (sym->st_shndx == SHN_ABS || sym->st_shndx == SHN_COMMON)
		return 0;
	if (!gelf_getshdr(elf_getscn(elf, shndx), &shdr))
		return 0;
	if (shdr.sh_size > UINT64_MAX - shdr.sh_addr)
		return 0;
	end = shdr.sh_addr + shdr.sh_size;
	if (symbias > UINT64_MAX - end)
		return 0;
	return end + symbias;
}

/* Reads the module's function symbols. *out is malloc'd (caller frees). */
static int read_candidates(Dwfl_Module *mod, uint64_t bias, struct sym_candidate **out,
			   size_t *n_out)
{
	struct name_guard guard = {0};
	struct sym_candidate *cands = NULL;
	size_t n = 0;
	int nsyms, err = 0;

	*out = NULL;
	*n_out = 0;
	/* No symbol table at all is a file we cannot name functions in, not an error. */
	nsyms = dwfl_module_getsymtab(mod);
	if (nsyms <= 1)
		return 0;
	cands = calloc((size_t)nsyms, sizeof(*cands));
	if (!cands)
		return -ENOMEM;

	for (int ndx = 1; ndx < nsyms; ndx++) {
		const char *name;
		Dwarf_Addr symbias;
		GElf_Word shndx;
		GElf_Addr addr;
		GElf_Sym sym;
		Elf *elf;
		int ok, type;

		name = dwfl_module_getsym_info(mod, ndx, &sym, &addr, &shndx, &elf, &symbias);
		if (!name || !elf)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		/* Imports, and symbols of non-allocated sections (shndx -1). */
		if (sym.st_shndx == SHN_UNDEF || shndx == (GElf_Word)-1 || addr < bias)
			continue;
		ok = guard_check(&guard, elf, name);
		if (ok < 0) {
			err = ok;
			goto cleanup;
		}
		if (!ok || !name[0])
			continue;
		cands[n].start = addr - bias;
		cands[n].size = sym.st_size;
		cands[n].section_end = section_end(elf, shndx, &sym, symbias);
		if (cands[n].section_end)
			cands[n].section_end =
			    cands[n].section_end > bias ? cands[n].section_end - bias : 0;
		cands[n].name = name;
		cands[n].rank = binding_rank(GELF_ST_BIND(sym.st_info));
		cands[n].underscores = (int)strspn(name, "_");
		cands[n].ndx = ndx;
		n++;
	}
	*out = cands;
	*n_out = n;
	cands = NULL;
cleanup:
	free(cands);
	free(guard.spans);
	return err;
}

/*
 * A symbol's extent is [start, start + size). A symbol without a size
 * (hand-written assembly) extends to the next function or the end of its
 * section, whichever comes first, and covers only its first byte when
 * neither is known.
 */
static void decide_end(struct native_func *f, const struct sym_candidate *c, const uint64_t *next)
{
	uint64_t end = UINT64_MAX;

	if (c->size) {
		f->end = c->size > UINT64_MAX - c->start ? UINT64_MAX : c->start + c->size;
		return;
	}
	if (next)
		end = *next;
	if (c->section_end && c->section_end < end)
		end = c->section_end;
	if (end == UINT64_MAX || end <= c->start)
		end = c->start + 1;
	f->end = end;
}

static int build_table(struct native_symbols *ns, uint64_t bias)
{
	struct sym_candidate *cands;
	size_t n, kept = 0;
	int err;

	err = read_candidates(ns->mod, bias, &cands, &n);
	if (err || !n) {
		free(cands);
		return err;
	}
	qsort(cands, n, sizeof(*cands), candidate_cmp);

	/* Aliases collapse onto the first (preferred) candidate of their address. */
	for (size_t i = 0; i < n; i++)
		if (kept == 0 || cands[i].start != cands[kept - 1].start)
			cands[kept++] = cands[i];

	ns->funcs = calloc(kept, sizeof(*ns->funcs));
	if (!ns->funcs) {
		free(cands);
		return -ENOMEM;
	}
	for (size_t i = 0; i < kept; i++) {
		ns->funcs[i].start = cands[i].start;
		ns->funcs[i].name = cands[i].name;
		decide_end(&ns->funcs[i], &cands[i], i + 1 < kept ? &cands[i + 1].start : NULL);
	}
	ns->n_funcs = kept;
	free(cands);
	return 0;
}

int native_symbols__open(const struct elf_file *ef, struct native_symbols **out)
{
	struct native_symbols *ns;
	GElf_Addr bias = 0;
	int fd = -1, err;

	*out = NULL;
	ns = calloc(1, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	ns->ef = ef;
	ns->dwfl = dwfl_begin(&offline_callbacks);
	if (!ns->dwfl) {
		err = -ENOMEM;
		goto cleanup;
	}

	/* libdwfl owns (and closes) the fd of a module it accepted: give it a copy. */
	fd = fcntl(ef->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	dwfl_report_begin(ns->dwfl);
	/*
	 * Base 0 with add_p_vaddr: libdwfl then uses a bias of 0 for ET_DYN
	 * and ET_EXEC alike, so module addresses are the ELF's own virtual
	 * addresses and callers need no per-process load address here.
	 */
	ns->mod = dwfl_report_elf(ns->dwfl, ef->path, ef->path, fd, 0, true);
	if (!ns->mod) {
		/*
		 * On failure libdwfl leaves a caller's fd open; it would only
		 * have closed it for a compressed image, which elf_file__open()
		 * already refused.
		 */
		close(fd);
		err = -ENOEXEC;
		goto cleanup;
	}
	if (dwfl_report_end(ns->dwfl, NULL, NULL) != 0) {
		err = -ENOEXEC;
		goto cleanup;
	}
	if (!dwfl_module_getelf(ns->mod, &bias)) {
		err = -ENOEXEC;
		goto cleanup;
	}

	err = build_table(ns, bias);
	if (err)
		goto cleanup;
	*out = ns;
	return 0;

cleanup:
	native_symbols__free(ns);
	return err;
}

void native_symbols__free(struct native_symbols *ns)
{
	if (!ns)
		return;
	free(ns->funcs);
	if (ns->dwfl)
		dwfl_end(ns->dwfl);
	free(ns);
}

const char *native_symbols__lookup(struct native_symbols *ns, uint64_t vaddr, uint64_t *offset)
{
	size_t lo = 0, hi = ns->n_funcs;

	/* First function starting above vaddr; the candidates are just below it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ns->funcs[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* A few steps back find a function that encloses a smaller one. */
	for (size_t i = lo, steps = 0; i > 0 && steps < NESTED_LOOKBACK; i--, steps++) {
		const struct native_func *f = &ns->funcs[i - 1];

		if (vaddr < f->end) {
			if (offset)
				*offset = vaddr - f->start;
			return f->name;
		}
	}
	return NULL;
}
