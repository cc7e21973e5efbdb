// SPDX-License-Identifier: Apache-2.0
/*
 * libdwfl finds the symbols (.symtab, else .dynsym, plus a .gnu_debugdata
 * MiniDebugInfo table or a separate debug file that debuginfo.c finds); this
 * file keeps the function symbols in a sorted table, asks libdw for the
 * inline chain and source line of an address (dwarf_getscopes: the DIEs
 * covering it, innermost first; each inlined call's DW_AT_call_file/line
 * is the line of its caller), and reads .gopclntab for Go binaries.
 *
 * The symbol table names the function that holds the code, not DWARF's
 * subprogram name: DWARF names a C++ method "run" where the symbol says
 * tmpl::Stage<3>::run. Inlined frames take DWARF's linkage name when it has
 * one, so they demangle to qualified names too. dwfl_module_addrinfo() would
 * answer lookups too, but it scans every symbol on each call and also
 * returns data and untyped symbols, while a profiler looks up thousands of
 * addresses in files with up to a million symbols and wants functions only.
 */
#include "symbol/native_symbols.h"

#include "elf/elf_file.h"
#include "elf/elf_pages.h"
#include "elf/gopclntab.h"
#include "elf/plt.h"
#include "symbol/debuginfo.h"
#include "symbol/dwarf_index.h"
#include "symbol/dwarf_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/log.h"
#include "util/array.h"

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
	struct symbol_options opts;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct native_func *funcs; /* sorted by start, one per address */
	size_t n_funcs;
	Dwarf *dwarf; /* NULL without DWARF */
	Dwarf_Addr dwarf_bias;
	struct gopclntab *go;  /* NULL unless a Go binary */
	struct plt_stubs plt;  /* "name@plt" stubs, which no symbol names */
	char *debug_file;      /* the separate debug file found, or NULL */
	const char *main_link; /* the binary's own .gnu_debuglink name (libelf's data), or NULL */
	bool main_link_known;  /* main_link was read: later lookups are for the dwz alt file */
	Dwarf *alt;	       /* the dwz alt file we opened and handed to libdw, or NULL */
	int alt_fd;	       /* its fd, -1 when none */
	size_t file_charged;   /* native_symbols__file_growth() reported so far */
	bool touched;	       /* looked up since native_symbols__drop_pages() */
	uint64_t *units;       /* offsets of the units lookups reached, sorted */
	size_t n_units, units_cap;
	uint64_t *libdw_units; /* those whose lines libdw read (dwarf_lines left them), sorted */
	size_t n_libdw_units, libdw_units_cap;
	struct dwarf_lines *lines; /* the line programs' reader; NULL: libdw reads lines */
	bool lines_tried;	   /* dwarf_lines__new() ran */
	bool aranges_counted;	   /* the module's address ranges were counted */
	size_t counted;		   /* heap counted and not yet reported */
	struct byte_span *spans;   /* the sections file_bytes() measures */
	size_t n_spans;
	bool spans_known;
	bool dwarf_in_heap;	   /* see native_symbols_info */
	bool units_walked;	   /* walk_units() ran (before the first DWARF lookup) */
	struct dwarf_index *index; /* scope chains and prefixes; NULL until a DWARF lookup */
	bool reference;		   /* test only: name frames with libdw's walks, no index */
};

/* A section in a file's mapping (at NULL: not in a mapping, size counted whole). */
struct byte_span {
	const char *at;
	size_t size;
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
 * The separate debug file, found by debuginfo__find() (--debug-dir roots,
 * build id, debuglink, debuginfod when enabled). Without options: by build id
 * under /usr/lib/debug only. libdwfl's standard callback is not used: it
 * would also ask debuginfod whenever DEBUGINFOD_URLS is set, which must be
 * the user's choice.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink, GElf_Word crc,
			  char **debuginfo_file_name)
{
	struct native_symbols *ns = userdata ? *userdata : NULL;
	struct debuginfo_query q;
	const unsigned char *bits = NULL;
	GElf_Addr id_vaddr;
	int len, fd;

	/*
	 * libdwfl asks for the dwz alt file (.gnu_debugaltlink) through this
	 * callback too, with its name as debuglink: a path the target chose.
	 * Refused here; guard_dwarf() finds the alt file by its build id.
	 */
	if (ns && ns->main_link_known && debuglink &&
	    (!ns->main_link || strcmp(debuglink, ns->main_link)))
		return -1;
	if (!ns || !ns->opts.debuginfo)
		return dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink, crc, debuginfo_file_name);
	len = dwfl_module_build_id(mod, &bits, &id_vaddr);
	q = (struct debuginfo_query){
	    .path = ns->ef->path,
	    .root_pid = ns->ef->root_pid,
	    .self_fd = ns->ef->fd,
	    .build_id = len > 0 ? bits : NULL,
	    .build_id_len = len > 0 ? (size_t)len : 0,
	    .debuglink = debuglink,
	    .crc = crc,
	};
	fd = debuginfo__find(ns->opts.debuginfo, &q, debuginfo_file_name);
	/* Compressed DWARF is read from an inflated copy: see debuginfo__inflated(). */
	if (fd >= 0 && q.build_id_len)
		fd = debuginfo__inflated(ns->opts.debuginfo, fd, q.build_id, q.build_id_len);
	if (fd >= 0 && *debuginfo_file_name && !ns->debug_file)
		ns->debug_file = strdup(*debuginfo_file_name);
	return fd >= 0 ? fd : -1;
}

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = find_elf_none,
    .find_debuginfo = find_debuginfo,
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
		if (array__grow(g->spans, g->cap_spans, g->n_spans))
			return -ENOMEM;
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

/*
 * Adds the PLT stubs of the file's own sections (the linker writes no symbol
 * for them) after the n symbols of *cands, growing it. They rank below every
 * symbol: a real symbol at the same address keeps its name.
 */
static int add_plt_candidates(struct native_symbols *ns, Elf *elf, struct sym_candidate **cands,
			      size_t *n)
{
	struct sym_candidate *grown;
	int err = plt_stubs__read(elf, &ns->plt);

	if (err || !ns->plt.n)
		return err;
	if (ns->plt.n > SIZE_MAX / sizeof(*grown) - *n)
		return -ENOMEM;
	grown = realloc(*cands, (*n + ns->plt.n) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	*cands = grown;
	for (size_t i = 0; i < ns->plt.n; i++) {
		const struct plt_stub *st = &ns->plt.stubs[i];

		grown[*n + i] = (struct sym_candidate){
		    .start = st->start,
		    .size = st->size,
		    .section_end = st->section_end,
		    .name = st->name,
		    .rank = 3,
		    .ndx = INT32_MAX,
		};
	}
	*n += ns->plt.n;
	return 0;
}

static int build_table(struct native_symbols *ns, Elf *elf, uint64_t bias)
{
	struct sym_candidate *cands;
	size_t n, kept = 0;
	int err;

	err = read_candidates(ns->mod, bias, &cands, &n);
	if (!err)
		err = add_plt_candidates(ns, elf, &cands, &n);
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

/* The section called name in elf, or NULL. */
static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *sname;

		if (!gelf_getshdr(scn, shdr))
			continue;
		sname = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (sname && !strcmp(sname, name))
			return scn;
	}
	return NULL;
}

/* Go's table, when the binary has one. Its absence or damage only means no Go names. */
static void open_gopclntab(struct native_symbols *ns, Elf *elf)
{
	GElf_Shdr shdr, text;
	Elf_Scn *scn = find_section(elf, ".gopclntab", &shdr);
	Elf_Data *data;
	int err;

	if (!scn || shdr.sh_type == SHT_NOBITS)
		return;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return;
	if (!find_section(elf, ".text", &text))
		text.sh_addr = 0;
	err = gopclntab__open(data->d_buf, data->d_size, text.sh_addr, &ns->go);
	if (err)
		pr_info("%s: unreadable .gopclntab (%s): Go functions show as offsets",
			ns->ef->path, strerror(-err));
}

/*
 * Bytes of [p, p + len), a range of a file mapping, that this process has
 * mapped in (touched): the "present" bit of each page in /proc/self/pagemap.
 * Page-cache residency (mincore) would not do: a file read once stays cached
 * whole, touched by us or not. The whole length when pagemap is unreadable.
 */
static int pagemap_fd(size_t *page)
{
	static int pagemap = -2; /* opened once, kept for the life of the process */
	static size_t page_size;

	if (pagemap == -2) {
		pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
		page_size = (size_t)sysconf(_SC_PAGESIZE);
	}
	*page = page_size;
	return pagemap;
}

static size_t resident_bytes(const void *p, size_t len)
{
	int pagemap;
	size_t page;
	uint64_t entries[512];
	uintptr_t first, last;
	size_t total = 0;

	pagemap = pagemap_fd(&page);
	if (pagemap < 0 || !len)
		return len;
	first = (uintptr_t)p / page;
	last = ((uintptr_t)p + len - 1) / page;
	for (uintptr_t at = first; at <= last;) {
		size_t n = last - at + 1 < 512 ? last - at + 1 : 512;
		ssize_t got = pread(pagemap, entries, n * sizeof(*entries), (off_t)(at * 8));

		if (got <= 0)
			return len;
		n = (size_t)got / sizeof(*entries);
		for (size_t i = 0; i < n; i++)
			total += (entries[i] >> 63) ? page : 0;
		at += n;
	}
	return total < len ? total : len;
}

/*
 * Whether libelf holds scn's bytes outside the file's mapping: a section
 * libdw inflated. libelf then rewrites the section's header (flag cleared,
 * inflated size, in the mapping itself), so only the data's address tells.
 * Those bytes are heap, which the symbolizer measures: charged again as
 * file pages, libc's debug file (libc6-dbg) cost twice its 10 MiB, so it and
 * the rest of a busy host's libraries no longer fit the cache together, and
 * libc was inflated again every few intervals.
 */
static bool inflated(Elf_Scn *scn, const char *image, size_t image_len)
{
	Elf_Data *d;

	if (!image)
		return false;
	d = elf_getdata(scn, NULL);
	return d && d->d_buf && d->d_size &&
	       ((const char *)d->d_buf < image || (const char *)d->d_buf >= image + image_len);
}

/* The sections file_bytes() measures: where each lies in the mapping. */
static int section_spans(Elf *elf, struct byte_span **spans, size_t *n, size_t *cap)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, image_len = 0;
	const char *image;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	image = elf_rawfile(elf, &image_len);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *name;
		struct byte_span *sp;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
		    (shdr.sh_flags & SHF_COMPRESSED) || inflated(scn, image, image_len))
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM &&
		    shdr.sh_type != SHT_STRTAB && !(name && !strncmp(name, ".debug_", 7)))
			continue;
		if (array__grow(*spans, *cap, *n))
			return -ENOMEM;
		sp = &(*spans)[(*n)++];
		*sp = (struct byte_span){.size = shdr.sh_size};
		if (image && shdr.sh_offset <= image_len &&
		    shdr.sh_size <= image_len - shdr.sh_offset)
			sp->at = image + shdr.sh_offset;
	}
	return 0;
}

/* True when a DWARF section of elf lies in the heap (inflated) rather than in its mapping. */
static bool dwarf_inflated(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, image_len = 0;
	const char *image;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	image = elf_rawfile(elf, &image_len);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name || (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)))
			continue;
		/* Still compressed (libdw refused it) or inflated: either way not in place. */
		if ((shdr.sh_flags & SHF_COMPRESSED) || inflated(scn, image, image_len))
			return true;
	}
	return false;
}

/*
 * Memory of the sections elfutils reads in place from its mapping of the file
 * for names and lines (compressed ones are inflated into the heap instead,
 * which the symbolizer measures): the resident pages when the file is mapped,
 * else (read into memory) their whole size. Charging whole sizes made a
 * library built with -g (an interpreter's: 17 MB of DWARF, a few hundred KiB of it
 * ever read) look as large as libc's inflated debug file, and the two no
 * longer fit the cache together. The sections are found once: reading the
 * section headers again would map their pages in again after a drop.
 */
static size_t file_bytes(struct native_symbols *ns)
{
	size_t total = 0;

	if (!ns->spans_known) {
		Elf *elf = ns->mod ? dwfl_module_getelf(ns->mod, &(GElf_Addr){0}) : NULL;
		size_t cap = 0;

		ns->spans_known = true;
		if (section_spans(elf, &ns->spans, &ns->n_spans, &cap) ||
		    (ns->dwarf && dwarf_getelf(ns->dwarf) != elf &&
		     section_spans(dwarf_getelf(ns->dwarf), &ns->spans, &ns->n_spans, &cap)))
			ns->spans_known = false; /* ENOMEM: measured again next time */
	}
	for (size_t i = 0; i < ns->n_spans; i++)
		total += ns->spans[i].at ? resident_bytes(ns->spans[i].at, ns->spans[i].size)
					 : ns->spans[i].size;
	if (!ns->spans_known) {
		free(ns->spans);
		ns->spans = NULL;
		ns->n_spans = 0;
	}
	return total;
}

/* What native_symbols__drop_pages() does to each image: elf/elf_pages.c. */
size_t native_symbols__drop_file_range(const void *p, size_t len)
{
	return elf_pages__drop_range(p, len);
}

/* The file pages of elf's image that this process holds, dropped. */
static size_t drop_elf_pages(Elf *elf)
{
	size_t image_len = 0;
	const char *image;

	/* Every ELF here is mapped (libdwfl and debuginfo.c use the mmap modes;
	 * section_spans() asked for the image already); one read into memory would
	 * be anonymous pages, which native_symbols__drop_file_range() leaves. */
	if (!elf)
		return 0;
	image = elf_rawfile(elf, &image_len);
	return image ? native_symbols__drop_file_range(image, image_len) : 0;
}

size_t native_symbols__drop_pages(struct native_symbols *ns)
{
	Elf *elf, *debug;
	size_t charged;

	if (!ns || !ns->touched)
		return 0;
	ns->touched = false;
	elf = ns->mod ? dwfl_module_getelf(ns->mod, &(GElf_Addr){0}) : NULL;
	drop_elf_pages(elf);
	debug = ns->dwarf ? dwarf_getelf(ns->dwarf) : NULL;
	if (debug && debug != elf)
		drop_elf_pages(debug);
	if (ns->alt)
		drop_elf_pages(dwarf_getelf(ns->alt));
	charged = ns->file_charged;
	ns->file_charged = 0;
	return charged;
}

/* .debug_info a unit walk reads between two drops of the file's pages. */
#define WALK_DROP_BYTES (1u << 20)
/* Smaller .debug_info is left to libdwfl's walk: it holds no more than this,
 * and the walk here costs 2-3 ms more CPU for a large file (test: libc's and
 * libpython's first lookup 9-11 ms before, 11-12 ms with it). */
#define WALK_MIN_BYTES (2u << 20)

/*
 * libdwfl's first address lookup in a module reads every unit's header and
 * unit DIE (its own walk, whatever .debug_aranges says), and each read
 * faults in up to 64 KiB of the file (fault-around): 5.6 MiB of libpython's
 * 8.8 MiB .debug_info and 5.7 of libc's debug file resident after one
 * lookup (issue 22: the agent's peak is two such files named in one pass).
 * Done here first, with the same call, the walk gives back the file pages
 * every WALK_DROP_BYTES of .debug_info; libdwfl keeps the units it interned,
 * so the lookup that follows does not walk again. DWARF inflated into the
 * heap is left to libdwfl: there is no file page to give back.
 */
static void walk_units(struct native_symbols *ns)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	Elf *elf = dwarf_getelf(ns->dwarf);
	uint64_t dropped_to = 0, off;
	GElf_Shdr shdr;

	ns->units_walked = true;
	if (ns->dwarf_in_heap || !elf || !find_section(elf, ".debug_info", &shdr) ||
	    shdr.sh_size < WALK_MIN_BYTES)
		return;
	while ((cu = dwfl_nextcu(ns->dwfl, cu, &bias)) != NULL) {
		off = dwarf_dieoffset(cu);
		if (off < dropped_to || off - dropped_to < WALK_DROP_BYTES)
			continue;
		drop_elf_pages(elf);
		dropped_to = off;
	}
	/* What the walk held at its end; the main ELF's symbol tables are read already. */
	drop_elf_pages(elf);
}

/*
 * libdw opens the dwz alt file (.gnu_debugaltlink: a path the target's
 * file names, absolute or relative) on its own when an alt form is first
 * read. It must not: the alt file is looked up here by its build id under
 * the debug roots (safe_open) and handed to libdw; a DWARF whose alt file
 * is not found is not used (names then come from the symbol table only).
 * Split DWARF (.dwo files of skeleton units, which libdwfl also opens by
 * the path the DWARF names) is not guarded yet: detecting skeleton units
 * means reading every unit's header, which costs the memory
 * test_file_pages_charged_as_read bounds.
 */
static void guard_dwarf(struct native_symbols *ns)
{
	const char *alt_name;
	const void *alt_id;
	ssize_t n = dwelf_dwarf_gnu_debugaltlink(ns->dwarf, &alt_name, &alt_id);
	char *found = NULL;
	int fd;

	if (n > 0) {
		fd = ns->opts.debuginfo ? debuginfo__find_by_build_id(ns->opts.debuginfo, alt_id,
								      (size_t)n, &found)
					: -ENOENT;
		free(found);
		if (fd >= 0) {
			ns->alt = dwarf_begin(fd, DWARF_C_READ);
			if (ns->alt) {
				ns->alt_fd = fd;
				dwarf_setalt(ns->dwarf, ns->alt);
			} else {
				close(fd);
			}
		}
		if (!ns->alt) {
			pr_debug("%s: its dwz alt file is not found by build id: DWARF not used",
				 ns->ef->path);
			ns->dwarf = NULL;
			return;
		}
	}
}

int native_symbols__open(const struct elf_file *ef, struct native_symbols **out)
{
	return native_symbols__open_opts(ef, NULL, out);
}

int native_symbols__open_opts(const struct elf_file *ef, const struct symbol_options *opts,
			      struct native_symbols **out)
{
	struct native_symbols *ns;
	GElf_Addr bias = 0;
	void **userdata = NULL;
	Elf *elf;
	int fd = -1, err;

	*out = NULL;
	ns = calloc(1, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	ns->ef = ef;
	ns->alt_fd = -1;
	if (opts)
		ns->opts = *opts;
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
	/* The debug-file callback finds ns through the module's user data. */
	dwfl_module_info(ns->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata)
		*userdata = ns;
	elf = dwfl_module_getelf(ns->mod, &bias);
	if (!elf) {
		err = -ENOEXEC;
		goto cleanup;
	}

	err = build_table(ns, elf, bias);
	if (err)
		goto cleanup;
	open_gopclntab(ns, elf);
	/* Go code is named from .gopclntab; DWARF (and a debug-file search) only for the rest. */
	if (!ns->go) {
		GElf_Word link_crc;

		ns->main_link = dwelf_elf_gnu_debuglink(elf, &link_crc);
		ns->main_link_known = true;
		ns->dwarf = dwfl_module_getdwarf(ns->mod, &ns->dwarf_bias);
		if (ns->dwarf)
			guard_dwarf(ns);
		if (ns->dwarf)
			ns->dwarf_in_heap = dwarf_inflated(dwarf_getelf(ns->dwarf)) ||
					    (ns->alt && dwarf_inflated(dwarf_getelf(ns->alt)));
	}
	ns->touched = true;
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
	free(ns->spans);
	plt_stubs__free(&ns->plt);
	gopclntab__free(ns->go);
	if (ns->dwfl)
		dwfl_end(ns->dwfl);
	/* After the main Dwarf: libdw does not own an alt file set with dwarf_setalt(). */
	if (ns->alt)
		dwarf_end(ns->alt);
	if (ns->alt_fd >= 0)
		close(ns->alt_fd);
	free(ns->debug_file);
	free(ns->units);
	free(ns->libdw_units);
	dwarf_index__free(ns->index);
	dwarf_lines__free(ns->lines);
	free(ns);
}

size_t native_symbols__file_growth(struct native_symbols *ns)
{
	size_t now = file_bytes(ns), grown = now > ns->file_charged ? now - ns->file_charged : 0;

	ns->file_charged += grown;
	return grown;
}

void native_symbols__info(const struct native_symbols *ns, struct native_symbols_info *info)
{
	info->debug_file = ns->debug_file;
	info->has_dwarf = ns->dwarf != NULL;
	info->has_gopclntab = ns->go != NULL;
	info->dwarf_in_heap = ns->dwarf_in_heap;
	info->n_funcs = ns->n_funcs;
	dwarf_lines__stats(ns->lines, &info->lines);
}

const char *native_symbols__lookup(struct native_symbols *ns, uint64_t vaddr, uint64_t *offset)
{
	size_t lo = 0, hi = ns->n_funcs;

	/* Its names are in the file's mapped string table. */
	ns->touched = true;
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

/* ---- frames: symbols + DWARF inline chains + Go ---------------------------- */

/*
 * Copies a symbol name without its ELF version ("memcpy@@GLIBC_2.14" names
 * memcpy); a PLT stub's "@plt" stays, after the demangled name.
 */
static void set_names(const struct native_symbols *ns, struct sym_frame *f, const char *raw)
{
	char buf[SYM_NAME_MAX], base[SYM_NAME_MAX];
	int len = (int)strcspn(raw, "@");
	const char *plt = strcmp(raw + len, "@plt") ? "" : "@plt";

	snprintf(f->system_name, sizeof(f->system_name), "%.*s%s", len, raw, plt);
	snprintf(base, sizeof(base), "%.*s", len, raw);
	snprintf(f->name, sizeof(f->name), "%s%s",
		 demangle(base, ns->opts.demangle, buf, sizeof(buf)), plt);
	/* DWARF's own names ("ns::f<int>") are not mangled but follow the mode too. */
	if (ns->opts.demangle == DEMANGLE_SIMPLIFIED)
		demangle__strip_templates(f->name);
}

/* Follows abstract_origin / specification links to the DIE that holds the name. */
static bool name_die(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute attr;

	*out = *die;
	for (int hops = 0; hops < 8 && !dwarf_hasattr(out, DW_AT_name); hops++) {
		if (!dwarf_attr(out, DW_AT_abstract_origin, &attr) &&
		    !dwarf_attr(out, DW_AT_specification, &attr))
			return false;
		if (!dwarf_formref_die(&attr, out))
			return false;
	}
	return dwarf_hasattr(out, DW_AT_name);
}

/*
 * "ns::Class::name" from the DIE's enclosing namespaces, classes, structs
 * and unions (DWARF names a function without them). NULL when unnamed.
 * The prefix is remembered per declaration (dwarf_index.c); the reference
 * path walks the unit with dwarf_getscopes_die() for each call, as before.
 */
static const char *qualified_name(struct native_symbols *ns, Dwarf_Die *die, char *buf, size_t len)
{
	Dwarf_Die decl;
	const char *name;
	size_t used;

	if (!name_die(die, &decl) || !(name = dwarf_diename(&decl)) || !*name)
		return NULL;
	if (ns->reference)
		used = dwarf_index__prefix_libdw(&decl, buf, len);
	else
		used = dwarf_index__prefix(ns->index, &decl, buf, len);
	if (used < len)
		snprintf(buf + used, len - used, "%s", name);
	return buf;
}

/*
 * The linkage (mangled) name of a function DIE, else its qualified DWARF
 * name (written into buf), else NULL.
 */
static const char *die_name(struct native_symbols *ns, Dwarf_Die *die, char *buf, size_t len)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (name && *name)
		return name;
	return qualified_name(ns, die, buf, len);
}

static void count_unit(struct native_symbols *ns, Dwarf_Die *cu, bool libdw_lines);

/*
 * The file and line an inlined call was made from (in its caller): the file
 * from the unit's line program header, read by dwarf_lines (lu) unless it
 * left the unit or the index to libdw, whose dwarf_getsrcfiles() reads the
 * unit's whole line table.
 */
static void call_site(struct native_symbols *ns, struct dwarf_lines_unit *lu, Dwarf_Die *cu,
		      Dwarf_Die *inlined, const char **file, int64_t *line)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word v;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &v) == 0)
		*line = (int64_t)v;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &v) != 0)
		return;
	if (lu) {
		int rc = dwarf_lines__file(lu, v, file);

		if (rc == 0 || rc == -EBADMSG) /* -EBADMSG: a refused unit, not for libdw either */
			return;
	}
	count_unit(ns, cu, true);
	if (dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && v < nfiles)
		*file = dwarf_filesrc(files, v, NULL, NULL);
}

/*
 * What libdw keeps of a unit once a lookup reached it, by what it holds
 * (libdw 0.188 on x86-64, measured with mallinfo2 on one thread: see
 * test_lookup_heap_counted): the unit itself with its abbreviations, and,
 * when dwarf_lines left the unit's lines to libdw, its line table (a
 * Dwarf_Line and a Dwfl_Line per row) and file names.
 * Measuring the heap around each lookup instead cost two mallinfo2 calls
 * per frame named (a walk of every free chunk of every arena: 12-21% of a
 * steady interval), and saw every other thread's allocations as the
 * lookup's: a table build beside it charged a library 2 to 8 MiB at once.
 */
#define UNIT_LINE_BYTES 64
#define UNIT_FILE_BYTES 48
#define UNIT_BYTES	4096
#define ARANGE_BYTES	40
/*
 * A file's scope index and remembered prefixes (dwarf_index.c): libpython's
 * whole index is well under this; past it lookups walk as libdw does.
 */
#define DWARF_INDEX_MAX_BYTES (8u << 20)

/*
 * Adds off to the sorted set v (n, cap); true when it was not there (and
 * the set could grow: else it is counted when a lookup next reaches it).
 */
static bool unit_set_add(struct native_symbols *ns, uint64_t **v, size_t *n, size_t *cap,
			 uint64_t off)
{
	size_t lo = 0, hi = *n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((*v)[mid] == off)
			return false;
		if ((*v)[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (*n == *cap) {
		size_t grown_cap = *cap ? 2 * *cap : 16;
		uint64_t *grown = realloc(*v, grown_cap * sizeof(*grown));

		if (!grown)
			return false;
		*v = grown;
		ns->counted += (grown_cap - *cap) * sizeof(*grown);
		*cap = grown_cap;
	}
	memmove(&(*v)[lo + 1], &(*v)[lo], (*n - lo) * sizeof(**v));
	(*v)[lo] = off;
	(*n)++;
	return true;
}

/*
 * Counts what libdw keeps of cu the first time a lookup reaches it, and
 * its line table the first time libdw read it (libdw_lines).
 */
static void count_unit(struct native_symbols *ns, Dwarf_Die *cu, bool libdw_lines)
{
	uint64_t off = dwarf_dieoffset(cu);
	size_t nlines = 0, nfiles = 0;
	Dwarf_Lines *lines;
	Dwarf_Files *files;

	if (!ns->aranges_counted) {
		Dwarf_Aranges *ar;
		size_t n;

		ns->aranges_counted = true;
		if (dwarf_getaranges(ns->dwarf, &ar, &n) == 0)
			ns->counted += n * ARANGE_BYTES;
	}
	if (unit_set_add(ns, &ns->units, &ns->n_units, &ns->units_cap, off))
		ns->counted += UNIT_BYTES;
	if (!libdw_lines ||
	    !unit_set_add(ns, &ns->libdw_units, &ns->n_libdw_units, &ns->libdw_units_cap, off))
		return;
	/* Both cached by libdw already when the lookup read lines (no new parse). */
	if (dwarf_getsrclines(cu, &lines, &nlines) != 0)
		nlines = 0;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		nfiles = 0;
	ns->counted += nlines * UNIT_LINE_BYTES + nfiles * UNIT_FILE_BYTES;
}

/* Whether cu is a split (.dwo) unit. */
static bool split_unit(Dwarf_Die *cu)
{
	uint8_t type = 0;

	if (dwarf_cu_info(cu->cu, NULL, &type, NULL, NULL, NULL, NULL, NULL) != 0)
		return true; /* unknown: left to libdw */
	return type == DW_UT_split_compile || type == DW_UT_split_type;
}

/*
 * dwarf_lines' view of cu (NULL: libdw reads its lines: the reference
 * path, no .debug_line this reader can use, or a program it leaves to libdw).
 */
static struct dwarf_lines_unit *lines_unit(struct native_symbols *ns, Dwarf_Die *cu)
{
	struct dwarf_lines_unit *lu = NULL;

	if (ns->reference)
		return NULL;
	if (!ns->lines_tried) {
		ns->lines_tried = true;
		ns->lines = dwarf_lines__new(ns->dwarf);
	}
	if (!ns->lines)
		return NULL;
	/* Only a unit of this Dwarf, not a split one: its DW_AT_stmt_list is
	 * another file's .debug_line (libdw reads a split unit's lines). */
	if (dwarf_cu_getdwarf(cu->cu) != ns->dwarf || split_unit(cu))
		return NULL;
	if (dwarf_lines__unit_of(ns->lines, cu, &lu) != 0)
		lu = NULL;
	ns->counted += dwarf_lines__growth(ns->lines);
	return lu;
}

size_t native_symbols__lookup_growth(struct native_symbols *ns)
{
	size_t n = ns->counted;

	ns->counted = 0;
	return n;
}

/*
 * The DWARF view of vaddr: inlined calls innermost first, then the function
 * holding them. Returns the number of frames (0: no DWARF covers vaddr).
 * *outer is set when the last frame is the (non-inlined) function.
 */
static size_t dwarf_frames(struct native_symbols *ns, uint64_t vaddr, struct sym_frame *out,
			   size_t max, bool *outer)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(ns->mod, vaddr, &bias), *scopes = NULL;
	Dwfl_Line *l;
	struct dwarf_lines_unit *lu;
	const char *file = NULL;
	char qualified[SYM_NAME_MAX];
	int line = 0, nscopes;
	int64_t cur_line;
	size_t n = 0;
	bool libdw_lines = true;

	*outer = false;
	if (!cu)
		return 0;
	lu = lines_unit(ns, cu);
	if (lu)
		libdw_lines = dwarf_lines__find(lu, vaddr - bias, &file, &line) == -ENOTSUP;
	if (libdw_lines) {
		file = NULL;
		line = 0;
		l = dwfl_module_getsrc(ns->mod, vaddr);
		if (l)
			file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	}
	count_unit(ns, cu, libdw_lines);
	cur_line = line;
	if (!ns->index && !ns->reference)
		ns->index = dwarf_index__new(DWARF_INDEX_MAX_BYTES);
	if (ns->reference)
		nscopes = dwarf_getscopes(cu, vaddr - bias, &scopes);
	else
		nscopes = dwarf_index__scopes(ns->index, cu, vaddr - bias, &scopes);
	for (int i = 0; i < nscopes && n < max; i++) {
		int tag = dwarf_tag(&scopes[i]);
		const char *name;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		/* Keep the last slot for the function itself. */
		if (tag == DW_TAG_inlined_subroutine && n == max - 1)
			continue;
		name = die_name(ns, &scopes[i], qualified, sizeof(qualified));
		set_names(ns, &out[n], name ? name : "");
		out[n].file = file;
		out[n].line = cur_line;
		out[n].inlined = tag == DW_TAG_inlined_subroutine;
		n++;
		if (tag == DW_TAG_subprogram) {
			*outer = true;
			break;
		}
		call_site(ns, lu, cu, &scopes[i], &file, &cur_line);
	}
	free(scopes);
	ns->counted += dwarf_index__growth(ns->index);
	if (n && !*outer && n < max) {
		/*
		 * The chain ended in inlined calls without the function that
		 * holds them (libdw does not always list it): an unnamed frame
		 * at the call site, which the symbol table names.
		 */
		out[n].name[0] = out[n].system_name[0] = '\0';
		out[n].file = file;
		out[n].line = cur_line;
		out[n].inlined = 0;
		return n + 1;
	}
	if (n == 0 && file) {
		/* Lines but no function DIE (assembly): keep the line for the symbol's frame. */
		out[0].name[0] = out[0].system_name[0] = '\0';
		out[0].file = file;
		out[0].line = line;
		out[0].inlined = 0;
		return 1;
	}
	return n;
}

static size_t go_frames(struct native_symbols *ns, uint64_t vaddr, struct sym_frame *out)
{
	struct gopclntab_frame gf;

	if (gopclntab__lookup(ns->go, vaddr, &gf))
		return 0;
	set_names(ns, out, gf.name);
	out->file = gf.file;
	out->line = gf.line;
	out->inlined = 0;
	return 1;
}

size_t native_symbols__frames_reference(struct native_symbols *ns, uint64_t vaddr,
					struct sym_frame *out, size_t max)
{
	size_t n;

	ns->reference = true;
	n = native_symbols__frames(ns, vaddr, out, max);
	ns->reference = false;
	return n;
}

size_t native_symbols__frames(struct native_symbols *ns, uint64_t vaddr, struct sym_frame *out,
			      size_t max)
{
	const char *sym;
	bool outer = false;
	size_t n = 0, kept = 0;

	if (!max)
		return 0;
	ns->touched = true;
	if (ns->go && (n = go_frames(ns, vaddr, out)))
		return n;
	if (ns->dwarf && !ns->units_walked)
		walk_units(ns);
	if (ns->dwarf)
		n = dwarf_frames(ns, vaddr, out, max, &outer);
	sym = native_symbols__lookup(ns, vaddr, NULL);
	if (n && sym && (outer || !out[n - 1].name[0])) {
		/*
		 * The symbol table names the function holding the code with its
		 * full linkage name (DWARF may only give "run" for a method).
		 */
		set_names(ns, &out[n - 1], sym);
	} else if (n && sym && n < max) {
		/* DWARF had inlined calls but no function DIE: the symbol closes the chain. */
		set_names(ns, &out[n], sym);
		out[n].file = NULL;
		out[n].line = 0;
		out[n].inlined = 0;
		n++;
	} else if (!n && sym) {
		set_names(ns, &out[0], sym);
		out[0].file = NULL;
		out[0].line = 0;
		out[0].inlined = 0;
		n = 1;
	}
	/* Frames DWARF could not name are dropped from the chain rather than shown empty. */
	for (size_t i = 0; i < n; i++) {
		if (!out[i].name[0])
			continue;
		if (i != kept)
			out[kept] = out[i];
		kept++;
	}
	return kept;
}
