// SPDX-License-Identifier: Apache-2.0
#include "interp/ruby/ruby_binary.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "elf/cold_part.h"
#include "elf/elf_file.h"
#include "elf/elf_pages.h"
#include "interp/ruby/ruby_layout.h"
#include "proc/remote_memory.h"

#define TLS_EC	  "ruby_current_ec"
#define GLOBAL_EC "ruby_current_execution_context_ptr" /* 2.7: the GVL holder's ec */

#define MAX_DTPMOD_SLOTS 16 /* module-local tls_index slots remembered (a stripped file's) */

struct wanted {
	uint64_t vm_exec, vm_exec_size;
	uint64_t id2str;	 /* rb_id2str */
	uint64_t version;	 /* ruby_version: "3.1.7" */
	bool tls_ec;		 /* ruby_current_ec is a TLS symbol of the file */
	uint64_t tls_ec_value;	 /* its st_value: offset in the file's TLS block */
	bool tls_ec_local;	 /* ... a local symbol: reached as the module's own TLS */
	uint64_t tls_modslot;	 /* a module-local tls_index (DTPMOD64 against no symbol) */
	uint64_t global_ec;	 /* 2.7's ruby_current_execution_context_ptr */
	uint64_t global_symbols; /* from .symtab when the file has one */
	uint64_t current_vm;	 /* ruby_current_vm_ptr */
	uint64_t tls_index;
	uint64_t tpoff_slot; /* initial exec: the GOT slot of a TPOFF64 against ruby_current_ec */
	bool tls_reloc;	     /* some relocation names ruby_current_ec (not local exec) */
	/* A stripped 3.3+ (no .symtab): exported functions whose code leads to what is local. */
	uint64_t errinfo, thread_current; /* rb_errinfo, rb_thread_current: read ruby_current_ec */
	uint64_t iseq_eval, iseq_eval_main; /* rb_iseq_eval(_main): call rb_vm_exec */
	uint64_t dtpmod[MAX_DTPMOD_SLOTS];  /* DTPMOD64 against no symbol: module-local tls_index */
	size_t n_dtpmod;
	/* DTPOFF64 against no symbol: where, and the offset (addend) it writes there. */
	uint64_t dtpoff_at[MAX_DTPMOD_SLOTS], dtpoff[MAX_DTPMOD_SLOTS];
	size_t n_dtpoff;
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
			len = s->filesz - (vaddr - s->vaddr);
		n = pread(ef->fd, buf, len, (off_t)(s->offset + (vaddr - s->vaddr)));
		return n > 0 ? 0 : -EIO;
	}
	return -ERANGE;
}

static void note_symbol(struct wanted *w, const char *name, const GElf_Sym *sym)
{
	if (!strcmp(name, "rb_vm_exec") && GELF_ST_TYPE(sym->st_info) == STT_FUNC) {
		w->vm_exec = sym->st_value;
		w->vm_exec_size = sym->st_size;
	} else if (!strcmp(name, "rb_id2str") && GELF_ST_TYPE(sym->st_info) == STT_FUNC) {
		w->id2str = sym->st_value;
	} else if (!strcmp(name, "ruby_version") && GELF_ST_TYPE(sym->st_info) == STT_OBJECT) {
		w->version = sym->st_value;
	} else if (!strcmp(name, TLS_EC) && GELF_ST_TYPE(sym->st_info) == STT_TLS) {
		w->tls_ec = true;
		w->tls_ec_value = sym->st_value;
		w->tls_ec_local = GELF_ST_BIND(sym->st_info) == STB_LOCAL;
	} else if (!strcmp(name, GLOBAL_EC) && GELF_ST_TYPE(sym->st_info) == STT_OBJECT) {
		w->global_ec = sym->st_value;
	} else if (!strcmp(name, "ruby_global_symbols") &&
		   GELF_ST_TYPE(sym->st_info) == STT_OBJECT) {
		w->global_symbols = sym->st_value; /* not exported: .symtab only */
	} else if (!strcmp(name, "ruby_current_vm_ptr") &&
		   GELF_ST_TYPE(sym->st_info) == STT_OBJECT) {
		w->current_vm = sym->st_value;
	} else if (GELF_ST_TYPE(sym->st_info) == STT_FUNC) {
		if (!strcmp(name, "rb_errinfo"))
			w->errinfo = sym->st_value;
		else if (!strcmp(name, "rb_thread_current"))
			w->thread_current = sym->st_value;
		else if (!strcmp(name, "rb_iseq_eval"))
			w->iseq_eval = sym->st_value;
		else if (!strcmp(name, "rb_iseq_eval_main"))
			w->iseq_eval_main = sym->st_value;
	}
}

static void scan_symbols(Elf *elf, uint32_t sh_type, struct wanted *w)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != sh_type || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			/* Large tables: the pages read so far given back (issue 22). */
			elf_pages__drop_symbols_every(elf, scn, i);
			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			/* Cheap filter: every wanted name starts with 'r'. */
			if (name && name[0] == 'r')
				note_symbol(w, name, &sym);
		}
	}
}

/*
 * The GOT slot of ruby_current_ec's tls_index: its R_X86_64_DTPMOD64
 * relocation; else, initial exec, the GOT slot of its R_X86_64_TPOFF64
 * (the dynamic linker writes the distance from the thread pointer there).
 * Any relocation naming it is noted: then the file's own figures do not
 * give the distance.
 */
static void scan_relocations(Elf *elf, struct wanted *w)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr, symhdr;
		Elf_Scn *symscn;
		Elf_Data *data, *syms;
		size_t n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA || !shdr.sh_entsize)
			continue;
		symscn = elf_getscn(elf, shdr.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symhdr))
			continue;
		data = elf_getdata(scn, NULL);
		syms = elf_getdata(symscn, NULL);
		if (!data || !syms)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela rela;
			GElf_Sym sym;
			const char *name;

			if (!gelf_getrela(data, (int)i, &rela))
				continue;
			/* The module's own tls_index (local dynamic): local TLS symbols' way. */
			if (!GELF_R_SYM(rela.r_info)) {
				if (GELF_R_TYPE(rela.r_info) == R_X86_64_DTPMOD64 &&
				    !w->tls_modslot)
					w->tls_modslot = rela.r_offset;
				if (GELF_R_TYPE(rela.r_info) == R_X86_64_DTPMOD64 &&
				    w->n_dtpmod < MAX_DTPMOD_SLOTS)
					w->dtpmod[w->n_dtpmod++] = rela.r_offset;
				if (GELF_R_TYPE(rela.r_info) == R_X86_64_DTPOFF64 &&
				    w->n_dtpoff < MAX_DTPMOD_SLOTS) {
					w->dtpoff_at[w->n_dtpoff] = rela.r_offset;
					w->dtpoff[w->n_dtpoff++] = (uint64_t)rela.r_addend;
				}
				/* A local ruby_current_ec by initial exec: its offset as addend. */
				if (GELF_R_TYPE(rela.r_info) == R_X86_64_TPOFF64 &&
				    w->tls_ec_local && (uint64_t)rela.r_addend == w->tls_ec_value &&
				    !w->tpoff_slot) {
					w->tpoff_slot = rela.r_offset;
					w->tls_reloc = true;
				}
				continue;
			}
			if (!gelf_getsym(syms, (int)GELF_R_SYM(rela.r_info), &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_TLS)
				continue;
			name = elf_strptr(elf, symhdr.sh_link, sym.st_name);
			if (!name || strcmp(name, TLS_EC))
				continue;
			w->tls_reloc = true;
			if (GELF_R_TYPE(rela.r_info) == R_X86_64_DTPMOD64) {
				w->tls_index = rela.r_offset;
				return;
			}
			if (GELF_R_TYPE(rela.r_info) == R_X86_64_TPOFF64 && !rela.r_addend &&
			    !w->tpoff_slot)
				w->tpoff_slot = rela.r_offset;
		}
	}
}

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/*
 * The first `cmp %r32, disp32(%rip)` (either operand order) in code (at
 * vaddr base): what the ID lookup compares a serial with,
 * global_symbols.last_id. 0: none.
 */
uint64_t ruby_binary__last_id_cmp(const uint8_t *code, size_t len, uint64_t base)
{
	for (size_t i = 0; i + 6 <= len; i++)
		if ((code[i] == 0x39 || code[i] == 0x3b) && (code[i + 1] & 0xc7) == 0x05)
			return base + i + 6 + (uint64_t)(int64_t)le32(code + i + 2);
	return 0;
}

/*
 * global_symbols (not exported: static in symbol.c, no .symtab in Debian's
 * libruby): rb_id2str (exported) tail-calls the serial lookup, whose first
 * RIP-relative compare reads global_symbols.last_id, its first field (3.3
 * inlines the lookup: the compare is then in rb_id2str itself). The
 * code is read from the file: a pattern that is not there gives 0 (C
 * functions' frames then stay "[C function]", methods unqualified).
 */
static uint64_t find_global_symbols(const struct elf_file *ef, uint64_t id2str)
{
	uint8_t code[32], callee[96];
	uint64_t found;

	if (!id2str || read_vaddr(ef, id2str, code, sizeof(code)))
		return 0;
	found = ruby_binary__last_id_cmp(code, sizeof(code), id2str);
	if (found)
		return found;
	/* No decoder: every e8/e9 byte is tried as a call/jmp rel32 (one inside
	 * another instruction lands somewhere without the compare). */
	for (size_t i = 0; i + 5 <= sizeof(code); i++) {
		uint64_t target;

		if (code[i] != 0xe9 && code[i] != 0xe8)
			continue;
		target = id2str + i + 5 + (uint64_t)(int64_t)le32(code + i + 1);
		if (read_vaddr(ef, target, callee, sizeof(callee)))
			continue;
		found = ruby_binary__last_id_cmp(callee, sizeof(callee), target);
		if (found)
			return found;
	}
	/* 3.3 inlines the lookup: its compare lies further in (byte 67 of
	 * 3.3.10's rb_id2str), looked for last so the tail-call case stays. */
	if (read_vaddr(ef, id2str, callee, sizeof(callee)))
		return 0;
	return ruby_binary__last_id_cmp(callee, sizeof(callee), id2str);
}

static bool is_dtpmod_slot(const struct wanted *w, uint64_t at)
{
	for (size_t i = 0; i < w->n_dtpmod; i++)
		if (w->dtpmod[i] == at)
			return true;
	return false;
}

/*
 * The offset half of a general-dynamic tls_index pair: a DTPOFF64
 * relocation's addend when one writes it at load time, else what the linker
 * left in the file (a hidden variable's offset is known at link time). 0 or
 * -errno.
 */
static int pair_offset(const struct elf_file *ef, const struct wanted *w, uint64_t pair,
		       uint64_t *offset)
{
	for (size_t i = 0; i < w->n_dtpoff; i++)
		if (w->dtpoff_at[i] == pair + 8) {
			*offset = w->dtpoff[i];
			return 0;
		}
	return read_vaddr(ef, pair + 8, offset, sizeof(*offset));
}

/* p_memsz of the file's PT_TLS; 0 without one. */
static uint64_t tls_block_size(Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_TLS)
			return ph.p_memsz;
	}
	return 0;
}

/*
 * The first read of a module-local TLS variable in code (at vaddr base),
 * as GCC compiles a hidden __thread variable of a shared library:
 *   general dynamic: 66 48 8d 3d rel32 (data16 lea PAIR(%rip),%rdi), a
 *     call to __tls_get_addr (66 66 48 e8 rel32, or 66 48 ff 15 rel32
 *     through the GOT), then 48 8b /r with (%rax) (the variable's value);
 *     the variable's offset is the pair's second word (pair_offset);
 *   local dynamic: 48 8d 3d rel32 (lea PAIR(%rip),%rdi), e8 rel32 or ff 15
 *     rel32, then 48 8b /r with disp32(%rax): the offset is disp32.
 * PAIR must be a DTPMOD64 slot the file's relocations name, which random
 * bytes do not give. 0 and *slot, *offset; -ENOENT.
 */
static int decode_tls_read(const struct elf_file *ef, const struct wanted *w, const uint8_t *code,
			   size_t len, uint64_t base, uint64_t *slot, uint64_t *offset)
{
	for (size_t i = 0; i + 24 <= len; i++) {
		const uint8_t *c = code + i;
		size_t at;
		uint64_t pair;

		if (c[0] == 0x66 && c[1] == 0x48 && c[2] == 0x8d && c[3] == 0x3d) {
			pair = base + i + 8 + (uint64_t)(int64_t)le32(c + 4);
			if (!is_dtpmod_slot(w, pair))
				continue;
			if (!(c[8] == 0x66 && c[9] == 0x66 && c[10] == 0x48 && c[11] == 0xe8) &&
			    !(c[8] == 0x66 && c[9] == 0x48 && c[10] == 0xff && c[11] == 0x15))
				continue;
			/* mov (%rax), reg: mod 00, r/m 000. */
			if (c[16] != 0x48 || c[17] != 0x8b || (c[18] & 0xc7) != 0x00)
				continue;
			if (pair_offset(ef, w, pair, offset))
				continue;
			*slot = pair;
			return 0;
		}
		if (c[0] == 0x48 && c[1] == 0x8d && c[2] == 0x3d) {
			pair = base + i + 7 + (uint64_t)(int64_t)le32(c + 3);
			if (!is_dtpmod_slot(w, pair))
				continue;
			if (c[7] == 0xe8)
				at = 12;
			else if (c[7] == 0xff && c[8] == 0x15)
				at = 13;
			else
				continue;
			/* mov disp32(%rax), reg: mod 10, r/m 000. */
			if (c[at] != 0x48 || c[at + 1] != 0x8b || (c[at + 2] & 0xc7) != 0x80)
				continue;
			*offset = (uint64_t)(int64_t)le32(c + at + 3);
			*slot = pair;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * A stripped 3.3+ libruby: ruby_current_ec is local, named in .symtab only.
 * rb_errinfo and rb_thread_current (exported) each begin by reading it
 * (GET_EC()); their first 64 bytes are decoded (decode_tls_read) and must
 * agree, and the offset must lie 8-aligned within the file's TLS block. 0
 * and *slot (a tls_index the dynamic linker fills with libruby's module
 * id), *offset; -ENOENT.
 */
static int find_ec_in_code(const struct elf_file *ef, Elf *elf, const struct wanted *w,
			   uint64_t *slot, uint64_t *offset)
{
	const uint64_t fns[] = {w->errinfo, w->thread_current};
	uint64_t tls_size = tls_block_size(elf);
	int found = 0;

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint8_t code[64];
		uint64_t s, off;

		if (!fns[i] || read_vaddr(ef, fns[i], code, sizeof(code)) ||
		    decode_tls_read(ef, w, code, sizeof(code), fns[i], &s, &off))
			continue;
		if (off % 8 || off >= tls_size || tls_size - off < 8)
			return -ENOENT;
		if (found && off != *offset)
			return -ENOENT; /* two readings disagree: neither is trusted */
		*slot = s;
		*offset = off;
		found = 1;
	}
	return found ? 0 : -ENOENT;
}

#define MAX_CALLS 32

/* Targets of the call/jmp rel32 patterns in code that start a function (an FDE starts there). */
static size_t call_targets(const struct elf_file *ef, const uint8_t *code, size_t len,
			   uint64_t base, uint64_t *out, uint64_t *ends)
{
	size_t n = 0;

	for (size_t i = 0; i + 5 <= len && n < MAX_CALLS; i++) {
		uint64_t target, end;

		if (code[i] != 0xe8 && code[i] != 0xe9)
			continue;
		target = base + i + 5 + (uint64_t)(int64_t)le32(code + i + 1);
		if (elf_file__function_at(ef, target, &end))
			continue;
		out[n] = target;
		ends[n++] = end;
	}
	return n;
}

/*
 * A stripped 3.3+ libruby: rb_vm_exec is local too. rb_iseq_eval and
 * rb_iseq_eval_main (exported) each set up a frame and call it (vm.c:
 * `val = vm_exec(ec)`); the functions both call, whose first byte an FDE
 * starts at, are candidates, and the largest is taken (the others both
 * call are small error paths). Each caller's code is read as far as its
 * own FDE says, at most 512 bytes. 0 and *start, *size; -ENOENT.
 */
static int find_vm_exec_in_code(const struct elf_file *ef, const struct wanted *w, uint64_t *start,
				uint64_t *size)
{
	uint64_t a[MAX_CALLS], a_end[MAX_CALLS], b[MAX_CALLS], b_end[MAX_CALLS];
	uint64_t fns[2] = {w->iseq_eval, w->iseq_eval_main}, *outs[2] = {a, b},
		 *ends[2] = {a_end, b_end};
	size_t n[2] = {0, 0};
	uint64_t best = 0, best_size = 0;

	for (int k = 0; k < 2; k++) {
		uint8_t code[512];
		uint64_t end;
		size_t len;

		if (!fns[k] || elf_file__function_at(ef, fns[k], &end) || end <= fns[k])
			return -ENOENT;
		len = end - fns[k] < sizeof(code) ? end - fns[k] : sizeof(code);
		if (read_vaddr(ef, fns[k], code, len))
			return -ENOENT;
		n[k] = call_targets(ef, code, len, fns[k], outs[k], ends[k]);
	}
	for (size_t i = 0; i < n[0]; i++)
		for (size_t j = 0; j < n[1]; j++)
			if (a[i] == b[j] && a_end[i] - a[i] > best_size) {
				best = a[i];
				best_size = a_end[i] - a[i];
			}
	if (!best)
		return -ENOENT;
	*start = best;
	*size = best_size;
	return 0;
}

/*
 * The VM in the executable (local exec TLS, no relocation): x86-64's TLS
 * variant II puts the executable's block first below the thread pointer,
 * rounded up to its alignment (glibc: the block's first byte keeps
 * p_vaddr's place in the alignment), so a TLS symbol of value v is at
 * thread pointer - roundup(memsz + firstbyte, align) + v. -ENOENT when the
 * file is no executable (no PT_INTERP) or has no PT_TLS.
 */
static int exe_tls_offset(Elf *elf, uint64_t value, int64_t *off)
{
	bool interp = false, tls = false;
	uint64_t memsz = 0, align = 1, first = 0, block;
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_INTERP)
			interp = true;
		if (ph.p_type == PT_TLS) {
			tls = true;
			memsz = ph.p_memsz;
			align = ph.p_align ? ph.p_align : 1;
			first = (0 - ph.p_vaddr) & (align - 1);
		}
	}
	if (!interp || !tls || align & (align - 1) || memsz > (1ull << 30) || value >= memsz)
		return -ENOENT;
	block = (memsz + first + align - 1) & ~(align - 1);
	*off = (int64_t)value - (int64_t)block;
	return 0;
}

int ruby_binary__inspect(const struct elf_file *ef, struct ruby_binary *out)
{
	struct wanted w = {0};
	char version[16] = {0};
	bool stripped = false;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	scan_symbols(elf, SHT_DYNSYM, &w);
	scan_symbols(elf, SHT_SYMTAB, &w);
	/*
	 * A stripped 3.3+ (ruby_version exported, rb_vm_exec and
	 * ruby_current_ec local, so without .symtab unnamed): each one no
	 * symbol names is found from exported functions' code.
	 */
	if (w.version && !w.vm_exec)
		find_vm_exec_in_code(ef, &w, &w.vm_exec, &w.vm_exec_size);
	if (w.version && w.vm_exec && !w.tls_ec && !w.global_ec) {
		scan_relocations(elf, &w);
		if (!find_ec_in_code(ef, elf, &w, &out->tls_index, &out->tls_offset))
			out->tls_mode = OP_RB_TLS_DTV_LOCAL;
		stripped = true;
	}
	if (w.vm_exec && w.tls_ec)
		scan_relocations(elf, &w);
	if (w.vm_exec && w.tls_ec && !w.tls_reloc &&
	    !exe_tls_offset(elf, w.tls_ec_value, &out->tp_offset))
		out->tls_mode = OP_RB_TLS_TP;
	else if (w.vm_exec && w.tls_ec && w.tls_ec_local && !w.tls_index && w.tls_modslot)
		out->tls_mode = OP_RB_TLS_DTV_LOCAL;
	elf_end(elf);
	if (!w.vm_exec || !w.vm_exec_size || !w.version)
		return -ENOENT;
	if (read_vaddr(ef, w.version, version, sizeof(version) - 1) ||
	    sscanf(version, "%u.%u.%u", &out->major, &out->minor, &out->teeny) < 2)
		return -ENOENT;
	out->vm_exec = w.vm_exec;
	out->vm_exec_size = w.vm_exec_size;
	out->global_symbols =
	    w.global_symbols ? w.global_symbols : find_global_symbols(ef, w.id2str);
	out->current_vm_ptr = w.current_vm;
	out->layout = ruby_layout__find(out->major, out->minor);
	if (w.tls_index) {
		out->tls_mode = OP_RB_TLS_DTV;
		out->tls_index = w.tls_index;
	} else if (out->tls_mode == OP_RB_TLS_DTV_LOCAL && stripped) {
		/* tls_index, tls_offset: from the code (find_ec_in_code). */
	} else if (out->tls_mode == OP_RB_TLS_DTV_LOCAL) {
		out->tls_index = w.tls_modslot;
		out->tls_offset = w.tls_ec_value;
	} else if (w.tpoff_slot && w.tls_ec && !out->tls_mode) {
		/* Initial exec: a fixed distance, known once the process is relocated. */
		out->tls_mode = OP_RB_TLS_TP;
		out->tpoff_slot = w.tpoff_slot;
	} else if (!w.tls_ec && w.global_ec) {
		out->tls_mode = OP_RB_TLS_GLOBAL;
		out->tls_index = w.global_ec;
	}
	/* No way found to the current ec (e.g. initial-exec TLS in a library): not walked. */
	if (!out->layout || !out->tls_mode)
		return -ENOTSUP;
	return 0;
}

int ruby_binary__read_tp_offset(const struct ruby_binary *bin, const struct remote_memory *mem,
				uint64_t bias, int64_t *off)
{
	int64_t v;
	int err;

	if (!bin->tpoff_slot)
		return -ENOENT;
	err = remote_memory__read(mem, bin->tpoff_slot + bias, &v, sizeof(v));
	if (err)
		return err;
	/*
	 * x86-64's variant II: every static TLS block lies below the thread
	 * pointer. 0 (the slot not relocated yet) or anything else is refused.
	 */
	if (v >= 0 || v < -(int64_t)(1ll << 30) || (v & 7))
		return -EAGAIN;
	*off = v;
	return 0;
}

void ruby_binary__proc_info(const struct ruby_binary *bin, uint64_t bias, struct op_rb_proc *out)
{
	memset(out, 0, sizeof(*out));
	/* The thread pointer's offset is the same wherever the file is mapped. */
	out->tls_index =
	    bin->tls_mode == OP_RB_TLS_TP ? (uint64_t)bin->tp_offset : bin->tls_index + bias;
	out->tls_mode = (uint8_t)bin->tls_mode;
	out->tls_offset = bin->tls_offset;
	out->version = (uint16_t)(bin->major << 8 | bin->minor);
	out->off = bin->layout->off;
}
