// SPDX-License-Identifier: Apache-2.0
#include "elf/elf_symbols.h"
#include "interp/perl/perl_binary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "elf/elf_file.h"
#include "interp/perl/perl_layout.h"
#include "util/log.h"

struct wanted_syms {
	uint64_t runops[PERL_MAX_RUNOPS][2];
	uint64_t thr_key, curinterp, curcop, curstackinfo, op;
	uint64_t current_context; /* st_value: offset in the TLS segment */
	bool has_current_context;
};

static void note_symbol(struct wanted_syms *w, const char *name, const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if (type == STT_FUNC && sym->st_size &&
	    (!strcmp(name, "Perl_runops_standard") || !strcmp(name, "Perl_runops_debug"))) {
		int i = strcmp(name, "Perl_runops_standard") ? 1 : 0;

		w->runops[i][0] = sym->st_value;
		w->runops[i][1] = sym->st_value + sym->st_size;
	} else if (type == STT_TLS && !strcmp(name, "PL_current_context")) {
		w->current_context = sym->st_value;
		w->has_current_context = true;
	} else if (!sym->st_value || sym->st_shndx == SHN_UNDEF) {
		return;
	} else if (!strcmp(name, "PL_thr_key")) {
		w->thr_key = sym->st_value;
	} else if (!strcmp(name, "PL_curinterp")) {
		w->curinterp = sym->st_value;
	} else if (!strcmp(name, "PL_curcop")) {
		w->curcop = sym->st_value;
	} else if (!strcmp(name, "PL_curstackinfo")) {
		w->curstackinfo = sym->st_value;
	} else if (!strcmp(name, "PL_op")) {
		w->op = sym->st_value;
	}
}

static bool note_pl_symbol(void *ctx, const GElf_Sym *sym, const char *name)
{
	if (name[0] == 'P' && (name[1] == 'L' || name[1] == 'e'))
		note_symbol(ctx, name, sym);
	return false;
}

static void scan_dynsym(Elf *elf, struct wanted_syms *w)
{
	elf_symbols__for_each(elf, SHT_DYNSYM, note_pl_symbol, w);
}

int64_t perl_binary__exec_tls_offset(uint64_t memsz, uint64_t align, uint64_t vaddr,
				     uint64_t sym_off)
{
	uint64_t firstbyte, off;

	if (!align)
		align = 1;
	/* glibc's and musl's variant II: the first module's block ends at the thread
	 * pointer, rounded so that its first byte keeps vaddr's alignment. */
	firstbyte = (0 - vaddr) & (align - 1);
	off = ((memsz - firstbyte + align - 1) / align) * align + firstbyte;
	return (int64_t)sym_off - (int64_t)off;
}

/* The executable's PT_TLS (memsz, align, vaddr), when ef is an executable (PT_INTERP). */
static bool exec_tls(Elf *elf, uint64_t *memsz, uint64_t *align, uint64_t *vaddr)
{
	bool interp = false, tls = false;
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_INTERP)
			interp = true;
		if (ph.p_type == PT_TLS) {
			tls = true;
			*memsz = ph.p_memsz;
			*align = ph.p_align;
			*vaddr = ph.p_vaddr;
		}
	}
	return interp && tls;
}

/* "This is perl 5, version 36, subversion 0": perl -v's text, in the read-only data. */
static bool version_from_rodata(const struct elf_file *ef, unsigned int *minor)
{
	static const char needle[] = "This is perl 5, version ";
	bool found = false;

	for (size_t i = 0; i < ef->n_segments && !found; i++) {
		const struct elf_segment *s = &ef->segments[i];
		char *buf, *p;
		ssize_t n;

		if (s->flags & 1 /* PF_X */ || s->flags & 2 /* PF_W */ || !s->filesz ||
		    s->filesz > (64u << 20))
			continue;
		buf = malloc(s->filesz);
		if (!buf)
			return false;
		n = pread(ef->fd, buf, s->filesz, (off_t)s->offset);
		if (n > 0) {
			p = memmem(buf, (size_t)n, needle, sizeof(needle) - 1);
			if (p && (size_t)(p - buf) + sizeof(needle) + 4 < (size_t)n &&
			    sscanf(p + sizeof(needle) - 1, "%u", minor) == 1)
				found = true;
		}
		free(buf);
	}
	return found;
}

/* "libperl.so.5.36", "libperl.so.5.36.0": the version in the name. */
static bool version_from_name(const char *path, unsigned int *minor)
{
	const char *base = strrchr(path, '/');
	unsigned int major;

	base = base ? base + 1 : path;
	return !strncmp(base, "libperl.so.", 11) &&
	       sscanf(base + 11, "%u.%u", &major, minor) == 2 && major == 5;
}

int perl_binary__inspect(const struct elf_file *ef, const char *name, struct perl_binary *out)
{
	struct wanted_syms w = {0};
	uint64_t memsz = 0, align = 0, vaddr = 0;
	bool is_exec;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	/* Every perl exports its runops loop (XS modules may call it). */
	scan_dynsym(elf, &w);
	is_exec = exec_tls(elf, &memsz, &align, &vaddr);
	elf_end(elf);
	if (!w.runops[0][0])
		return -ENOENT;
	if (!version_from_rodata(ef, &out->minor) && !version_from_name(name, &out->minor))
		return -ENOTSUP;
	out->threaded = w.thr_key != 0;
	out->layout = perl_layout__find(out->minor, out->threaded);
	if (!out->layout)
		return -ENOTSUP;
	if (!perl_layout__fits(&out->layout->bpf)) {
		pr_warn("%s: Perl 5.%u: context fields lie past the bytes the walker reads", name,
			out->minor);
		return -ENOTSUP;
	}
	if (out->threaded) {
		if (!w.curinterp)
			return -ENOTSUP;
		out->curinterp = w.curinterp;
		out->thr_key = w.thr_key;
		if (is_exec && w.has_current_context)
			out->tls_context =
			    perl_binary__exec_tls_offset(memsz, align, vaddr, w.current_context);
	} else {
		if (!w.curcop || !w.curstackinfo)
			return -ENOTSUP;
		out->curcop = w.curcop;
		out->curstackinfo = w.curstackinfo;
		out->op = w.op;
	}
	for (int i = 0; i < PERL_MAX_RUNOPS; i++) {
		if (!w.runops[i][0])
			continue;
		out->runops[out->n_runops][0] = w.runops[i][0];
		out->runops[out->n_runops][1] = w.runops[i][1];
		out->n_runops++;
	}
	return 0;
}

/* The thread_db descriptors perl_binary__glibc_tsd() reads: {bits, count, offset}. */
struct tsd_syms {
	uint64_t specific, key_data_data, sizeof_key_data, level2_data;
};

static bool note_tsd_symbol(void *ctx, const GElf_Sym *sym, const char *name)
{
	struct tsd_syms *t = ctx;

	if (GELF_ST_TYPE(sym->st_info) != STT_OBJECT || strncmp(name, "_thread_db_", 11))
		return false;
	name += 11;
	if (!strcmp(name, "pthread_specific"))
		t->specific = sym->st_value;
	else if (!strcmp(name, "pthread_key_data_data"))
		t->key_data_data = sym->st_value;
	else if (!strcmp(name, "sizeof_pthread_key_data"))
		t->sizeof_key_data = sym->st_value;
	else if (!strcmp(name, "pthread_key_data_level2_data"))
		t->level2_data = sym->st_value;
	return false;
}

static void scan_tsd_syms(Elf *elf, struct tsd_syms *t)
{
	elf_symbols__for_each(elf, SHT_DYNSYM, note_tsd_symbol, t);
}

int perl_binary__glibc_tsd(const struct elf_file *ef, struct perl_tsd *out)
{
	struct tsd_syms t = {0};
	uint32_t specific[3], data[3], level2[3], entry;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	scan_tsd_syms(elf, &t);
	elf_end(elf);
	if (!t.specific || !t.key_data_data || !t.sizeof_key_data || !t.level2_data)
		return -ENOENT;
	if (elf_file__read_vaddr(ef, t.specific, specific, sizeof(specific)) ||
	    elf_file__read_vaddr(ef, t.key_data_data, data, sizeof(data)) ||
	    elf_file__read_vaddr(ef, t.level2_data, level2, sizeof(level2)) ||
	    elf_file__read_vaddr(ef, t.sizeof_key_data, &entry, sizeof(entry)))
		return -ENOENT;
	/*
	 * glibc's nptl_db descriptors: specific[] is OP_PERL_TSD_L1 pointers
	 * (its size in bits, one field, its offset), a level-2 block
	 * OP_PERL_TSD_L2 entries, an entry's data a pointer.
	 */
	if (specific[0] != OP_PERL_TSD_L1 * 64 || specific[2] > 0xfff0 ||
	    level2[1] != OP_PERL_TSD_L2 || level2[0] != entry * 8 || data[0] != 64 || entry < 8 ||
	    entry > 64 || data[2] + 8 > entry)
		return -EINVAL;
	out->specific = (uint16_t)specific[2];
	out->entry = (uint8_t)entry;
	out->data = (uint8_t)data[2];
	return 0;
}

void perl_binary__proc_tsd(const struct perl_binary *bin, uint64_t bias, const struct perl_tsd *tsd,
			   struct op_perl_proc *out)
{
	if (!bin->thr_key || !tsd || !tsd->entry)
		return;
	out->thr_key = bin->thr_key + bias;
	out->tsd_specific = tsd->specific;
	out->tsd_entry = tsd->entry;
	out->tsd_data = tsd->data;
}

void perl_binary__proc_info(const struct perl_binary *bin, uint64_t bias, struct op_perl_proc *out)
{
	memset(out, 0, sizeof(*out));
	out->tls_context = bin->tls_context;
	out->curinterp = bin->curinterp ? bin->curinterp + bias : 0;
	out->curcop = bin->curcop ? bin->curcop + bias : 0;
	out->curstackinfo = bin->curstackinfo ? bin->curstackinfo + bias : 0;
	out->op = bin->op ? bin->op + bias : 0;
	out->off = bin->layout->bpf;
	out->je_mustcatch = bin->layout->je_mustcatch;
	out->version = (uint16_t)(5 << 8 | bin->minor);
	out->threaded = bin->threaded;
}
