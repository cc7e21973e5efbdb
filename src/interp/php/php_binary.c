// SPDX-License-Identifier: Apache-2.0
#include "elf/elf_symbols.h"
#include "interp/php/php_binary.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/cold_part.h"
#include "elf/elf_file.h"
#include "interp/php/php_layout.h"
#include "util/log.h"

struct wanted_syms {
	uint64_t execute_ex, execute_ex_size;
	uint64_t eg; /* executor_globals */
	uint64_t is_executing;
};

/* The engine's symbols are exported (extensions link against them): .dynsym only. */
static bool note_zend_symbol(void *ctx, const GElf_Sym *sym, const char *name)
{
	struct wanted_syms *w = ctx;

	if (!sym->st_value || (name[0] != 'e' && name[0] != 'z'))
		return false;
	if (!strcmp(name, "execute_ex") && GELF_ST_TYPE(sym->st_info) == STT_FUNC) {
		w->execute_ex = sym->st_value;
		w->execute_ex_size = sym->st_size;
	} else if (!strcmp(name, "executor_globals") && GELF_ST_TYPE(sym->st_info) == STT_OBJECT) {
		w->eg = sym->st_value;
	} else if (!strcmp(name, "zend_is_executing") && GELF_ST_TYPE(sym->st_info) == STT_FUNC) {
		w->is_executing = sym->st_value;
	}
	return false;
}

static void scan_dynsym(Elf *elf, struct wanted_syms *w)
{
	elf_symbols__for_each(elf, SHT_DYNSYM, note_zend_symbol, w);
}

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

static int eg_offset_of(uint64_t addr, uint64_t eg, uint16_t *off)
{
	if (addr < eg || addr - eg > 0xfff0)
		return -ENOENT;
	*off = (uint16_t)(addr - eg);
	return 0;
}

int php_binary__decode_eg_offset(const uint8_t *code, size_t len, uint64_t code_vaddr, uint64_t eg,
				 uint16_t *off)
{
	size_t i = 0;

	/* endbr64 */
	if (len >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa)
		i = 4;
	/* cmpq $0x0, rel32(%rip) */
	if (len >= i + 8 && code[i] == 0x48 && code[i + 1] == 0x83 && code[i + 2] == 0x3d &&
	    code[i + 7] == 0)
		return eg_offset_of(code_vaddr + i + 8 + (int64_t)le32(&code[i + 3]), eg, off);
	/* lea rel32(%rip), %rax; cmpq $0x0, disp(%rax) */
	if (len >= i + 7 && code[i] == 0x48 && code[i + 1] == 0x8d && code[i + 2] == 0x05) {
		uint64_t base = code_vaddr + i + 7 + (int64_t)le32(&code[i + 3]);

		if (base != eg)
			return -ENOENT;
		i += 7;
		if (len >= i + 8 && code[i] == 0x48 && code[i + 1] == 0x83 && code[i + 2] == 0xb8 &&
		    code[i + 7] == 0)
			return eg_offset_of(eg + (int64_t)le32(&code[i + 3]), eg, off);
		if (len >= i + 5 && code[i] == 0x48 && code[i + 1] == 0x83 && code[i + 2] == 0x78 &&
		    code[i + 4] == 0)
			return eg_offset_of(eg + (int8_t)code[i + 3], eg, off);
	}
	return -ENOENT;
}

int php_binary__find_api(const char *s, size_t len, uint32_t *api, bool *zts)
{
	const char *p = s, *end = s + len;

	/* ZEND_EXTENSION_BUILD_ID: "API" + 9 digits (the extension API) + ",NTS" or ",TS". */
	while (p < end && (p = memmem(p, (size_t)(end - p), "API", 3))) {
		const char *d = p + 3;
		uint32_t v = 0;
		size_t n = 0;

		while (d + n < end && n < 10 && d[n] >= '0' && d[n] <= '9')
			v = v * 10 + (uint32_t)(d[n++] - '0');
		if (n == 9 && d + n + 3 <= end && d[n] == ',') {
			if (d + n + 4 <= end && !memcmp(d + n, ",NTS", 4)) {
				*api = v;
				*zts = false;
				return 0;
			}
			if (!memcmp(d + n, ",TS", 3)) {
				*api = v;
				*zts = true;
				return 0;
			}
		}
		p += 3;
	}
	return -ENOENT;
}

/* The extension build id from .rodata. 0 or -ENOENT / -errno. */
static int find_build_id(Elf *elf, uint32_t *api, bool *zts)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name || strcmp(name, ".rodata"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			return -ENOENT;
		return php_binary__find_api(data->d_buf, data->d_size, api, zts);
	}
	return -ENOENT;
}

static bool has_bytes(const uint8_t *code, size_t len, const uint8_t *seq, size_t n)
{
	for (size_t i = 0; i + n <= len; i++)
		if (!memcmp(code + i, seq, n))
			return true;
	return false;
}

bool php_binary__vm_uses_regs(const uint8_t *code, size_t len)
{
	static const uint8_t mov_rdi_r14[] = {0x49, 0x89, 0xfe};
	static const uint8_t jmp_r15[] = {0x41, 0xff, 0x27};

	return has_bytes(code, len, mov_rdi_r14, sizeof(mov_rdi_r14)) &&
	       has_bytes(code, len, jmp_r15, sizeof(jmp_r15));
}

int php_binary__inspect(const struct elf_file *ef, struct php_binary *out)
{
	uint8_t vm_code[128];
	struct wanted_syms w = {0};
	struct {
		uint64_t start, end;
	} cold;
	uint8_t code[32];
	uint32_t api = 0;
	bool zts = false;
	int err;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	scan_dynsym(elf, &w);
	if (!w.execute_ex || !w.execute_ex_size || !w.eg) {
		elf_end(elf);
		return -ENOENT;
	}
	err = find_build_id(elf, &api, &zts);
	elf_end(elf);
	if (err)
		return -ENOTSUP;
	out->layout = php_layout__by_api(api);
	if (!out->layout || zts)
		return -ENOTSUP;
	out->major = out->layout->major;
	out->minor = out->layout->minor;
	if (!php_layout__fits(&out->layout->bpf))
		return -ENOTSUP;
	if (w.is_executing && !elf_file__read_vaddr(ef, w.is_executing, code, sizeof(code)) &&
	    !php_binary__decode_eg_offset(code, sizeof(code), w.is_executing, w.eg,
					  &out->eg_offset)) {
		out->eg_from_code = true;
		if (out->layout->eg_current_execute_data &&
		    out->layout->eg_current_execute_data != out->eg_offset)
			pr_debug(
			    "%s: PHP %u.%u: current_execute_data at %#x (code) not %#x (table)",
			    ef->path, out->major, out->minor, out->eg_offset,
			    out->layout->eg_current_execute_data);
	} else if (out->layout->eg_current_execute_data) {
		out->eg_offset = out->layout->eg_current_execute_data;
	} else {
		return -ENOTSUP;
	}
	out->current_ex = w.eg + out->eg_offset;
	out->vm[0].start = w.execute_ex;
	out->vm[0].end = w.execute_ex + w.execute_ex_size;
	out->n_vm = 1;
	/* execute_ex's set-up: where the HYBRID VM keeps its execute_data and opline. */
	out->vm_regs =
	    !elf_file__read_vaddr(ef, w.execute_ex, vm_code,
				  w.execute_ex_size < sizeof(vm_code) ? w.execute_ex_size
								      : sizeof(vm_code)) &&
	    php_binary__vm_uses_regs(
		vm_code, w.execute_ex_size < sizeof(vm_code) ? w.execute_ex_size : sizeof(vm_code));
	/* GCC moves the VM's rare paths to execute_ex.cold; stripped binaries name it nowhere. */
	if (!elf_file__find_cold_part(ef, w.execute_ex, w.execute_ex + w.execute_ex_size,
				      &cold.start, &cold.end)) {
		out->vm[1].start = cold.start;
		out->vm[1].end = cold.end;
		out->n_vm = 2;
		/* The cold part runs on the body's frame: its first byte has the body's rule. */
		out->vm_body_pc = cold.start;
	}
	return 0;
}

void php_binary__proc_info(const struct php_binary *bin, uint64_t bias, struct op_php_proc *out)
{
	memset(out, 0, sizeof(*out));
	out->current_ex = bin->current_ex + bias;
	out->vm_body_pc = bin->vm_body_pc ? bin->vm_body_pc + bias : 0;
	out->off = bin->layout->bpf;
	out->version = (uint16_t)(bin->major << 8 | bin->minor);
	out->flags = bin->vm_regs ? OP_PHP_PROC_F_VM_REGS : 0;
}
