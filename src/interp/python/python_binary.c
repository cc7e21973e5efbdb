// SPDX-License-Identifier: Apache-2.0
#include "interp/python/python_binary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "elf/cold_part.h"
#include "elf/elf_file.h"
#include "elf/elf_pages.h"
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

			/* Large tables: the pages read so far given back (issue 22). */
			elf_pages__drop_symbols_every(elf, scn, i);
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

/* ---- inspection --------------------------------------------------------------- */

int python_binary__inspect(const struct elf_file *ef, const char *name, struct python_binary *out)
{
	struct wanted_syms w = {0};
	uint64_t cold_start, cold_end;
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
	if (w.version && !elf_file__read_vaddr(ef, w.version, &hex, sizeof(hex)) &&
	    hex >> 24 == 3) {
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
	} else if (!w.symtab && !elf_file__find_cold_part(ef, w.eval, w.eval + w.eval_size,
							  &cold_start, &cold_end)) {
		out->eval[out->n_eval++] = (struct op_py_range){cold_start, cold_end};
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
