// SPDX-License-Identifier: Apache-2.0
/*
 * The line program reader (src/symbol/dwarf_lines.c) against libdw itself
 * (issue 22). For each input, through native_symbols (whose reference path
 * still asks libdw's dwfl_module_getsrc() and dwarf_filesrc()): every
 * function start, a stride of addresses, and every address where libdw's
 * line table has a row (and the byte before it) must give the same frames,
 * file names and lines; and directly, every DW_AT_call_file of every
 * inlined call must name the file dwarf_filesrc() names. Each input must
 * have been read by dwarf_lines itself (no unit, no lookup left to libdw).
 *
 * Every row of every unit is checked directly too (dwarf_lines__find()
 * against dwfl_module_getsrc() at the row's address and the bytes either
 * side), and every file index (dwarf_lines__file() against dwarf_filesrc()).
 *
 * Inputs: the omniprof binary, the C++ inline workload, libc through
 * libc6-dbg's separate debug file (compressed sections), libpython (pyenv),
 * and C built here (gcc): DWARF 3, 4 and 5, -O0, -gz, relative
 * include directories, a relative comp_dir (-fdebug-prefix-map),
 * -ffunction-sections with --gc-sections (sequences at address 0), and
 * functions laid out against the program's order with no padding (a
 * sequence that ends where one earlier in the program starts).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "symbol/dwarf_lines.h"
#include "symbol/native_symbols.h"
#include "testutil.h"

/* libdw 0.188's dwarf_getscopes() leak on the reference side: see test_dwarf_index.c. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libdw.so\n";
}

static const char hdr_src[] =
    "extern volatile int sink;\n"
    "static inline int inc_twice(int x) { return 2 * x + sink; }\n"
    "static inline int inc_loop(int x) { int s = 0;\n"
    "  for (int i = 0; i < x; i++) s += inc_twice(i) ^ sink; return s; }\n";

static const char main_src[] =
    "#include \"h.h\"\n"
    "volatile int sink;\n"
    "static inline int leaf(int x) { int s = 0; for (int i = 0; i < x; i++) s += i ^ sink; "
    "return s; }\n"
    "__attribute__((noinline)) int unused_fn(int x) { return leaf(x) * 3; }\n"
    "__attribute__((noinline)) int top(int x) { return leaf(x) + inc_loop(x); }\n"
    "__attribute__((noinline, cold)) int cold_fn(int x) { return inc_loop(x * 7); }\n"
    "int other(int);\n"
    "int main(int argc, char **argv) { (void)argv;\n"
    "  if (argc > 5) return cold_fn(argc);\n"
    "  return top(argc) + other(argc); }\n";

static const char other_src[] = "#include \"h.h\"\n"
				"int other(int x) { return inc_loop(x) + inc_twice(x); }\n";

static char *dir;

static int setup(void **state)
{
	char *out = NULL, path[512];
	int rc;

	(void)state;
	dir = tu_mkdtemp();
	if (!dir)
		return -1;
	snprintf(path, sizeof(path), "%s/src", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/inc", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/inc/h.h", dir);
	if (tu_write_file(path, hdr_src))
		return -1;
	snprintf(path, sizeof(path), "%s/src/m.c", dir);
	if (tu_write_file(path, main_src))
		return -1;
	snprintf(path, sizeof(path), "%s/src/o.c", dir);
	if (tu_write_file(path, other_src))
		return -1;
	/* Relative source and include paths: the header's directory is joined by the reader. */
	rc = tu_run(&out,
		    "cd '%s' && F='src/m.c src/o.c -Iinc' && "
		    "gcc -O2 -g -o dw5 $F && "
		    "gcc -O2 -g -gdwarf-4 -o dw4 $F && "
		    "gcc -O2 -g -gdwarf-3 -o dw3 $F && "
		    "gcc -O2 -g -gz -o gz $F && readelf -S gz | grep -A1 debug_line | grep -q C && "
		    "gcc -O2 -g -gdwarf-4 -gz -o gz4 $F && "
		    "gcc -O2 -g -fdebug-prefix-map=\"$PWD\"=. -o relcomp $F && "
		    "gcc -O2 -g -ffunction-sections -Wl,--gc-sections -o gc $F && "
		    "gcc -O0 -g -o o0 $F && "
		    "gcc -O2 -g -ffunction-sections -falign-functions=1 -Wl,--sort-section=name "
		    "-o sorted $F && "
		    /*
		     * No clang input: libdw 0.188 finds no unit for these two
		     * files' addresses when clang builds them (DW_AT_ranges), so
		     * there would be nothing to compare; test_dwarf_index's clang
		     * inputs go through this reader too.
		     */
		    "true",
		    dir);
	if (rc)
		fprintf(stderr, "building test inputs failed:\n%s\n", out ? out : "");
	free(out);
	return rc ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rmtree(dir);
	free(dir);
	return 0;
}

struct tally {
	size_t pcs, with_line, call_files, rows, rows_with_line;
};

static void compare_frames(struct native_symbols *ns, uint64_t pc, struct tally *t)
{
	struct sym_frame want[16], got[16];
	size_t a = native_symbols__frames_reference(ns, pc, want, 16);
	size_t b = native_symbols__frames(ns, pc, got, 16);

	if (a != b)
		fail_msg("pc %#llx: libdw %zu frames, dwarf_lines %zu", (unsigned long long)pc, a,
			 b);
	for (size_t i = 0; i < a; i++) {
		bool same_file =
		    want[i].file == got[i].file ||
		    (want[i].file && got[i].file && !strcmp(want[i].file, got[i].file));

		if (strcmp(want[i].name, got[i].name) || !same_file || want[i].line != got[i].line)
			fail_msg("pc %#llx frame %zu: libdw %s %s:%lld, dwarf_lines %s %s:%lld",
				 (unsigned long long)pc, i, want[i].name,
				 want[i].file ? want[i].file : "-", (long long)want[i].line,
				 got[i].name, got[i].file ? got[i].file : "-",
				 (long long)got[i].line);
	}
	t->pcs++;
	if (a && want[0].file)
		t->with_line++;
}

struct func {
	uint64_t start, size;
};

static int func_cmp(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The FUNC symbols of path's .symtab (else .dynsym), sorted. */
static size_t read_funcs(const char *path, struct func **out)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t n = 0, cap = 0;
	struct func *f = NULL;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	for (int pass = 0; pass < 2 && !n; pass++) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			data = elf_getdata(scn, NULL);
			for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;

				if (!gelf_getsym(data, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value ||
				    sym.st_shndx == SHN_UNDEF)
					continue;
				if (n == cap) {
					cap = cap ? 2 * cap : 256;
					f = realloc(f, cap * sizeof(*f));
					assert_non_null(f);
				}
				f[n++] = (struct func){sym.st_value, sym.st_size};
			}
		}
	}
	elf_end(elf);
	close(fd);
	if (n)
		qsort(f, n, sizeof(*f), func_cmp);
	*out = f;
	return n;
}

/* Every inlined call's DW_AT_call_file under die, by dwarf_lines and by libdw. */
static void compare_call_files(struct dwarf_lines_unit *lu, Dwarf_Files *files, size_t nfiles,
			       Dwarf_Die *die, int depth, struct tally *t)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return;
	do {
		Dwarf_Attribute attr;
		Dwarf_Word v;

		if (dwarf_tag(&child) == DW_TAG_inlined_subroutine &&
		    dwarf_formudata(dwarf_attr(&child, DW_AT_call_file, &attr), &v) == 0 &&
		    v < nfiles) {
			const char *want = dwarf_filesrc(files, v, NULL, NULL), *got = NULL;

			assert_int_equal(dwarf_lines__file(lu, v, &got), 0);
			if (!want || strcmp(want, got))
				fail_msg("call_file %llu: libdw %s, dwarf_lines %s",
					 (unsigned long long)v, want ? want : "-", got);
			t->call_files++;
		}
		compare_call_files(lu, files, nfiles, &child, depth + 1, t);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/*
 * Every file index of every unit (dwarf_filesrc() against
 * dwarf_lines__file()), every call site's file, and every row of each
 * unit's line table: dwarf_lines__find() against dwfl_module_getsrc() at
 * the row's address and the bytes either side. At most max_rows rows a unit.
 */
static void compare_units(const char *path, size_t max_rows, struct tally *t)
{
	static const Dwfl_Callbacks cb = {
	    .find_debuginfo = dwfl_standard_find_debuginfo,
	    .section_address = dwfl_offline_section_address,
	};
	Dwfl *dwfl = dwfl_begin(&cb);
	Dwfl_Module *mod;
	struct dwarf_lines *dl;
	Dwarf_Addr bias;
	Dwarf_Off off = 0, next;
	Dwarf *dw;
	size_t hsize;

	assert_non_null(dwfl);
	mod = dwfl_report_offline(dwfl, "", path, -1);
	assert_non_null(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	dw = dwfl_module_getdwarf(mod, &bias);
	assert_non_null(dw);
	dl = dwarf_lines__new(dw);
	assert_non_null(dl);
	for (; dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0; off = next) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		Dwarf_Files *files;
		size_t nlines, nfiles, step;
		struct dwarf_lines_unit *lu;

		if (!dwarf_offdie(dw, off + hsize, &cu) || dwarf_tag(&cu) != DW_TAG_compile_unit ||
		    dwarf_getsrclines(&cu, &lines, &nlines) != 0 ||
		    dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
			continue;
		assert_int_equal(dwarf_lines__unit_of(dl, &cu, &lu), 0);
		for (size_t i = 0; i < nfiles; i++) {
			const char *want = dwarf_filesrc(files, i, NULL, NULL), *got = NULL;
			int rc = dwarf_lines__file(lu, i, &got);

			/* Only DWARF 2-4's index 0 (libdw's placeholder) is left to libdw. */
			if (rc) {
				assert_int_equal(i, 0);
				continue;
			}
			if (!want || strcmp(want, got))
				fail_msg("unit %#llx file %zu: libdw %s, dwarf_lines %s",
					 (unsigned long long)off, i, want ? want : "-", got);
		}
		compare_call_files(lu, files, nfiles, &cu, 0, t);
		step = max_rows && nlines > max_rows ? nlines / max_rows : 1;
		for (size_t i = 0; i < nlines; i += step) {
			Dwarf_Line *l = dwarf_onesrcline(lines, i);
			Dwarf_Addr a;

			if (!l || dwarf_lineaddr(l, &a) != 0)
				continue;
			for (Dwarf_Addr pc = a + bias - 1; pc <= a + bias + 1; pc++) {
				Dwfl_Line *want = dwfl_module_getsrc(mod, pc);
				const char *wfile = NULL, *gfile = NULL;
				int wline = 0, gline = 0, rc = -ENOENT;
				Dwarf_Addr cbias;
				Dwarf_Die *c = dwfl_module_addrdie(mod, pc, &cbias);
				struct dwarf_lines_unit *cl;

				if (want)
					wfile = dwfl_lineinfo(want, NULL, &wline, NULL, NULL, NULL);
				if (c) {
					assert_int_equal(dwarf_lines__unit_of(dl, c, &cl), 0);
					rc = dwarf_lines__find(cl, pc - cbias, &gfile, &gline);
					assert_true(rc == 0 || rc == -ENOENT);
				}
				if ((!wfile) != (rc != 0) ||
				    (wfile && (strcmp(wfile, gfile) || wline != gline)))
					fail_msg(
					    "unit %#llx pc %#llx: libdw %s:%d, dwarf_lines %s:%d",
					    (unsigned long long)off, (unsigned long long)pc,
					    wfile ? wfile : "-", wline, gfile ? gfile : "-", gline);
				t->rows++;
				t->rows_with_line += wfile != NULL;
			}
		}
	}
	dwarf_lines__free(dl);
	dwfl_end(dwfl);
}

#ifdef __SANITIZE_ADDRESS__
#define SCALE(n) ((n) / 8)
#else
#define SCALE(n) (n)
#endif

/* path's frames through native_symbols, then its units as compare_units(). */
static struct tally compare_file(const char *path, size_t max_strided, size_t max_rows)
{
	struct tally t = {0};
	struct func *funcs = NULL;
	size_t nf = read_funcs(path, &funcs), total = 0, stride;
	struct elf_file *ef = NULL;
	struct native_symbols *ns = NULL;
	struct native_symbols_info info;

	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	assert_int_equal(native_symbols__open(ef, &ns), 0);
	assert_true(nf > 0);
	for (size_t i = 0; i < nf; i++)
		total += funcs[i].size;
	max_strided = SCALE(max_strided);
	stride = max_strided ? total / max_strided + 1 : 0;
	for (size_t i = 0; i < nf; i++) {
		compare_frames(ns, funcs[i].start, &t);
		for (uint64_t off = stride ? stride / 2 + 1 : funcs[i].size; off < funcs[i].size;
		     off += stride)
			compare_frames(ns, funcs[i].start + off, &t);
	}
	native_symbols__info(ns, &info);
	compare_units(path, max_rows ? SCALE(max_rows) + 1 : 0, &t);
	print_message("%s: %zu functions, %zu addresses (%zu with a line), %zu call files, "
		      "%zu row addresses (%zu with a line); dwarf_lines: %zu units, %zu left to "
		      "libdw, %zu lookups left to libdw, %zu bytes\n",
		      path, nf, t.pcs, t.with_line, t.call_files, t.rows, t.rows_with_line,
		      info.lines.units, info.lines.unsupported, info.lines.lookups_unsupported,
		      info.lines.bytes);
	assert_true(t.with_line > 0);
	assert_true(t.rows_with_line > 0);
	assert_true(info.lines.units > 0);
	assert_int_equal(info.lines.unsupported, 0);
	assert_int_equal(info.lines.lookups_unsupported, 0);
	native_symbols__free(ns);
	elf_file__close(ef);
	free(funcs);
	return t;
}

static void test_built(void **state)
{
	const char *names[] = {"dw5", "dw4", "dw3", "gz", "gz4", "relcomp", "gc", "o0", "sorted"};
	char path[512];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		struct tally t;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		t = compare_file(path, 4000, 0);
		/* The header's inline functions were inlined: their call sites were checked. */
		if (strcmp(names[i], "o0"))
			assert_true(t.call_files > 0);
	}
}

static void test_omniprof(void **state)
{
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/omniprof", tu_build_dir());
	compare_file(path, 8000, 200);
}

static void test_cpp_workload(void **state)
{
	char path[512];
	struct tally t;

	(void)state;
	assert_int_equal(tu_workload_path("cpp_inline", path, sizeof(path)), 0);
	t = compare_file(path, 4000, 0);
	assert_true(t.call_files > 0);
}

/* libc through libc6-dbg's debug file (compressed .debug_line), found by build id. */
static void test_libc_debug(void **state)
{
	char path[512];

	(void)state;
	assert_int_equal(tu_system_lib("libc.so.6", path, sizeof(path)), 0);
	compare_file(path, 8000, 200);
}

static void test_libpython(void **state)
{
	char root[512], path[1024];

	(void)state;
	tu_pyenv_root(root, sizeof(root));
	snprintf(path, sizeof(path), "%s/versions/3.11.7/lib/libpython3.11.so.1.0", root);
	assert_int_equal(access(path, R_OK), 0);
	compare_file(path, 8000, 200);
}

/* Malformed programs are left to libdw, never answered. */
static void test_malformed(void **state)
{
	/* A DWARF 4 header cut short, then one with version 6. */
	static const uint8_t cut[] = {0x20, 0, 0, 0, 4, 0, 0x10, 0, 0, 0, 1};
	static const uint8_t v6[] = {0x0a, 0, 0, 0, 6, 0, 4, 0, 0, 0, 1, 1, 1, 1};
	struct dwarf_lines *dl;
	struct dwarf_lines_unit *u;
	struct dwarf_lines_stats st;

	(void)state;
	dl = dwarf_lines__new_raw(cut, sizeof(cut), NULL, 0, NULL, 0);
	assert_non_null(dl);
	assert_int_equal(dwarf_lines__unit(dl, 0, NULL, &u), -ENOTSUP);
	assert_int_equal(dwarf_lines__unit(dl, 0, NULL, &u), -ENOTSUP);
	assert_int_equal(dwarf_lines__unit(dl, 9999, NULL, &u), -ENOTSUP);
	dwarf_lines__stats(dl, &st);
	assert_int_equal(st.units, 2);
	assert_int_equal(st.unsupported, 2);
	dwarf_lines__free(dl);
	dl = dwarf_lines__new_raw(v6, sizeof(v6), NULL, 0, NULL, 0);
	assert_int_equal(dwarf_lines__unit(dl, 0, NULL, &u), -ENOTSUP);
	dwarf_lines__free(dl);
}

/* ---- hand-made units: the bounds against hostile programs ---------------- */

struct lbuf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct lbuf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void put_u8(struct lbuf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_u32(struct lbuf *b, size_t at, uint32_t v)
{
	memcpy(b->p + at, &v, 4);
}

/* A row at addr with line advanced by dline (DW_LNS_advance_line, DW_LNS_copy). */
static void put_row(struct lbuf *b, int8_t dline)
{
	put_u8(b, 0x03); /* advance_line, one-byte sleb */
	put_u8(b, (uint8_t)dline & 0x7f);
	put_u8(b, 0x01); /* copy */
}

static void put_set_address(struct lbuf *b, uint64_t addr)
{
	put_u8(b, 0);
	put_u8(b, 9);
	put_u8(b, 0x02);
	put(b, &addr, 8);
}

static void put_advance_pc(struct lbuf *b, uint8_t delta)
{
	put_u8(b, 0x02);
	put_u8(b, delta & 0x7f);
}

static void put_end_sequence(struct lbuf *b)
{
	put_u8(b, 0);
	put_u8(b, 1);
	put_u8(b, 0x01);
}

/*
 * A DWARF 4 line unit's header into b: one include directory dir (NULL:
 * none) and n_files entries "f.c" in it. The program follows; finish with
 * unit_end().
 */
static void unit_begin(struct lbuf *b, const char *dir, size_t n_files)
{
	static const uint8_t fixed[] = {1, 1, 1, (uint8_t)-5, 14, 13, 0, 1, 1,
					1, 1, 0, 0,	      0,  1,  0, 0, 1};
	size_t hdr;

	b->n = 0;
	put(b, "\0\0\0\0\4\0\0\0\0\0", 10); /* unit_length, version 4, header_length */
	put(b, fixed, sizeof(fixed));
	if (dir)
		put(b, dir, strlen(dir) + 1);
	put_u8(b, 0);
	for (size_t i = 0; i < n_files; i++) {
		put(b, "f.c", 4);
		put_u8(b, dir ? 1 : 0);
		put_u8(b, 0);
		put_u8(b, 0);
	}
	put_u8(b, 0);
	hdr = b->n - 10;
	put_u32(b, 6, (uint32_t)hdr);
}

static void unit_end(struct lbuf *b)
{
	put_u32(b, 0, (uint32_t)(b->n - 4));
}

/* Many file entries naming one long directory would join into gigabytes:
 * the unit is refused (no line, and none asked of libdw), and counted. */
static void test_names_bounded(void **state)
{
	char *dir = malloc(4097);
	struct lbuf b = {0};
	struct dwarf_lines *dl;
	struct dwarf_lines_unit *u;
	struct dwarf_lines_stats st;
	const char *file;
	int line;

	(void)state;
	assert_non_null(dir);
	memset(dir, 'a', 4000);
	dir[4000] = '\0';
	for (int pass = 0; pass < 3; pass++) {
		/* 10 files: fine; 3,000 of them: 12 MB joined; a 4 KiB name alone. */
		size_t n_files = pass == 1 ? 3000 : pass == 2 ? 1 : 10;

		if (pass == 2) {
			memset(dir, 'b', 4096);
			dir[4096] = '\0';
		}
		unit_begin(&b, dir, n_files);
		put_set_address(&b, 0x1000);
		put_row(&b, 0);
		put_advance_pc(&b, 0x10);
		put_end_sequence(&b);
		unit_end(&b);
		dl = dwarf_lines__new_raw(b.p, b.n, NULL, 0, NULL, 0);
		assert_non_null(dl);
		assert_int_equal(dwarf_lines__unit(dl, 0, NULL, &u), 0);
		assert_non_null(u);
		dwarf_lines__stats(dl, &st);
		if (pass == 0) {
			assert_int_equal(dwarf_lines__find(u, 0x1008, &file, &line), 0);
			assert_int_equal(line, 1);
			assert_int_equal(strlen(file), 4000 + 4);
			assert_int_equal(st.refused, 0);
		} else {
			assert_int_equal(dwarf_lines__find(u, 0x1008, &file, &line), -ENOENT);
			assert_null(file);
			assert_int_equal(dwarf_lines__file(u, 1, &file), -EBADMSG);
			assert_int_equal(st.refused, 1);
			assert_true(st.bytes < 4096);
			/* Asked again: the same answer from the record. */
			assert_int_equal(dwarf_lines__unit(dl, 0, NULL, &u), 0);
		}
		dwarf_lines__free(dl);
	}
	free(b.p);
	free(dir);
}

/* Program bytes between rows: up to 64 KiB they are checkpointed every
 * 4 KiB (each lookup decodes a bounded part); past it the unit is libdw's. */
static void test_row_gaps_bounded(void **state)
{
	struct lbuf b = {0};
	struct dwarf_lines *dl;
	struct dwarf_lines_unit *u;
	const char *file;
	int line;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		/* 40 rows 5 KiB apart (an even run of negate_stmt keeps is_stmt),
		 * then one gap of 70 KiB in the second pass. */
		unit_begin(&b, NULL, 1);
		put_set_address(&b, 0x1000);
		put_row(&b, 0);
		for (int row = 1; row < 40; row++) {
			size_t gap = pass == 1 && row == 20 ? 70 << 10 : 5 << 10;

			for (size_t i = 0; i < gap; i++)
				put_u8(&b, 0x06);
			put_advance_pc(&b, 0x10);
			put_row(&b, 1);
		}
		put_advance_pc(&b, 0x10);
		put_end_sequence(&b);
		unit_end(&b);
		dl = dwarf_lines__new_raw(b.p, b.n, NULL, 0, NULL, 0);
		assert_non_null(dl);
		if (pass == 1) {
			assert_int_equal(dwarf_lines__unit(dl, 0, NULL, &u), -ENOTSUP);
			dwarf_lines__free(dl);
			continue;
		}
		assert_int_equal(dwarf_lines__unit(dl, 0, NULL, &u), 0);
		for (int row = 0; row < 40; row++) {
			assert_int_equal(
			    dwarf_lines__find(u, 0x1000 + 0x10 * row + 8, &file, &line), 0);
			assert_int_equal(line, row + 1);
			assert_string_equal(file, "f.c");
		}
		assert_int_equal(dwarf_lines__find(u, 0x1000 + 0x10 * 40, &file, &line), -ENOENT);
		dwarf_lines__free(dl);
	}
	free(b.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_malformed),	  cmocka_unit_test(test_built),
	    cmocka_unit_test(test_cpp_workload),  cmocka_unit_test(test_omniprof),
	    cmocka_unit_test(test_libc_debug),	  cmocka_unit_test(test_libpython),
	    cmocka_unit_test(test_names_bounded), cmocka_unit_test(test_row_gaps_bounded),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
