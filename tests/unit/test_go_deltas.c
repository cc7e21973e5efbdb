// SPDX-License-Identifier: Apache-2.0
/*
 * Go stack deltas from .gopclntab (src/unwind/go_deltas.c through
 * stack_deltas__build) against a real Go binary, build/workloads/go_deep
 * (built by `go build`): every instruction of the main package's functions
 * must have the CFA offset its disassembly (`go tool objdump`) gives, the
 * runtime's roots and stack switches their own rules, and the same table
 * must come out of a copy without section headers (pclntab found by its
 * magic) and, for the deltas, out of the bytes alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>

#include <cmocka.h>

#include "elf/elf_file.h"
#include "elf/gopclntab.h"
#include "testutil.h"
#include "unwind/unwind_maps.h"
#include "unwind/go_deltas.h"
#include "unwind/stack_deltas.h"

struct go_bin {
	char path[512];
	char *objdump; /* `go tool objdump` of the main package and a few runtime functions */
	struct stack_delta_table table;
};

static int setup(void **state)
{
	struct go_bin *g = calloc(1, sizeof(*g));
	struct elf_file *ef = NULL;

	assert_non_null(g);
	snprintf(g->path, sizeof(g->path), "%s/workloads/go_deep", tu_build_dir());
	assert_int_equal(
	    tu_run(&g->objdump,
		   "go tool objdump -s '^(main\\.|runtime\\.(goexit|mstart|systemstack|"
		   "mcall|asmcgocall|nanotime1|systemstack_switch)(\\.abi0)?$)' %s",
		   g->path),
	    0);
	assert_int_equal(elf_file__open(g->path, -1, &ef), 0);
	assert_int_equal(stack_deltas__build(ef, &g->table), 0);
	elf_file__close(ef);
	*state = g;
	return 0;
}

static int teardown(void **state)
{
	struct go_bin *g = *state;

	stack_delta_table__free(&g->table);
	free(g->objdump);
	free(g);
	return 0;
}

static const struct op_unwind_rule *rule_at(const struct stack_delta_table *t, uint64_t pc)
{
	const struct stack_delta *d = stack_delta_table__find(t, pc);

	assert_non_null(d);
	return &d->rule;
}

/* The address of objdump line `line` ("  file.go:12\t0x4820c0\t..."), 0 if none. */
static uint64_t line_addr(const char *line)
{
	const char *p = strstr(line, "\t0x");

	return p ? strtoull(p + 1, NULL, 16) : 0;
}

/* The N of "SUBQ $0xN, SP" or "ADDQ $0xN, SP" on the line, -1 if it is neither. */
static long sp_adjust(const char *line, const char *op)
{
	const char *p = strstr(line, op);
	char *end;
	long v;

	if (!p)
		return -1;
	v = strtol(p + strlen(op), &end, 16);
	return strncmp(end, ", SP", 4) ? -1 : v;
}

/*
 * Walks the disassembly of every main.* function: the frame is 0 at the
 * entry, N after "SUBQ $N, SP", 0 after "ADDQ $N, SP" and after a RET (what
 * follows is the stack-growth path, run on the entry's frame). Every
 * instruction's rule must say CFA = rsp + frame + 8, with rbp saved at
 * CFA - 16 exactly when there is a frame.
 */
static void test_frames_as_objdump(void **state)
{
	struct go_bin *g = *state;
	long frame = 0, checked = 0, funcs = 0, framed = 0;
	bool in_main = false;
	char *save = NULL, *text = strdup(g->objdump);

	assert_non_null(text);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const struct op_unwind_rule *r;
		uint64_t pc;
		long n;

		if (!strncmp(line, "TEXT ", 5)) {
			in_main = !strncmp(line, "TEXT main.", 10);
			funcs += in_main;
			frame = 0;
			continue;
		}
		pc = line_addr(line);
		if (!in_main || !pc)
			continue;
		r = rule_at(&g->table, pc);
		if (r->cmd != OP_RULE_CFA || r->cfa_base != OP_CFA_RSP ||
		    r->cfa_offset != frame + 8 || r->fp_offset != (frame ? -16 : 0))
			fail_msg("%#llx: cmd %d base %d cfa %d fp %d, objdump gives frame %ld\n%s",
				 (unsigned long long)pc, r->cmd, r->cfa_base, r->cfa_offset,
				 r->fp_offset, frame, line);
		checked++;
		if ((n = sp_adjust(line, "SUBQ $0x")) >= 0) {
			frame = n;
			framed++;
		} else if (sp_adjust(line, "ADDQ $0x") >= 0 || strstr(line, "\tRET")) {
			frame = 0;
		}
	}
	free(text);
	printf("    %ld instructions of %ld main functions (%ld frames) as objdump gives\n",
	       checked, funcs, framed);
	assert_true(funcs >= 26); /* main, main.func1, leaf, deep_01 .. deep_24 */
	assert_true(framed >= 26);
}

/* The entry of `TEXT name(SB)` in the disassembly. */
static uint64_t func_entry(const struct go_bin *g, const char *name)
{
	char head[128];
	const char *p;

	snprintf(head, sizeof(head), "TEXT %s(SB)", name);
	p = strstr(g->objdump, head);
	if (!p) {
		snprintf(head, sizeof(head), "TEXT %s.abi0(SB)", name);
		p = strstr(g->objdump, head);
	}
	assert_non_null(p);
	p = strchr(p, '\n');
	assert_non_null(p);
	return line_addr(p + 1);
}

/* The offset of member in struct type of the binary's DWARF (readelf's dump), or -1. */
static int dwarf_member(const struct go_bin *g, const char *type, const char *member)
{
	char *out = NULL;
	int off = -1;

	assert_int_equal(tu_run(&out,
				"readelf --debug-dump=info '%s' 2>/dev/null | awk '"
				"/DW_TAG_structure_type/ { s = 1; t = \"\" } "
				"s && /DW_AT_name/ { t = $NF; s = 0 } "
				"/DW_TAG_member/ { m = 1 } "
				"m && /DW_AT_name/ { n = $NF } "
				"m && /DW_AT_data_member_location/ { "
				"if (t == \"%s\" && n == \"%s\") { print $NF; exit } m = 0 }'",
				g->path, type, member),
			 0);
	if (out && sscanf(out, "%d", &off) != 1)
		off = -1;
	free(out);
	return off;
}

static void test_roots_and_switches(void **state)
{
	struct go_bin *g = *state;
	const char *roots[] = {"runtime.goexit", "runtime.mstart", "runtime.mcall"};
	const char *switches[] = {"runtime.systemstack", "runtime.asmcgocall"};

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		uint64_t pc = func_entry(g, roots[i]);

		/* The goroutine's first function returns to goexit + 1. */
		assert_int_equal(rule_at(&g->table, pc)->cmd, OP_RULE_STOP);
		assert_int_equal(rule_at(&g->table, pc + 1)->cmd, OP_RULE_STOP);
	}
	for (size_t i = 0; i < sizeof(switches) / sizeof(switches[0]); i++) {
		const struct op_unwind_rule *r = rule_at(&g->table, func_entry(g, switches[i]) + 4);

		/* g at tp - 8; m.curg where the runtime's own DWARF says. */
		assert_int_equal(r->cmd, OP_RULE_GO_SWITCH);
		assert_int_equal(r->cfa_base, i == 1 ? OP_GO_SWITCH_F_CGO : 0);
		assert_int_equal(r->cfa_offset, -8);
		assert_int_equal(r->fp_offset, dwarf_member(g, "runtime.m", "curg"));
	}
	/* The offsets the BPF rule takes as constants, from the same DWARF. */
	assert_int_equal(dwarf_member(g, "runtime.g", "m"), OP_GO_G_M);
	assert_int_equal(dwarf_member(g, "runtime.g", "sched"), OP_GO_G_SCHED);
	assert_int_equal(dwarf_member(g, "runtime.m", "g0"), OP_GO_M_G0);
	assert_int_equal(dwarf_member(g, "runtime.gobuf", "sp"), OP_GO_GOBUF_SP);
	assert_int_equal(dwarf_member(g, "runtime.gobuf", "bp"), OP_GO_GOBUF_BP);
	/* The vDSO call: its own frame first (rsp), then rbp across the move to g0's stack. */
	{
		uint64_t pc = func_entry(g, "runtime.nanotime1");

		assert_int_equal(rule_at(&g->table, pc)->cmd, OP_RULE_CFA);
		assert_int_equal(rule_at(&g->table, pc)->cfa_offset, 8);
		assert_int_equal(rule_at(&g->table, pc + 0x10)->cmd, OP_RULE_FP_SWITCH);
	}
	/* A cgo callback returns to systemstack_switch's entry (Go 1.19-1.20), looked up
	 * as pc - 1: that byte too is a frame of nothing but its return address. */
	{
		uint64_t pc = func_entry(g, "runtime.systemstack_switch");

		for (int d = -1; d <= 0; d++) {
			assert_int_equal(rule_at(&g->table, pc + d)->cmd, OP_RULE_CFA);
			assert_int_equal(rule_at(&g->table, pc + d)->cfa_base, OP_CFA_RSP);
			assert_int_equal(rule_at(&g->table, pc + d)->cfa_offset, 8);
		}
	}
}

/*
 * Every rule of a (Go's alone) holds in b: b may fill a's gaps from CFI (the
 * unstripped binary's .debug_frame covers the padding between functions).
 */
static bool rules_hold_in(const struct stack_delta_table *a, const struct stack_delta_table *b)
{
	for (size_t i = 0; i < a->n; i++) {
		const struct stack_delta *d = stack_delta_table__find(b, a->deltas[i].addr);

		if (a->deltas[i].rule.cmd == OP_RULE_INVALID)
			continue;
		if (!d || memcmp(&d->rule, &a->deltas[i].rule, sizeof(d->rule)))
			return false;
	}
	return a->n > 1000;
}

/* A copy without section headers (e_shoff, e_shnum, e_shstrndx zeroed): the same table. */
static void test_without_section_headers(void **state)
{
	struct go_bin *g = *state;
	char *dir = tu_mkdtemp(), path[600];
	struct stack_delta_table t = {0};
	struct elf_file *ef = NULL;
	uint8_t id_full[STACK_DELTAS_ID_LEN], id_copy[STACK_DELTAS_ID_LEN];
	size_t len;
	char *bytes = tu_read_file(g->path, &len);
	int fd, err;

	assert_non_null(dir);
	assert_non_null(bytes);
	assert_true(len > 64);
	memset(bytes + 0x28, 0, 8); /* e_shoff */
	memset(bytes + 0x3c, 0, 4); /* e_shnum, e_shstrndx */
	snprintf(path, sizeof(path), "%s/go_deep_nosh", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	close(fd);
	free(bytes);

	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	err = stack_deltas__build(ef, &t);
	assert_int_equal(stack_deltas__table_id(ef, id_copy), 0);
	elf_file__close(ef);
	tu_rmtree(dir);
	free(dir);
	assert_int_equal(err, 0);
	assert_true(rules_hold_in(&t, &g->table));
	assert_int_equal(elf_file__open(g->path, -1, &ef), 0);
	assert_int_equal(stack_deltas__table_id(ef, id_full), 0);
	elf_file__close(ef);
	assert_memory_not_equal(id_full, id_copy, STACK_DELTAS_ID_LEN);
	stack_delta_table__free(&t);
}

/* Bytes that are not a pclntab, and tables cut short: errors or fewer deltas, never a crash. */
static void test_hostile_bytes(void **state)
{
	struct go_bin *g = *state;
	struct stack_delta_table t;
	struct go_delta_stats st;
	uint8_t junk[64] = {0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8};
	size_t len;
	char *bytes = tu_read_file(g->path, &len);
	long off;

	assert_int_equal(go_deltas__build(junk, sizeof(junk), 0x401000, &t, &st), -ENOEXEC);
	assert_int_equal(go_deltas__find_pclntab(junk, sizeof(junk), 0x401000, 0x500000), -ENOENT);
	assert_non_null(bytes);
	/* The real table inside the file, found by its magic, then cut at a few places. */
	off = go_deltas__find_pclntab((const uint8_t *)bytes, len, 0x401000, 0x401000 + (64 << 20));
	assert_true(off > 0);
	assert_int_equal(
	    go_deltas__build((const uint8_t *)bytes + off, len - (size_t)off, 0, &t, &st), 0);
	printf("    %llu functions, %llu special, %zu deltas\n", (unsigned long long)st.funcs,
	       (unsigned long long)st.special, t.n);
	assert_true(st.funcs > 1000);
	/* goexit, mstart, rt0_go, mcall, morestack, systemstack, asmcgocall: in every amd64 binary.
	 */
	assert_true(st.special >= 7);
	stack_delta_table__free(&t);
	for (size_t cut = 64; cut < len - (size_t)off; cut = cut * 3 + 7) {
		int err = go_deltas__build((const uint8_t *)bytes + off, cut, 0, &t, &st);

		assert_true(err == 0 || err == -ENOEXEC);
		stack_delta_table__free(&t);
	}
	free(bytes);
}

/* The reads of the one-function path: pread of the file (a section's bytes at base). */
struct file_reader {
	int fd;
	uint64_t base;
	unsigned long reads;
};

static int file_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct file_reader *rd = ctx;
	ssize_t n = pread(rd->fd, buf, len, (off_t)(rd->base + off));

	rd->reads++;
	return n == (ssize_t)len ? 0 : -EIO;
}

static uint64_t ns_between(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)((b->tv_sec - a->tv_sec) * 1000000000L + (b->tv_nsec - a->tv_nsec));
}

/*
 * For pcs all over a Go file (each delta's first byte, its middle and the
 * byte before the next, every stride-th delta), the rule of the function
 * read alone from .gopclntab through pread is the full table's rule,
 * wherever the one-function path gives one; it gives one for every pc the
 * table covers from Go's table (the rest: CFI of C code linked in).
 */
static void check_func_rules(const char *path, size_t stride, size_t min_checked)
{
	struct stack_delta_table t = {0};
	struct elf_file *ef = NULL;
	struct file_reader whole = {.fd = -1}, sect = {.fd = -1};
	struct gopclntab *g = NULL;
	struct go_index gi;
	size_t checked = 0, refused = 0, invalid = 0;
	struct timespec t0, t1;
	uint64_t go_ns = 0;

	assert_int_equal(elf_file__open(path, -1, &ef), 0);
	assert_int_equal(stack_deltas__build(ef, &t), 0);
	whole.fd = sect.fd = ef->fd;
	assert_int_equal(go_deltas__index_read(file_read, &whole, ef->size, &gi), 0);
	sect.base = gi.off;
	assert_int_equal(gopclntab__open_read(file_read, &sect, gi.size, gi.text_addr, &g), 0);
	for (size_t i = 0; i + 1 < t.n; i += stride) {
		uint64_t lo = t.deltas[i].addr, hi = t.deltas[i + 1].addr;
		uint64_t pcs[3] = {lo, lo + (hi - lo) / 2, hi - 1};

		for (int k = 0; k < 3; k++) {
			const struct stack_delta *want = stack_delta_table__find(&t, pcs[k]);
			const struct op_unwind_rule *got;
			struct fde_rows r;
			int err;

			assert_non_null(want);
			/* Timed for bench/RESULTS.md (printed, not checked): thread CPU time. */
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
			err = go_deltas__func_rows(g, pcs[k], &r);
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
			go_ns += ns_between(&t0, &t1);
			if (err) {
				assert_int_equal(err, -ENOENT);
				refused++;
				continue;
			}
			got = fde_rows__rule(&r, pcs[k]);
			if (!got || got->cmd == OP_RULE_INVALID) {
				/* Padding after the function's pcsp table, a run with an impossible
				 * delta: CFI fills them in the table (no answer). */
				invalid++;
			} else if (memcmp(got, &want->rule, sizeof(*got))) {
				fail_msg(
				    "%s: pc 0x%llx: Go rule cmd %u base %u cfa %d fp %d, table cmd "
				    "%u base %u cfa %d fp %d",
				    path, (unsigned long long)pcs[k], got->cmd, got->cfa_base,
				    got->cfa_offset, got->fp_offset, want->rule.cmd,
				    want->rule.cfa_base, want->rule.cfa_offset,
				    want->rule.fp_offset);
			} else {
				checked++;
			}
			fde_rows__free(&r);
		}
	}
	print_message(
	    "%s: %zu pcs with the table's rule, %zu refused (not Go's), %zu in an invalid "
	    "run; per pc %.1f us CPU through pread (uncached), %.1f preads\n",
	    path, checked, refused, invalid,
	    (double)go_ns / 1e3 / (double)(checked + refused + invalid),
	    (double)sect.reads / (double)(checked + refused + invalid));
	assert_true(checked >= min_checked);
	/* Go code is nearly all of a Go binary: C code (cgo, CFI) is the rest. */
	assert_true(refused * 10 <= checked);
	gopclntab__free(g);
	elf_file__close(ef);
	stack_delta_table__free(&t);
}

static void test_func_rules_equal_table(void **state)
{
	struct go_bin *g = *state;
	char path[600];

	check_func_rules(g->path, 1, 5000);
	snprintf(path, sizeof(path), "%s/workloads/go_cgo", tu_build_dir());
	check_func_rules(path, 1, 5000);
	/* Debian's gofmt (Go 1.19), the whole-system test's. */
	if (access("/usr/lib/go-1.19/bin/gofmt", R_OK) == 0)
		check_func_rules("/usr/lib/go-1.19/bin/gofmt", 1, 20000);
}

/* Reads from a table held in memory (a copy the test changed). */
struct mem_reader {
	const uint8_t *data;
	size_t len;
};

static int mem_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct mem_reader *m = ctx;

	if (off > m->len || m->len - off < len)
		return -EIO;
	memcpy(buf, m->data + off, len);
	return 0;
}

/*
 * A function name longer than the window's first read of a name (512 bytes)
 * comes back whole through the read function, as from memory: it is read
 * again in full, never answered from the shorter window and the stale bytes
 * past it. The name of a function in the middle of the table is made 700
 * bytes long (over the names after it, in the copy).
 */
static void test_long_name_through_window(void **state)
{
	struct go_bin *g = *state;
	struct elf_file *ef = NULL;
	struct file_reader whole = {.fd = -1};
	struct gopclntab *in_mem = NULL, *through = NULL;
	struct gopclntab_func fm, fr;
	struct mem_reader m;
	struct go_index gi;
	const size_t long_len = 700;
	uint8_t *bytes;
	size_t i, at;

	assert_int_equal(elf_file__open(g->path, -1, &ef), 0);
	whole.fd = ef->fd;
	assert_int_equal(go_deltas__index_read(file_read, &whole, ef->size, &gi), 0);
	bytes = malloc(gi.size);
	assert_non_null(bytes);
	assert_int_equal(pread(ef->fd, bytes, gi.size, (off_t)gi.off), (ssize_t)gi.size);
	assert_int_equal(gopclntab__open(bytes, gi.size, gi.text_addr, &in_mem), 0);
	i = gopclntab__n_funcs(in_mem) / 2;
	assert_int_equal(gopclntab__func(in_mem, i, &fm), 0);
	at = (size_t)((const uint8_t *)fm.name - bytes);
	assert_true(at + long_len + 1 < gi.size);
	memset(bytes + at, 'x', long_len);
	bytes[at + long_len] = '\0';
	m.data = bytes;
	m.len = gi.size;
	assert_int_equal(gopclntab__open_read(mem_read, &m, gi.size, gi.text_addr, &through), 0);
	/* A read of another function first: the window holds other bytes. */
	assert_int_equal(gopclntab__func(through, 0, &fr), 0);
	assert_int_equal(gopclntab__func(in_mem, i, &fm), 0);
	assert_int_equal(strlen(fm.name), long_len);
	assert_int_equal(gopclntab__func(through, i, &fr), 0);
	assert_string_equal(fr.name, fm.name);
	assert_int_equal(fr.entry, fm.entry);
	gopclntab__free(through);
	gopclntab__free(in_mem);
	free(bytes);
	elf_file__close(ef);
}

/* A reader whose reads fail once its budget is spent (bytes not in the page cache). */
struct failing_reader {
	struct file_reader rd;
	unsigned long left;
};

static int failing_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct failing_reader *f = ctx;

	if (!f->left)
		return -EAGAIN;
	f->left--;
	return file_read(&f->rd, off, buf, len);
}

/*
 * Reads that fail part way through a lookup give the read's error, never
 * another answer: no rule from bytes half read, no "not Go's" for a pc Go's
 * table covers.
 */
static void test_func_rows_failed_reads(void **state)
{
	struct go_bin *g = *state;
	struct elf_file *ef = NULL;
	struct file_reader whole = {.fd = -1};
	struct failing_reader fr = {.rd = {.fd = -1}};
	struct gopclntab *t = NULL;
	struct go_index gi;
	size_t answered = 0, failed = 0;

	assert_int_equal(elf_file__open(g->path, -1, &ef), 0);
	whole.fd = fr.rd.fd = ef->fd;
	assert_int_equal(go_deltas__index_read(file_read, &whole, ef->size, &gi), 0);
	fr.rd.base = gi.off;
	fr.left = 1000;
	assert_int_equal(gopclntab__open_read(failing_read, &fr, gi.size, gi.text_addr, &t), 0);
	for (size_t i = 0; i + 1 < g->table.n; i += 13) {
		uint64_t pc = g->table.deltas[i].addr;
		struct fde_rows full, r;
		int want;

		fr.left = 1000;
		want = go_deltas__func_rows(t, pc, &full);
		for (unsigned long budget = 0; budget < 16; budget++) {
			int err;

			fr.left = budget;
			err = go_deltas__func_rows(t, pc, &r);
			if (err == -EAGAIN) {
				failed++;
				continue;
			}
			assert_int_equal(err, want);
			if (!err) {
				assert_int_equal(r.n, full.n);
				assert_memory_equal(r.rows, full.rows, r.n * sizeof(*r.rows));
				answered++;
			}
			fde_rows__free(&r);
		}
		fde_rows__free(&full);
	}
	assert_true(answered > 100 && failed > 100);
	gopclntab__free(t);
	elf_file__close(ef);
}

/* The same through unwind_maps__fde_rule: what a copy's walk calls, and its memo. */
static void test_go_rule_memo(void **state)
{
	struct go_bin *g = *state;
	struct elf_file *ef = NULL;
	struct unwind_maps um;
	size_t found = 0, read = 0;
	struct timespec t0, t1;
	uint64_t read_ns = 0;

	assert_int_equal(elf_file__open(g->path, -1, &ef), 0);
	unwind_maps__init(&um, -1, -1, -1, -1, 1 << 16);
	for (size_t i = 0; i + 1 < g->table.n; i++) {
		struct op_unwind_rule r1, r2;
		uint64_t pc = g->table.deltas[i].addr;
		int err;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		err = unwind_maps__fde_rule(&um, 0x77, ef, pc, &r1);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
		if (err == UNWIND_GO_READ) {
			read_ns += ns_between(&t0, &t1);
			read++;
		}

		if (err < 0) {
			assert_true(unwind_maps__fde_file_is_go(&um, 0x77));
			continue;
		}
		assert_true(err == UNWIND_GO_READ || err == UNWIND_GO_REMEMBERED);
		assert_memory_equal(&r1, &g->table.deltas[i].rule, sizeof(r1));
		found++;
		/* Asked again: remembered, no read. */
		assert_int_equal(unwind_maps__fde_rule(&um, 0x77, ef, pc, &r2),
				 UNWIND_GO_REMEMBERED);
		assert_memory_equal(&r1, &r2, sizeof(r1));
	}
	/* Timed for bench/RESULTS.md (printed, not checked): a function read, its function
	 * table in memory, from the page cache; thread CPU time. */
	print_message("%s: %zu rules, %zu functions read from .gopclntab, %.1f us CPU each\n",
		      g->path, found, read, read ? (double)read_ns / 1e3 / (double)read : 0.0);
	assert_true(found > 1000);
	assert_true(read > 100 && read < found);
	unwind_maps__clear(&um);
	elf_file__close(ef);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frames_as_objdump),
	    cmocka_unit_test(test_roots_and_switches),
	    cmocka_unit_test(test_without_section_headers),
	    cmocka_unit_test(test_hostile_bytes),
	    cmocka_unit_test(test_func_rules_equal_table),
	    cmocka_unit_test(test_func_rows_failed_reads),
	    cmocka_unit_test(test_long_name_through_window),
	    cmocka_unit_test(test_go_rule_memo),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
