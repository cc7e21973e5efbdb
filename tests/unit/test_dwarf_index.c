// SPDX-License-Identifier: Apache-2.0
/*
 * The scope index (src/symbol/dwarf_index.c) against libdw itself (issue
 * 22): at every function start and a stride of addresses through real
 * binaries, dwarf_index__scopes() must give the very DIEs dwarf_getscopes()
 * gives, dwarf_index__prefix() the prefix the enclosing scopes that
 * dwarf_getscopes_die() finds spell, and native_symbols__frames() the same
 * frames (names, inline chains, file:line) as the reference path that
 * still calls libdw's walks. Inputs: C and C++ built here with inlining
 * (gcc and clang, nested inline chains, namespaces, classes, anonymous
 * namespaces, templates, lambdas, LTO, DWARF 4 and 5, dwz's partial
 * units), pyenv 3.11's
 * libpython (full DWARF) and the repository's C++, Rust and Go workloads
 * (no C++ library on this host has DWARF: none of /usr/lib, /usr/local,
 * /opt and pyenv's .so files).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "symbol/dwarf_index.h"
#include "symbol/native_symbols.h"
#include "testutil.h"

/*
 * For the sanitizer build (LeakSanitizer reads this hook; elsewhere it is an
 * unused function). libdw 0.188's dwarf_getscopes() mallocs the scope array,
 * then, for a pc inside an inlined call whose abstract origin its second walk
 * does not find in the unit (gcc -flto puts origins in other units), returns
 * 0 without freeing it or handing it out. The reference side of this test
 * calls it at every such pc; omniprof itself calls it only on an index error.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libdw.so\n";
}

static const char c_src[] =
    "volatile int sink;\n"
    "static inline int leaf(int x) { int s = 0; for (int i = 0; i < x; i++) s += i ^ sink; "
    "return s; }\n"
    "static inline int mid(int x) { int a = leaf(x); { int b = leaf(a & 7); return a * b; } }\n"
    "static inline int upper(int x) { return mid(x) + mid(x + sink); }\n"
    "__attribute__((noinline)) int top(int x) { return upper(x) - upper(x * 3); }\n"
    "__attribute__((noinline)) static int cold_path(int x) {\n"
    "  if (__builtin_expect(x == 12345, 0)) return upper(x) * 7; return x; }\n"
    "int other(int);\n"
    "int main(int argc, char **argv) { (void)argv; return top(argc) + cold_path(argc) + "
    "other(argc); }\n";

static const char c2_src[] =
    "extern volatile int sink;\n"
    "static inline int twice(int x) { return x * 2 + sink; }\n"
    "int other(int x) { int s = 0; for (int i = 0; i < x; i++) s += twice(i); return s; }\n";

static const char cpp_src[] =
    "#include <algorithm>\n"
    "#include <map>\n"
    "#include <string>\n"
    "#include <vector>\n"
    "volatile int sink;\n"
    "namespace outer { namespace inner {\n"
    "template <typename T> struct Box {\n"
    "  T v;\n"
    "  inline T get() const { return v * 3 + (T)sink; }\n"
    "  T sum(const std::vector<T> &xs) const { T s = 0; for (auto &x : xs) s += x * get(); "
    "return s; }\n"
    "};\n"
    "static inline int leaf(int x) { int s = 0; for (int i = 0; i < x; i++) s += i ^ sink; "
    "return s; }\n"
    "inline int mid(int x) { return leaf(x) + leaf(x + 1); }\n"
    "__attribute__((noinline)) int top(int x) { return mid(x) * mid(x - 1); }\n"
    "} }\n"
    "namespace {\n"
    "struct Hidden { int k; __attribute__((noinline)) int go(int x) { return "
    "outer::inner::top(x) + k; } };\n"
    "}\n"
    "class Widget {\n"
    "public:\n"
    "  virtual ~Widget() {}\n"
    "  virtual int spin(int n) { auto f = [&](int i) { return i * n + outer::inner::mid(i); };\n"
    "    int s = 0; for (int i = 0; i < n; i++) s += f(i); return s; }\n"
    "  union U { int a; float b; int get() const { return a + sink; } } u;\n"
    "};\n"
    "int helper(std::vector<int> &, std::map<std::string, int> &) __attribute__((weak));\n"
    "int main(int argc, char **argv) {\n"
    "  std::vector<int> xs(argv[0][0] & 15, argc); std::vector<double> ds(argc, 1.5);\n"
    "  std::map<std::string, int> m; m[argv[0]] = argc;\n"
    "  std::sort(xs.begin(), xs.end());\n"
    "  outer::inner::Box<int> b{argc}; outer::inner::Box<double> d{1.0 * argc};\n"
    "  Hidden h{argc}; Widget w; w.u.a = argc;\n"
    "  int r = helper ? helper(xs, m) : 0;\n"
    "  return r + b.sum(xs) + (int)d.sum(ds) + h.go(argc) + w.spin(argc) + w.u.get() + "
    "m.size();\n"
    "}\n";

/* A second unit sharing the first one's headers: dwz moves what they share into partial units. */
static const char cpp2_src[] =
    "#include <algorithm>\n"
    "#include <map>\n"
    "#include <string>\n"
    "#include <vector>\n"
    "extern volatile int sink;\n"
    "namespace outer { namespace inner { inline int mid(int x) { return x * sink; } } }\n"
    "int helper(std::vector<int> &v, std::map<std::string, int> &m) {\n"
    "  std::sort(v.begin(), v.end()); m[\"q\"] = (int)v.size();\n"
    "  return outer::inner::mid((int)m.size()); }\n";

static char *dir;

static int setup(void **state)
{
	const char *const names[] = {"a.c", "b.c", "p.cc", "q.cc"};
	const char *const srcs[] = {c_src, c2_src, cpp_src, cpp2_src};
	char *out = NULL, path[512];
	int rc;

	(void)state;
	dir = tu_mkdtemp();
	if (!dir)
		return -1;
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (tu_write_file(path, srcs[i]))
			return -1;
	}
	rc = tu_run(&out,
		    "cd '%s' && "
		    "gcc -O2 -g -o c-gcc a.c b.c && "
		    "gcc -O3 -g -gdwarf-4 -o c-gcc-dw4 a.c b.c && "
		    "gcc -O2 -g -flto -o c-gcc-lto a.c b.c && "
		    "clang -O2 -g -o c-clang a.c b.c && "
		    "g++ -O2 -g -o cpp-gcc p.cc && "
		    "g++ -O3 -g -gdwarf-4 -o cpp-gcc-dw4 p.cc && "
		    "clang++ -O2 -g -o cpp-clang p.cc && "
		    "g++ -O2 -g -o cpp-gcc-dwz p.cc q.cc && dwz cpp-gcc-dwz && "
		    "readelf -wi cpp-gcc-dwz | grep -q DW_TAG_imported_unit",
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
	size_t pcs, chains, inlined, prefixed, frames;
	size_t foreign; /* chains through an inlined call whose origin is in a partial unit */
};

/* The DIE a function DIE's name comes from (as native_symbols.c's name_die). */
static bool decl_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute attr;

	*out = *die;
	for (int hops = 0; hops < 8 && !dwarf_hasattr(out, DW_AT_name); hops++) {
		if (!dwarf_attr(out, DW_AT_abstract_origin, &attr) &&
		    !dwarf_attr(out, DW_AT_specification, &attr))
			return false;
		if (!dwarf_formref_die(&attr, out))
			return false;
	}
	return dwarf_hasattr(out, DW_AT_name);
}

static void compare_prefix(struct dwarf_index *di, Dwarf_Die *die, struct tally *t)
{
	char want[SYM_NAME_MAX], got[SYM_NAME_MAX];
	Dwarf_Die decl;
	size_t a, b;

	if (!decl_of(die, &decl))
		return;
	a = dwarf_index__prefix_libdw(&decl, want, sizeof(want));
	/* Twice: computed, then remembered. */
	for (int k = 0; k < 2; k++) {
		b = dwarf_index__prefix(di, &decl, got, sizeof(got));
		assert_true((a < sizeof(want)) == (b < sizeof(got)));
		if (strcmp(want, got))
			fail_msg("prefix of DIE %#llx: libdw \"%s\", index \"%s\"",
				 (unsigned long long)dwarf_dieoffset(&decl), want, got);
	}
	t->prefixed += want[0] != '\0';
}

/* The unit holding pc: by .debug_aranges, else by each unit's ranges (clang writes no aranges). */
static bool unit_of(Dwarf *dw, Dwarf_Addr pc, Dwarf_Die *cu)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (dwarf_addrdie(dw, pc, cu))
		return true;
	for (; dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0; off = next)
		if (dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, pc) == 1)
			return true;
	return false;
}

static void compare_scopes(Dwarf *dw, struct dwarf_index *di, Dwarf_Addr pc, struct tally *t)
{
	Dwarf_Die cu, *want = NULL, *got = NULL;
	int a, b, inl = 0;

	if (!unit_of(dw, pc, &cu))
		return;
	t->pcs++;
	a = dwarf_getscopes(&cu, pc, &want);
	b = dwarf_index__scopes(di, &cu, pc, &got);
	if (a != b)
		fail_msg("pc %#llx: libdw %d scopes, index %d", (unsigned long long)pc, a, b);
	for (int i = 0; i < a; i++) {
		int tag = dwarf_tag(&want[i]);

		if (want[i].addr != got[i].addr)
			fail_msg("pc %#llx scope %d: libdw DIE %#llx, index %#llx",
				 (unsigned long long)pc, i,
				 (unsigned long long)dwarf_dieoffset(&want[i]),
				 (unsigned long long)dwarf_dieoffset(&got[i]));
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram)
			compare_prefix(di, &want[i], t);
		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Attribute attr;
			Dwarf_Die origin, ounit;

			inl++;
			if (dwarf_formref_die(dwarf_attr(&want[i], DW_AT_abstract_origin, &attr),
					      &origin) &&
			    dwarf_diecu(&origin, &ounit, NULL, NULL) && ounit.addr != cu.addr &&
			    dwarf_tag(&ounit) == DW_TAG_partial_unit)
				t->foreign++;
		}
	}
	t->chains += a > 0;
	t->inlined += inl > 0;
	if (a > 0)
		free(want);
	if (b > 0)
		free(got);
}

static void compare_frames(struct native_symbols *ns, uint64_t pc, struct tally *t)
{
	struct sym_frame want[16], got[16];
	size_t a = native_symbols__frames_reference(ns, pc, want, 16);
	size_t b = native_symbols__frames(ns, pc, got, 16);

	if (a != b)
		fail_msg("pc %#llx: reference %zu frames, index %zu", (unsigned long long)pc, a, b);
	for (size_t i = 0; i < a; i++) {
		bool same_file =
		    want[i].file == got[i].file ||
		    (want[i].file && got[i].file && !strcmp(want[i].file, got[i].file));

		if (strcmp(want[i].name, got[i].name) ||
		    strcmp(want[i].system_name, got[i].system_name) || !same_file ||
		    want[i].line != got[i].line || want[i].inlined != got[i].inlined)
			fail_msg("pc %#llx frame %zu: reference %s (%s) %s:%lld%s, index %s (%s) "
				 "%s:%lld%s",
				 (unsigned long long)pc, i, want[i].name, want[i].system_name,
				 want[i].file ? want[i].file : "-", (long long)want[i].line,
				 want[i].inlined ? " inlined" : "", got[i].name, got[i].system_name,
				 got[i].file ? got[i].file : "-", (long long)got[i].line,
				 got[i].inlined ? " inlined" : "");
	}
	t->frames += a;
}

struct func {
	uint64_t start, size;
};

static int func_cmp(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The FUNC symbols of path's .symtab, sorted. */
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
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
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
	elf_end(elf);
	close(fd);
	if (n)
		qsort(f, n, sizeof(*f), func_cmp);
	*out = f;
	return n;
}

/*
 * Every function start, and about max_strided more addresses spread over
 * the functions (each function's middle bytes at a stride).
 */
/*
 * The strided addresses checked: fewer in the sanitizer build (its libdw
 * walks on the reference side run several times slower), so the two runs
 * of this test stay within the default test run's time; every function
 * start is checked in both.
 */
#ifdef __SANITIZE_ADDRESS__
#define STRIDED(n) ((n) / 16)
#else
#define STRIDED(n) ((n) / 8)
#endif

static struct tally compare_file(const char *path, size_t max_strided)
{
	struct tally t = {0};
	struct func *funcs = NULL;
	size_t nf = read_funcs(path, &funcs), total = 0, stride;
	int fd = open(path, O_RDONLY);
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	struct dwarf_index *di = dwarf_index__new(64u << 20);
	struct elf_file *ef = NULL;
	struct native_symbols *ns = NULL;

	assert_non_null(dw);
	assert_non_null(di);
	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	assert_int_equal(native_symbols__open(ef, &ns), 0);
	assert_true(nf > 0);
	for (size_t i = 0; i < nf; i++)
		total += funcs[i].size;
	max_strided = STRIDED(max_strided);
	stride = max_strided ? total / max_strided + 1 : 0;
	for (size_t i = 0; i < nf; i++) {
		compare_scopes(dw, di, funcs[i].start, &t);
		compare_frames(ns, funcs[i].start, &t);
		/* Odd strides land mid-instruction too: libdw takes any address. */
		for (uint64_t off = stride ? stride / 2 + 1 : funcs[i].size; off < funcs[i].size;
		     off += stride) {
			compare_scopes(dw, di, funcs[i].start + off, &t);
			compare_frames(ns, funcs[i].start + off, &t);
		}
	}
	print_message("%s: %zu functions, %zu addresses, %zu chains, %zu through inlined calls, "
		      "%zu prefixed, %zu frames, %zu origins in partial units, index %zu bytes\n",
		      path, nf, t.pcs, t.chains, t.inlined, t.prefixed, t.frames, t.foreign,
		      dwarf_index__bytes(di));
	native_symbols__free(ns);
	elf_file__close(ef);
	dwarf_index__free(di);
	dwarf_end(dw);
	close(fd);
	free(funcs);
	return t;
}

static struct tally compare_built(const char *name, size_t max_strided)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return compare_file(path, max_strided);
}

static void test_c(void **state)
{
	const char *names[] = {"c-gcc", "c-gcc-dw4", "c-gcc-lto", "c-clang"};

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		struct tally t = compare_built(names[i], 4000);

		assert_true(t.chains > 0);
		/* With LTO the inlined calls' origins are in other units: libdw gives no chain
		 * there. */
		if (strcmp(names[i], "c-gcc-lto"))
			assert_true(t.inlined > 0);
		/* C has no namespaces or classes. */
		assert_int_equal(t.prefixed, 0);
	}
}

static void test_cpp(void **state)
{
	const char *names[] = {"cpp-gcc", "cpp-gcc-dw4", "cpp-clang", "cpp-gcc-dwz"};

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		struct tally t = compare_built(names[i], 8000);

		assert_true(t.chains > 0);
		assert_true(t.inlined > 0);
		assert_true(t.prefixed > 0);
		if (!strcmp(names[i], "cpp-gcc-dwz"))
			assert_true(t.foreign > 0);
	}
}

/* The first inlined call inside another inlined call under die, and its start; depth: of inlined.
 */
static bool find_nested(Dwarf_Die *die, int depth, Dwarf_Die *out, Dwarf_Addr *pc)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child), d = depth + (tag == DW_TAG_inlined_subroutine);
		Dwarf_Addr base, begin, end;

		if (d >= 2 && tag == DW_TAG_inlined_subroutine &&
		    dwarf_ranges(&child, 0, &base, &begin, &end) > 0 && begin < end) {
			*out = child;
			*pc = begin;
			return true;
		}
		if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		     tag == DW_TAG_lexical_block) &&
		    find_nested(&child, d, out, pc))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/*
 * What the chain holds through nested inlined calls (leaf in mid in upper
 * in top): libdw stops at the innermost inlined call and goes on with the
 * scopes enclosing its abstract origin (here the unit alone), so it holds
 * one inlined call and never the functions it was inlined into; the frames
 * then show that call and the symbol's function at its call site.
 */
static void test_nested_inline_chain(void **state)
{
	char path[512];
	Dwarf_Off off = 0, next;
	size_t hsize, seen = 0;
	int fd;
	Dwarf *dw;

	(void)state;
	snprintf(path, sizeof(path), "%s/c-gcc", dir);
	fd = open(path, O_RDONLY);
	dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	for (; dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0; off = next) {
		Dwarf_Die cu, inner, *s = NULL; /* inner: an inlined call in another one */
		Dwarf_Addr pc;
		int n;

		if (!dwarf_offdie(dw, off + hsize, &cu) || !find_nested(&cu, 0, &inner, &pc))
			continue;
		n = dwarf_getscopes(&cu, pc, &s);
		assert_true(n >= 2);
		/*
		 * pc is inside two inlined calls at least (inner and the one
		 * holding it), maybe more: the chain holds the innermost one
		 * (after blocks inside it), then the unit.
		 */
		for (int k = 0; k < n - 2; k++)
			assert_int_not_equal(dwarf_tag(&s[k]), DW_TAG_inlined_subroutine);
		assert_int_equal(dwarf_tag(&s[n - 2]), DW_TAG_inlined_subroutine);
		assert_int_equal(dwarf_tag(&s[n - 1]), DW_TAG_compile_unit);
		free(s);
		seen++;
	}
	assert_true(seen > 0);
	dwarf_end(dw);
	close(fd);
}

static void test_libpython(void **state)
{
	char root[512], path[1024];
	struct tally t;

	(void)state;
	tu_pyenv_root(root, sizeof(root));
	snprintf(path, sizeof(path), "%s/versions/3.11.7/lib/libpython3.11.so.1.0", root);
	assert_int_equal(access(path, R_OK), 0);
	t = compare_file(path, 8000);
	assert_true(t.chains > 1000);
	assert_true(t.inlined > 100);
}

/* The repository's workloads: C++ (inlining, templates), Rust (its std too), Go (cgo too). */
static void test_workloads(void **state)
{
	const char *names[] = {"cpp_inline", "cpp_templates", "rust_chain",
			       "rust_v0",    "go_chain",      "go_cgo"};
	char path[512];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		struct tally t;

		assert_int_equal(tu_workload_path(names[i], path, sizeof(path)), 0);
		t = compare_file(path, 3000);
		assert_true(t.frames > 0);
		/*
		 * Rust and Go put their functions in DW_TAG_namespace DIEs, which
		 * libdw's lookup never enters (no ranges): no chain, same as before.
		 */
		if (!strncmp(names[i], "cpp", 3))
			assert_true(t.chains > 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nested_inline_chain),
	    cmocka_unit_test(test_c),
	    cmocka_unit_test(test_cpp),
	    cmocka_unit_test(test_workloads),
	    cmocka_unit_test(test_libpython),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
