// SPDX-License-Identifier: Apache-2.0
/*
 * .gopclntab against the Go toolchain's own answers: every main.* function
 * of the go_chain workload (built by the test suite with Debian's Go) is
 * named as its .symtab says, with its source file and a line; then the table
 * is truncated and corrupted, which must never crash or read outside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/gopclntab.h"
#include "testutil.h"

struct go_file {
	int fd;
	Elf *elf;
	uint8_t *table; /* a copy of .gopclntab */
	size_t len;
	uint64_t text;
	struct {
		uint64_t addr, size;
		char name[128];
	} funcs[64];
	size_t n_funcs;
};

static Elf_Scn *section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		assert_non_null(gelf_getshdr(scn, shdr));
		if (!strcmp(elf_strptr(elf, shstrndx, shdr->sh_name), name))
			return scn;
	}
	return NULL;
}

static int setup(void **state)
{
	struct go_file *g = calloc(1, sizeof(*g));
	char path[512];
	GElf_Shdr shdr;
	Elf_Scn *scn;
	Elf_Data *data;

	assert_non_null(g);
	elf_version(EV_CURRENT);
	snprintf(path, sizeof(path), "%s/workloads/go_chain", tu_build_dir());
	g->fd = open(path, O_RDONLY);
	assert_true(g->fd >= 0);
	g->elf = elf_begin(g->fd, ELF_C_READ, NULL);
	assert_non_null(g->elf);
	scn = section(g->elf, ".gopclntab", &shdr);
	assert_non_null(scn);
	data = elf_getdata(scn, NULL);
	g->len = data->d_size;
	g->table = malloc(g->len);
	assert_non_null(g->table);
	memcpy(g->table, data->d_buf, g->len);
	assert_non_null(section(g->elf, ".text", &shdr));
	g->text = shdr.sh_addr;

	/* The main package's functions, from .symtab (go_chain is not stripped). */
	scn = section(g->elf, ".symtab", &shdr);
	assert_non_null(scn);
	data = elf_getdata(scn, NULL);
	for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize && g->n_funcs < 64; i++) {
		GElf_Sym sym;
		const char *name;

		gelf_getsym(data, (int)i, &sym);
		name = elf_strptr(g->elf, shdr.sh_link, sym.st_name);
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !name || strncmp(name, "main.", 5) ||
		    !sym.st_size)
			continue;
		g->funcs[g->n_funcs].addr = sym.st_value;
		g->funcs[g->n_funcs].size = sym.st_size;
		snprintf(g->funcs[g->n_funcs].name, sizeof(g->funcs[0].name), "%s", name);
		g->n_funcs++;
	}
	assert_true(g->n_funcs >= 14); /* main, leaf, chain_01 .. chain_12 */
	*state = g;
	return 0;
}

static int teardown(void **state)
{
	struct go_file *g = *state;

	elf_end(g->elf);
	close(g->fd);
	free(g->table);
	free(g);
	return 0;
}

static void test_names_files_lines(void **state)
{
	struct go_file *g = *state;
	struct gopclntab *t;
	struct gopclntab_frame f;
	bool saw_leaf = false;

	assert_int_equal(gopclntab__open(g->table, g->len, g->text, &t), 0);
	/* Debian 12's Go is 1.19. */
	assert_int_equal(gopclntab__version(t), GOPCLNTAB_GO118);
	assert_true(gopclntab__n_funcs(t) > 100);
	for (size_t i = 0; i < g->n_funcs; i++) {
		uint64_t probes[] = {g->funcs[i].addr, g->funcs[i].addr + g->funcs[i].size / 2,
				     g->funcs[i].addr + g->funcs[i].size - 1};

		for (size_t p = 0; p < 3; p++) {
			assert_int_equal(gopclntab__lookup(t, probes[p], &f), 0);
			assert_string_equal(f.name, g->funcs[i].name);
			assert_int_equal(f.entry, g->funcs[i].addr);
			assert_non_null(f.file);
			assert_true(f.line > 0);
		}
		if (!strcmp(g->funcs[i].name, "main.leaf")) {
			saw_leaf = true;
			assert_non_null(strstr(f.file, "go_chain.go"));
		}
	}
	assert_true(saw_leaf);
	assert_int_equal(gopclntab__lookup(t, 0, &f), -ENOENT);
	assert_int_equal(gopclntab__lookup(t, UINT64_MAX, &f), -ENOENT);
	gopclntab__free(t);
	gopclntab__free(NULL);
}

static void test_not_a_table(void **state)
{
	uint8_t junk[64] = {0x01, 0x02};
	struct gopclntab *t;

	(void)state;
	assert_int_equal(gopclntab__open(junk, sizeof(junk), 0, &t), -ENOEXEC);
	assert_null(t);
	assert_int_equal(gopclntab__open(NULL, 0, 0, &t), -ENOEXEC);
	assert_int_equal(gopclntab__open(junk, 8, 0, &t), -ENOEXEC);
}

/* Looks up a spread of PCs; the answers do not matter, only that nothing breaks. */
static void probe(const struct go_file *g, const uint8_t *bytes, size_t len)
{
	struct gopclntab *t;
	struct gopclntab_frame f;

	if (gopclntab__open(bytes, len, g->text, &t))
		return;
	for (size_t i = 0; i < g->n_funcs; i++) {
		if (gopclntab__lookup(t, g->funcs[i].addr + 3, &f) == 0) {
			/* Names and files always end inside the table. */
			assert_true((const uint8_t *)f.name >= bytes &&
				    (const uint8_t *)f.name + strlen(f.name) < bytes + len);
			if (f.file)
				assert_true((const uint8_t *)f.file + strlen(f.file) < bytes + len);
		}
	}
	gopclntab__free(t);
}

static void test_truncated_and_corrupted(void **state)
{
	struct go_file *g = *state;
	uint8_t *copy;
	uint32_t seed = 12345;

	/* Truncations, each in its own exact-size buffer so ASan sees any overread. */
	for (size_t len = 0; len < g->len; len += len < 256 ? 1 : g->len / 97) {
		copy = malloc(len ? len : 1);
		assert_non_null(copy);
		memcpy(copy, g->table, len);
		probe(g, copy, len);
		free(copy);
	}
	/* Random byte changes, in the header and everywhere else. */
	copy = malloc(g->len);
	assert_non_null(copy);
	for (int round = 0; round < 300; round++) {
		memcpy(copy, g->table, g->len);
		for (int k = 0; k < 8; k++) {
			size_t at;

			seed = seed * 1103515245u + 12345u;
			at = round < 100 ? (seed >> 8) % 96 : (seed >> 8) % g->len;
			seed = seed * 1103515245u + 12345u;
			copy[at] = (uint8_t)(seed >> 16);
		}
		probe(g, copy, g->len);
	}
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names_files_lines),
	    cmocka_unit_test(test_not_a_table),
	    cmocka_unit_test(test_truncated_and_corrupted),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
