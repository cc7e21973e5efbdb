// SPDX-License-Identifier: Apache-2.0
/*
 * The bounded section-header reader (elf/elf_sections.c) that the FDE index
 * and Go's .gopclntab index read untrusted files with: a good image answers
 * the first section of each name; every hostile header (too many sections, a
 * wrong e_shentsize, e_shstrndx out of range, headers or names past the
 * file, a name offset past the names, a read that fails) is an error or no
 * name, and no read is asked for outside the file. The image is a heap copy
 * of exactly its size, so under the ASan build (make BUILD=build/asan SAN=1)
 * a read past it is caught too.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "elf/elf_sections.h"

/* The image: the header, the names, then the section headers. */
static const char names[] = "\0.text\0.gopclntab\0.shstrtab\0.eh_frame";
#define NAMES_OFF  sizeof(Elf64_Ehdr)
#define NAMES_SIZE sizeof(names) /* with its last NUL */
#define SH_OFF	   256
#define SH_N	   6
#define IMAGE_SIZE (SH_OFF + SH_N * sizeof(Elf64_Shdr))
#define NAME_TEXT  1
#define NAME_GO	   7
#define NAME_STR   18
#define NAME_EH	   28

struct image {
	_Alignas(8) uint8_t b[IMAGE_SIZE];
};

static Elf64_Ehdr *ehdr_of(struct image *im)
{
	return (Elf64_Ehdr *)im->b;
}

static Elf64_Shdr *shdr_of(struct image *im, size_t i)
{
	return (Elf64_Shdr *)(im->b + SH_OFF) + i;
}

/* Sections: null, .text (0x1000), .gopclntab, .text again (0x2000), .shstrtab, .eh_frame. */
static void image_init(struct image *im)
{
	static const uint32_t name[SH_N] = {0, NAME_TEXT, NAME_GO, NAME_TEXT, NAME_STR, NAME_EH};
	Elf64_Ehdr *eh = ehdr_of(im);

	memset(im, 0, sizeof(*im));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = SH_OFF;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = SH_N;
	eh->e_shstrndx = 4;
	memcpy(im->b + NAMES_OFF, names, NAMES_SIZE);
	for (size_t i = 0; i < SH_N; i++) {
		Elf64_Shdr *sh = shdr_of(im, i);

		sh->sh_name = name[i];
		sh->sh_type = i ? SHT_PROGBITS : SHT_NULL;
		sh->sh_addr = i == 1 ? 0x1000 : i == 3 ? 0x2000 : 0;
	}
	shdr_of(im, 4)->sh_type = SHT_STRTAB;
	shdr_of(im, 4)->sh_offset = NAMES_OFF;
	shdr_of(im, 4)->sh_size = NAMES_SIZE;
}

/* A file of size bytes on the heap (exactly: ASan sees a read past it). */
struct file {
	uint8_t *p;
	size_t size;
	unsigned reads, fail_at; /* fail_at: the read (1-based) that fails, 0 none */
	bool outside;		 /* a read was asked for past the file */
};

static int file_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct file *f = ctx;

	f->reads++;
	if (f->fail_at && f->reads == f->fail_at)
		return -EIO;
	if (off > f->size || len > f->size - off) {
		f->outside = true;
		return -ERANGE;
	}
	memcpy(buf, f->p + off, len);
	return 0;
}

static void file_open(struct file *f, const struct image *im, size_t size)
{
	memset(f, 0, sizeof(*f));
	f->p = malloc(size);
	assert_non_null(f->p);
	memcpy(f->p, im->b, size < IMAGE_SIZE ? size : IMAGE_SIZE);
	f->size = size;
}

/* Both steps over im cut to size bytes: 0 with *out, or the first error (*out empty). */
static int read_all(const struct image *im, size_t size, unsigned fail_at, struct elf_sections *out)
{
	Elf64_Ehdr eh;
	struct file f;
	int err;

	file_open(&f, im, size);
	f.fail_at = fail_at;
	memset(out, 0xa5, sizeof(*out));
	err = elf_sections__ehdr(file_read, &f, f.size, &eh);
	if (!err)
		err = elf_sections__read(file_read, &f, f.size, &eh, out);
	else
		memset(out, 0, sizeof(*out));
	assert_false(f.outside);
	free(f.p);
	if (err) {
		assert_null(out->sh);
		assert_null(out->names);
		assert_int_equal(out->n, 0);
	}
	return err;
}

static void test_first_of_each_name(void **state)
{
	struct elf_sections s;
	struct image im;

	(void)state;
	image_init(&im);
	assert_int_equal(read_all(&im, IMAGE_SIZE, 0, &s), 0);
	assert_int_equal(s.n, SH_N);
	assert_int_equal(s.names_size, NAMES_SIZE);
	/* Two .text: the first. */
	assert_ptr_equal(elf_sections__first(&s, ".text"), &s.sh[1]);
	assert_int_equal(elf_sections__first(&s, ".text")->sh_addr, 0x1000);
	assert_ptr_equal(elf_sections__first(&s, ".gopclntab"), &s.sh[2]);
	assert_ptr_equal(elf_sections__first(&s, ".eh_frame"), &s.sh[5]);
	assert_null(elf_sections__first(&s, ".eh_frame_hdr"));
	/* The null section's name is "", not a match for any name asked. */
	assert_string_equal(elf_sections__name(&s, 0), "");
	assert_null(elf_sections__name(&s, SH_N));
	elf_sections__free(&s);
	assert_null(s.sh);
	elf_sections__free(&s); /* twice, and NULL */
	elf_sections__free(NULL);
}

/* A name offset past the names is no name; a name running to the table's end ends there. */
static void test_name_offsets(void **state)
{
	struct elf_sections s;
	struct image im;

	(void)state;
	image_init(&im);
	shdr_of(&im, 2)->sh_name = NAMES_SIZE;	   /* just past */
	shdr_of(&im, 1)->sh_name = UINT32_MAX;	   /* far past */
	shdr_of(&im, 4)->sh_size = NAMES_SIZE - 1; /* ".eh_frame" without its NUL */
	assert_int_equal(read_all(&im, IMAGE_SIZE, 0, &s), 0);
	assert_null(elf_sections__name(&s, 1));
	assert_null(elf_sections__name(&s, 2));
	assert_null(elf_sections__first(&s, ".gopclntab"));
	assert_ptr_equal(elf_sections__first(&s, ".text"), &s.sh[3]);
	assert_string_equal(elf_sections__name(&s, 5), ".eh_frame");
	elf_sections__free(&s);
}

static void test_hostile_headers(void **state)
{
	static const struct {
		const char *what;
		int err;
	} want[] = {
	    {"shorter than a header", -ENOEXEC},
	    {"not ELF", -ENOEXEC},
	    {"ELF32", -EOPNOTSUPP},
	    {"big-endian", -EOPNOTSUPP},
	    {"no sections", -EOPNOTSUPP},
	    {"too many sections", -EOPNOTSUPP},
	    {"e_shentsize 40", -EOPNOTSUPP},
	    {"e_shentsize 128", -EOPNOTSUPP},
	    {"no names' section", -EOPNOTSUPP},
	    {"e_shstrndx == e_shnum", -EOPNOTSUPP},
	    {"e_shstrndx 0xffff", -EOPNOTSUPP},
	    {"headers past the file", -ENOEXEC},
	    {"headers run past the file", -ENOEXEC},
	    {"headers at UINT64_MAX", -ENOEXEC},
	    {"file cut in the headers", -ENOEXEC},
	    {"names past the file", -ENOEXEC},
	    {"names run past the file", -ENOEXEC},
	    {"names size wraps", -ENOEXEC},
	    {"names empty", -ENOEXEC},
	    {"names SHT_NOBITS", -ENOEXEC},
	    {"names over 64 KiB", -ENOEXEC},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct elf_sections s;
		size_t size = IMAGE_SIZE;
		struct image im;
		Elf64_Ehdr *eh;
		Elf64_Shdr *st;

		image_init(&im);
		eh = ehdr_of(&im);
		st = shdr_of(&im, 4);
		switch (i) {
		case 0:
			size = sizeof(Elf64_Ehdr) - 1;
			break;
		case 1:
			eh->e_ident[EI_MAG1] = 'X';
			break;
		case 2:
			eh->e_ident[EI_CLASS] = ELFCLASS32;
			break;
		case 3:
			eh->e_ident[EI_DATA] = ELFDATA2MSB;
			break;
		case 4:
			eh->e_shnum = 0;
			break;
		case 5:
			eh->e_shnum = ELF_SECTIONS_MAX + 1;
			break;
		case 6:
			eh->e_shentsize = 40;
			break;
		case 7:
			eh->e_shentsize = 128;
			break;
		case 8:
			eh->e_shstrndx = SHN_UNDEF;
			break;
		case 9:
			eh->e_shstrndx = SH_N;
			break;
		case 10:
			eh->e_shstrndx = 0xffff;
			break; /* SHN_XINDEX */
		case 11:
			eh->e_shoff = IMAGE_SIZE + 1;
			break;
		case 12:
			eh->e_shoff = SH_OFF + 1;
			break;
		case 13:
			eh->e_shoff = UINT64_MAX;
			break;
		case 14:
			size = IMAGE_SIZE - 1;
			break;
		case 15:
			st->sh_offset = IMAGE_SIZE + 1;
			break;
		case 16:
			st->sh_offset = IMAGE_SIZE - 4;
			break;
		case 17:
			st->sh_size = UINT64_MAX - 8;
			break;
		case 18:
			st->sh_size = 0;
			break;
		case 19:
			st->sh_type = SHT_NOBITS;
			break;
		case 20:
			st->sh_size = ELF_SECTIONS_MAX_NAMES + 1;
			break;
		}
		print_message("%s\n", want[i].what);
		assert_int_equal(read_all(&im, size, 0, &s), want[i].err);
	}
}

/* The largest image the bounds allow is read (4096 sections, 64 KiB of names). */
static void test_at_the_bounds(void **state)
{
	size_t n = ELF_SECTIONS_MAX, names_size = ELF_SECTIONS_MAX_NAMES;
	size_t sh_off = sizeof(Elf64_Ehdr) + names_size;
	size_t size = sh_off + n * sizeof(Elf64_Shdr);
	struct elf_sections s;
	Elf64_Shdr *sh;
	struct image im;
	Elf64_Ehdr eh;
	struct file f;

	(void)state;
	image_init(&im);
	memset(&f, 0, sizeof(f));
	f.size = size;
	f.p = calloc(1, size);
	assert_non_null(f.p);
	memcpy(&eh, ehdr_of(&im), sizeof(eh));
	eh.e_shnum = n;
	eh.e_shoff = sh_off;
	eh.e_shstrndx = n - 1;
	memcpy(f.p, &eh, sizeof(eh));
	/* Names: no NUL at all; the last section is named from the table's last byte. */
	memset(f.p + sizeof(eh), 'x', names_size);
	sh = (Elf64_Shdr *)(f.p + sh_off);
	sh[n - 1].sh_type = SHT_STRTAB;
	sh[n - 1].sh_offset = sizeof(eh);
	sh[n - 1].sh_size = names_size;
	sh[n - 1].sh_name = names_size - 1;
	sh[n - 2].sh_name = names_size; /* past */
	assert_int_equal(elf_sections__ehdr(file_read, &f, f.size, &eh), 0);
	assert_int_equal(elf_sections__read(file_read, &f, f.size, &eh, &s), 0);
	assert_false(f.outside);
	assert_string_equal(elf_sections__name(&s, n - 1), "x");
	assert_null(elf_sections__name(&s, n - 2));
	assert_ptr_equal(elf_sections__first(&s, "x"), &s.sh[n - 1]);
	elf_sections__free(&s);
	free(f.p);
}

/* Each read failing in turn: its error, nothing held (ASan's leak check: nothing kept). */
static void test_read_fails(void **state)
{
	struct elf_sections s;
	struct image im;

	(void)state;
	image_init(&im);
	for (unsigned k = 1; k <= 3; k++)
		assert_int_equal(read_all(&im, IMAGE_SIZE, k, &s), -EIO);
	assert_int_equal(read_all(&im, IMAGE_SIZE, 4, &s), 0); /* three reads in all */
	elf_sections__free(&s);
}

/* elf_sections__read() checks the header it is given, not only elf_sections__ehdr(). */
static void test_read_checks_its_header(void **state)
{
	struct elf_sections s;
	struct image im;
	struct file f;
	Elf64_Ehdr eh;

	(void)state;
	image_init(&im);
	file_open(&f, &im, IMAGE_SIZE);
	assert_int_equal(elf_sections__ehdr(file_read, &f, f.size, &eh), 0);
	eh.e_shstrndx = SH_N + 10;
	assert_int_equal(elf_sections__read(file_read, &f, f.size, &eh, &s), -EOPNOTSUPP);
	eh.e_shstrndx = 4;
	eh.e_shnum = ELF_SECTIONS_MAX + 1;
	assert_int_equal(elf_sections__read(file_read, &f, f.size, &eh, &s), -EOPNOTSUPP);
	assert_null(s.sh);
	assert_false(f.outside);
	free(f.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_first_of_each_name),
	    cmocka_unit_test(test_name_offsets),
	    cmocka_unit_test(test_hostile_headers),
	    cmocka_unit_test(test_at_the_bounds),
	    cmocka_unit_test(test_read_fails),
	    cmocka_unit_test(test_read_checks_its_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
