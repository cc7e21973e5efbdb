// SPDX-License-Identifier: Apache-2.0
/*
 * Naming Perl frames (src/interp/perl/perl_sub.c) over memory built here by
 * hand with the 5.36 layout: "Package::sub" from the CV's GV and its
 * stash's name (one name, or a stash with several), a lexical sub's own
 * name, an anonymous sub's "__ANON__", CvFILE; eval and main-program frames
 * named from their COP's file; a CV whose body changed is refused; names
 * are bounded; unreadable memory fails cleanly. And the ELF side
 * (perl_binary.c) on Debian's real perl and libperl.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <libelf.h>

#include "elf/elf_file.h"
#include "interp/perl/perl_binary.h"
#include "interp/perl/perl_layout.h"
#include "interp/perl/perl_sub.h"
#include "proc/remote_memory.h"

#define MEM_BASE 0x7f0000000000ull
#define MEM_SIZE 0x10000
#define CV	 (MEM_BASE + 0x100)
#define CV_BODY	 (MEM_BASE + 0x200)
#define GV	 (MEM_BASE + 0x300)
#define GV_BODY	 (MEM_BASE + 0x400)
#define STASH	 (MEM_BASE + 0x500)
#define HV_BODY	 (MEM_BASE + 0x600)
#define HEK_SUB	 (MEM_BASE + 0x800)
#define HEK_PKG	 (MEM_BASE + 0x900)
#define NAMES	 (MEM_BASE + 0xa00) /* a stash's list of names */
#define FILE	 (MEM_BASE + 0xb00)
#define COP	 (MEM_BASE + 0xc00)
#define LONG	 (MEM_BASE + 0x1000)

static uint8_t mem[MEM_SIZE];
static const struct perl_layout *L;

static int mem_read(void *ctx, uint64_t addr, void *dst, size_t size)
{
	(void)ctx;
	if (addr < MEM_BASE || addr - MEM_BASE > MEM_SIZE || size > MEM_SIZE - (addr - MEM_BASE))
		return -EFAULT;
	memcpy(dst, &mem[addr - MEM_BASE], size);
	return 0;
}

static const struct remote_memory M = {mem_read, NULL};

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(&mem[addr - MEM_BASE], &v, sizeof(v));
}

static void put32(uint64_t addr, uint32_t v)
{
	memcpy(&mem[addr - MEM_BASE], &v, sizeof(v));
}

static void put_str(uint64_t addr, const char *s)
{
	memcpy(&mem[addr - MEM_BASE], s, strlen(s) + 1);
}

static void put_hek(uint64_t addr, const char *s)
{
	put32(addr + L->hek_len, (uint32_t)strlen(s));
	memcpy(&mem[addr + L->hek_key - MEM_BASE], s, strlen(s));
}

/* A sub `pkg::name` in file: CV -> body -> GV -> body -> name HEK, stash -> aux -> HEK. */
static void build_sub(const char *pkg, const char *name, const char *file)
{
	put64(CV + L->sv_any, CV_BODY);
	put64(CV_BODY + L->cv_gv, GV);
	put64(CV_BODY + L->cv_file, FILE);
	put32(CV_BODY + L->cv_flags, 0);
	put_str(FILE, file);
	put64(GV + L->sv_any, GV_BODY);
	put64(GV_BODY + L->gv_name, HEK_SUB);
	put64(GV_BODY + L->gv_stash, STASH);
	put_hek(HEK_SUB, name);
	put64(STASH + L->sv_any, HV_BODY);
	put32(STASH + L->sv_flags, L->svf_ook);
	put64(HV_BODY + L->hv_aux + L->hv_aux_name, HEK_PKG);
	put32(HV_BODY + L->hv_aux + L->hv_aux_count, 0);
	put_hek(HEK_PKG, pkg);
}

static void expect(uint64_t addr, uint64_t data, const char *name, const char *file)
{
	struct perl_sub *s = NULL;

	assert_int_equal(perl_sub__read(&M, L, addr, data, &s), 0);
	assert_string_equal(s->name, name);
	assert_string_equal(s->file, file);
	assert_true(perl_sub__bytes(s) > strlen(name) + strlen(file));
	perl_sub__free(s);
}

static int setup(void **state)
{
	(void)state;
	memset(mem, 0, sizeof(mem));
	L = perl_layout__find(36, true);
	assert_non_null(L);
	return 0;
}

static void test_named_sub(void **state)
{
	(void)state;
	build_sub("Report", "row", "/srv/app/report.pl");
	expect(CV, CV_BODY, "Report::row", "/srv/app/report.pl");
	expect(CV, 0, "Report::row", "/srv/app/report.pl"); /* no fingerprint to check */
}

static void test_anon_and_lexical(void **state)
{
	struct perl_sub *s = NULL;

	(void)state;
	build_sub("Report", "__ANON__", "a.pl");
	expect(CV, CV_BODY, "Report::__ANON__", "a.pl");
	/* A lexical sub: CVf_NAMED, its own HEK, the package from xcv_stash. */
	put32(CV_BODY + L->cv_flags, L->cvf_named);
	put64(CV_BODY + L->cv_gv, HEK_SUB);
	put_hek(HEK_SUB, "helper");
	put64(CV_BODY + L->cv_stash, STASH);
	expect(CV, CV_BODY, "Report::helper", "a.pl");
	/* No GV at all: the name perl would print for it. */
	put32(CV_BODY + L->cv_flags, 0);
	put64(CV_BODY + L->cv_gv, 0);
	assert_int_equal(perl_sub__read(&M, L, CV, CV_BODY, &s), 0);
	assert_string_equal(s->name, "__ANON__");
	perl_sub__free(s);
}

/* A stash with several names (xhv_name_count != 0) points at the list; the first is the name. */
static void test_stash_with_names(void **state)
{
	(void)state;
	build_sub("Old", "f", "x.pl");
	put64(HV_BODY + L->hv_aux + L->hv_aux_name, NAMES);
	put32(HV_BODY + L->hv_aux + L->hv_aux_count, 2);
	put64(NAMES, HEK_PKG);
	put_hek(HEK_PKG, "New::Pkg");
	expect(CV, CV_BODY, "New::Pkg::f", "x.pl");
	/* No SVf_OOK: no aux struct, no package. */
	put32(STASH + L->sv_flags, 0);
	expect(CV, CV_BODY, "f", "x.pl");
}

static void test_eval_and_main(void **state)
{
	(void)state;
	put64(COP + L->cop_file, FILE);
	put_str(FILE, "(eval 12)");
	expect(COP, OP_PERL_DATA_EVAL, "(eval)", "(eval 12)");
	put_str(FILE, "script.pl");
	expect(COP, OP_PERL_DATA_MAIN, "(main)", "script.pl");
	/* A COP whose file cannot be read still names the frame. */
	put64(COP + L->cop_file, 0xdead0000);
	expect(COP, OP_PERL_DATA_MAIN, "(main)", "");
}

/*
 * 5.34 and older, unthreaded: the stash's aux struct after its bucket
 * array (HvARRAY + HvMAX + 1 pointers), the COP's file the name of its
 * "_<file" GV.
 */
#define BUCKETS (MEM_BASE + 0xd00)
static void test_old_hash_unthreaded(void **state)
{
	(void)state;
	L = perl_layout__find(30, false);
	assert_non_null(L);
	assert_true(L->hv_aux_after_array && L->cop_file_gv);
	build_sub("Old::Pkg", "f", "y.pl");
	/* build_sub() put the aux struct in the body: it is not there in 5.30. */
	put64(HV_BODY + L->hv_aux + L->hv_aux_name, 0);
	put64(STASH + L->sv_u, BUCKETS);
	put64(HV_BODY + L->hv_max, 7);
	put64(BUCKETS + 8 * 8 + L->hv_aux_name, HEK_PKG);
	put32(BUCKETS + 8 * 8 + L->hv_aux_count, 0);
	expect(CV, CV_BODY, "Old::Pkg::f", "y.pl");
	/* A max no hash has: no package, the sub still named. */
	put64(HV_BODY + L->hv_max, 1ull << 40);
	expect(CV, CV_BODY, "f", "y.pl");
	/* CopFILE(): GV -> body -> name HEK "_<script.pl". */
	put64(COP + L->cop_file, GV);
	put_hek(HEK_SUB, "_<script.pl");
	expect(COP, OP_PERL_DATA_MAIN, "(main)", "script.pl");
	put_hek(HEK_SUB, "_<(eval 3)");
	expect(COP, OP_PERL_DATA_EVAL, "(eval)", "(eval 3)");
	/* A threaded 5.30 reads the char * instead. */
	L = perl_layout__find(30, true);
	assert_false(L->cop_file_gv);
	put64(COP + L->cop_file, FILE);
	put_str(FILE, "t.pl");
	expect(COP, OP_PERL_DATA_MAIN, "(main)", "t.pl");
}

static void test_refused_and_unreadable(void **state)
{
	struct perl_sub *s = (struct perl_sub *)1;

	(void)state;
	build_sub("P", "f", "f.pl");
	/* Another body at that address: another CV now. */
	assert_int_equal(perl_sub__read(&M, L, CV, CV_BODY + 0x10, &s), -EINVAL);
	assert_null(s);
	assert_int_equal(perl_sub__read(&M, L, 0xdead0000, CV_BODY, &s), -EFAULT);
	assert_int_equal(perl_sub__read(&M, L, CV + 0x20, 0, &s), -EFAULT); /* sv_any 0 */
	/* A GV that cannot be read: the sub keeps its file, named as perl would an anon sub. */
	put64(CV_BODY + L->cv_gv, 0xdead0000);
	expect(CV, CV_BODY, "__ANON__", "f.pl");
}

/* Names and files are bounded, a negative HEK length refused, a file at the end of memory read. */
static void test_bounds(void **state)
{
	struct perl_sub *s = NULL;
	char big[3000];

	(void)state;
	build_sub("P", "f", "f.pl");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	put32(HEK_SUB + L->hek_len, 100000);
	memcpy(&mem[LONG - MEM_BASE], big, sizeof(big));
	put64(GV_BODY + L->gv_name, LONG - L->hek_key);
	put32(LONG - L->hek_key + L->hek_len, 100000);
	put64(CV_BODY + L->cv_file, LONG);
	assert_int_equal(perl_sub__read(&M, L, CV, CV_BODY, &s), 0);
	assert_int_equal(strlen(s->name), strlen("P::") + PERL_NAME_MAX - 1);
	assert_int_equal(strlen(s->file), PERL_FILE_MAX - 1);
	perl_sub__free(s);
	put32(LONG - L->hek_key + L->hek_len, 0x80000000u);
	assert_int_equal(perl_sub__read(&M, L, CV, CV_BODY, &s), 0);
	assert_string_equal(s->name, "P::__ANON__");
	perl_sub__free(s);
	/* "abc" in the last 3 bytes, no NUL before the end. */
	memcpy(&mem[MEM_SIZE - 3], "abc", 3);
	put64(CV_BODY + L->cv_file, MEM_BASE + MEM_SIZE - 3);
	assert_int_equal(perl_sub__read(&M, L, CV, CV_BODY, &s), 0);
	assert_string_equal(s->file, "abc");
	perl_sub__free(s);
	perl_sub__free(NULL);
}

/* Variant II: the executable's block ends at the thread pointer, its start aligned. */
static void test_exec_tls_offset(void **state)
{
	(void)state;
	assert_int_equal(perl_binary__exec_tls_offset(8, 8, 0x38f028, 0), -8); /* Debian's perl */
	assert_int_equal(perl_binary__exec_tls_offset(0x20, 16, 0x1000, 8), -0x18);
	/* A segment starting 8 bytes into a 16-byte alignment unit keeps that
	 * misalignment below the (16-aligned) thread pointer: tp - 8. */
	assert_int_equal(perl_binary__exec_tls_offset(8, 16, 0x1008, 0), -8);
	assert_int_equal(perl_binary__exec_tls_offset(24, 16, 0x1008, 0), -24);
	assert_int_equal(perl_binary__exec_tls_offset(4, 0, 0x1000, 0), -4);
}

static void inspect(const char *path, struct perl_binary *b)
{
	struct elf_file *ef = NULL;

	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	assert_int_equal(perl_binary__inspect(ef, path, b), 0);
	elf_file__close(ef);
}

/* Debian's perl: the interpreter in the stripped executable, and libperl for embedders. */
static void test_debian_perl(void **state)
{
	struct op_perl_proc proc;
	struct perl_binary b;

	(void)state;
	elf_version(EV_CURRENT);
	inspect("/usr/bin/perl", &b);
	assert_int_equal(b.minor, 36);
	assert_true(b.threaded);
	assert_true(b.curinterp != 0);
	assert_int_equal(b.tls_context, -8); /* PL_current_context, 8 bytes, the only TLS */
	assert_int_equal(b.n_runops, 2);
	assert_true(b.runops[0][0] < b.runops[0][1]);
	perl_binary__proc_info(&b, 0x555500000000ull, &proc);
	assert_int_equal(proc.curinterp, b.curinterp + 0x555500000000ull);
	assert_int_equal(proc.version, 5 << 8 | 36);
	assert_int_equal(proc.threaded, 1);
	inspect("/usr/lib/x86_64-linux-gnu/libperl.so.5.36", &b);
	assert_int_equal(b.minor, 36);
	assert_int_equal(b.tls_context, 0); /* a library's TLS block is not at a fixed offset */
	assert_true(b.curinterp != 0);
	assert_true(b.thr_key != 0);
}

/*
 * The C library's thread-specific data, from its libthread_db descriptors:
 * Debian 12's glibc 2.36 keeps specific[] at 1296 in struct pthread
 * (`_thread_db_pthread_specific` = {2048, 1, 1296}), 16-byte entries with
 * the value at 8. Perl's PL_thr_key value is found through them.
 */
static void test_glibc_tsd(void **state)
{
	struct elf_file *ef = NULL;
	struct op_perl_proc proc;
	struct perl_tsd tsd;
	struct perl_binary b;

	(void)state;
	elf_version(EV_CURRENT);
	assert_int_equal(elf_file__open("/lib/x86_64-linux-gnu/libc.so.6", -1, &ef), 0);
	assert_int_equal(perl_binary__glibc_tsd(ef, &tsd), 0);
	elf_file__close(ef);
	assert_int_equal(tsd.specific, 1296);
	assert_int_equal(tsd.entry, 16);
	assert_int_equal(tsd.data, 8);
	assert_int_equal(elf_file__open("/usr/bin/perl", -1, &ef), 0);
	assert_int_equal(perl_binary__glibc_tsd(ef, &tsd), -ENOENT);
	elf_file__close(ef);
	inspect("/usr/lib/x86_64-linux-gnu/libperl.so.5.36", &b);
	tsd = (struct perl_tsd){1296, 16, 8};
	perl_binary__proc_info(&b, 0x1000, &proc);
	assert_int_equal(proc.thr_key, 0);
	perl_binary__proc_tsd(&b, 0x1000, &tsd, &proc);
	assert_int_equal(proc.thr_key, b.thr_key + 0x1000);
	assert_int_equal(proc.tsd_specific, 1296);
	assert_int_equal(proc.tsd_entry, 16);
	assert_int_equal(proc.tsd_data, 8);
}

static void test_not_perl(void **state)
{
	struct elf_file *ef = NULL;
	struct perl_binary b;

	(void)state;
	elf_version(EV_CURRENT);
	assert_int_equal(elf_file__open("/bin/sh", -1, &ef), 0);
	assert_int_equal(perl_binary__inspect(ef, "/bin/sh", &b), -ENOENT);
	elf_file__close(ef);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_named_sub, setup),
	    cmocka_unit_test_setup(test_anon_and_lexical, setup),
	    cmocka_unit_test_setup(test_stash_with_names, setup),
	    cmocka_unit_test_setup(test_eval_and_main, setup),
	    cmocka_unit_test_setup(test_old_hash_unthreaded, setup),
	    cmocka_unit_test(test_glibc_tsd),
	    cmocka_unit_test_setup(test_refused_and_unreadable, setup),
	    cmocka_unit_test_setup(test_bounds, setup),
	    cmocka_unit_test(test_exec_tls_offset),
	    cmocka_unit_test(test_debian_perl),
	    cmocka_unit_test(test_not_perl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
