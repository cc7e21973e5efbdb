// SPDX-License-Identifier: Apache-2.0
/*
 * CPU per native frame named (issue 22): native_symbols__frames() with the
 * scope index (dwarf_index.c) against the reference path that asks libdw's
 * dwarf_getscopes() / dwarf_getscopes_die() (a walk of the unit per call),
 * over the same addresses of one file: every function start and a stride
 * through the functions, each address named once, as the agent names new
 * addresses. Each round opens the file afresh for each path (libdw's
 * caches cold, as for a file the agent just opened), alternating the two;
 * thread CPU time, median of ROUNDS.
 *
 *   make build/bench/naming_bench
 *   build/bench/naming_bench FILE [ADDRESSES]
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "symbol/native_symbols.h"

#include "bench_clock.h"

#define ROUNDS 5

/* Function starts and a stride through the functions of path's .symtab (caller frees). */
static size_t read_addrs(const char *path, size_t want, uint64_t **out)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	uint64_t *a = NULL, total = 0, stride;
	size_t n = 0, cap = 0;
	GElf_Sym *syms = NULL;
	size_t nsyms = 0;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		nsyms = data ? sh.sh_size / sh.sh_entsize : 0;
		syms = calloc(nsyms ? nsyms : 1, sizeof(*syms));
		for (size_t i = 0; syms && i < nsyms; i++)
			if (!gelf_getsym(data, (int)i, &syms[i]))
				syms[i].st_info = 0;
		break;
	}
	for (size_t i = 0; syms && i < nsyms; i++)
		if (GELF_ST_TYPE(syms[i].st_info) == STT_FUNC && syms[i].st_value)
			total += syms[i].st_size;
	stride = want ? total / want + 1 : UINT64_MAX;
	for (size_t i = 0; syms && i < nsyms; i++) {
		if (GELF_ST_TYPE(syms[i].st_info) != STT_FUNC || !syms[i].st_value)
			continue;
		for (uint64_t off = 0; off < syms[i].st_size || off == 0; off += stride) {
			if (n == cap) {
				uint64_t *grown;

				cap = cap ? 2 * cap : 1024;
				grown = realloc(a, cap * sizeof(*a));
				if (!grown)
					goto done;
				a = grown;
			}
			a[n++] = syms[i].st_value + off;
			if (stride == UINT64_MAX)
				break;
		}
	}
done:
	free(syms);
	if (elf)
		elf_end(elf);
	close(fd);
	*out = a;
	return n;
}

/* ms of CPU to name every address once with a fresh native_symbols; frames in *frames. */
static double name_all(const char *path, const uint64_t *addrs, size_t n, bool reference,
		       size_t *frames)
{
	struct elf_file *ef = NULL;
	struct native_symbols *ns = NULL;
	struct sym_frame out[16];
	double t0, t;

	*frames = 0;
	if (elf_file__open(path, -1, &ef) || native_symbols__open(ef, &ns)) {
		elf_file__close(ef);
		return -1;
	}
	t0 = bench__thread_ms();
	for (size_t i = 0; i < n; i++)
		*frames += reference ? native_symbols__frames_reference(ns, addrs[i], out, 16)
				     : native_symbols__frames(ns, addrs[i], out, 16);
	t = bench__thread_ms() - t0;
	native_symbols__free(ns);
	elf_file__close(ef);
	return t;
}

int main(int argc, char **argv)
{
	double ref[ROUNDS], idx[ROUNDS];
	uint64_t *addrs = NULL;
	size_t n, fr = 0, fi = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE [ADDRESSES]\n", argv[0]);
		return 2;
	}
	n = read_addrs(argv[1], argc > 2 ? strtoul(argv[2], NULL, 10) : 5000, &addrs);
	if (!n) {
		fprintf(stderr, "%s: no function symbols\n", argv[1]);
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		ref[r] = name_all(argv[1], addrs, n, true, &fr);
		idx[r] = name_all(argv[1], addrs, n, false, &fi);
		if (ref[r] < 0 || idx[r] < 0 || fr != fi) {
			fprintf(stderr, "%s: cannot name (or frames differ: %zu vs %zu)\n", argv[1],
				fr, fi);
			return 1;
		}
	}
	qsort(ref, ROUNDS, sizeof(*ref), bench__cmp_double);
	qsort(idx, ROUNDS, sizeof(*idx), bench__cmp_double);
	printf("%s: %zu addresses, %zu frames; per address named: libdw walks %.1f us, index "
	       "%.1f us (%.1fx); whole: %.1f vs %.1f ms (median of %d)\n",
	       argv[1], n, fi, ref[ROUNDS / 2] * 1e3 / (double)n, idx[ROUNDS / 2] * 1e3 / (double)n,
	       ref[ROUNDS / 2] / idx[ROUNDS / 2], ref[ROUNDS / 2], idx[ROUNDS / 2], ROUNDS);
	free(addrs);
	return 0;
}
