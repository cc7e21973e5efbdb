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
#include <unistd.h>

#include <setjmp.h>

#include <cmocka.h>

#include "elf/elf_file.h"
#include "testutil.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frames_as_objdump),
	    cmocka_unit_test(test_roots_and_switches),
	    cmocka_unit_test(test_without_section_headers),
	    cmocka_unit_test(test_hostile_bytes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
