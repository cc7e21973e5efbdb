// SPDX-License-Identifier: Apache-2.0
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf_pages.h"
#include "elf/elf_symbols.h"

/* A symbol table the size of node's (.symtab and .strtab: 2.5 and 7.2 MiB):
 * 150,000 symbols with 96-byte names, 3.4 MiB of entries and 13.9 MiB of
 * names. */
#define N_SYMS	 150000
#define NAME_LEN 96

/* The name of symbol i (0 < i <= N_SYMS): its index, then filler. */
static void sym_name(size_t i, char *out)
{
	int n = snprintf(out, NAME_LEN + 1, "sym_%06zu_", i);

	memset(out + n, 'a' + (int)(i % 26), NAME_LEN - (size_t)n);
	out[NAME_LEN] = '\0';
}

/* Writes an ELF file with that table (and its string table) to a deleted
 * temporary file; returns its descriptor, which the caller closes. */
static int write_elf(void)
{
	char path[] = "/tmp/omniprof-test-elf-pages-XXXXXX";
	size_t str_len = 1 + 8 + 8 + N_SYMS * (NAME_LEN + 1);
	Elf64_Sym *syms = calloc(N_SYMS + 1, sizeof(*syms));
	char *strs = calloc(1, str_len);
	Elf_Scn *str_scn, *sym_scn;
	Elf64_Shdr *sh;
	Elf64_Ehdr *eh;
	Elf_Data *d;
	size_t at;
	Elf *e;
	int fd;

	assert_non_null(syms);
	assert_non_null(strs);
	/* Section names first: "", ".strtab", ".symtab". */
	memcpy(strs, "\0.strtab\0.symtab", 17);
	at = 17;
	for (size_t i = 1; i <= N_SYMS; i++) {
		syms[i].st_name = (uint32_t)at;
		syms[i].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		syms[i].st_shndx = SHN_ABS;
		syms[i].st_value = 0x1000 + i * 16;
		syms[i].st_size = 16;
		sym_name(i, strs + at);
		at += NAME_LEN + 1;
	}
	assert_true(at <= str_len);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	assert_non_null(e);
	eh = elf64_newehdr(e);
	assert_non_null(eh);
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_machine = EM_X86_64;
	eh->e_type = ET_DYN;
	eh->e_version = EV_CURRENT;

	str_scn = elf_newscn(e);
	d = elf_newdata(str_scn);
	d->d_buf = strs;
	d->d_size = at;
	d->d_type = ELF_T_BYTE;
	d->d_align = 1;
	sh = elf64_getshdr(str_scn);
	sh->sh_type = SHT_STRTAB;
	sh->sh_name = 1;

	sym_scn = elf_newscn(e);
	d = elf_newdata(sym_scn);
	d->d_buf = syms;
	d->d_size = (N_SYMS + 1) * sizeof(*syms);
	d->d_type = ELF_T_SYM;
	d->d_align = 8;
	sh = elf64_getshdr(sym_scn);
	sh->sh_type = SHT_SYMTAB;
	sh->sh_name = 9;
	sh->sh_entsize = sizeof(Elf64_Sym);
	sh->sh_link = (uint32_t)elf_ndxscn(str_scn);
	sh->sh_info = 1;
	eh->e_shstrndx = (uint16_t)elf_ndxscn(str_scn);

	assert_true(elf_update(e, ELF_C_WRITE) > 0);
	elf_end(e);
	free(syms);
	free(strs);
	return fd;
}

/* Bytes of [p, p + len) present in this process's page tables. */
static size_t resident(const void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), total = 0;
	uintptr_t first = (uintptr_t)p / page, last = ((uintptr_t)p + len - 1) / page;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	for (uintptr_t at = first; at <= last; at++) {
		uint64_t entry = 0;

		assert_int_equal(pread(fd, &entry, sizeof(entry), (off_t)(at * 8)), sizeof(entry));
		total += (entry >> 63) ? page : 0;
	}
	close(fd);
	return total;
}

struct scan {
	const char *image;
	size_t image_len;
	size_t seen, most_resident;
	bool names_ok;
};

/* Checks each name (read again after its pages were dropped) and measures the
 * image's resident bytes every 1000 symbols. */
static bool on_symbol(void *ctx, const GElf_Sym *sym, const char *name)
{
	struct scan *s = ctx;
	size_t i = (sym->st_value - 0x1000) / 16, now;
	char want[NAME_LEN + 1];

	sym_name(i, want);
	if (strcmp(name, want))
		s->names_ok = false;
	if (++s->seen % 1000 == 0) {
		now = resident(s->image, s->image_len);
		if (now > s->most_resident)
			s->most_resident = now;
	}
	return false;
}

/*
 * A scan of a 17 MiB symbol table through elf_symbols__for_each holds at most
 * about ELF_PAGES_SYMBOLS_EVERY symbols' pages of the mapped image (16384
 * entries and names: 2 MiB here) plus the page cache's folios a fault maps
 * whole (up to 2 MiB each on a recent kernel, and a file just written has
 * large ones: 7.0 MiB was the most seen on 6.18), and reads every name right;
 * the same table read by a loop that does not drop holds all of it.
 */
static void test_symbol_scan_holds_a_window(void **state)
{
	int fd = write_elf();
	struct scan s = {.names_ok = true};
	Elf *elf;

	(void)state;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	s.image = elf_rawfile(elf, &s.image_len);
	assert_non_null(s.image);
	assert_true(s.image_len > 16u << 20);
	assert_int_equal(resident(s.image, s.image_len) < (1u << 20), true);

	assert_false(elf_symbols__for_each(elf, SHT_SYMTAB, on_symbol, &s));
	assert_int_equal(s.seen, N_SYMS);
	assert_true(s.names_ok);
	assert_true(s.most_resident > 0);
	assert_true(s.most_resident < (10u << 20));
	elf_end(elf);

	/* Control: the same names read without drops stay resident. */
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	s.image = elf_rawfile(elf, &s.image_len);
	{
		Elf_Scn *scn = NULL;
		GElf_Shdr shdr;
		size_t sum = 0;

		while ((scn = elf_nextscn(elf, scn)))
			if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
				break;
		assert_non_null(scn);
		for (size_t i = 1; i <= N_SYMS; i++) {
			GElf_Sym sym;

			assert_non_null(gelf_getsym(elf_getdata(scn, NULL), (int)i, &sym));
			sum += strlen(elf_strptr(elf, shdr.sh_link, sym.st_name));
		}
		assert_int_equal(sum, (size_t)N_SYMS * NAME_LEN);
	}
	assert_true(resident(s.image, s.image_len) > (16u << 20));
	elf_end(elf);
	close(fd);
}

/* A table under ELF_PAGES_SYMBOLS_EVERY symbols is never dropped, nor index 0. */
static void test_small_index_does_nothing(void **state)
{
	int fd = write_elf();
	const char *image;
	size_t len;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf *elf;
	size_t before, touched = 0;

	(void)state;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	image = elf_rawfile(elf, &len);
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
			break;
	assert_non_null(scn);
	/* Read every page of the image in. */
	for (size_t i = 0; i < len; i += 4096)
		touched += ((volatile const unsigned char *)image)[i];
	assert_true(touched > 0);
	before = resident(image, len);
	assert_true(before > (16u << 20));
	elf_pages__drop_symbols_every(elf, scn, 0);
	elf_pages__drop_symbols_every(elf, scn, ELF_PAGES_SYMBOLS_EVERY - 1);
	assert_int_equal(resident(image, len), before);
	elf_pages__drop_symbols_every(elf, scn, ELF_PAGES_SYMBOLS_EVERY);
	assert_true(resident(image, len) < before - (12u << 20));
	elf_end(elf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_symbol_scan_holds_a_window),
	    cmocka_unit_test(test_small_index_does_nothing),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
