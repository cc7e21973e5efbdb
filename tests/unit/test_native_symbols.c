// SPDX-License-Identifier: Apache-2.0
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "proc/file_cache.h"
#include "proc/proc_maps.h"
#include "symbol/native_symbols.h"
#include "symbol/symbolizer.h"
#include "util/memory.h"
#include "testutil.h"

/*
 * The functions get different bodies so the compiler cannot fold them into
 * one, and loops so they are long enough to have a middle.
 */
static const char lib_src[] =
    "#define NOINL __attribute__((noinline))\n"
    "volatile int omni_sink;\n"
    "int omni_data_table[256] = {1};\n"
    "NOINL int omni_alpha(int x) {\n"
    "  int s = 0; for (int i = 0; i < x; i++) s += i * omni_sink; return s; }\n"
    "NOINL int omni_beta(int x) {\n"
    "  int s = 1; for (int i = 0; i < x; i++) s ^= (s << 3) + omni_sink * i; return s; }\n"
    "NOINL static int omni_local_gamma(int x) {\n"
    "  int s = 2; for (int i = x; i > 0; i--) s = s * 5 - omni_data_table[i & 255]; return s; }\n"
    "void *omni_gamma_addr(void) { return (void *)omni_local_gamma; }\n"
    "NOINL int omni_delta(int x) { return omni_local_gamma(x) + omni_alpha(x) - omni_beta(x); }\n"
    "NOINL int __omni_internal(int x) { return x * omni_sink + 11; }\n"
    "int omni_public(int) __attribute__((alias(\"__omni_internal\")));\n"
    "int omni_weak_alpha(int) __attribute__((weak, alias(\"omni_alpha\")));\n";

static const char exe_src[] =
    "#define NOINL __attribute__((noinline))\n"
    "volatile int omni_sink;\n"
    "NOINL int omni_exe_one(int x) {\n"
    "  int s = 0; for (int i = 0; i < x; i++) s += omni_sink; return s; }\n"
    "NOINL static int omni_exe_two(int x) {\n"
    "  int s = 3; for (int i = 0; i < x; i++) s *= omni_sink; return s; }\n"
    "int main(int argc, char **argv) {\n"
    "  (void)argv; return omni_exe_one(argc) + omni_exe_two(argc); }\n";

static const char *const exported[] = {"omni_alpha", "omni_beta", "omni_delta", "omni_gamma_addr"};

struct fixture {
	char *dir;
	char lib[256];	    /* full .symtab */
	char stripped[256]; /* strip --strip-all: .dynsym only */
	char based[256];    /* ET_DYN whose first segment is not at 0 */
	char pie[256];
	char nopie[256]; /* ET_EXEC */
};

static struct fixture fx;

static int setup(void **state)
{
	char path[256], *out = NULL;
	FILE *f;
	int rc;

	(void)state;
	fx.dir = tu_mkdtemp();
	if (!fx.dir)
		return -1;
	snprintf(path, sizeof(path), "%s/lib.c", fx.dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(lib_src, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/exe.c", fx.dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(exe_src, f);
	fclose(f);
	snprintf(fx.lib, sizeof(fx.lib), "%s/libomni.so", fx.dir);
	snprintf(fx.stripped, sizeof(fx.stripped), "%s/libomni-stripped.so", fx.dir);
	snprintf(fx.based, sizeof(fx.based), "%s/libomni-based.so", fx.dir);
	snprintf(fx.pie, sizeof(fx.pie), "%s/pie", fx.dir);
	snprintf(fx.nopie, sizeof(fx.nopie), "%s/nopie", fx.dir);

	rc = tu_run(
	    &out,
	    "cd '%s' && "
	    "cc -O1 -fno-ipa-icf -fPIC -shared -Wl,--build-id -o '%s' lib.c && "
	    "cp '%s' '%s' && strip --strip-all '%s' && "
	    "cc -O1 -fno-ipa-icf -fPIC -shared -Wl,-Ttext-segment=0x40000000 -o '%s' lib.c && "
	    "cc -O1 -fno-ipa-icf -fPIE -pie -o '%s' exe.c && "
	    "cc -O1 -fno-ipa-icf -fno-pie -no-pie -o '%s' exe.c",
	    fx.dir, fx.lib, fx.lib, fx.stripped, fx.stripped, fx.based, fx.pie, fx.nopie);
	if (rc != 0)
		fprintf(stderr, "building test inputs failed:\n%s\n", out ? out : "");
	free(out);
	return rc == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	tu_rmtree(fx.dir);
	free(fx.dir);
	return 0;
}

struct opened {
	struct elf_file *ef;
	struct native_symbols *ns;
};

static struct opened open_syms(const char *path)
{
	struct opened o = {0};

	assert_int_equal(elf_file__open(path, -1, &o.ef), 0);
	assert_int_equal(native_symbols__open(o.ef, &o.ns), 0);
	assert_non_null(o.ns);
	return o;
}

static void close_syms(struct opened *o)
{
	native_symbols__free(o->ns);
	elf_file__close(o->ef);
}

/* Asserts that [vaddr, vaddr + size) resolves to name at the start, middle and end. */
static void check_function(struct native_symbols *ns, const char *name, uint64_t vaddr,
			   uint64_t size)
{
	uint64_t probes[] = {0, size / 2, size - 1};
	uint64_t off = UINT64_MAX;
	const char *got;

	assert_true(size > 4);
	for (size_t i = 0; i < 3; i++) {
		got = native_symbols__lookup(ns, vaddr + probes[i], &off);
		assert_non_null(got);
		assert_string_equal(got, name);
		assert_true(off == probes[i]);
	}
	/* The first byte after the function belongs to something else, if anything. */
	got = native_symbols__lookup(ns, vaddr + size, &off);
	if (got)
		assert_string_not_equal(got, name);
}

struct nm_sym {
	uint64_t addr;
	uint64_t size;
	char type;
};

/* The symbol as `nm -S` (binutils, not elfutils) prints it. */
static bool nm_lookup(const char *path, const char *name, struct nm_sym *out)
{
	char *text = NULL, *line, *save = NULL;
	bool found = false;

	assert_int_equal(tu_run(&text, "nm -S --defined-only '%s'", path), 0);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long addr, size;
		char type, sym[256];

		if (sscanf(line, "%llx %llx %c %255s", &addr, &size, &type, sym) != 4)
			continue;
		if (strcmp(sym, name) == 0) {
			*out = (struct nm_sym){addr, size, type};
			found = true;
			break;
		}
	}
	free(text);
	return found;
}

struct phdr_match {
	const char *path;
	uint64_t bias;
	bool found;
};

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct phdr_match *m = data;

	(void)size;
	if (info->dlpi_name && strcmp(info->dlpi_name, m->path) == 0) {
		m->bias = info->dlpi_addr;
		m->found = true;
		return 1;
	}
	return 0;
}

/* The load bias of a dlopen'ed library, found two independent ways. */
static uint64_t load_bias(void *handle, const char *path)
{
	struct phdr_match m = {.path = path};
	struct link_map *lm = NULL;

	assert_int_equal(dlinfo(handle, RTLD_DI_LINKMAP, &lm), 0);
	dl_iterate_phdr(phdr_cb, &m);
	assert_true(m.found);
	assert_true(m.bias == lm->l_addr);
	return m.bias;
}

/* Runtime addresses of a loaded copy, minus the load bias, are ELF vaddrs. */
static void check_exported_at_runtime(const char *path, struct native_symbols *ns)
{
	void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	uint64_t bias;

	assert_non_null(handle);
	bias = load_bias(handle, path);
	for (size_t i = 0; i < sizeof(exported) / sizeof(exported[0]); i++) {
		const ElfW(Sym) *sym = NULL;
		void *addr = dlsym(handle, exported[i]);
		Dl_info info;

		assert_non_null(addr);
		assert_int_not_equal(dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT), 0);
		assert_non_null(sym);
		assert_true(ELF64_ST_TYPE(sym->st_info) == STT_FUNC);
		check_function(ns, exported[i], (uint64_t)(uintptr_t)addr - bias, sym->st_size);
	}
	dlclose(handle);
}

/* Bytes of the symbol, string and .debug_ sections of path (what the cache
 * charged, whole, before it counted pages). */
static size_t symbol_section_bytes(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx, total = 0;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		assert_non_null(gelf_getshdr(scn, &sh));
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM ||
		    sh.sh_type == SHT_STRTAB || (name && !strncmp(name, ".debug_", 7)))
			total += sh.sh_size;
	}
	elf_end(elf);
	close(fd);
	return total;
}

/* A library built with -g, 2,000 functions (built once, kept in fx.dir) into lib. */
static void big_lib(char *lib, size_t len)
{
	char *out = NULL;

	snprintf(lib, len, "%s/libbig.so", fx.dir);
	if (access(lib, R_OK) == 0)
		return;
	assert_int_equal(tu_run(&out,
				"cd '%s' && for u in $(seq 1 4); do for f in $(seq 1 500); do "
				"echo \"int big_${u}_$f(int x) { int a = x * $f; "
				"struct { int p, q; } s = { a, x }; return s.p - s.q; }\"; "
				"done > big$u.c; done && cc -g -O0 -fPIC -shared -o '%s' big*.c",
				fx.dir, lib),
			 0);
	free(out);
}

/*
 * The file pages symbols hold are the pages read, not the sections' sizes:
 * for a library built with -g, opening its symbols reads the symbol table
 * but little DWARF; naming an address (inline frames and line) reads more,
 * never more than the sections hold, and asking again without a lookup
 * finds nothing new.
 */
static void test_file_pages_charged_as_read(void **state)
{
	char lib[300];
	struct opened o;
	struct sym_frame frames[8];
	struct nm_sym nm;
	struct native_symbols_info info;
	size_t sections, opened, looked_up;

	(void)state;
	big_lib(lib, sizeof(lib));
	sections = symbol_section_bytes(lib);
	o = open_syms(lib);
	/* Its DWARF is read in place: cheap to load again (symbolizer's pass unloads). */
	native_symbols__info(o.ns, &info);
	assert_true(info.has_dwarf);
	assert_false(info.dwarf_in_heap);
	opened = native_symbols__file_growth(o.ns);
	assert_true(opened > 0);
	assert_true(opened < sections / 2);
	assert_true(nm_lookup(lib, "big_3_250", &nm));
	assert_true(native_symbols__frames(o.ns, nm.addr, frames, 8) >= 1);
	assert_string_equal(frames[0].name, "big_3_250");
	assert_true(frames[0].line > 0);
	looked_up = native_symbols__file_growth(o.ns);
	assert_true(looked_up > 0);
	assert_true(opened + looked_up <= sections);
	assert_int_equal(native_symbols__file_growth(o.ns), 0);
	close_syms(&o);
}

/*
 * A library of 64 units, 80 KiB of .debug_info each (an enum of 12,000
 * members; one object compiled once, its function renamed per copy), built
 * once into fx.dir; its path into lib, its .debug_info size into *info_bytes.
 */
static void units_lib(char *lib, size_t len, size_t *info_bytes)
{
	char *out = NULL;
	unsigned long long size;

	snprintf(lib, len, "%s/libmanyunits.so", fx.dir);
	if (access(lib, R_OK) != 0) {
		assert_int_equal(
		    tu_run(&out,
			   "cd '%s' && { echo 'enum e {'; seq 1 12000 | sed 's/.*/m_&,/'; "
			   "echo '}; int f(enum e x) { return (int)x + 1; }'; } > units.c && "
			   "cc -g -O0 -fno-eliminate-unused-debug-types -fPIC -c -o units.o "
			   "units.c && for i in $(seq 1 64); do "
			   "objcopy --redefine-sym f=f_$i units.o units$i.o || exit 1; done && "
			   "cc -shared -o '%s' units[0-9]*.o",
			   fx.dir, lib),
		    0);
		free(out);
	}
	assert_int_equal(
	    tu_run(&out, "readelf -SW '%s' | awk '$2 == \".debug_info\" { print $6 }'", lib), 0);
	assert_int_equal(sscanf(out, "%llx", &size), 1);
	free(out);
	*info_bytes = (size_t)size;
}

/* Resident KiB of this process's mappings of path (/proc/self/smaps). */
static size_t mapped_kib(const char *path)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	size_t kib = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, kb;

		/* A mapping's first line: "start-end perms offset dev inode path". */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			in = strstr(line, path) != NULL;
		else if (in && sscanf(line, "Rss: %lu kB", &kb) == 1)
			kib += kb;
	}
	fclose(f);
	return kib;
}

/*
 * libdwfl's first lookup in a module reads every unit's header and unit DIE
 * (its own walk), each read mapping in up to 64 KiB of the file: 4 of this
 * library's 5 MiB of .debug_info were held after one lookup. The walk done
 * first gives the pages back as it goes, so the first lookup leaves little
 * more resident than the open did; the name and line are DWARF's, in the
 * first unit and in the last.
 */
static void test_first_lookup_walk_gives_back_units(void **state)
{
	char lib[300];
	struct opened o;
	struct sym_frame frames[8];
	struct nm_sym last, first;
	size_t info_bytes, opened, looked_up;

	(void)state;
	units_lib(lib, sizeof(lib), &info_bytes);
	assert_true(info_bytes >= (4u << 20));
	o = open_syms(lib);
	opened = mapped_kib(lib);
	assert_true(nm_lookup(lib, "f_64", &last));
	assert_true(native_symbols__frames(o.ns, last.addr, frames, 8) >= 1);
	assert_string_equal(frames[0].name, "f_64");
	assert_true(frames[0].line > 12000);
	looked_up = mapped_kib(lib);
	assert_true(looked_up < opened + 1024);
	assert_true(nm_lookup(lib, "f_1", &first));
	assert_true(native_symbols__frames(o.ns, first.addr, frames, 8) >= 1);
	assert_string_equal(frames[0].name, "f_1");
	assert_true(frames[0].line > 12000);
	close_syms(&o);
}

/*
 * A private mapping of a file with pages read, absent and written (a written
 * page is an anonymous copy): the drop gives back the file's pages (read,
 * or mapped beside them), in runs around the written ones, and the written
 * pages keep what was written; the dropped pages read again give the file's
 * bytes.
 */
static void test_drop_range_keeps_written_pages(void **state)
{
	char path[] = "/tmp/omniprof-test-drop-XXXXXX";
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 12;
	volatile unsigned char *m;
	unsigned char *buf;
	unsigned int sum = 0;
	size_t dropped;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	buf = malloc(n * page);
	assert_non_null(buf);
	for (size_t i = 0; i < n * page; i++)
		buf[i] = (unsigned char)(i / page + 1);
	assert_int_equal(write(fd, buf, n * page), (ssize_t)(n * page));
	m = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	assert_true(m != MAP_FAILED);
	/* Read: 0, 1, 3, 4, 6, 7, 10 (2, 9, 11 never touched); written: 5 and 8. */
	for (size_t i = 0; i < n; i++)
		if (i != 2 && i != 9 && i != 11)
			sum += m[i * page];
	m[5 * page] = 0xaa;
	m[8 * page] = 0xbb;
	assert_true(sum > 0);

	/* The fault-around of a read may map the untouched pages too. */
	dropped = native_symbols__drop_file_range((const void *)m, n * page);
	assert_true(dropped >= 7 * page && dropped <= 10 * page);
	assert_int_equal(m[5 * page], 0xaa);
	assert_int_equal(m[8 * page], 0xbb);
	assert_int_equal(native_symbols__drop_file_range((const void *)m, n * page), 0);
	for (size_t i = 0; i < n; i++)
		if (i != 5 && i != 8)
			assert_int_equal(m[i * page + 7], i + 1);
	assert_int_equal(native_symbols__drop_file_range((const void *)m, n * page), 10 * page);
	assert_int_equal(m[5 * page], 0xaa);
	assert_int_equal(m[8 * page], 0xbb);
	munmap((void *)m, n * page);
	free(buf);
	close(fd);
}

/*
 * Dropping the pages gives back what was charged: re-measured, the symbols
 * hold no file page; a second drop without a lookup gives nothing; a lookup
 * after the drop names the same function at the same line (its pages mapped
 * in again, and charged again).
 */
static void test_file_pages_dropped(void **state)
{
	char lib[300];
	struct opened o;
	struct sym_frame frames[8];
	struct nm_sym nm;
	size_t charged;
	int64_t line;

	(void)state;
	big_lib(lib, sizeof(lib));
	o = open_syms(lib);
	assert_true(nm_lookup(lib, "big_2_400", &nm));
	assert_true(native_symbols__frames(o.ns, nm.addr, frames, 8) >= 1);
	assert_string_equal(frames[0].name, "big_2_400");
	line = frames[0].line;
	assert_true(line > 0);
	charged = native_symbols__file_growth(o.ns);
	assert_true(charged > 0);

	assert_int_equal(native_symbols__drop_pages(o.ns), charged);
	assert_int_equal(native_symbols__file_growth(o.ns), 0);
	assert_int_equal(native_symbols__drop_pages(o.ns), 0);

	assert_true(native_symbols__frames(o.ns, nm.addr, frames, 8) >= 1);
	assert_string_equal(frames[0].name, "big_2_400");
	assert_int_equal(frames[0].line, line);
	assert_true(native_symbols__file_growth(o.ns) > 0);
	assert_true(native_symbols__drop_pages(o.ns) > 0);
	assert_null(native_symbols__drop_pages(NULL) ? (void *)1 : NULL);
	close_syms(&o);
}

/*
 * The heap libdw keeps for lookups is counted from what it parsed (units'
 * line tables, file names, abbreviations), not measured around each lookup
 * (mallinfo2: a walk of every free chunk, and every thread's allocations
 * seen as the lookup's). The count must stay near what glibc measures on
 * this one thread: 12 units of inlined code, -O2 -g, compressed DWARF.
 */
static void test_lookup_heap_counted(void **state)
{
	char lib[300], *out = NULL, *line, *save = NULL;
	struct opened o;
	struct sym_frame frames[8];
	size_t measured = 0, counted = 0, before, n = 0, file;
	struct native_symbols_info info;
	struct stat st;

	(void)state;
	snprintf(lib, sizeof(lib), "%s/libunits.so", fx.dir);
	assert_int_equal(
	    tu_run(&out,
		   "cd '%s' && for u in $(seq 1 6); do for f in $(seq 1 60); do "
		   "echo \"static inline int in_${u}_$f(int x) { return x * $f + (x >> 3); } "
		   "int unit_${u}_$f(int x) { int s = 0; for (int i = 0; i < x; i++) "
		   "s += in_${u}_$f(i) ^ s; return s; }\"; "
		   "done > unit$u.c; done && cc -g -O2 -gz -fPIC -shared -o '%s' unit*.c",
		   fx.dir, lib),
	    0);
	free(out);
	o = open_syms(lib);
	/* -gz: libelf inflated its DWARF into the heap. */
	native_symbols__info(o.ns, &info);
	assert_true(info.has_dwarf);
	assert_true(info.dwarf_in_heap);
	(void)native_symbols__lookup_growth(o.ns);
	/* Every tenth function of each unit, the middle of it. */
	assert_int_equal(
	    tu_run(&out, "nm -S --defined-only '%s' | grep -E ' unit_[0-9]+_[0-9]*1$'", lib), 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long addr, size;

		if (sscanf(line, "%llx %llx", &addr, &size) != 2)
			continue;
		before = memory__heap_in_use();
		assert_true(native_symbols__frames(o.ns, addr + size / 2, frames, 8) >= 1);
		measured += memory__heap_in_use() - before;
		counted += native_symbols__lookup_growth(o.ns);
		n++;
	}
	free(out);
	print_message("%zu lookups: %zu bytes measured, %zu counted\n", n, measured, counted);
	assert_int_equal(n, 36);
	if (!mallinfo2().arena) {
		/* A sanitizer's allocator: mallinfo2 sees none of it, nothing to compare with. */
		printf("not glibc's malloc (sanitizer build): the count is not compared\n");
		assert_true(counted > 0);
	} else {
		assert_true(counted >= measured / 2);
		assert_true(counted <= measured * 2);
	}
	/* The inflated sections are heap: not charged again as pages of the file. */
	assert_int_equal(stat(lib, &st), 0);
	file = native_symbols__file_growth(o.ns);
	print_message("file pages charged: %zu of %lld bytes\n", file, (long long)st.st_size);
	assert_true(file <= (size_t)st.st_size);
	close_syms(&o);
}

static void test_exported_functions(void **state)
{
	struct opened o = open_syms(fx.lib);

	(void)state;
	check_exported_at_runtime(fx.lib, o.ns);
	close_syms(&o);
}

static void test_local_function_from_symtab(void **state)
{
	struct opened o = open_syms(fx.lib);
	void *handle = dlopen(fx.lib, RTLD_NOW | RTLD_LOCAL);
	void *(*gamma_addr)(void);
	struct nm_sym nm;
	uint64_t vaddr;

	(void)state;
	assert_non_null(handle);
	*(void **)&gamma_addr = dlsym(handle, "omni_gamma_addr");
	assert_non_null(gamma_addr);
	vaddr = (uint64_t)(uintptr_t)gamma_addr() - load_bias(handle, fx.lib);

	assert_true(nm_lookup(fx.lib, "omni_local_gamma", &nm));
	assert_int_equal(nm.type, 't');
	assert_true(nm.addr == vaddr);
	check_function(o.ns, "omni_local_gamma", vaddr, nm.size);
	dlclose(handle);
	close_syms(&o);
}

static void test_not_in_a_function(void **state)
{
	struct opened o = open_syms(fx.lib);
	void *handle = dlopen(fx.lib, RTLD_NOW | RTLD_LOCAL);
	uint64_t off = 42, data;
	void *addr;

	(void)state;
	assert_non_null(handle);
	addr = dlsym(handle, "omni_data_table");
	assert_non_null(addr);
	data = (uint64_t)(uintptr_t)addr - load_bias(handle, fx.lib);
	/* A data object is a symbol, but not a function. */
	assert_null(native_symbols__lookup(o.ns, data, &off));
	assert_null(native_symbols__lookup(o.ns, data + 100, &off));
	/* The ELF header and far beyond the file. */
	assert_null(native_symbols__lookup(o.ns, 0, &off));
	assert_null(native_symbols__lookup(o.ns, 0x7fffffff0000ull, &off));
	assert_null(native_symbols__lookup(o.ns, UINT64_MAX, NULL));
	assert_true(off == 42);
	dlclose(handle);
	close_syms(&o);
}

static void test_stripped_keeps_dynsym(void **state)
{
	struct opened o = open_syms(fx.stripped);
	struct nm_sym nm;
	char *out = NULL;
	const char *got;

	(void)state;
	/* The copy really lost its .symtab. */
	assert_int_equal(tu_run(&out, "readelf -SW '%s'", fx.stripped), 0);
	assert_null(strstr(out, ".symtab"));
	free(out);

	check_exported_at_runtime(fx.stripped, o.ns);
	/* The static function was only in .symtab. */
	assert_true(nm_lookup(fx.lib, "omni_local_gamma", &nm));
	got = native_symbols__lookup(o.ns, nm.addr, NULL);
	if (got)
		assert_string_not_equal(got, "omni_local_gamma");
	close_syms(&o);
}

/* MiniDebugInfo: an xz-compressed .symtab-only ELF in .gnu_debugdata. */
static void test_minidebuginfo(void **state)
{
	char mini[300], *out = NULL;
	struct nm_sym nm;
	struct opened o;
	int rc;

	(void)state;
	if (tu_run(NULL, "command -v xz && command -v objcopy") != 0)
		skip();
	snprintf(mini, sizeof(mini), "%s/libomni-mini.so", fx.dir);
	rc = tu_run(&out,
		    "cd '%s' && "
		    "objcopy --only-keep-debug --strip-debug '%s' mini.elf && "
		    "xz -f mini.elf && "
		    "cp '%s' '%s' && strip --strip-all '%s' && "
		    "objcopy --add-section .gnu_debugdata=mini.elf.xz '%s'",
		    fx.dir, fx.lib, fx.lib, mini, mini, mini);
	if (rc != 0)
		fprintf(stderr, "%s\n", out ? out : "");
	free(out);
	assert_int_equal(rc, 0);

	o = open_syms(mini);
	assert_true(nm_lookup(fx.lib, "omni_local_gamma", &nm));
	check_function(o.ns, "omni_local_gamma", nm.addr, nm.size);
	assert_true(nm_lookup(fx.lib, "omni_alpha", &nm));
	check_function(o.ns, "omni_alpha", nm.addr, nm.size);
	close_syms(&o);
}

/* For ET_EXEC and for ET_DYN not based at 0 alike, lookups take ELF vaddrs. */
static void check_by_nm(const char *path, uint16_t want_type, const char *const *names, size_t n)
{
	struct opened o = open_syms(path);

	assert_int_equal(o.ef->type, want_type);
	for (size_t i = 0; i < n; i++) {
		struct nm_sym nm;

		assert_true(nm_lookup(path, names[i], &nm));
		check_function(o.ns, names[i], nm.addr, nm.size);
	}
	close_syms(&o);
}

static void test_executables(void **state)
{
	static const char *const names[] = {"omni_exe_one", "omni_exe_two", "main"};
	struct elf_file *ef = NULL;

	(void)state;
	check_by_nm(fx.nopie, ET_EXEC, names, 3);
	check_by_nm(fx.pie, ET_DYN, names, 3);
	/* The non-PIE one really is linked away from 0. */
	assert_int_equal(elf_file__open(fx.nopie, -1, &ef), 0);
	assert_true(ef->segments[0].vaddr >= 0x400000);
	elf_file__close(ef);
}

static void test_library_not_based_at_zero(void **state)
{
	struct elf_file *ef = NULL;
	struct opened o;

	(void)state;
	assert_int_equal(elf_file__open(fx.based, -1, &ef), 0);
	assert_true(ef->segments[0].vaddr >= 0x40000000);
	elf_file__close(ef);
	check_by_nm(fx.based, ET_DYN, exported, sizeof(exported) / sizeof(exported[0]));

	/* And loaded: runtime address minus load bias is still the vaddr. */
	o = open_syms(fx.based);
	check_exported_at_runtime(fx.based, o.ns);
	close_syms(&o);
}

static void test_string_outlives_lookups(void **state)
{
	struct opened o = open_syms(fx.lib);
	struct nm_sym a, b;
	const char *first;

	(void)state;
	assert_true(nm_lookup(fx.lib, "omni_alpha", &a));
	assert_true(nm_lookup(fx.lib, "omni_beta", &b));
	first = native_symbols__lookup(o.ns, a.addr, NULL);
	assert_non_null(first);
	assert_non_null(native_symbols__lookup(o.ns, b.addr, NULL));
	assert_string_equal(first, "omni_alpha");
	close_syms(&o);
	native_symbols__free(NULL);
}

/*
 * A .symtab name that runs to the end of .strtab without a NUL: the bytes
 * after it belong to another section (or to nothing), so it must be refused.
 */
static void test_unterminated_name_refused(void **state)
{
	char path[300];
	size_t len;
	char *buf = tu_read_file(fx.lib, &len);
	Elf64_Shdr *shdrs, *symtab = NULL, *strtab;
	Elf64_Sym *beta = NULL;
	struct opened o;
	FILE *f;

	(void)state;
	assert_non_null(buf);
	shdrs = (Elf64_Shdr *)(buf + ((Elf64_Ehdr *)buf)->e_shoff);
	for (size_t i = 0; i < ((Elf64_Ehdr *)buf)->e_shnum; i++)
		if (shdrs[i].sh_type == SHT_SYMTAB)
			symtab = &shdrs[i];
	assert_non_null(symtab);
	strtab = &shdrs[symtab->sh_link];
	for (size_t i = 0; i < symtab->sh_size / sizeof(Elf64_Sym); i++) {
		Elf64_Sym *sym = (Elf64_Sym *)(buf + symtab->sh_offset) + i;

		if (strcmp(buf + strtab->sh_offset + sym->st_name, "omni_beta") == 0)
			beta = sym;
	}
	assert_non_null(beta);
	memcpy(buf + strtab->sh_offset + strtab->sh_size - 3, "XYZ", 3);
	beta->st_name = (Elf64_Word)(strtab->sh_size - 3);
	snprintf(path, sizeof(path), "%s/libomni-badname.so", fx.dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);

	o = open_syms(path);
	assert_null(native_symbols__lookup(o.ns, beta->st_value, NULL));
	/* The rest of the table is still usable. */
	struct nm_sym nm;
	assert_true(nm_lookup(fx.lib, "omni_alpha", &nm));
	check_function(o.ns, "omni_alpha", nm.addr, nm.size);
	close_syms(&o);
	free(buf);
}

/* Of several names for one address, a global one without leading '_' is shown. */
static void test_alias_preference(void **state)
{
	struct opened o = open_syms(fx.lib);
	struct nm_sym internal, public, alpha, weak;

	(void)state;
	assert_true(nm_lookup(fx.lib, "__omni_internal", &internal));
	assert_true(nm_lookup(fx.lib, "omni_public", &public));
	assert_true(internal.addr == public.addr);
	assert_string_equal(native_symbols__lookup(o.ns, public.addr, NULL), "omni_public");

	assert_true(nm_lookup(fx.lib, "omni_alpha", &alpha));
	assert_true(nm_lookup(fx.lib, "omni_weak_alpha", &weak));
	assert_int_equal(weak.type, 'W');
	assert_true(alpha.addr == weak.addr);
	assert_string_equal(native_symbols__lookup(o.ns, alpha.addr, NULL), "omni_alpha");
	close_syms(&o);
}

static uint64_t rng_state = 0x853c49e6748fea9bull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Damaged files must give errors or odd names, never a crash or a bad read. */
static void test_mutated_files(void **state)
{
	size_t len, opened = 0;
	char *lib, *buf;

	(void)state;
	lib = tu_read_file(fx.lib, &len);
	assert_non_null(lib);
	buf = malloc(len);
	assert_non_null(buf);
	for (int iter = 0; iter < 1500; iter++) {
		struct elf_file *ef = NULL;
		struct native_symbols *ns = NULL;
		int fd;

		memcpy(buf, lib, len);
		for (int k = (int)(rng() % 8); k >= 0; k--) {
			/* The ELF header, the tail (.symtab, .strtab, section headers), anywhere.
			 */
			switch (rng() % 3) {
			case 0:
				buf[rng() % 128] = (char)rng();
				break;
			case 1:
				buf[len - 1 - rng() % 4096 % len] = (char)rng();
				break;
			default:
				buf[rng() % len] = (char)rng();
			}
		}
		fd = memfd_create("omniprof-test", MFD_CLOEXEC);
		assert_true(fd >= 0);
		assert_true(write(fd, buf, len) == (ssize_t)len);
		if (elf_file__open("memfd", fd, &ef) != 0)
			continue;
		if (native_symbols__open(ef, &ns) == 0) {
			opened++;
			for (int p = 0; p < 64; p++) {
				const char *name = native_symbols__lookup(ns, rng() % 0x6000, NULL);

				if (name)
					assert_true(strlen(name) > 0);
			}
			native_symbols__free(ns);
		}
		elf_file__close(ef);
	}
	/* Most damage is harmless: the loop did exercise lookups. */
	assert_true(opened > 100);
	free(buf);
	free(lib);
}

/* The PLT stubs objdump names ("<puts@plt>:") in path: addresses into addrs, names into names. */
static size_t objdump_plt(const char *path, uint64_t *addrs, char (*names)[64], size_t max)
{
	char *text = NULL, *line, *save = NULL;
	size_t n = 0;

	assert_int_equal(tu_run(&text, "objdump -d --no-show-raw-insn '%s'", path), 0);
	for (line = strtok_r(text, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long addr;
		char sym[64];

		/* "<puts@plt-0x10>:" is how objdump labels PLT0: not a stub. */
		if (sscanf(line, "%llx <%63[^>]>:", &addr, sym) == 2 && strlen(sym) > 4 &&
		    !strcmp(sym + strlen(sym) - 4, "@plt")) {
			addrs[n] = addr;
			snprintf(names[n], sizeof(names[n]), "%s", sym);
			n++;
		}
	}
	free(text);
	return n;
}

/* The address and size of section name in path, by readelf. */
static bool section_of(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	char *text = NULL, *line, *save = NULL;
	bool found = false;

	assert_int_equal(tu_run(&text, "readelf -SW '%s'", path), 0);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char sname[64], type[32];
		unsigned long long a, off, sz;
		const char *p = strchr(line, ']');

		if (!p ||
		    sscanf(p + 1, "%63s %31s %llx %llx %llx", sname, type, &a, &off, &sz) != 5)
			continue;
		if (!strcmp(sname, name)) {
			*addr = a;
			*size = sz;
			found = true;
		}
	}
	free(text);
	return found;
}

/*
 * PLT stubs are named "name@plt" as objdump names them, at their first,
 * middle and last byte, in every layout ld writes: lazy, -z now, IBT
 * (.plt.sec, whose lazy .plt stubs are named by the index they push) and
 * .plt.got; stripped or not; a mangled import demangles (without its parameters, the default mode)
 * before "@plt".
 */
static void test_plt_stubs(void **state)
{
	static const char *const layouts[] = {
	    "-fcf-protection=none -Wl,-z,lazy",
	    "-fcf-protection=none -Wl,-z,now",
	    "-fcf-protection=full -Wl,-z,ibtplt -Wl,-z,lazy",
	    "-fcf-protection=full -Wl,-z,ibt -Wl,-z,now -s",
	};
	const struct symbol_options opts = {.demangle = DEMANGLE_TEMPLATES};
	char *out = NULL;

	(void)state;
	assert_int_equal(
	    tu_run(&out,
		   "cd '%s' && printf '%%s\\n' 'int _Z9omni_funci(int x) { return x + 1; }' > "
		   "plib.c && printf '%%s\\n' '#include <stdio.h>' '#include <stdlib.h>' "
		   "'int _Z9omni_funci(int);' 'int main(int c, char **v) { puts(v[0]); "
		   "return atoi(v[0]) + _Z9omni_funci(c); }' > pexe.c && "
		   "cc -fPIC -shared -o libplt.so plib.c",
		   fx.dir),
	    0);
	free(out);
	for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
		char exe[300], names[16][64];
		uint64_t addrs[16], sec_addr, sec_size, plt_addr, plt_size;
		struct elf_file *ef;
		struct native_symbols *ns;
		struct sym_frame frame;
		size_t n;
		bool saw_cxx = false;

		snprintf(exe, sizeof(exe), "%s/plt%zu", fx.dir, l);
		assert_int_equal(tu_run(&out, "cd '%s' && cc -O1 %s -o '%s' pexe.c -L. -lplt",
					fx.dir, layouts[l], exe),
				 0);
		free(out);
		n = objdump_plt(exe, addrs, names, 16);
		/* puts, atoi's strtol, the C++ import and __cxa_finalize's .plt.got stub. */
		assert_true(n >= 4);
		assert_int_equal(elf_file__open(exe, -1, &ef), 0);
		assert_int_equal(native_symbols__open_opts(ef, &opts, &ns), 0);
		for (size_t i = 0; i < n; i++) {
			uint64_t off = UINT64_MAX;
			const char *got;

			for (uint64_t probe = 0; probe < 8; probe += 7) {
				got = native_symbols__lookup(ns, addrs[i] + probe, &off);
				assert_non_null(got);
				assert_string_equal(got, names[i]);
				assert_true(off == probe);
			}
			assert_int_equal(native_symbols__frames(ns, addrs[i] + 3, &frame, 1), 1);
			assert_string_equal(frame.system_name, names[i]);
			if (!strcmp(names[i], "_Z9omni_funci@plt")) {
				assert_string_equal(frame.name, "omni_func@plt");
				saw_cxx = true;
			} else {
				assert_string_equal(frame.name, names[i]);
			}
		}
		assert_true(saw_cxx);
		/* IBT: each lazy .plt stub (after PLT0) pushes the index of its .plt.sec twin. */
		if (section_of(exe, ".plt.sec", &sec_addr, &sec_size)) {
			assert_true(section_of(exe, ".plt", &plt_addr, &plt_size));
			for (uint64_t off = 0; off < sec_size; off += 16) {
				const char *lazy =
				    native_symbols__lookup(ns, plt_addr + 16 + off, NULL);
				const char *sec = native_symbols__lookup(ns, sec_addr + off, NULL);

				assert_non_null(lazy);
				assert_non_null(sec);
				assert_string_equal(lazy, sec);
			}
		} else {
			assert_true(l < 2);
		}
		/* PLT0 is no stub. */
		if (section_of(exe, ".plt", &plt_addr, &plt_size))
			assert_null(native_symbols__lookup(ns, plt_addr, NULL));
		native_symbols__free(ns);
		elf_file__close(ef);
	}
}

/* The frames symbolizer__native() gives for vaddr, copied: name and line of each. */
static size_t named(struct symbolizer *sym, uint32_t slot, uint64_t vaddr, char names[][128],
		    int64_t *lines, size_t max)
{
	const struct sym_frame *frames;
	size_t n = symbolizer__native(sym, slot, vaddr, &frames);

	for (size_t i = 0; i < n && i < max; i++) {
		snprintf(names[i], 128, "%.127s", frames[i].name);
		lines[i] = frames[i].line;
	}
	return n;
}

/* The file cache slot of the executable mapping of path (loaded in this process). */
static uint32_t slot_of(struct file_cache *fc, const struct proc_map *all, size_t n,
			const char *path)
{
	char real[PATH_MAX];

	assert_non_null(realpath(path, real));
	for (size_t i = 0; i < n; i++)
		if (!strcmp(all[i].path, real) && (all[i].perms & PROC_MAP_X))
			return file_cache__get(fc, getpid(), &all[i]);
	fail_msg("%s is not mapped", real);
	return 0;
}

/*
 * A library whose DWARF is read in place (-g, uncompressed), loaded in this
 * process and named through the file cache: it stays loaded after a pass that
 * used it, is unloaded after a pass that did not (the memo keeps what it
 * named: the same address again loads nothing), and a new address loads it
 * again (a reload, counted) with the same names and lines a first load gives.
 */
static void test_unloaded_after_pass(void **state)
{
	char lib[300], names[3][8][128];
	int64_t lines[3][8];
	struct proc_map *all = NULL;
	struct file_cache fc;
	struct symbolizer sym, fresh;
	struct nm_sym a, b;
	size_t n = 0, na, nb;
	uint32_t slot;
	void *h;

	(void)state;
	big_lib(lib, sizeof(lib));
	assert_true(nm_lookup(lib, "big_3_250", &a));
	assert_true(nm_lookup(lib, "big_1_10", &b));
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	assert_int_equal(proc_maps__read(getpid(), &all, &n), 0);
	file_cache__init(&fc);
	slot = slot_of(&fc, all, n, lib);
	assert_true(slot != 0);
	assert_int_equal(symbolizer__init(&sym, &fc, NULL), 0);
	sym.unload_min_cost = 1; /* this small library costs less than the default */

	na = named(&sym, slot, a.addr + 4, names[0], lines[0], 8);
	assert_true(na >= 1);
	assert_string_equal(names[0][0], "big_3_250");
	assert_true(lines[0][0] > 0);
	assert_int_equal(sym.stats.files_loaded, 1);
	/* The end of the pass that used it: it stays (its process finds new addresses). */
	symbolizer__drop_file_pages(&sym);
	assert_int_equal(sym.stats.pass_unloads, 0);
	assert_int_equal(sym.cache.n_entries, 1);
	/* A pass whose lookups the memo answered: unloaded at its end. */
	symbolizer__new_pass(&sym);
	assert_int_equal(named(&sym, slot, a.addr + 4, names[1], lines[1], 8), na);
	symbolizer__drop_file_pages(&sym);
	assert_int_equal(sym.stats.pass_unloads, 1);
	assert_int_equal(sym.cache.n_entries, 0);
	/* Remembered: nothing loaded. */
	assert_int_equal(named(&sym, slot, a.addr + 4, names[1], lines[1], 8), na);
	assert_int_equal(sym.stats.files_loaded, 1);
	assert_string_equal(names[1][0], names[0][0]);
	assert_int_equal(lines[1][0], lines[0][0]);
	/* A new address loads it again: as a symbolizer that never unloaded names it. */
	nb = named(&sym, slot, b.addr + 4, names[1], lines[1], 8);
	assert_int_equal(sym.stats.files_loaded, 2);
	assert_int_equal(sym.stats.reloads, 1);
	assert_int_equal(symbolizer__init(&fresh, &fc, NULL), 0);
	assert_int_equal(named(&fresh, slot, b.addr + 4, names[2], lines[2], 8), nb);
	assert_true(nb >= 1);
	assert_string_equal(names[1][0], "big_1_10");
	for (size_t i = 0; i < nb; i++) {
		assert_string_equal(names[1][i], names[2][i]);
		assert_int_equal(lines[1][i], lines[2][i]);
	}
	/* At the default cost floor it stays loaded, even after a pass that did not use it. */
	symbolizer__new_pass(&fresh);
	symbolizer__drop_file_pages(&fresh);
	assert_int_equal(fresh.stats.pass_unloads, 0);
	assert_int_equal(fresh.cache.n_entries, 1);
	symbolizer__clear(&fresh);
	symbolizer__clear(&sym);
	file_cache__clear(&fc);
	proc_maps__free(all, n);
	dlclose(h);
}

/*
 * After a pass, the file pages of the files it used stay while all the
 * lookups hold is within the budget (the next pass's lookups in the same
 * units find them: nothing to fault in again), those of a file the pass did
 * not use go back, and over the budget or one file at a time (record's last
 * pass) all go back.
 */
static void test_pass_keeps_pages_within_budget(void **state)
{
	char lib[300], names[8][128];
	int64_t lines[8];
	struct proc_map *all = NULL;
	struct file_cache fc;
	struct symbolizer sym;
	struct nm_sym a, b, c, d;
	size_t n = 0, held, cost;
	uint32_t slot;
	void *h;

	(void)state;
	big_lib(lib, sizeof(lib));
	assert_true(nm_lookup(lib, "big_3_250", &a));
	assert_true(nm_lookup(lib, "big_3_251", &b));
	assert_true(nm_lookup(lib, "big_1_10", &c));
	assert_true(nm_lookup(lib, "big_2_5", &d));
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	assert_int_equal(proc_maps__read(getpid(), &all, &n), 0);
	file_cache__init(&fc);
	slot = slot_of(&fc, all, n, lib);
	assert_true(slot != 0);
	assert_int_equal(symbolizer__init(&sym, &fc, NULL), 0);
	assert_int_equal(sym.file_pages_kept_max, SYMBOLIZER_FILE_PAGES_KEPT);

	symbolizer__new_pass(&sym);
	assert_true(named(&sym, slot, a.addr + 4, names, lines, 8) >= 1);
	assert_string_equal(names[0], "big_3_250");
	symbolizer__drop_file_pages(&sym);
	held = sym.file_held;
	assert_true(held > 0);
	assert_true(held <= SYMBOLIZER_FILE_PAGES_KEPT);
	assert_int_equal(sym.stats.file_page_keeps, 1);
	assert_int_equal(sym.stats.file_page_drops, 0);
	assert_int_equal(sym.cache.n_entries, 1);
	/* The next address in the same unit reads the pages kept: little new. */
	symbolizer__new_pass(&sym);
	assert_true(named(&sym, slot, b.addr + 4, names, lines, 8) >= 1);
	assert_string_equal(names[0], "big_3_251");
	assert_true(lines[0] > 0);
	symbolizer__drop_file_pages(&sym);
	assert_int_equal(sym.stats.file_page_keeps, 2);
	assert_true(sym.file_held >= held);
	assert_true(sym.file_held < held + 64 * 1024);
	/* A pass that did not use the file (the memo named it): its pages go back. */
	cost = sym.cache.cost;
	symbolizer__new_pass(&sym);
	assert_true(named(&sym, slot, a.addr + 4, names, lines, 8) >= 1);
	symbolizer__drop_file_pages(&sym);
	assert_int_equal(sym.file_held, 0);
	assert_true(sym.cache.cost < cost);
	assert_int_equal(sym.cache.n_entries, 1);
	/* Over the budget: all go back. */
	sym.file_pages_kept_max = 0;
	symbolizer__new_pass(&sym);
	assert_true(named(&sym, slot, c.addr + 4, names, lines, 8) >= 1);
	assert_string_equal(names[0], "big_1_10");
	symbolizer__drop_file_pages(&sym);
	assert_int_equal(sym.stats.file_page_drops, 1);
	assert_int_equal(sym.file_held, 0);
	/* One file at a time (record's last pass, none after it): all go back. */
	sym.file_pages_kept_max = SYMBOLIZER_FILE_PAGES_KEPT;
	symbolizer__one_file_at_a_time(&sym);
	symbolizer__new_pass(&sym);
	assert_true(named(&sym, slot, d.addr + 4, names, lines, 8) >= 1);
	assert_string_equal(names[0], "big_2_5");
	symbolizer__drop_file_pages(&sym);
	assert_int_equal(sym.stats.file_page_drops, 2);
	assert_int_equal(sym.stats.file_page_keeps, 3);
	assert_int_equal(sym.file_held, 0);
	symbolizer__clear(&sym);
	file_cache__clear(&fc);
	proc_maps__free(all, n);
	dlclose(h);
}

/*
 * record's naming, one file at a time: lookups of two libraries in file order
 * keep one file loaded (the other is given back when a lookup asks for the
 * next), a lookup of a file given back loads it again (a reload, counted), an
 * address named before comes from the memo without a load, and every frame
 * has the names and lines of a symbolizer that keeps both files.
 */
static void test_one_file_at_a_time(void **state)
{
	struct {
		int lib;
		const char *fn;
	} order[] = {
	    {0, "big_3_250"}, {0, "big_1_10"},	{1, "omni_alpha"}, {1, "omni_beta"},
	    {0, "big_2_7"},   {0, "big_3_250"}, {1, "omni_delta"},
	};
	size_t n_order = sizeof(order) / sizeof(order[0]);
	char lib[300], names[2][8][128];
	const char *libs[2] = {lib, fx.lib};
	int64_t lines[2][8];
	struct proc_map *all = NULL;
	struct file_cache fc;
	struct symbolizer sym, keep;
	uint32_t slots[2];
	void *h[2];
	size_t n = 0;

	(void)state;
	big_lib(lib, sizeof(lib));
	for (int i = 0; i < 2; i++) {
		h[i] = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
		assert_non_null(h[i]);
	}
	assert_int_equal(proc_maps__read(getpid(), &all, &n), 0);
	file_cache__init(&fc);
	for (int i = 0; i < 2; i++) {
		slots[i] = slot_of(&fc, all, n, libs[i]);
		assert_true(slots[i] != 0);
	}
	assert_true(slots[0] != slots[1]);
	assert_int_equal(symbolizer__init(&sym, &fc, NULL), 0);
	assert_int_equal(symbolizer__init(&keep, &fc, NULL), 0);
	symbolizer__one_file_at_a_time(&sym);
	for (size_t k = 0; k < n_order; k++) {
		struct nm_sym at;
		size_t a, b;

		assert_true(nm_lookup(libs[order[k].lib], order[k].fn, &at));
		a = named(&sym, slots[order[k].lib], at.addr + 4, names[0], lines[0], 8);
		b = named(&keep, slots[order[k].lib], at.addr + 4, names[1], lines[1], 8);
		assert_true(a >= 1);
		assert_int_equal(a, b);
		assert_string_equal(names[0][0], order[k].fn);
		for (size_t i = 0; i < a && i < 8; i++) {
			assert_string_equal(names[0][i], names[1][i]);
			assert_int_equal(lines[0][i], lines[1][i]);
		}
		/* One file held at a time; the other symbolizer keeps both. */
		assert_int_equal(sym.cache.n_entries, 1);
	}
	/* big, omni, big again (a reload), big_3_250 from the memo, omni again. */
	assert_int_equal(sym.stats.one_file_releases, 3);
	assert_int_equal(sym.stats.files_loaded, 4);
	assert_int_equal(sym.stats.reloads, 2);
	assert_int_equal(keep.stats.files_loaded, 2);
	assert_int_equal(keep.cache.n_entries, 2);
	symbolizer__clear(&keep);
	symbolizer__clear(&sym);
	file_cache__clear(&fc);
	proc_maps__free(all, n);
	for (int i = 0; i < 2; i++)
		dlclose(h[i]);
}

static int by_addr(const void *a, const void *b)
{
	const struct nm_sym *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/*
 * One file at a time, a file whose lookups grew it by more than
 * one_file_growth since its load is given back and loaded again for its next
 * lookup (lowered here to 16 KiB: a few units of libmanyunits.so's 64). The
 * lookups come in address order, as record's do: the names and lines are a
 * keeping symbolizer's, one file is held at most, and it was loaded again
 * several times (none before the change).
 */
static void test_one_file_split_by_growth(void **state)
{
	char lib[300], fn[32], names[2][8][128];
	struct nm_sym at[64];
	int64_t lines[2][8];
	struct proc_map *all = NULL;
	struct file_cache fc;
	struct symbolizer sym, keep;
	size_t info_bytes, n = 0;
	uint32_t slot;
	void *h;

	(void)state;
	units_lib(lib, sizeof(lib), &info_bytes);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	assert_int_equal(proc_maps__read(getpid(), &all, &n), 0);
	file_cache__init(&fc);
	slot = slot_of(&fc, all, n, lib);
	assert_true(slot != 0);
	for (int i = 0; i < 64; i++) {
		snprintf(fn, sizeof(fn), "f_%d", i + 1);
		if (!nm_lookup(lib, fn, &at[i]))
			fail_msg("%s not in %s", fn, lib);
	}
	qsort(at, 64, sizeof(at[0]), by_addr);
	assert_int_equal(symbolizer__init(&sym, &fc, NULL), 0);
	assert_int_equal(symbolizer__init(&keep, &fc, NULL), 0);
	symbolizer__one_file_at_a_time(&sym);
	sym.one_file_growth = 16 << 10;
	for (int i = 0; i < 64; i++) {
		size_t a = named(&sym, slot, at[i].addr + 4, names[0], lines[0], 8);
		size_t b = named(&keep, slot, at[i].addr + 4, names[1], lines[1], 8);

		assert_true(a >= 1);
		assert_int_equal(a, b);
		assert_string_equal(names[0][0], names[1][0]);
		assert_true(lines[0][0] > 12000);
		assert_int_equal(lines[0][0], lines[1][0]);
		assert_true(sym.cache.n_entries <= 1);
	}
	assert_true(sym.stats.reloads >= 3);
	assert_int_equal(sym.stats.files_loaded, sym.stats.reloads + 1);
	assert_int_equal(keep.stats.files_loaded, 1);
	symbolizer__clear(&keep);
	symbolizer__clear(&sym);
	file_cache__clear(&fc);
	proc_maps__free(all, n);
	dlclose(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exported_functions),
	    cmocka_unit_test(test_local_function_from_symtab),
	    cmocka_unit_test(test_not_in_a_function),
	    cmocka_unit_test(test_stripped_keeps_dynsym),
	    cmocka_unit_test(test_minidebuginfo),
	    cmocka_unit_test(test_executables),
	    cmocka_unit_test(test_library_not_based_at_zero),
	    cmocka_unit_test(test_string_outlives_lookups),
	    cmocka_unit_test(test_alias_preference),
	    cmocka_unit_test(test_unterminated_name_refused),
	    cmocka_unit_test(test_mutated_files),
	    cmocka_unit_test(test_file_pages_charged_as_read),
	    cmocka_unit_test(test_file_pages_dropped),
	    cmocka_unit_test(test_first_lookup_walk_gives_back_units),
	    cmocka_unit_test(test_drop_range_keeps_written_pages),
	    cmocka_unit_test(test_lookup_heap_counted),
	    cmocka_unit_test(test_plt_stubs),
	    cmocka_unit_test(test_unloaded_after_pass),
	    cmocka_unit_test(test_pass_keeps_pages_within_budget),
	    cmocka_unit_test(test_one_file_at_a_time),
	    cmocka_unit_test(test_one_file_split_by_growth),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
