// SPDX-License-Identifier: Apache-2.0
/*
 * Separate debug files found the way gdb finds them, each place on its own:
 * .gnu_debuglink in the binary's .debug/ folder, under a debug root
 * mirroring the binary's folder, by build id; a debug file with the right
 * name but the wrong contents is refused; MiniDebugInfo (.gnu_debugdata)
 * names functions of a stripped binary with no file at all; compressed DWARF
 * is read from an inflated copy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "symbol/debuginfo.h"
#include "symbol/native_symbols.h"
#include "testutil.h"

static const char src[] = "__attribute__((noinline)) int dbg_static_fn(int x) {\n"
			  "  volatile int s = 0; for (int i = 0; i < x; i++) s += i; return s; }\n"
			  "int main(int argc, char **argv) { (void)argv;\n"
			  "  return dbg_static_fn(argc); }\n";

struct fx {
	char *dir;
	uint64_t fn_addr;
};

static int run(const char *cmd_fmt, const char *dir)
{
	char *out = NULL;
	int rc = tu_run(&out, cmd_fmt, dir, dir, dir, dir, dir, dir);

	if (rc)
		print_error("%s\n", out ? out : "");
	free(out);
	return rc;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char path[512], *out = NULL;
	FILE *src_file;

	assert_non_null(f);
	f->dir = tu_mkdtemp();
	assert_non_null(f->dir);
	snprintf(path, sizeof(path), "%s/prog.c", f->dir);
	src_file = fopen(path, "w");
	assert_non_null(src_file);
	fputs(src, src_file);
	fclose(src_file);
	assert_int_equal(run("cd %s && cc -O1 -g -Wl,--build-id prog.c -o prog.full", f->dir), 0);
	assert_int_equal(
	    tu_run(&out, "nm %s/prog.full | awk '/ dbg_static_fn$/ {print $1}'", f->dir), 0);
	f->fn_addr = strtoull(out, NULL, 16);
	free(out);
	assert_true(f->fn_addr != 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	tu_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* Names dbg_static_fn in bin with the given search roots; returns the debug file used. */
static void expect_named(const char *bin, const char *root, uint64_t addr, const char *want_debug)
{
	struct debuginfo d;
	struct symbol_options o = {.demangle = DEMANGLE_DEFAULT, .debuginfo = &d};
	struct native_symbols *ns;
	struct native_symbols_info info;
	struct sym_frame frames[SYM_MAX_FRAMES];
	struct elf_file *ef;
	size_t n;

	assert_int_equal(debuginfo__init(&d, &root, root ? 1 : 0, false), 0);
	assert_int_equal(elf_file__open(bin, -1, &ef), 0);
	assert_int_equal(native_symbols__open_opts(ef, &o, &ns), 0);
	n = native_symbols__frames(ns, addr + 2, frames, SYM_MAX_FRAMES);
	native_symbols__info(ns, &info);
	if (want_debug) {
		assert_non_null(info.debug_file);
		assert_string_equal(info.debug_file, want_debug);
		assert_true(info.has_dwarf);
		assert_int_equal(n, 1);
		assert_string_equal(frames[0].name, "dbg_static_fn");
		assert_non_null(frames[0].file);
		assert_non_null(strstr(frames[0].file, "prog.c"));
		assert_true(frames[0].line > 0);
	} else {
		assert_null(info.debug_file);
		assert_int_equal(n, 0);
	}
	native_symbols__free(ns);
	elf_file__close(ef);
	debuginfo__clear(&d);
}

static void test_debuglink_dot_debug(void **state)
{
	struct fx *f = *state;
	char bin[512], want[512];

	assert_int_equal(
	    run("cd %s && rm -rf a && mkdir -p a/.debug && "
		"objcopy --only-keep-debug prog.full a/.debug/prog.debug && "
		"objcopy --strip-all --add-gnu-debuglink=a/.debug/prog.debug prog.full "
		"a/prog",
		f->dir),
	    0);
	snprintf(bin, sizeof(bin), "%s/a/prog", f->dir);
	snprintf(want, sizeof(want), "%s/a/.debug/prog.debug", f->dir);
	expect_named(bin, NULL, f->fn_addr, want);
}

static void test_debuglink_under_root(void **state)
{
	struct fx *f = *state;
	char bin[512], root[512], want[512];

	/* ROOT/<the binary's folder>/NAME, like /usr/lib/debug/usr/bin/x.debug. */
	assert_int_equal(run("cd %s && rm -rf b root && mkdir -p b root%s/b && "
			     "objcopy --only-keep-debug prog.full root%s/b/prog.debug && "
			     "objcopy --strip-all --add-gnu-debuglink=root%s/b/prog.debug "
			     "prog.full b/prog",
			     f->dir),
			 0);
	snprintf(bin, sizeof(bin), "%s/b/prog", f->dir);
	snprintf(root, sizeof(root), "%s/root", f->dir);
	snprintf(want, sizeof(want), "%s/root%s/b/prog.debug", f->dir, f->dir);
	expect_named(bin, root, f->fn_addr, want);
}

static void test_build_id(void **state)
{
	struct fx *f = *state;
	char bin[512], root[512], want[512];
	struct elf_file *ef;

	snprintf(bin, sizeof(bin), "%s/prog.full", f->dir);
	assert_int_equal(elf_file__open(bin, -1, &ef), 0);
	assert_non_null(ef->build_id);
	snprintf(want, sizeof(want), "%s/ids/.build-id/%.2s/%s.debug", f->dir, ef->build_id,
		 ef->build_id + 2);
	assert_int_equal(tu_run(NULL,
				"mkdir -p $(dirname %s) && objcopy --only-keep-debug %s %s && "
				"objcopy --strip-all %s %s/c_prog",
				want, bin, want, bin, f->dir),
			 0);
	elf_file__close(ef);
	snprintf(bin, sizeof(bin), "%s/c_prog", f->dir);
	snprintf(root, sizeof(root), "%s/ids", f->dir);
	expect_named(bin, root, f->fn_addr, want);
}

/* Names dbg_static_fn in bin as expect_named() does, with inflated copies kept in
 * inflate_dir; *stats gets the search's counters. */
/* As expect_named_inflated(), with this many bytes of copies allowed to the run. */
static void expect_named_budget(const char *bin, const char *root, const char *inflate_dir,
				uint64_t addr, struct debuginfo_stats *stats, uint64_t budget)
{
	struct debuginfo d;
	struct symbol_options o = {.demangle = DEMANGLE_DEFAULT, .debuginfo = &d};
	struct native_symbols *ns;
	struct native_symbols_info info;
	struct sym_frame frames[SYM_MAX_FRAMES];
	struct elf_file *ef;
	size_t n;

	assert_int_equal(debuginfo__init(&d, &root, 1, false), 0);
	assert_int_equal(debuginfo__set_inflate_dir(&d, inflate_dir), 0);
	if (budget != UINT64_MAX)
		d.inflated_budget = budget;
	assert_int_equal(elf_file__open(bin, -1, &ef), 0);
	assert_int_equal(native_symbols__open_opts(ef, &o, &ns), 0);
	n = native_symbols__frames(ns, addr + 2, frames, SYM_MAX_FRAMES);
	native_symbols__info(ns, &info);
	assert_true(info.has_dwarf);
	assert_int_equal(n, 1);
	assert_string_equal(frames[0].name, "dbg_static_fn");
	assert_non_null(frames[0].file);
	assert_non_null(strstr(frames[0].file, "prog.c"));
	assert_true(frames[0].line > 0);
	/* Read from the copy, the DWARF is not inflated into the heap. */
	assert_true(!info.dwarf_in_heap == (stats != NULL && d.stats.inflated_used > 0));
	native_symbols__free(ns);
	elf_file__close(ef);
	if (stats)
		*stats = d.stats;
	debuginfo__clear(&d);
}

static void expect_named_inflated(const char *bin, const char *root, const char *inflate_dir,
				  uint64_t addr, struct debuginfo_stats *stats)
{
	expect_named_budget(bin, root, inflate_dir, addr, stats, UINT64_MAX);
}

/*
 * A debug file with compressed DWARF (objcopy --compress-debug-sections, as
 * Debian's -dbg packages ship) is read from an inflated copy in the given
 * folder: written once (under a name the table cache's trim counts: under 64
 * bytes), its sections no longer compressed, read back by the
 * next search; a copy that is not the debug file (another build id) is
 * replaced; a run writes copies up to its budget of bytes; a folder others may
 * write is not used. The names and lines are
 * the same every way.
 */
static void test_compressed_read_inflated(void **state)
{
	struct fx *f = *state;
	char bin[512], root[512], want[512], cache[512], *out = NULL;
	struct debuginfo_stats st;
	struct elf_file *ef;

	snprintf(bin, sizeof(bin), "%s/prog.full", f->dir);
	assert_int_equal(elf_file__open(bin, -1, &ef), 0);
	assert_non_null(ef->build_id);
	snprintf(want, sizeof(want), "%s/zids/.build-id/%.2s/%s.debug", f->dir, ef->build_id,
		 ef->build_id + 2);
	assert_int_equal(tu_run(NULL,
				"mkdir -p $(dirname %s) && objcopy --only-keep-debug "
				"--compress-debug-sections=zlib %s %s && objcopy --strip-all %s "
				"%s/z_prog && readelf -SW %s | grep -q ' \\.debug_info .* C '",
				want, bin, want, bin, f->dir, want),
			 0);
	elf_file__close(ef);
	snprintf(bin, sizeof(bin), "%s/z_prog", f->dir);
	snprintf(root, sizeof(root), "%s/zids", f->dir);
	snprintf(cache, sizeof(cache), "%s/inflated", f->dir);

	/* Without a folder: inflated in memory, as before. */
	expect_named_inflated(bin, root, NULL, f->fn_addr, NULL);
	/* The first search writes the copy, the second reads it. */
	expect_named_inflated(bin, root, cache, f->fn_addr, &st);
	assert_int_equal(st.inflated_written, 1);
	assert_int_equal(st.inflated_used, 1);
	assert_int_equal(st.inflated_failed, 0);
	assert_int_equal(tu_run(&out,
				"cd %s && ls | awk 'length($0) >= 64 { exit 1 }' && "
				"ls | grep -c '\\.dbg1$' && ! ls -a | grep -q '^\\.tmp-' && "
				"! readelf -SW *.dbg1 | grep -q ' \\.debug_.* C '",
				cache),
			 0);
	assert_int_equal(atoi(out), 1);
	free(out);
	expect_named_inflated(bin, root, cache, f->fn_addr, &st);
	assert_int_equal(st.inflated_written, 0);
	assert_int_equal(st.inflated_used, 1);

	/* Not the debug file under the copy's name: refused and written again. */
	assert_int_equal(
	    tu_run(NULL, "cd %s && for c in *.dbg1; do cp /bin/true \"$c\"; done", cache), 0);
	expect_named_inflated(bin, root, cache, f->fn_addr, &st);
	assert_int_equal(st.inflated_written, 1);
	assert_int_equal(st.inflated_used, 1);

	/* Past the run's budget of copy bytes: inflated in memory, nothing written. */
	assert_int_equal(tu_run(NULL, "rm -f %s/*.dbg1", cache), 0);
	expect_named_budget(bin, root, cache, f->fn_addr, &st, 1024);
	assert_int_equal(st.inflated_written, 0);
	assert_int_equal(st.inflated_used, 0);
	assert_int_equal(st.inflated_failed, 1);
	assert_int_equal(tu_run(&out, "ls %s | grep -c '\\.dbg1$' || true", cache), 0);
	assert_int_equal(atoi(out), 0);
	free(out);

	/* A folder others may write: no copies. */
	assert_int_equal(tu_run(NULL, "chmod 0777 %s", cache), 0);
	expect_named_inflated(bin, root, cache, f->fn_addr, &st);
	assert_int_equal(st.inflated_written, 0);
	assert_int_equal(st.inflated_used, 0);
}

static void test_wrong_file_refused(void **state)
{
	struct fx *f = *state;
	char bin[512];

	/* The debuglink's name, but another program's debug file: CRC and build id differ. */
	assert_int_equal(
	    run("cd %s && rm -rf d && mkdir d && "
		"objcopy --only-keep-debug prog.full d/prog.debug && "
		"objcopy --strip-all --add-gnu-debuglink=d/prog.debug prog.full d/prog && "
		"sed 's/s += i/s ^= i/' prog.c > other.c && "
		"cc -O1 -g other.c -o other && objcopy --only-keep-debug other d/prog.debug",
		f->dir),
	    0);
	snprintf(bin, sizeof(bin), "%s/d/prog", f->dir);
	expect_named(bin, NULL, f->fn_addr, NULL);
}

static void test_minidebuginfo(void **state)
{
	struct fx *f = *state;
	struct elf_file *ef;
	struct native_symbols *ns;
	const char *name;
	char bin[512];

	/* gdb's recipe, in short: a symbol table only, xz'ed into .gnu_debugdata. */
	assert_int_equal(
	    run("cd %s && rm -f mini mini.xz e_prog && "
		"objcopy --only-keep-debug prog.full mini && "
		"objcopy --strip-debug --remove-section .comment mini && xz -k mini && "
		"objcopy --strip-all prog.full e_prog && "
		"objcopy --add-section .gnu_debugdata=mini.xz e_prog",
		f->dir),
	    0);
	snprintf(bin, sizeof(bin), "%s/e_prog", f->dir);
	assert_int_equal(elf_file__open(bin, -1, &ef), 0);
	assert_int_equal(native_symbols__open(ef, &ns), 0);
	name = native_symbols__lookup(ns, f->fn_addr + 2, NULL);
	assert_non_null(name);
	assert_string_equal(name, "dbg_static_fn");
	native_symbols__free(ns);
	elf_file__close(ef);
}

/*
 * A .gnu_debugaltlink naming a FIFO (a path the file chooses, which libdw
 * would open itself): the alt file is looked up by build id only, and the
 * DWARF is set aside when it is not found; symbols still name the function
 * and nothing blocks (alarm).
 */
static void test_altlink_never_opened_by_path(void **state)
{
	struct fx *f = *state;
	struct debuginfo d;
	struct symbol_options o = {.demangle = DEMANGLE_DEFAULT, .debuginfo = &d};
	struct native_symbols *ns;
	struct native_symbols_info info;
	struct elf_file *ef;
	const char *name;
	char bin[512];

	assert_int_equal(run("cd %s && rm -f alt.fifo altlink alt_prog && mkfifo alt.fifo && "
			     "{ printf '%%s/alt.fifo\\0' \"$PWD\"; "
			     "printf '0123456789abcdef0123'; } > altlink && "
			     "objcopy --add-section .gnu_debugaltlink=altlink prog.full alt_prog",
			     f->dir),
			 0);
	snprintf(bin, sizeof(bin), "%s/alt_prog", f->dir);
	alarm(20);
	assert_int_equal(debuginfo__init(&d, NULL, 0, false), 0);
	assert_int_equal(elf_file__open(bin, -1, &ef), 0);
	assert_int_equal(native_symbols__open_opts(ef, &o, &ns), 0);
	native_symbols__info(ns, &info);
	assert_false(info.has_dwarf);
	name = native_symbols__lookup(ns, f->fn_addr + 2, NULL);
	assert_non_null(name);
	assert_string_equal(name, "dbg_static_fn");
	alarm(0);
	native_symbols__free(ns);
	elf_file__close(ef);
	debuginfo__clear(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_debuglink_dot_debug),
	    cmocka_unit_test(test_debuglink_under_root),
	    cmocka_unit_test(test_build_id),
	    cmocka_unit_test(test_compressed_read_inflated),
	    cmocka_unit_test(test_wrong_file_refused),
	    cmocka_unit_test(test_minidebuginfo),
	    cmocka_unit_test(test_altlink_never_opened_by_path),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
