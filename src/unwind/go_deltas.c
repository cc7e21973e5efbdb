// SPDX-License-Identifier: Apache-2.0
/*
 * A Go function's pcsp value at a PC is how far rsp is below its value at
 * the function's entry, where rsp points at the return address: so the CFA
 * (rsp before the call) is rsp + value + 8. Go on amd64 saves the caller's
 * rbp in the slot right under the return address whenever the function has
 * a frame (value >= 8), which is CFA - 16; frameless functions leave rbp
 * alone. The walk needs rbp only for frames that are not Go's (C code
 * reached through cgo, the stack switches below).
 */
#include "unwind/go_deltas.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <elf.h>

#include "elf/elf_sections.h"
#include "elf/gopclntab.h"
#include "util/array.h"

/* A frame bigger than this is a corrupt table (the CFA offset is 32 bits). */
#define GO_MAX_FRAME (1u << 30)
/*
 * Where an executable's g is, from the thread pointer (fs base): Go's TLS
 * slot runtime.tlsg is the executable's only TLS variable (8 bytes at 0 of
 * its PT_TLS, or the slot the runtime sets fs to when it has no PT_TLS), so
 * the x86-64 TLS layout puts it at tp - 8, linked by Go or by the system
 * linker (cgo), PIE or not. Not a Go library's (-buildmode=c-shared: its
 * TLS is dynamic): there the rule's checks (g == g.m.g0, curg.m == m) fail
 * and the frame-pointer fallback is taken.
 */
#define GO_G_TLS_OFFSET OP_GO_G_TLS_OFFSET
/*
 * m.curg's offset, amd64: 192 in Go 1.19 (Debian's; the unit test reads it
 * from the DWARF of the Go runtime installed), and in every release from
 * 1.16 to 1.23 by runtime/runtime2.go's struct m: g0, morebuf (gobuf, 7
 * words), divmod and padding, procid, gsignal, goSigStack (gsignalStack, 5
 * words), sigmask (8 bytes), tls (6 words), mstartfn, then curg.
 */
#define GO_M_CURG OP_GO_M_CURG

struct run {
	uint64_t start, end;
	struct op_unwind_rule rule;
};

struct runs {
	struct run *v;
	size_t n, cap;
	struct go_delta_stats *stats;
	/*
	 * pcsp steps left: Go's linker shares identical pc-value tables between
	 * functions, so a hostile table could make every function read the same
	 * long one. Real tables take far fewer steps than half their bytes.
	 */
	size_t budget;
};

static int runs__push(struct runs *rs, uint64_t start, uint64_t end, struct op_unwind_rule rule)
{
	int err;

	if (start >= end)
		return 0;
	if (rs->n) {
		struct run *last = &rs->v[rs->n - 1];

		/* Functions come in address order; one that starts inside the last
		 * run (a trampoline's byte before its entry) wins over it. */
		if (last->end > start)
			last->end = start;
		if (last->end <= last->start)
			rs->n--;
	}
	err = array__grow(rs->v, rs->cap, rs->n);
	if (err)
		return err;
	rs->v[rs->n++] = (struct run){.start = start, .end = end, .rule = rule};
	return 0;
}

static int pcsp_run(struct runs *rs, bool vdso, uint64_t start, uint64_t end, int32_t sp_delta)
{
	struct op_unwind_rule rule = {.cmd = OP_RULE_INVALID};

	if (!rs->budget)
		return -E2BIG;
	rs->budget--;

	if (sp_delta < 0 || (uint32_t)sp_delta > GO_MAX_FRAME) {
		rs->stats->bad_deltas++;
	} else {
		rule.cmd = OP_RULE_CFA;
		rule.cfa_base = OP_CFA_RSP;
		rule.cfa_offset = sp_delta + 8;
		rule.fp_offset = sp_delta >= 8 ? -16 : 0;
		if (vdso && sp_delta >= 8) {
			/* Its frame set, the function keeps rbp on it, moves rsp to g0's
			 * stack and aligns it (which pcsp cannot tell): rbp is the rule. */
			rule.cmd = OP_RULE_FP_SWITCH;
			rule.cfa_base = OP_CFA_RBP;
			rule.cfa_offset = 16;
		}
	}
	return runs__push(rs, start, end, rule);
}

static int on_pcsp(void *ctx, uint64_t start, uint64_t end, int32_t sp_delta)
{
	return pcsp_run(ctx, false, start, end, sp_delta);
}

static int on_pcsp_vdso(void *ctx, uint64_t start, uint64_t end, int32_t sp_delta)
{
	return pcsp_run(ctx, true, start, end, sp_delta);
}

enum go_special {
	GO_ORDINARY = 0,
	GO_ROOT,
	GO_SWITCH,
	GO_SWITCH_CGO, /* asmcgocall: the goroutine it left is saved in its g0 frame */
	GO_SIGRETURN,
	GO_VDSO,      /* a vDSO call: its own frame, then maybe g0's stack, rbp kept */
	GO_SWITCH_PC, /* the return address a switch leaves on the goroutine's stack */
};

/* The runtime's functions that end a stack or leave it (see go_deltas.h). */
static enum go_special special_of(const char *name)
{
	static const struct {
		const char *name;
		enum go_special kind;
	} specials[] = {
	    {"runtime.goexit", GO_ROOT},
	    {"runtime.mstart", GO_ROOT},
	    {"runtime.rt0_go", GO_ROOT},
	    {"runtime.mcall", GO_ROOT},
	    {"runtime.morestack", GO_ROOT},
	    {"runtime.systemstack", GO_SWITCH},
	    {"runtime.asmcgocall", GO_SWITCH_CGO},
	    {"runtime.sigreturn", GO_SIGRETURN},
	    {"runtime.sigreturn__sigaction", GO_SIGRETURN},
	    {"runtime.nanotime1", GO_VDSO},
	    {"runtime.walltime1", GO_VDSO},
	    {"runtime.walltime", GO_VDSO},
	    {"runtime.vgetrandom1", GO_VDSO},
	    {"runtime.systemstack_switch", GO_SWITCH_PC},
	};
	size_t len;

	if (strncmp(name, "runtime.", 8))
		return GO_ORDINARY;
	/* The linker may keep an ABI suffix on assembly functions' names. */
	len = strlen(name);
	if (len > 5 && !strcmp(name + len - 5, ".abi0"))
		len -= 5;
	for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
		if (strlen(specials[i].name) == len && !strncmp(name, specials[i].name, len))
			return specials[i].kind;
	return GO_ORDINARY;
}

/*
 * The byte before f's entry, which a special function takes from the one
 * before it (see add_func): nothing for the others.
 */
static int add_before_entry(struct runs *rs, enum go_special kind, const struct gopclntab_func *f)
{
	if (!f->entry)
		return 0;
	if (kind == GO_SWITCH_PC)
		return pcsp_run(rs, false, f->entry - 1, f->entry, 0);
	if (kind == GO_SIGRETURN)
		return runs__push(rs, f->entry - 1, f->entry,
				  (struct op_unwind_rule){.cmd = OP_RULE_SIGNAL});
	return 0;
}

static int add_func(struct runs *rs, const struct gopclntab *t, const struct gopclntab_func *f)
{
	struct op_unwind_rule rule = {0};
	enum go_special kind = special_of(f->name);
	size_t before = rs->n;
	int err;

	switch (kind) {
	case GO_ROOT:
		rule.cmd = OP_RULE_STOP;
		rs->stats->special++;
		return runs__push(rs, f->entry, f->end, rule);
	case GO_SWITCH:
	case GO_SWITCH_CGO:
		/* g.m.curg.sched holds the goroutine's registers (OP_RULE_GO_SWITCH). */
		rule.cmd = OP_RULE_GO_SWITCH;
		rule.cfa_base = kind == GO_SWITCH_CGO ? OP_GO_SWITCH_F_CGO : 0;
		rule.cfa_offset = GO_G_TLS_OFFSET;
		rule.fp_offset = GO_M_CURG;
		rs->stats->special++;
		return runs__push(rs, f->entry, f->end, rule);
	case GO_SIGRETURN:
		/* The handler returns to the trampoline's first byte, which the walk
		 * looks up as a return address (pc - 1): the rule starts a byte early,
		 * as the CFI of libc's trampoline does. */
		rule.cmd = OP_RULE_SIGNAL;
		rs->stats->special++;
		return runs__push(rs, f->entry ? f->entry - 1 : 0, f->end, rule);
	case GO_VDSO:
		rs->stats->special++;
		break;
	case GO_SWITCH_PC:
		/* A cgo callback (runtime.cgocallback) runs Go on the goroutine's stack
		 * under a frame whose return address is g.sched.pc: Go 1.19-1.20 save
		 * the entry of this 1-byte RET there, which the walk looks up as a
		 * return address (pc - 1), in the function before it. Its byte before
		 * the entry gets its frame's rule (rsp at the return address), so the
		 * walk goes on to runtime.cgocall (Go 1.21+ save entry + 8, inside). */
		rs->stats->special++;
		err = add_before_entry(rs, kind, f);
		if (err)
			return err;
		break;
	case GO_ORDINARY:
		break;
	}
	err = gopclntab__pcsp(t, f, kind == GO_VDSO ? on_pcsp_vdso : on_pcsp, rs);
	if (err == -ENOMEM || err == -E2BIG)
		return err;
	if (err) {
		/* A malformed table: none of the function's runs are trusted. */
		rs->n = before;
		rs->stats->bad_funcs++;
		return 0;
	}
	rs->stats->funcs++;
	return 0;
}

static bool rule_eq(const struct op_unwind_rule *a, const struct op_unwind_rule *b)
{
	return a->cmd == b->cmd && a->cfa_base == b->cfa_base && a->fp_offset == b->fp_offset &&
	       a->cfa_offset == b->cfa_offset;
}

static int table__push(struct stack_delta_table *t, size_t *cap, uint64_t addr,
		       struct op_unwind_rule rule)
{
	int err;

	if (t->n && rule_eq(&t->deltas[t->n - 1].rule, &rule))
		return 0;
	if (t->n && t->deltas[t->n - 1].addr == addr) {
		t->deltas[t->n - 1].rule = rule;
		return 0;
	}
	err = array__grow(t->deltas, *cap, t->n);
	if (err)
		return err;
	t->deltas[t->n].addr = addr;
	t->deltas[t->n].rule = rule;
	t->n++;
	return 0;
}

int go_deltas__build(const uint8_t *data, size_t len, uint64_t text_start,
		     struct stack_delta_table *out, struct go_delta_stats *stats)
{
	const struct op_unwind_rule invalid = {.cmd = OP_RULE_INVALID};
	struct runs rs = {.stats = stats, .budget = len / 2 + 65536};
	struct gopclntab *t = NULL;
	size_t cap = 0, n;
	int err;

	memset(out, 0, sizeof(*out));
	memset(stats, 0, sizeof(*stats));
	err = gopclntab__open(data, len, text_start, &t);
	if (err)
		return err;
	n = gopclntab__n_funcs(t);
	for (size_t i = 0; i < n; i++) {
		struct gopclntab_func f;

		if (gopclntab__func(t, i, &f)) {
			stats->bad_funcs++;
			continue;
		}
		/* Out of order entries would make the runs overlap: a corrupt table. */
		if (rs.n && f.entry < rs.v[rs.n - 1].start) {
			stats->bad_funcs++;
			continue;
		}
		err = add_func(&rs, t, &f);
		if (err == -E2BIG)
			err = -ENOEXEC; /* more steps than a real table of this size takes */
		if (err)
			goto cleanup;
	}
	if (!rs.n) {
		err = -ENOEXEC;
		goto cleanup;
	}
	for (size_t i = 0; i < rs.n; i++) {
		if (i && rs.v[i - 1].end < rs.v[i].start) {
			err = table__push(out, &cap, rs.v[i - 1].end, invalid);
			if (err)
				goto cleanup;
		}
		err = table__push(out, &cap, rs.v[i].start, rs.v[i].rule);
		if (err)
			goto cleanup;
	}
	err = table__push(out, &cap, rs.v[rs.n - 1].end, invalid);
cleanup:
	free(rs.v);
	gopclntab__free(t);
	if (err)
		stack_delta_table__free(out);
	return err;
}

long go_deltas__find_pclntab(const uint8_t *data, size_t len, uint64_t text_lo, uint64_t text_hi)
{
	for (size_t off = 0; off + 16 <= len && off <= (size_t)LONG_MAX; off += 4) {
		const uint8_t *p = data + off;
		struct gopclntab *t = NULL;
		struct gopclntab_func f;
		bool ok = true;
		size_t n;

		/* Magic 0xfffffffa / 0xfffffff0 / 0xfffffff1 (1.16, 1.18, 1.20), two zero
		 * bytes, quantum 1 and 8-byte pointers: amd64's header. */
		if (p[1] != 0xff || p[2] != 0xff || p[3] != 0xff ||
		    (p[0] != 0xfa && p[0] != 0xf0 && p[0] != 0xf1) || p[4] || p[5] || p[6] != 1 ||
		    p[7] != 8)
			continue;
		if (gopclntab__open(p, len - off, text_lo, &t))
			continue;
		n = gopclntab__n_funcs(t);
		/* A few functions must decode inside the text: a chance match does not. */
		for (size_t i = 0; ok && i < n && i < 8; i++)
			ok = !gopclntab__func(t, i, &f) && f.entry >= text_lo && f.end <= text_hi;
		gopclntab__free(t);
		if (ok)
			return (long)off;
	}
	return -ENOENT;
}

/* ---- one function at a time: a held stack copy's walk before the table exists --------- */

/* Steps of one function's pcsp table at most (real ones: a few dozen). */
#define FUNC_MAX_STEPS 65536

int go_deltas__func_rows(const struct gopclntab *t, uint64_t vaddr, struct fde_rows *out)
{
	struct go_delta_stats stats = {0};
	struct runs rs = {.stats = &stats, .budget = FUNC_MAX_STEPS};
	struct gopclntab_func f, next;
	size_t i, cap = 0, k = 0;
	int err, rerr;

	memset(out, 0, sizeof(*out));
	gopclntab__read_error(t);
	err = gopclntab__find_func(t, vaddr, &i);
	/* Before the first function: the first may take the byte before its entry. */
	if (err == -ENOENT && vaddr < UINT64_MAX && !gopclntab__find_func(t, vaddr + 1, &i) &&
	    i == 0) {
		err = 0;
		f = (struct gopclntab_func){0};
	} else if (!err) {
		err = gopclntab__func(t, i, &f);
		if (!err)
			err = add_func(&rs, t, &f);
		/* A function whose runs the build drops: the table's gap, CFI's to fill. */
		if (!err && (stats.bad_funcs || !rs.n))
			err = -ENOENT;
		i++;
	}
	/* The next function may take the last byte (see add_before_entry). */
	if (!err && i < gopclntab__n_funcs(t) && !gopclntab__func(t, i, &next))
		err = add_before_entry(&rs, special_of(next.name), &next);
	if (err == -E2BIG)
		err = -ENOENT; /* the build's budget is the whole table's: not this answer */
	rerr = gopclntab__read_error(t);
	if (rerr)
		err = rerr; /* bytes not read are no answer yet */
	if (!err && !rs.n)
		err = -ENOENT;
	if (err)
		goto cleanup;
	/* The runs as rows: a gap between them is OP_RULE_INVALID (no answer there). */
	for (size_t j = 0; j < rs.n; j++) {
		err = -ENOMEM;
		if (array__reserve(out->rows, cap, k + 2))
			goto cleanup;
		if (j && rs.v[j - 1].end < rs.v[j].start)
			out->rows[k++] = (struct stack_delta){.addr = rs.v[j - 1].end,
							      .rule = {.cmd = OP_RULE_INVALID}};
		out->rows[k++] = (struct stack_delta){.addr = rs.v[j].start, .rule = rs.v[j].rule};
	}
	err = 0;
	out->n = k;
	out->start = rs.v[0].start;
	out->end = rs.v[rs.n - 1].end;
	out->fde_off = f.entry;
cleanup:
	free(rs.v);
	if (err)
		fde_rows__free(out);
	return err;
}

int go_deltas__index_read(go_read_fn read, void *ctx, uint64_t file_size, struct go_index *out)
{
	struct elf_sections secs = {0};
	uint64_t text_addr = 0;
	const Elf64_Shdr *go;
	Elf64_Ehdr eh;
	int err;

	memset(out, 0, sizeof(*out));
	/* As the build: x86-64's registers; no section headers is the build's business. */
	err = elf_sections__ehdr(read, ctx, file_size, &eh);
	if (!err && eh.e_machine != EM_X86_64)
		err = -EOPNOTSUPP;
	if (!err)
		err = elf_sections__read(read, ctx, file_size, &eh, &secs);
	if (err)
		return err;
	/* As the build's find_sections(): the first .gopclntab, the first .text with an
	 * address (Go's tables may leave one 0). */
	go = elf_sections__first(&secs, ".gopclntab");
	for (size_t i = 0; i < secs.n && !text_addr; i++) {
		const char *name = elf_sections__name(&secs, i);

		if (name && !strcmp(name, ".text"))
			text_addr = secs.sh[i].sh_addr;
	}
	err = -ENOENT;
	if (!go)
		goto cleanup;
	/* The build reads it through libelf (decompressed, say): only the plain bytes here. */
	err = -EOPNOTSUPP;
	if (go->sh_type == SHT_NOBITS || go->sh_size == 0 || (go->sh_flags & SHF_COMPRESSED))
		goto cleanup;
	err = -ENOEXEC;
	if (go->sh_offset > file_size || go->sh_size > file_size - go->sh_offset)
		goto cleanup;
	out->off = go->sh_offset;
	out->size = go->sh_size;
	out->text_addr = text_addr;
	err = 0;
cleanup:
	elf_sections__free(&secs);
	return err;
}
