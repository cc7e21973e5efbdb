// SPDX-License-Identifier: Apache-2.0
/*
 * Call-frame information (.eh_frame, .debug_frame) to stack-delta tables.
 *
 * Three stages:
 *  1. Walk a section's entries (CIEs and FDEs). Each FDE's instructions run
 *     through a DW_CFA interpreter that tracks only what the BPF unwinder
 *     can use: the CFA, the rule for rbp (DWARF register 6) and for the
 *     return address (16). Every row is turned into a struct op_unwind_rule
 *     right away and appended as a row (start address, rule); equal
 *     neighbouring rows are merged as they come.
 *  2. FDEs are sorted by start address and clipped so none overlaps another
 *     (the lowest start wins, ties go to the FDE that comes first in the
 *     section). Where .eh_frame and .debug_frame both exist, .debug_frame
 *     rows only fill what .eh_frame leaves uncovered.
 *  3. The rows are kept in the table's form from stage 1 on (an address and
 *     the rule from there; each FDE's rows end with a gap row at its end), so
 *     stage 2 compacts them in place into the table: an OP_RULE_INVALID delta
 *     where an FDE ends without the next one starting there (and after the
 *     last one), equal consecutive rules merged. No second copy is made.
 *
 * Every byte is untrusted (any process can map any file). Reads go through a
 * cursor that never passes the end of its entry, the interpreter consumes at
 * least one byte per instruction (so it ends), the state stack is bounded, and
 * an entry that does not parse is skipped and counted, never trusted in part.
 */
#include "unwind/stack_deltas.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "elf/elf_file.h"
#include "elf/elf_sections.h"
#include "unwind/go_deltas.h"
#include "util/stat_memo.h"
#include "util/array.h"

/* x86-64 psABI DWARF register numbers. */
#define DWREG_RBX 3
#define DWREG_RBP 6
#define DWREG_RSP 7
#define DWREG_RA  16

/* Pointer encodings (LSB, "DWARF Extensions"). */
#define DW_EH_PE_absptr	  0x00
#define DW_EH_PE_uleb128  0x01
#define DW_EH_PE_udata2	  0x02
#define DW_EH_PE_udata4	  0x03
#define DW_EH_PE_udata8	  0x04
#define DW_EH_PE_signed	  0x08
#define DW_EH_PE_sleb128  0x09
#define DW_EH_PE_sdata2	  0x0a
#define DW_EH_PE_sdata4	  0x0b
#define DW_EH_PE_sdata8	  0x0c
#define DW_EH_PE_pcrel	  0x10
#define DW_EH_PE_indirect 0x80
#define DW_EH_PE_omit	  0xff

enum dw_cfa {
	DW_CFA_nop = 0x00,
	DW_CFA_set_loc = 0x01,
	DW_CFA_advance_loc1 = 0x02,
	DW_CFA_advance_loc2 = 0x03,
	DW_CFA_advance_loc4 = 0x04,
	DW_CFA_offset_extended = 0x05,
	DW_CFA_restore_extended = 0x06,
	DW_CFA_undefined = 0x07,
	DW_CFA_same_value = 0x08,
	DW_CFA_register = 0x09,
	DW_CFA_remember_state = 0x0a,
	DW_CFA_restore_state = 0x0b,
	DW_CFA_def_cfa = 0x0c,
	DW_CFA_def_cfa_register = 0x0d,
	DW_CFA_def_cfa_offset = 0x0e,
	DW_CFA_def_cfa_expression = 0x0f,
	DW_CFA_expression = 0x10,
	DW_CFA_offset_extended_sf = 0x11,
	DW_CFA_def_cfa_sf = 0x12,
	DW_CFA_def_cfa_offset_sf = 0x13,
	DW_CFA_val_offset = 0x14,
	DW_CFA_val_offset_sf = 0x15,
	DW_CFA_val_expression = 0x16,
	DW_CFA_GNU_args_size = 0x2e,
	DW_CFA_GNU_negative_offset_extended = 0x2f,
	/* High two bits carry the opcode, low six the operand. */
	DW_CFA_advance_loc = 0x40,
	DW_CFA_offset = 0x80,
	DW_CFA_restore = 0xc0,
};

enum dw_op {
	DW_OP_deref = 0x06,
	DW_OP_and = 0x1a,
	DW_OP_plus = 0x22,
	DW_OP_shl = 0x24,
	DW_OP_ge = 0x2a,
	DW_OP_lit0 = 0x30,
	DW_OP_breg0 = 0x70,
};

/*
 * The PLT's `(rip & 15) >= 11` threshold: binutils' lazy .plt entries are
 * push (at 6) then jmp (at 11). IBT PLTs (ld -z ibtplt) compare with 9 and
 * are not expressible with the one threshold OP_RULE_PLT has.
 */
#define PLT_THRESHOLD 11

#define STATE_STACK_DEPTH 16 /* DW_CFA_remember_state nesting; GCC uses 1 */

/* ---- bounded reads -------------------------------------------------------- */

/*
 * Reads from data[pos] up to (not including) data[end]. A read that would
 * pass end sets bad, returns 0 and leaves pos at end, so parsers can check
 * bad once after a group of reads.
 */
struct cursor {
	const uint8_t *data;
	size_t pos;
	size_t end;
	bool bad;
};

static uint64_t cursor__uint(struct cursor *c, size_t n)
{
	uint64_t v = 0;

	if (c->bad || c->end - c->pos < n) {
		c->bad = true;
		c->pos = c->end;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->data[c->pos + i] << (8 * i);
	c->pos += n;
	return v;
}

static uint8_t cursor__u8(struct cursor *c)
{
	return (uint8_t)cursor__uint(c, 1);
}

/* LEB128 digits; bits past the 64th are dropped: padded encodings stay valid, huge
 * ones are junk anyway. *shift and *last tell a signed reader how to extend. */
static uint64_t cursor__leb(struct cursor *c, unsigned int *shift_out, uint8_t *last)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b = 0;

	do {
		if (c->bad || c->pos >= c->end) {
			c->bad = true;
			b = 0;
			break;
		}
		b = c->data[c->pos++];
		if (shift < 64) {
			v |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
		}
	} while (b & 0x80);
	*shift_out = shift;
	*last = b;
	return c->bad ? 0 : v;
}

static uint64_t cursor__uleb(struct cursor *c)
{
	unsigned int shift;
	uint8_t last;

	return cursor__leb(c, &shift, &last);
}

static int64_t cursor__sleb(struct cursor *c)
{
	unsigned int shift;
	uint8_t last;
	uint64_t v = cursor__leb(c, &shift, &last);

	if (!c->bad && shift < 64 && (last & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* Reads a value in the format part (low nibble) of enc, without its base. */
static int cursor__encoded_value(struct cursor *c, uint8_t enc, uint8_t ptr_size, uint64_t *val)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		*val = cursor__uint(c, ptr_size);
		break;
	case DW_EH_PE_signed:
		*val = cursor__uint(c, ptr_size);
		if (ptr_size == 4)
			*val = (uint64_t)(int64_t)(int32_t)*val;
		break;
	case DW_EH_PE_uleb128:
		*val = cursor__uleb(c);
		break;
	case DW_EH_PE_udata2:
		*val = cursor__uint(c, 2);
		break;
	case DW_EH_PE_udata4:
		*val = cursor__uint(c, 4);
		break;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		*val = cursor__uint(c, 8);
		break;
	case DW_EH_PE_sleb128:
		*val = (uint64_t)cursor__sleb(c);
		break;
	case DW_EH_PE_sdata2:
		*val = (uint64_t)(int64_t)(int16_t)cursor__uint(c, 2);
		break;
	case DW_EH_PE_sdata4:
		*val = (uint64_t)(int64_t)(int32_t)cursor__uint(c, 4);
		break;
	default:
		return -EINVAL;
	}
	return c->bad ? -EINVAL : 0;
}

/*
 * Reads a code address. pcrel is relative to the field's own address
 * (section_vaddr + its offset). textrel/datarel/funcrel/aligned and
 * indirect need more than the section to resolve: -EOPNOTSUPP.
 */
static int cursor__encoded_addr(struct cursor *c, uint8_t enc, uint8_t ptr_size,
				uint64_t section_vaddr, uint64_t *addr)
{
	uint64_t field = section_vaddr + c->pos;
	int err;

	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return -EOPNOTSUPP;
	if ((enc & 0x70) != DW_EH_PE_absptr && (enc & 0x70) != DW_EH_PE_pcrel)
		return -EOPNOTSUPP;
	err = cursor__encoded_value(c, enc, ptr_size, addr);
	if (err)
		return err;
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		*addr += field; /* wraps like the hardware would */
	return 0;
}

/* ---- growable arrays -------------------------------------------------------- */

/*
 * Rows are kept in the table's own form from the start (16 bytes each, not a
 * [start, end) range of 24): each one's rule applies from its addr to the
 * next row's, and every FDE's rows end with a ROW_HOLE row at the FDE's end.
 * That row is what lets flatten turn the rows into the table where they lie:
 * a gap's OP_RULE_INVALID delta takes its slot, so the table is never a
 * second copy beside the rows (libLLVM-14: 38 MiB of build heap before).
 */
struct delta_vec {
	struct stack_delta *v;
	size_t n, cap;
};

/* A row's private command: "no CFI here" (a gap). Never reaches a table: it becomes
 * OP_RULE_INVALID at the end, after .debug_frame and Go's table had the chance to
 * fill it, while an FDE's own unusable rows (OP_RULE_INVALID) are not filled. */
#define ROW_HOLE 0xff

/* One FDE's rows: rows.v[first .. first + n), its ROW_HOLE row (at end) last. */
struct fde_span {
	uint64_t start, end;
	size_t first, n;
	size_t seq; /* position in the section: the tie-break */
};

struct span_vec {
	struct fde_span *v;
	size_t n, cap;
};

static int delta_vec__push(struct delta_vec *dv, uint64_t addr, struct op_unwind_rule rule)
{
	int err = array__reserve(dv->v, dv->cap, dv->n + 1);

	if (err)
		return err;
	dv->v[dv->n++] = (struct stack_delta){.addr = addr, .rule = rule};
	return 0;
}

static bool rule_eq(const struct op_unwind_rule *a, const struct op_unwind_rule *b)
{
	return a->cmd == b->cmd && a->cfa_base == b->cfa_base && a->fp_offset == b->fp_offset &&
	       a->cfa_offset == b->cfa_offset;
}

static struct op_unwind_rule rule_cmd(uint8_t cmd)
{
	return (struct op_unwind_rule){.cmd = cmd};
}

/* ---- section entries ------------------------------------------------------ */

struct section {
	const uint8_t *data;
	size_t len;
	uint64_t vaddr;
	bool debug; /* .debug_frame dialect */
	/* Rules say where the caller's rbx is (OP_CFA_F_BX): a dynamic loader's
	 * CFI, see elf_is_loader(). */
	bool track_bx;
	/* Offset of data[0] in the whole section: 0, or a window of one entry
	 * (stack_deltas__fde_rows), whose CIE pointer reaches back past it. */
	uint64_t base;
};

/* The framing of one CIE or FDE. */
struct entry {
	size_t end;    /* first byte after the entry */
	size_t id_pos; /* offset of the CIE id / CIE pointer field */
	size_t body;   /* first byte after it */
	bool is_cie;
	uint64_t cie_off; /* FDE: offset of its CIE in the section */
};

enum entry_status {
	ENTRY_OK = 0,
	ENTRY_ZERO = 1, /* zero terminator: 4 bytes, no content */
	ENTRY_SKIP = 2, /* framing fine (end is known), content unusable */
};

/*
 * Reads the entry header at off. Returns an enum entry_status (end set) or
 * -EINVAL when even the length is unusable, which ends the walk: the next
 * entry cannot be found.
 *
 * In the 64-bit format the CIE id / pointer is 8 bytes in both dialects, as
 * DWARF specifies for .debug_frame (GCC never emits 64-bit .eh_frame).
 */
static int entry__read(const struct section *s, size_t off, struct entry *e)
{
	struct cursor c = {.data = s->data, .pos = off, .end = s->len};
	uint64_t length, id;
	bool is64 = false;

	length = cursor__uint(&c, 4);
	if (c.bad)
		return -EINVAL;
	if (length == 0) {
		e->end = c.pos;
		return ENTRY_ZERO;
	}
	if (length == 0xffffffff) {
		is64 = true;
		length = cursor__uint(&c, 8);
	} else if (length >= 0xfffffff0) {
		return -EINVAL; /* reserved */
	}
	if (c.bad || length > c.end - c.pos)
		return -EINVAL;
	e->end = c.pos + length;
	c.end = e->end;
	e->id_pos = c.pos;
	id = cursor__uint(&c, is64 ? 8 : 4);
	if (c.bad)
		return ENTRY_SKIP;
	e->body = c.pos;
	if (s->debug) {
		e->is_cie = id == (is64 ? UINT64_MAX : 0xffffffff);
		e->cie_off = id;
	} else {
		/* The pointer counts backwards from its own field. */
		e->is_cie = id == 0;
		if (!e->is_cie && id > s->base + e->id_pos)
			return ENTRY_SKIP;
		e->cie_off = s->base + e->id_pos - id;
	}
	return ENTRY_OK;
}

/* ---- the interpreter's state ------------------------------------------------ */

enum reg_how {
	REG_UNSPEC = 0, /* no rule given: callee-saved registers keep their value */
	REG_UNDEF,
	REG_SAME,
	REG_OFFSET, /* saved at CFA + off */
	REG_VAL_OFFSET,
	REG_REGISTER,
	REG_EXPR, /* saved at the address expr computes */
	REG_VAL_EXPR,
};

struct reg_rule {
	uint8_t how; /* enum reg_how */
	int64_t off;
	size_t expr, expr_len; /* REG_EXPR: the block, as offsets into the section */
};

enum cfa_how {
	CFA_NONE = 0,
	CFA_REG_OFF,
	CFA_EXPR,
};

struct cfi_state {
	uint8_t cfa_how; /* enum cfa_how */
	uint64_t cfa_reg;
	int64_t cfa_off;
	size_t cfa_expr, cfa_expr_len;
	struct reg_rule rbp;
	struct reg_rule rbx; /* read only where the section tracks rbx */
	struct reg_rule ra;  /* the CIE's return-address column */
};

struct cie {
	size_t off; /* of its entry in the section */
	bool valid; /* parsed, known augmentation */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	uint8_t ptr_size;
	bool has_aug_data; /* 'z': FDEs carry an augmentation data block */
	bool signal;	   /* 'S' */
	struct cfi_state init;
};

struct interp {
	const struct section *s;
	const struct cie *cie;
	struct cfi_state st;
	struct cfi_state stack[STATE_STACK_DEPTH];
	unsigned int depth;
	/* FDE mode only: the row being built and where rows go. */
	bool fde;
	uint64_t loc, end;
	bool done; /* loc reached end: later instructions cannot matter */
	struct delta_vec *rows;
	size_t first_row;
	struct stack_delta_stats *stats;
};

/* ---- turning a row into an op_unwind_rule ------------------------------------ */

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static bool fits_s16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

/* Matches an expression that is exactly DW_OP_breg<reg> <off>. */
static bool expr_is_breg(const struct section *s, size_t expr, size_t len, unsigned int reg,
			 int64_t *off)
{
	struct cursor c = {.data = s->data, .pos = expr, .end = expr + len};

	if (cursor__u8(&c) != DW_OP_breg0 + reg)
		return false;
	*off = cursor__sleb(&c);
	return !c.bad && c.pos == c.end;
}

/* DW_OP_breg<reg> <off>; DW_OP_deref: the DRAP realignment prologue's CFA. */
static bool expr_is_breg_deref(const struct section *s, size_t expr, size_t len, unsigned int reg,
			       int64_t *off)
{
	struct cursor c = {.data = s->data, .pos = expr, .end = expr + len};

	if (cursor__u8(&c) != DW_OP_breg0 + reg)
		return false;
	*off = cursor__sleb(&c);
	if (cursor__u8(&c) != DW_OP_deref)
		return false;
	return !c.bad && c.pos == c.end;
}

/*
 * The lazy PLT's CFA: rsp + off + ((rip & 15) >= 11 ? 8 : 0), written as
 * breg7 off; breg16 0; lit15; and; lit11; ge; lit3; shl; plus.
 */
static bool expr_is_plt(const struct section *s, size_t expr, size_t len, int64_t *off)
{
	static const uint8_t tail[] = {DW_OP_lit0 + 15, DW_OP_and,	DW_OP_lit0 + PLT_THRESHOLD,
				       DW_OP_ge,	DW_OP_lit0 + 3, DW_OP_shl,
				       DW_OP_plus};
	struct cursor c = {.data = s->data, .pos = expr, .end = expr + len};

	if (cursor__u8(&c) != DW_OP_breg0 + DWREG_RSP)
		return false;
	*off = cursor__sleb(&c);
	if (cursor__u8(&c) != DW_OP_breg0 + DWREG_RA || cursor__sleb(&c) != 0 || c.bad)
		return false;
	if (c.end - c.pos != sizeof(tail))
		return false;
	return memcmp(s->data + c.pos, tail, sizeof(tail)) == 0;
}

/*
 * fp_offset for a CFA computed as <base_reg> + cfa_off: where the caller's
 * rbp is, relative to the CFA (0 when rbp is not saved). An rbp rule of
 * "at base_reg + k" is the same place as CFA + (k - cfa_off); base_reg < 0
 * when the CFA is no fixed distance from any register.
 */
static bool rbp_fp_offset(const struct section *s, const struct cfi_state *st, int base_reg,
			  int64_t cfa_off, int16_t *fp)
{
	int64_t k;

	switch (st->rbp.how) {
	case REG_UNSPEC:
	case REG_SAME:
	case REG_UNDEF:
		*fp = 0;
		return true;
	case REG_OFFSET:
		k = st->rbp.off;
		break;
	case REG_EXPR:
		if (base_reg < 0 ||
		    !expr_is_breg(s, st->rbp.expr, st->rbp.expr_len, (unsigned int)base_reg, &k))
			return false;
		k -= cfa_off;
		break;
	default:
		return false;
	}
	/* 0 would read as "unchanged"; a save slot at the CFA itself is the caller's frame. */
	if (k == 0 || !fits_s16(k))
		return false;
	*fp = (int16_t)k;
	return true;
}

/*
 * OP_CFA_F_BX and the slot of the caller's rbx for a rule of a section that
 * tracks rbx (0 elsewhere, and where the CFI puts rbx anywhere but a slot
 * CFA - 8k: the walk then forgets rbx, as it does in every other file).
 */
static uint8_t rbx_bits(const struct interp *it)
{
	const struct reg_rule *bx = &it->st.rbx;

	if (!it->s->track_bx)
		return 0;
	switch (bx->how) {
	case REG_UNSPEC:
	case REG_SAME:
		return OP_CFA_F_BX;
	case REG_OFFSET:
		if (bx->off >= 0 || bx->off % 8 || -bx->off / 8 > OP_CFA_BX_SLOT_MAX)
			return 0;
		return (uint8_t)(OP_CFA_F_BX | (-bx->off / 8) << OP_CFA_BX_SLOT_SHIFT);
	default:
		return 0;
	}
}

static bool state__to_rule_base(const struct interp *it, struct op_unwind_rule *r);

/* Returns false (the row is then OP_RULE_INVALID) when the state has no expressible rule. */
static bool state__to_rule(const struct interp *it, struct op_unwind_rule *r)
{
	bool ok = state__to_rule_base(it, r);

	if (ok && r->cmd != OP_RULE_STOP)
		r->cfa_base |= rbx_bits(it);
	return ok;
}

static bool state__to_rule_base(const struct interp *it, struct op_unwind_rule *r)
{
	const struct cfi_state *st = &it->st;
	const struct section *s = it->s;
	int64_t off, k;
	int16_t fp;

	*r = rule_cmd(OP_RULE_INVALID);
	if (it->cie->ra_reg != DWREG_RA)
		return false;
	if (st->ra.how == REG_UNDEF) {
		*r = rule_cmd(OP_RULE_STOP);
		return true;
	}
	if (st->ra.how != REG_OFFSET || st->ra.off != -8)
		return false;

	if (st->cfa_how == CFA_REG_OFF && st->cfa_reg == DWREG_RBX) {
		/* ld.so's lazy-binding trampolines (see OP_RULE_CFA_RBX): usable in
		 * the frame whose rbx the walk knows. */
		if (!fits_s32(st->cfa_off) ||
		    !rbp_fp_offset(s, st, (int)st->cfa_reg, st->cfa_off, &fp))
			return false;
		r->cmd = OP_RULE_CFA_RBX;
		r->cfa_base = OP_CFA_RSP;
		r->cfa_offset = (int32_t)st->cfa_off;
		r->fp_offset = fp;
		return true;
	}
	if (st->cfa_how == CFA_REG_OFF) {
		if (st->cfa_reg != DWREG_RSP && st->cfa_reg != DWREG_RBP)
			return false;
		if (!fits_s32(st->cfa_off) ||
		    !rbp_fp_offset(s, st, (int)st->cfa_reg, st->cfa_off, &fp))
			return false;
		r->cmd = OP_RULE_CFA;
		r->cfa_base = st->cfa_reg == DWREG_RSP ? OP_CFA_RSP : OP_CFA_RBP;
		r->cfa_offset = (int32_t)st->cfa_off;
		r->fp_offset = fp;
		return true;
	}
	if (st->cfa_how != CFA_EXPR)
		return false;

	if (expr_is_plt(s, st->cfa_expr, st->cfa_expr_len, &off)) {
		/* The CFA moves inside the entry: only a CFA-relative save has one place. */
		if (!fits_s32(off) || !rbp_fp_offset(s, st, -1, 0, &fp))
			return false;
		r->cmd = OP_RULE_PLT;
		r->cfa_base = OP_CFA_RSP;
		r->cfa_offset = (int32_t)off;
		r->fp_offset = fp;
		return true;
	}
	for (unsigned int reg = DWREG_RBP; reg <= DWREG_RSP; reg++) {
		if (!expr_is_breg_deref(s, st->cfa_expr, st->cfa_expr_len, reg, &off))
			continue;
		/*
		 * CFA_DEREF's fp_offset is relative to the base register, not
		 * the CFA (the two are no fixed distance apart after
		 * realignment), and always applies: GCC's DRAP frames save
		 * the caller's rbp at the frame's own rbp + 0.
		 */
		if (st->rbp.how != REG_EXPR ||
		    !expr_is_breg(s, st->rbp.expr, st->rbp.expr_len, reg, &k) || !fits_s32(off) ||
		    !fits_s16(k))
			return false;
		r->cmd = OP_RULE_CFA_DEREF;
		r->cfa_base = reg == DWREG_RSP ? OP_CFA_RSP : OP_CFA_RBP;
		r->cfa_offset = (int32_t)off;
		r->fp_offset = (int16_t)k;
		return true;
	}
	return false;
}

/*
 * Ends the row at to: appends it->loc with the current state's rule unless the
 * FDE's previous row has that rule (rows within an FDE are contiguous, so the
 * previous row simply goes on).
 */
static int interp__emit(struct interp *it, uint64_t to)
{
	struct op_unwind_rule rule;

	if (to <= it->loc)
		return 0;
	if (!state__to_rule(it, &rule))
		it->stats->unsupported++;
	if (it->rows->n > it->first_row && rule_eq(&it->rows->v[it->rows->n - 1].rule, &rule))
		return 0;
	return delta_vec__push(it->rows, it->loc, rule);
}

/* Moves the row boundary to new_loc (already checked >= loc), emitting the finished row. */
static int interp__advance(struct interp *it, uint64_t new_loc)
{
	int err;

	if (!it->fde)
		return -EINVAL; /* CIE initial instructions describe one row */
	if (new_loc >= it->end) {
		new_loc = it->end;
		it->done = true;
	}
	err = interp__emit(it, new_loc);
	if (err)
		return err;
	if (new_loc > it->loc)
		it->loc = new_loc;
	return 0;
}

static int interp__advance_by(struct interp *it, uint64_t delta)
{
	uint64_t scaled, to;

	if (__builtin_mul_overflow(delta, it->cie->code_align, &scaled) ||
	    __builtin_add_overflow(it->loc, scaled, &to))
		to = UINT64_MAX; /* past any FDE end: the rest cannot matter */
	return interp__advance(it, to);
}

/* The register rule slot for reg, or NULL for registers the rules do not use. */
static struct reg_rule *interp__reg(struct interp *it, uint64_t reg)
{
	if (reg == DWREG_RBP)
		return &it->st.rbp;
	if (reg == DWREG_RBX)
		return &it->st.rbx;
	if (reg == it->cie->ra_reg)
		return &it->st.ra;
	return NULL;
}

/* DW_CFA_restore: back to the CIE's rule (in the CIE itself: to no rule). */
static void interp__restore(struct interp *it, uint64_t reg)
{
	if (reg == DWREG_RBP)
		it->st.rbp = it->fde ? it->cie->init.rbp : (struct reg_rule){0};
	else if (reg == DWREG_RBX)
		it->st.rbx = it->fde ? it->cie->init.rbx : (struct reg_rule){0};
	else if (reg == it->cie->ra_reg)
		it->st.ra = it->fde ? it->cie->init.ra : (struct reg_rule){0};
}

static void interp__set(struct interp *it, uint64_t reg, uint8_t how, int64_t off)
{
	struct reg_rule *r = interp__reg(it, reg);

	if (r)
		*r = (struct reg_rule){.how = how, .off = off};
}

/* off * data_align, saturating: an absurd offset just becomes unexpressible. */
static int64_t interp__factor(const struct interp *it, int64_t off)
{
	int64_t v;

	if (__builtin_mul_overflow(off, it->cie->data_align, &v))
		return INT64_MAX;
	return v;
}

static int64_t uleb_as_s64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* Reads a DWARF block (ULEB length + bytes) and returns its place in the section. */
static bool cursor__block(struct cursor *c, size_t *start, size_t *len)
{
	uint64_t n = cursor__uleb(c);

	if (c->bad || n > c->end - c->pos) {
		c->bad = true;
		return false;
	}
	*start = c->pos;
	*len = (size_t)n;
	c->pos += n;
	return true;
}

/*
 * Runs the instructions in [start, end). In FDE mode rows are emitted as
 * the location advances. Returns 0, -EINVAL for malformed or unknown
 * instructions, -ENOMEM.
 */
static int interp__run(struct interp *it, size_t start, size_t end)
{
	struct cursor c = {.data = it->s->data, .pos = start, .end = end};
	struct reg_rule *rr;
	uint64_t reg, u, addr;
	size_t bstart, blen;
	int64_t off;
	int err = 0;

	while (c.pos < c.end && !it->done && !err) {
		uint8_t op = cursor__u8(&c);

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			err = interp__advance_by(it, op & 0x3f);
			continue;
		case DW_CFA_offset:
			off = interp__factor(it, uleb_as_s64(cursor__uleb(&c)));
			interp__set(it, op & 0x3f, REG_OFFSET, off);
			continue;
		case DW_CFA_restore:
			interp__restore(it, op & 0x3f);
			continue;
		}

		switch (op) {
		case DW_CFA_nop:
			break;
		case DW_CFA_GNU_args_size:
			cursor__uleb(&c); /* bytes of outgoing arguments: the CFA already accounts
					 for them */
			break;
		case DW_CFA_set_loc:
			if (!it->fde)
				return -EINVAL;
			err = cursor__encoded_addr(&c, it->cie->fde_enc, it->cie->ptr_size,
						   it->s->vaddr, &addr);
			if (err)
				return -EINVAL;
			/* Rows only move forward; anything else makes the FDE meaningless. */
			if (addr < it->loc)
				return -EINVAL;
			err = interp__advance(it, addr);
			break;
		case DW_CFA_advance_loc1:
			u = cursor__uint(&c, 1);
			if (!c.bad)
				err = interp__advance_by(it, u);
			break;
		case DW_CFA_advance_loc2:
			u = cursor__uint(&c, 2);
			if (!c.bad)
				err = interp__advance_by(it, u);
			break;
		case DW_CFA_advance_loc4:
			u = cursor__uint(&c, 4);
			if (!c.bad)
				err = interp__advance_by(it, u);
			break;
		case DW_CFA_offset_extended:
			reg = cursor__uleb(&c);
			off = interp__factor(it, uleb_as_s64(cursor__uleb(&c)));
			interp__set(it, reg, REG_OFFSET, off);
			break;
		case DW_CFA_offset_extended_sf:
			reg = cursor__uleb(&c);
			off = interp__factor(it, cursor__sleb(&c));
			interp__set(it, reg, REG_OFFSET, off);
			break;
		case DW_CFA_GNU_negative_offset_extended:
			reg = cursor__uleb(&c);
			off = interp__factor(it, uleb_as_s64(cursor__uleb(&c)));
			interp__set(it, reg, REG_OFFSET, off == INT64_MAX ? INT64_MAX : -off);
			break;
		case DW_CFA_val_offset:
			reg = cursor__uleb(&c);
			off = interp__factor(it, uleb_as_s64(cursor__uleb(&c)));
			interp__set(it, reg, REG_VAL_OFFSET, off);
			break;
		case DW_CFA_val_offset_sf:
			reg = cursor__uleb(&c);
			off = interp__factor(it, cursor__sleb(&c));
			interp__set(it, reg, REG_VAL_OFFSET, off);
			break;
		case DW_CFA_restore_extended:
			interp__restore(it, cursor__uleb(&c));
			break;
		case DW_CFA_undefined:
			interp__set(it, cursor__uleb(&c), REG_UNDEF, 0);
			break;
		case DW_CFA_same_value:
			interp__set(it, cursor__uleb(&c), REG_SAME, 0);
			break;
		case DW_CFA_register:
			reg = cursor__uleb(&c);
			interp__set(it, reg, REG_REGISTER, uleb_as_s64(cursor__uleb(&c)));
			break;
		case DW_CFA_remember_state:
			if (it->depth >= STATE_STACK_DEPTH)
				return -EINVAL;
			it->stack[it->depth++] = it->st;
			break;
		case DW_CFA_restore_state:
			if (it->depth == 0)
				return -EINVAL;
			/* With the CFA rule too, as libgcc and libunwind do: GCC's
			 * epilogue CFI relies on it. */
			it->st = it->stack[--it->depth];
			break;
		case DW_CFA_def_cfa:
			it->st.cfa_reg = cursor__uleb(&c);
			it->st.cfa_off = uleb_as_s64(cursor__uleb(&c));
			it->st.cfa_how = CFA_REG_OFF;
			break;
		case DW_CFA_def_cfa_sf:
			it->st.cfa_reg = cursor__uleb(&c);
			it->st.cfa_off = interp__factor(it, cursor__sleb(&c));
			it->st.cfa_how = CFA_REG_OFF;
			break;
		case DW_CFA_def_cfa_register:
			it->st.cfa_reg = cursor__uleb(&c);
			it->st.cfa_how = CFA_REG_OFF;
			break;
		case DW_CFA_def_cfa_offset:
			it->st.cfa_off = uleb_as_s64(cursor__uleb(&c));
			it->st.cfa_how = CFA_REG_OFF;
			break;
		case DW_CFA_def_cfa_offset_sf:
			it->st.cfa_off = interp__factor(it, cursor__sleb(&c));
			it->st.cfa_how = CFA_REG_OFF;
			break;
		case DW_CFA_def_cfa_expression:
			if (cursor__block(&c, &bstart, &blen)) {
				it->st.cfa_how = CFA_EXPR;
				it->st.cfa_expr = bstart;
				it->st.cfa_expr_len = blen;
			}
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			reg = cursor__uleb(&c);
			if (cursor__block(&c, &bstart, &blen) &&
			    (rr = interp__reg(it, reg)) != NULL)
				*rr = (struct reg_rule){
				    .how = op == DW_CFA_expression ? REG_EXPR : REG_VAL_EXPR,
				    .expr = bstart,
				    .expr_len = blen};
			break;
		default:
			/* Unknown (or another architecture's) opcode: its length is unknown. */
			return -EINVAL;
		}
		if (c.bad)
			return -EINVAL;
	}
	if (c.bad)
		return -EINVAL;
	return err;
}

/* ---- CIEs ----------------------------------------------------------------------- */

/*
 * Parses the CIE at off into *cie; cie->valid says whether it is usable
 * (well formed, known version and augmentation). Returns 0 or -ENOMEM.
 */
static int cie__parse(const struct section *s, size_t off, struct cie *cie,
		      struct stack_delta_stats *stats)
{
	struct cursor c = {.data = s->data};
	struct interp it = {.s = s, .cie = cie, .stats = stats};
	const char *aug;
	struct entry e;
	size_t aug_len;
	uint8_t version;
	int err;

	memset(cie, 0, sizeof(*cie));
	cie->off = off;
	cie->ptr_size = 8;
	cie->fde_enc = DW_EH_PE_absptr;

	if (off >= s->len || entry__read(s, off, &e) != ENTRY_OK || !e.is_cie)
		return 0;
	c.pos = e.body;
	c.end = e.end;

	version = cursor__u8(&c);
	if (version != 1 && version != 3 && version != 4)
		return 0;
	aug = (const char *)s->data + c.pos;
	aug_len = strnlen(aug, c.end - c.pos);
	if (aug_len == c.end - c.pos)
		return 0; /* no NUL inside the entry */
	c.pos += aug_len + 1;

	/* GCC before 3.0: a pointer-sized EH data word follows "eh". */
	if (aug[0] == 'e' && aug[1] == 'h') {
		cursor__uint(&c, cie->ptr_size);
		aug += 2;
	}
	if (version == 4) {
		uint8_t addr_size = cursor__u8(&c), seg_size = cursor__u8(&c);

		if ((addr_size != 4 && addr_size != 8) || seg_size != 0)
			return 0;
		cie->ptr_size = addr_size;
	}
	cie->code_align = cursor__uleb(&c);
	cie->data_align = cursor__sleb(&c);
	cie->ra_reg = version == 1 ? cursor__u8(&c) : cursor__uleb(&c);
	if (c.bad)
		return 0;

	if (aug[0]) {
		struct cursor a;
		uint64_t n, ignored;

		/* Without 'z' an unknown letter leaves the rest of the layout unknown. */
		if (aug[0] != 'z')
			return 0;
		n = cursor__uleb(&c);
		if (c.bad || n > c.end - c.pos)
			return 0;
		a = (struct cursor){.data = s->data, .pos = c.pos, .end = c.pos + n};
		c.pos += n;
		cie->has_aug_data = true;
		for (const char *p = aug + 1; *p; p++) {
			uint8_t enc;

			switch (*p) {
			case 'R':
				cie->fde_enc = cursor__u8(&a);
				break;
			case 'L':
				/* the encoding of the LSDA pointer in each FDE's augmentation data
				 */
				cursor__u8(&a);
				break;
			case 'P':
				/* Only its size matters; "aligned" needs the field's address. */
				enc = cursor__u8(&a);
				if ((enc & 0x70) == 0x50 || enc == DW_EH_PE_omit ||
				    cursor__encoded_value(&a, enc, cie->ptr_size, &ignored))
					return 0;
				break;
			case 'S':
				cie->signal = true;
				break;
			default:
				return 0; /* an extension we do not know the effect of */
			}
			if (a.bad)
				return 0;
		}
	}

	/* Initial instructions: run once here, every FDE starts from the result. */
	err = interp__run(&it, c.pos, c.end);
	if (err == -ENOMEM)
		return err;
	if (err)
		return 0;
	cie->init = it.st;
	cie->valid = true;
	return 0;
}

/* ---- FDEs and a section's walk ---------------------------------------------------- */

struct cie_vec {
	struct cie *v; /* sorted by off: the walk meets them in that order */
	size_t n, cap;
};

struct walk {
	const struct section *s;
	struct stack_delta_stats *stats;
	struct cie_vec cies;
	struct delta_vec rows;
	struct span_vec spans;
	struct interp it; /* reused: its state stack is too large to clear per FDE */
};

/*
 * The CIE that starts at off, parsed or not, or NULL when no CIE entry
 * starts there. Every CIE is parsed once, so many FDEs sharing a large
 * CIE cost nothing extra.
 */
static const struct cie *walk__find_cie(const struct walk *w, uint64_t off)
{
	size_t lo = 0, hi = w->cies.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->cies.v[mid].off == off)
			return &w->cies.v[mid];
		if (w->cies.v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The FDE's [start, end) and where its instructions start (*insn). 0 or -EINVAL. */
static int fde__range(const struct section *s, const struct entry *e, const struct cie *cie,
		      uint64_t *start, uint64_t *end, size_t *insn)
{
	struct cursor c = {.data = s->data, .pos = e->body, .end = e->end};
	uint64_t range;

	if (cursor__encoded_addr(&c, cie->fde_enc, cie->ptr_size, s->vaddr, start) ||
	    cursor__encoded_value(&c, cie->fde_enc, cie->ptr_size, &range))
		return -EINVAL;
	if (cie->has_aug_data) {
		uint64_t n = cursor__uleb(&c);

		if (c.bad || n > c.end - c.pos)
			return -EINVAL;
		c.pos += n;
	}
	if (__builtin_add_overflow(*start, range, end))
		return -EINVAL;
	*insn = c.pos;
	return 0;
}

/*
 * One FDE's rows, appended to *rows: its rules from its start, a ROW_HOLE
 * row at its end last (see struct delta_vec). The table's build and the walk
 * of a held stack copy (stack_deltas__fde_rows) both take an FDE's rows from
 * here, so the two cannot give different rules. Returns 0 (*start and *end
 * set), 1 for an FDE with no rows (empty, a .debug_frame tombstone), -EINVAL
 * for a malformed one (nothing appended, its unsupported rows not counted),
 * -ENOMEM.
 */
static int fde__rows(const struct section *s, const struct entry *e, const struct cie *cie,
		     struct interp *it, struct delta_vec *rows, struct stack_delta_stats *stats,
		     uint64_t *start, uint64_t *end)
{
	uint64_t unsupported = stats->unsupported;
	size_t insn;
	int err;

	if (fde__range(s, e, cie, start, end, &insn))
		return -EINVAL;
	/* Empty, or a .debug_frame tombstone (the linker's mark for a discarded function). */
	if (*start == *end || (s->debug && *start == 0))
		return 1;

	it->s = s;
	it->cie = cie;
	it->st = cie->init;
	it->depth = 0;
	it->fde = true;
	it->loc = *start;
	it->end = *end;
	it->done = false;
	it->rows = rows;
	it->first_row = rows->n;
	it->stats = stats;
	if (cie->signal) {
		/* The trampoline's CFI describes the ucontext: the BPF side knows that layout. */
		err = delta_vec__push(rows, *start, rule_cmd(OP_RULE_SIGNAL));
	} else {
		err = interp__run(it, insn, e->end);
		if (!err)
			err = interp__emit(it, *end);
	}
	if (!err)
		err = delta_vec__push(rows, *end, rule_cmd(ROW_HOLE));
	if (err && err != -ENOMEM) {
		/* Nothing of a malformed FDE is kept, so its rows are not counted either. */
		rows->n = it->first_row;
		stats->unsupported = unsupported;
		return -EINVAL;
	}
	return err;
}

/* Returns 0 (FDE used, or skipped and counted) or -ENOMEM. */
static int walk__fde(struct walk *w, const struct entry *e, size_t seq)
{
	const struct cie *cie = walk__find_cie(w, e->cie_off);
	size_t first = w->rows.n;
	struct fde_span *span;
	uint64_t start, end;
	int err;

	if (!cie || !cie->valid)
		goto bad;
	err = fde__rows(w->s, e, cie, &w->it, &w->rows, w->stats, &start, &end);
	if (err == -ENOMEM)
		return err;
	if (err < 0)
		goto bad;
	if (err == 1) {
		w->stats->fdes++;
		return 0;
	}
	err = array__reserve(w->spans.v, w->spans.cap, w->spans.n + 1);
	if (err)
		return err;
	span = &w->spans.v[w->spans.n++];
	span->start = start;
	span->end = end;
	span->first = first;
	span->n = w->rows.n - first;
	span->seq = seq;
	w->stats->fdes++;
	return 0;
bad:
	w->stats->bad_entries++;
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	const struct fde_span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Moves the rows so the spans (just sorted) lie in their new order, each
 * span's rows still contiguous and in order, and points the spans at their
 * new place. A permutation by cycles through one 32-bit destination per row:
 * a sixth of a second copy of the rows. Returns 0 or -ENOMEM.
 */
static int walk__reorder_rows(struct walk *w)
{
	struct stack_delta *rows = w->rows.v;
	uint32_t *dest;
	size_t d = 0;

	if (w->rows.n > UINT32_MAX)
		return -ENOMEM;
	dest = malloc((w->rows.n ? w->rows.n : 1) * sizeof(*dest));
	if (!dest)
		return -ENOMEM;
	for (size_t i = 0; i < w->spans.n; i++) {
		struct fde_span *sp = &w->spans.v[i];

		for (size_t t = 0; t < sp->n; t++)
			dest[sp->first + t] = (uint32_t)(d + t);
		sp->first = d;
		d += sp->n;
	}
	for (size_t j = 0; j < w->rows.n; j++) {
		while (dest[j] != j) {
			uint32_t to = dest[j];
			struct stack_delta r = rows[to];

			rows[to] = rows[j];
			rows[j] = r;
			dest[j] = dest[to];
			dest[to] = to;
		}
	}
	free(dest);
	return 0;
}

/*
 * Gives back dv's unused capacity: the vector is kept (as the table, or while
 * the next step of the build runs). A failed shrink keeps the old block.
 */
static void delta_vec__shrink(struct delta_vec *dv)
{
	struct stack_delta *v;

	if (dv->n == dv->cap)
		return;
	if (!dv->n) {
		free(dv->v);
		*dv = (struct delta_vec){0};
		return;
	}
	v = realloc(dv->v, dv->n * sizeof(*dv->v));
	if (v) {
		dv->v = v;
		dv->cap = dv->n;
	}
}

/*
 * Writes (addr, rule) at out[*k], where *k never passes the row being read: a
 * rule equal to the one before goes on from it, and a leading ROW_HOLE is no
 * row at all.
 */
static void rows__put(struct stack_delta *out, size_t *k, uint64_t addr, struct op_unwind_rule rule)
{
	if (*k ? rule_eq(&out[*k - 1].rule, &rule) : rule.cmd == ROW_HOLE)
		return;
	out[(*k)++] = (struct stack_delta){.addr = addr, .rule = rule};
}

/*
 * Lays the FDEs' rows out as one sorted row list in *out (caller frees
 * out->v): an FDE only keeps the part of its range no earlier-starting FDE
 * covered; where it ends without the next one starting there, its ROW_HOLE
 * row stays. w->rows is moved into *out.
 *
 * The kept rows are compacted within w->rows, spans taken in address order:
 * when the spans' rows lie in that order (the section lists its FDEs by
 * address, or walk__reorder_rows made it so), span i's rows start at or
 * after every row kept before it, and a span writes at most its own rows
 * (its ROW_HOLE row included, the one before it dropped when it starts where
 * the last ended), so the write never passes the read.
 */
static int walk__flatten(struct walk *w, struct delta_vec *out)
{
	struct stack_delta *rows = w->rows.v;
	uint64_t covered = 0;
	size_t k = 0;
	int err;

	for (size_t i = 1; i < w->spans.n; i++) {
		if (span_cmp(&w->spans.v[i - 1], &w->spans.v[i]) > 0) {
			qsort(w->spans.v, w->spans.n, sizeof(*w->spans.v), span_cmp);
			err = walk__reorder_rows(w);
			if (err)
				return err;
			break;
		}
	}
	for (size_t i = 0; i < w->spans.n; i++) {
		const struct fde_span *sp = &w->spans.v[i];
		uint64_t from = covered > sp->start ? covered : sp->start;

		if (from >= sp->end || sp->n < 2)
			continue;
		/* The last span ended here: its ROW_HOLE row is not a gap. */
		if (k && rows[k - 1].rule.cmd == ROW_HOLE && rows[k - 1].addr == from)
			k--;
		/* Row j applies up to row j + 1, the last (ROW_HOLE) row being sp->end. */
		for (size_t j = sp->first; j + 1 < sp->first + sp->n; j++) {
			struct stack_delta r = rows[j];

			if (rows[j + 1].addr <= from)
				continue;
			rows__put(rows, &k, r.addr < from ? from : r.addr, r.rule); /* k <= j */
		}
		rows__put(rows, &k, sp->end, rule_cmd(ROW_HOLE));
		covered = sp->end;
	}
	*out = w->rows;
	out->n = k;
	w->rows = (struct delta_vec){0};
	delta_vec__shrink(out);
	return 0;
}

/*
 * Calls fn for each entry of the section in order, until fn fails or the
 * framing breaks (counted: nothing after it can be found).
 */
static int walk__entries(struct walk *w,
			 int (*fn)(struct walk *w, size_t off, const struct entry *e, size_t *seq))
{
	size_t off = 0, seq = 0;

	while (off < w->s->len) {
		struct entry e;
		int st = entry__read(w->s, off, &e), err = 0;

		if (st < 0) {
			if (!fn)
				w->stats->bad_entries++;
			return 0;
		}
		if (st == ENTRY_SKIP && !fn)
			w->stats->bad_entries++;
		if (st == ENTRY_OK && fn)
			err = fn(w, off, &e, &seq);
		if (err)
			return err;
		off = e.end; /* > off: every entry has at least its 4-byte length */
	}
	return 0;
}

static int walk__cie_entry(struct walk *w, size_t off, const struct entry *e, size_t *seq)
{
	struct cie *cie;
	int err;

	(void)seq;
	if (!e->is_cie)
		return 0;
	err = array__reserve(w->cies.v, w->cies.cap, w->cies.n + 1);
	if (err)
		return err;
	cie = &w->cies.v[w->cies.n];
	err = cie__parse(w->s, off, cie, w->stats);
	if (err)
		return err;
	w->cies.n++;
	if (cie->valid)
		w->stats->cies++;
	else
		w->stats->bad_entries++;
	return 0;
}

static int walk__fde_entry(struct walk *w, size_t off, const struct entry *e, size_t *seq)
{
	(void)off;
	if (e->is_cie)
		return 0;
	return walk__fde(w, e, (*seq)++);
}

/*
 * Walks one section into its sorted rows (*out, caller frees out->v; see
 * struct delta_vec). CIEs first: in .debug_frame an FDE may point forward. Returns 0,
 * -ENOEXEC when nothing in it was usable but something was malformed,
 * -ENOMEM.
 */
static int section__ranges(const struct section *s, struct delta_vec *out,
			   struct stack_delta_stats *stats)
{
	struct walk w = {.s = s, .stats = stats};
	uint64_t fdes_before = stats->fdes, bad_before = stats->bad_entries;
	int err;

	err = walk__entries(&w, NULL); /* framing errors, counted once */
	if (!err)
		err = walk__entries(&w, walk__cie_entry);
	if (!err)
		err = walk__entries(&w, walk__fde_entry);
	/* The CIEs are done with: freed before flatten's index, if it makes one. */
	free(w.cies.v);
	w.cies = (struct cie_vec){0};
	if (!err)
		err = walk__flatten(&w, out);
	if (!err && stats->fdes == fdes_before && stats->bad_entries > bad_before)
		err = -ENOEXEC;
	free(w.rows.v);
	free(w.spans.v);
	return err;
}

/* ---- the table ---------------------------------------------------------------------- */

/*
 * Fills the gaps (ROW_HOLE, or before the first row) of *hi with lo's rows:
 * both sorted row lists, and so is the result, which replaces *hi. Only when a
 * file has two sources (.eh_frame and .debug_frame, Go's table and CFI).
 */
static int rows__fill_gaps(struct delta_vec *hi, const struct delta_vec *lo)
{
	struct op_unwind_rule rh = rule_cmd(ROW_HOLE), rl = rh;
	struct delta_vec res = {0};
	size_t a = 0, b = 0;
	int err;

	if (!lo->n)
		return 0;
	err = array__reserve(res.v, res.cap, hi->n + lo->n);
	if (err)
		return err;
	while (a < hi->n || b < lo->n) {
		uint64_t x;

		if (b >= lo->n || (a < hi->n && hi->v[a].addr <= lo->v[b].addr))
			x = hi->v[a].addr;
		else
			x = lo->v[b].addr;
		while (a < hi->n && hi->v[a].addr == x)
			rh = hi->v[a++].rule;
		while (b < lo->n && lo->v[b].addr == x)
			rl = lo->v[b++].rule;
		rows__put(res.v, &res.n, x, rh.cmd != ROW_HOLE ? rh : rl);
	}
	free(hi->v);
	*hi = res;
	return 0;
}

/*
 * The rows in the table's terms, where they lie: ROW_HOLE becomes
 * OP_RULE_INVALID (equal neighbours merged again), and out takes rows->v.
 */
static void table__from_rows(struct stack_delta_table *t, struct delta_vec *rows)
{
	size_t k = 0;

	for (size_t i = 0; i < rows->n; i++) {
		struct op_unwind_rule r = rows->v[i].rule;

		if (r.cmd == ROW_HOLE)
			r = rule_cmd(OP_RULE_INVALID);
		if (k && rule_eq(&rows->v[k - 1].rule, &r))
			continue;
		rows->v[k++] = (struct stack_delta){.addr = rows->v[i].addr, .rule = r};
	}
	rows->n = k;
	delta_vec__shrink(rows);
	t->deltas = rows->v;
	t->n = rows->n;
	*rows = (struct delta_vec){0};
}

int stack_deltas__parse(const uint8_t *data, size_t len, uint64_t section_vaddr, int is_debug_frame,
			struct stack_delta_table *out)
{
	struct section s = {
	    .data = data, .len = data ? len : 0, .vaddr = section_vaddr, .debug = is_debug_frame};
	struct delta_vec rows = {0};
	int err;

	memset(out, 0, sizeof(*out));
	err = section__ranges(&s, &rows, &out->stats);
	if (!err)
		table__from_rows(out, &rows);
	free(rows.v);
	if (err) {
		struct stack_delta_stats stats = out->stats;

		stack_delta_table__free(out);
		out->stats = stats;
	}
	return err;
}

/* ---- ELF sections --------------------------------------------------------------------- */

struct cfi_sections {
	Elf_Scn *eh_frame, *debug_frame, *gopclntab;
	Elf_Scn *crt[2]; /* .init, .fini: crti/crtn's _init and _fini, see crt_rows() */
	GElf_Shdr eh_shdr, debug_shdr, go_shdr, crt_shdr[2];
	/* The first .init_array and .fini_array: crtstuff's frame_dummy and
	 * __do_global_dtors_aux come first in them (crtstuff_rows()). */
	GElf_Shdr arrays[2];
	bool has_array[2];
	uint64_t text_addr; /* .text's address (Go tables may leave it 0); 0 when none */
};

/*
 * The section's bytes through libelf (decompressed when SHF_COMPRESSED),
 * owned by elf. Returns 0, -ENOENT for an empty or NOBITS section (debug
 * files keep the header only), -ENOEXEC for one outside the file.
 */
static int section__bytes(const struct elf_file *ef, Elf_Scn *scn, const GElf_Shdr *shdr,
			  Elf_Data **data)
{
	if (shdr->sh_type == SHT_NOBITS || shdr->sh_size == 0)
		return -ENOENT;
	if (shdr->sh_offset > ef->size || shdr->sh_size > ef->size - shdr->sh_offset)
		return -ENOEXEC;
	if (shdr->sh_flags & SHF_COMPRESSED) {
		GElf_Shdr now;

		/* Decompressed in place once per handle: the id and the build read it twice. */
		if (!gelf_getshdr(scn, &now))
			return -ENOEXEC;
		if ((now.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return -ENOEXEC;
	}
	*data = shdr->sh_flags & SHF_COMPRESSED ? elf_getdata(scn, NULL) : elf_rawdata(scn, NULL);
	if (!*data || !(*data)->d_buf || (*data)->d_size == 0)
		return -ENOEXEC;
	return 0;
}

static int find_sections(Elf *elf, struct cfi_sections *cs)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr))
			return -ENOEXEC;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".eh_frame") && !cs->eh_frame) {
			cs->eh_frame = scn;
			cs->eh_shdr = shdr;
		} else if (!strcmp(name, ".debug_frame") && !cs->debug_frame) {
			cs->debug_frame = scn;
			cs->debug_shdr = shdr;
		} else if (!strcmp(name, ".gopclntab") && !cs->gopclntab) {
			cs->gopclntab = scn;
			cs->go_shdr = shdr;
		} else if ((shdr.sh_type == SHT_INIT_ARRAY || shdr.sh_type == SHT_FINI_ARRAY) &&
			   !cs->has_array[shdr.sh_type == SHT_FINI_ARRAY]) {
			cs->has_array[shdr.sh_type == SHT_FINI_ARRAY] = true;
			cs->arrays[shdr.sh_type == SHT_FINI_ARRAY] = shdr;
		} else if ((!strcmp(name, ".init") || !strcmp(name, ".fini")) &&
			   !cs->crt[name[1] == 'f']) {
			cs->crt[name[1] == 'f'] = scn;
			cs->crt_shdr[name[1] == 'f'] = shdr;
		} else if (!strcmp(name, ".text") && !cs->text_addr) {
			cs->text_addr = shdr.sh_addr;
		}
	}
	return 0;
}

/*
 * A dynamic loader (ld.so; a static PIE too): a shared object with an entry
 * point and no interpreter of its own. Its lazy-binding trampolines have rbx
 * CFAs (OP_RULE_CFA_RBX), so its rules say where rbx is (OP_CFA_F_BX). The
 * build and the FDE index decide it from the same headers.
 */
static bool elf_is_loader(uint16_t e_type, uint64_t e_entry, bool has_interp)
{
	return e_type == ET_DYN && e_entry != 0 && !has_interp;
}

/* elf_is_loader() of a file libelf opened. */
static bool gelf_is_loader(Elf *elf, const GElf_Ehdr *ehdr)
{
	size_t n = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			return false;
	return elf_is_loader(ehdr->e_type, ehdr->e_entry, false);
}

/* Walks one section into *rows. Returns 0, -ENOENT (absent/empty), -ENOEXEC or -ENOMEM. */
static int elf_section_ranges(const struct elf_file *ef, Elf_Scn *scn, const GElf_Shdr *shdr,
			      bool debug, bool track_bx, struct delta_vec *rows,
			      struct stack_delta_stats *stats)
{
	struct section s = {.vaddr = shdr->sh_addr, .debug = debug, .track_bx = track_bx};
	Elf_Data *data;
	int err;

	if (!scn)
		return -ENOENT;
	err = section__bytes(ef, scn, shdr, &data);
	if (err)
		return err;
	s.data = data->d_buf;
	s.len = data->d_size;
	return section__ranges(&s, rows, stats);
}

static int cfi_id(const struct elf_file *ef, Elf *elf, bool streamed,
		  uint8_t out[STACK_DELTAS_ID_LEN]);

/*
 * Go's own table as ranges (see go_deltas.h): every run with a rule, the
 * gaps between functions left out. Returns 0, -ENOENT (no .gopclntab or not
 * one this reader knows: the file is simply not Go), -ENOMEM.
 */
/*
 * The pclntab of a file without section headers (stripped past what `go
 * build` does): searched by its magic in the read-only PT_LOAD segments, the
 * text being the executable one. Only for such files: the search reads every
 * read-only byte, too much for every library. 0 with *data, *len and
 * *text_addr, or -ENOENT.
 */
static int go_find_unsectioned(Elf *elf, const uint8_t **data, size_t *len, uint64_t *text_addr)
{
	uint64_t text_lo = 0, text_hi = 0;
	size_t n_ph, n_sh, file_size;
	const uint8_t *file;

	if (elf_getshdrnum(elf, &n_sh) || n_sh || elf_getphdrnum(elf, &n_ph))
		return -ENOENT;
	file = (const uint8_t *)elf_rawfile(elf, &file_size);
	if (!file)
		return -ENOENT;
	for (size_t i = 0; i < n_ph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    !text_hi) {
			text_lo = ph.p_vaddr;
			text_hi = ph.p_vaddr + ph.p_memsz;
		}
	}
	for (size_t i = 0; text_hi && i < n_ph; i++) {
		GElf_Phdr ph;
		long off;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    (ph.p_flags & PF_X) || ph.p_offset > file_size ||
		    ph.p_filesz > file_size - ph.p_offset)
			continue;
		off = go_deltas__find_pclntab(file + ph.p_offset, ph.p_filesz, text_lo, text_hi);
		if (off >= 0) {
			*data = file + ph.p_offset + off;
			*len = ph.p_filesz - (size_t)off;
			*text_addr = text_lo;
			return 0;
		}
	}
	return -ENOENT;
}

/* The bytes of the pclntab the build uses (see go_section_ranges), or -ENOENT. */
static int go_bytes(const struct elf_file *ef, Elf *elf, const struct cfi_sections *cs,
		    const uint8_t **data, size_t *len, uint64_t *text_addr)
{
	Elf_Data *d;

	if (!cs->gopclntab)
		return go_find_unsectioned(elf, data, len, text_addr);
	if (section__bytes(ef, cs->gopclntab, &cs->go_shdr, &d))
		return -ENOENT;
	*data = d->d_buf;
	*len = d->d_size;
	*text_addr = cs->text_addr;
	return 0;
}

/* Go's table as rows (its OP_RULE_INVALID gaps are ROW_HOLE: CFI may fill them), in place. */
static int go_section_ranges(const struct elf_file *ef, Elf *elf, const struct cfi_sections *cs,
			     struct delta_vec *rows, struct stack_delta_stats *stats)
{
	struct stack_delta_table t = {0};
	struct go_delta_stats gs;
	const uint8_t *data;
	uint64_t text_addr;
	size_t len, k = 0;
	int err;

	if (go_bytes(ef, elf, cs, &data, &len, &text_addr))
		return -ENOENT;
	err = go_deltas__build(data, len, text_addr, &t, &gs);
	if (err)
		return err == -ENOMEM ? err : -ENOENT;
	stats->bad_entries += gs.bad_funcs;
	stats->unsupported += gs.bad_deltas;
	/* The last delta only ends the one before it. */
	for (size_t i = 0; i < t.n; i++) {
		struct op_unwind_rule r = t.deltas[i].rule;

		if (r.cmd == OP_RULE_INVALID || i + 1 == t.n)
			r = rule_cmd(ROW_HOLE);
		rows__put(t.deltas, &k, t.deltas[i].addr, r);
	}
	*rows = (struct delta_vec){.v = t.deltas, .n = k, .cap = t.n};
	return 0;
}

/*
 * libelf is initialised by elf_file__open(), which every struct elf_file
 * went through.
 */
/* The most bytes of a .init or .fini section crt_rows() reads (and cfi_id() hashes). */
#define CRT_MAX 64

/* The bytes of cs's .init (i 0) or .fini (1) when crt_rows() reads them: *p owned by elf. */
static bool crt_bytes(const struct elf_file *ef, const struct cfi_sections *cs, int i,
		      const uint8_t **p, size_t *n)
{
	const GElf_Shdr *sh = &cs->crt_shdr[i];
	Elf_Data *data;

	if (!cs->crt[i] || sh->sh_type != SHT_PROGBITS || !(sh->sh_flags & SHF_EXECINSTR) ||
	    (sh->sh_flags & SHF_COMPRESSED) || sh->sh_size > CRT_MAX ||
	    section__bytes(ef, cs->crt[i], sh, &data) || data->d_size != sh->sh_size)
		return false;
	*p = data->d_buf;
	*n = data->d_size;
	return true;
}

/* n bytes of p equal to want's, a 0x100 in want matching any byte. */
static bool bytes_match(const uint8_t *p, const uint16_t *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (want[i] != 0x100 && p[i] != want[i])
			return false;
	return true;
}

/*
 * _init and _fini, glibc's crti.o and crtn.o: assembly without CFI, the
 * first code of a library a process runs (a sample on its page fault ended in
 * "no unwind rule"). The whole section must be the known sequence,
 * `[endbr64] sub $8,%rsp; [mov PREINIT(%rip),%rax; test %rax,%rax; je 1f;
 * call *%rax; 1:] add $8,%rsp; ret`, nothing from other objects: CFA =
 * rsp + 8 up to the sub, rsp + 16 until the add is done, rsp + 8 at the ret.
 * Rows for the gaps of rows, as .debug_frame's (CFI that covers it wins).
 */
static int crt_rows(const struct elf_file *ef, const struct cfi_sections *cs, bool track_bx,
		    struct delta_vec *rows)
{
	static const uint16_t endbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
	static const uint16_t sub8[] = {0x48, 0x83, 0xec, 0x08};
	static const uint16_t preinit[] = {0x48, 0x8b, 0x05, 0x100, 0x100, 0x100, 0x100,
					   0x48, 0x85, 0xc0, 0x74,  0x02,  0xff,  0xd0};
	static const uint16_t add8ret[] = {0x48, 0x83, 0xc4, 0x08, 0xc3};
	struct op_unwind_rule r8 = {.cmd = OP_RULE_CFA, .cfa_offset = 8},
			      r16 = {.cmd = OP_RULE_CFA, .cfa_offset = 16};
	struct delta_vec crt = {0};
	int err = 0;

	if (track_bx) /* rbx untouched */
		r8.cfa_base = r16.cfa_base = OP_CFA_F_BX;
	for (int i = 0; i < 2 && !err; i++) {
		uint64_t at = cs->crt_shdr[i].sh_addr;
		const uint8_t *p;
		size_t n, k = 0, body;

		if (!crt_bytes(ef, cs, i, &p, &n) || at > UINT64_MAX - CRT_MAX)
			continue;
		if (n >= sizeof(endbr) / 2 && bytes_match(p, endbr, sizeof(endbr) / 2))
			k = sizeof(endbr) / 2;
		if (n < k + sizeof(sub8) / 2 + sizeof(add8ret) / 2 ||
		    !bytes_match(p + k, sub8, sizeof(sub8) / 2))
			continue;
		k += sizeof(sub8) / 2;
		body = n - k - sizeof(add8ret) / 2;
		if ((body && (body != sizeof(preinit) / 2 || !bytes_match(p + k, preinit, body))) ||
		    !bytes_match(p + n - sizeof(add8ret) / 2, add8ret, sizeof(add8ret) / 2))
			continue;
		err = delta_vec__push(&crt, at, r8);
		if (!err)
			err = delta_vec__push(&crt, at + k, r16);
		if (!err)
			err = delta_vec__push(&crt, at + n - 1, r8);
		if (!err)
			err = delta_vec__push(&crt, at + n, rule_cmd(ROW_HOLE));
	}
	/* .fini before .init in memory: rows must be sorted. */
	if (!err && crt.n == 8 && crt.v[0].addr > crt.v[4].addr)
		for (size_t j = 0; j < 4; j++) {
			struct stack_delta t = crt.v[j];

			crt.v[j] = crt.v[j + 4];
			crt.v[j + 4] = t;
		}
	if (!err && crt.n == 8 && crt.v[3].addr > crt.v[4].addr)
		crt.n = 0; /* overlapping sections: not crti's */
	if (!err)
		err = rows__fill_gaps(rows, &crt);
	free(crt.v);
	return err;
}

/*
 * Up to CRT_MAX bytes of code at vaddr v, from the executable section that
 * holds it (read through ef->fd into buf): how many, 0 when none.
 */
static size_t code_at(const struct elf_file *ef, Elf *elf, uint64_t v, uint8_t *buf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while (v && (scn = elf_nextscn(elf, scn)) != NULL) {
		uint64_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || v < sh.sh_addr ||
		    v - sh.sh_addr >= sh.sh_size)
			continue;
		n = sh.sh_size - (v - sh.sh_addr);
		if (n > CRT_MAX)
			n = CRT_MAX;
		if (sh.sh_offset > ef->size || v - sh.sh_addr > ef->size - sh.sh_offset ||
		    n > ef->size - sh.sh_offset - (v - sh.sh_addr) ||
		    pread(ef->fd, buf, n, (off_t)(sh.sh_offset + (v - sh.sh_addr))) != (ssize_t)n)
			return 0;
		return n;
	}
	return 0;
}

/* The first pointer of cs's .init_array (i 0) or .fini_array (1), 0 when none or unreadable
 * (an array whose pointers only relocations give reads 0). */
static uint64_t array_first(const struct elf_file *ef, const struct cfi_sections *cs, int i)
{
	const GElf_Shdr *sh = &cs->arrays[i];
	uint64_t v = 0;

	if (!cs->has_array[i] || sh->sh_size < sizeof(v) || sh->sh_offset > ef->size ||
	    sizeof(v) > ef->size - sh->sh_offset ||
	    pread(ef->fd, &v, sizeof(v), (off_t)sh->sh_offset) != (ssize_t)sizeof(v))
		return 0;
	return v;
}

/*
 * GCC's crtstuff (crtbegin*.o, built without unwind tables): frame_dummy,
 * which .init_array's first entry names (`[endbr64] jmp register_tm_clones`,
 * called while a library loads), and __do_global_dtors_aux, .fini_array's
 * first (the caller of __cxa_finalize when a library or program exits:
 * `push %rbp` after a test, `pop %rbp; ret`, `ret` for the early exit).
 * Only the exact code gets rows (the displacements excepted): CFA = rsp + 8,
 * rsp + 16 with rbp saved at CFA - 16 between the push and the pop. The
 * same gap-filling as crt_rows().
 */
static int crtstuff_rows(const struct elf_file *ef, Elf *elf, const struct cfi_sections *cs,
			 bool track_bx, struct delta_vec *rows)
{
	static const uint16_t endbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
	static const uint16_t jmp32[] = {0xe9, 0x100, 0x100, 0x100, 0x100};
#define W 0x100
	static const uint16_t dtors[] = {0x80, 0x3d, W,	   W,	 W,    W,    0x00, 0x75, W,    0x55,
					 0x48, 0x83, 0x3d, W,	 W,    W,    W,	   0x00, 0x48, 0x89,
					 0xe5, 0x74, 0x0c, 0x48, 0x8b, 0x3d, W,	   W,	 W,    W,
					 0xe8, W,    W,	   W,	 W,    0xe8, W,	   W,	 W,    W,
					 0xc6, 0x05, W,	   W,	 W,    W,    0x01, 0x5d, 0xc3};
#undef W
	const size_t n_endbr = sizeof(endbr) / 2, n_jmp = sizeof(jmp32) / 2,
		     n_dtors = sizeof(dtors) / 2;
	struct op_unwind_rule r8 = {.cmd = OP_RULE_CFA, .cfa_offset = 8},
			      r16 = {.cmd = OP_RULE_CFA, .cfa_offset = 16, .fp_offset = -16};
	struct delta_vec crt = {0};
	uint8_t code[CRT_MAX];
	int err = 0;

	if (track_bx) /* rbx untouched */
		r8.cfa_base = r16.cfa_base = OP_CFA_F_BX;
	for (int i = 0; i < 2 && !err; i++) {
		uint64_t v = array_first(ef, cs, i);
		size_t n = v <= UINT64_MAX - CRT_MAX ? code_at(ef, elf, v, code) : 0, k = 0, ret;

		if (n >= n_endbr && bytes_match(code, endbr, n_endbr))
			k = n_endbr;
		if (i == 0) {
			if (n < k + n_jmp || !bytes_match(code + k, jmp32, n_jmp))
				continue;
			err = delta_vec__push(&crt, v, r8);
			if (!err)
				err = delta_vec__push(&crt, v + k + n_jmp, rule_cmd(ROW_HOLE));
			continue;
		}
		if (n < k + n_dtors || !bytes_match(code + k, dtors, n_dtors))
			continue;
		/* jne's target (rel8 from the push): the early exit's ret, past the pop's */
		ret = k + 9 + (size_t)(int8_t)code[k + 8];
		if ((int8_t)code[k + 8] < 0 || ret < k + n_dtors || ret >= n || code[ret] != 0xc3)
			continue;
		err = delta_vec__push(&crt, v, r8);
		if (!err)
			err = delta_vec__push(&crt, v + k + 10, r16); /* push %rbp done */
		if (!err)
			err = delta_vec__push(&crt, v + k + n_dtors - 1, r8); /* pop %rbp done */
		if (!err)
			err = delta_vec__push(&crt, v + ret + 1, rule_cmd(ROW_HOLE));
	}
	/* Rows sorted: frame_dummy's (pushed first) stay first when it lies lower, else
	 * __do_global_dtors_aux's go first (as GCC lays them out); overlapping: neither's. */
	if (!err && crt.n == 6 && crt.v[0].addr < crt.v[2].addr) {
		if (crt.v[1].addr > crt.v[2].addr)
			crt.n = 0; /* overlapping: neither is crtstuff's */
	} else if (!err && crt.n == 6) {
		struct stack_delta f[2] = {crt.v[0], crt.v[1]};

		memmove(&crt.v[0], &crt.v[2], 4 * sizeof(*crt.v));
		crt.v[4] = f[0];
		crt.v[5] = f[1];
		if (crt.v[3].addr > crt.v[4].addr)
			crt.n = 0;
	}
	if (!err)
		err = rows__fill_gaps(rows, &crt);
	free(crt.v);
	return err;
}

/* Bytes from the entry point that entry_stop() covers where no CFI does. */
#define ENTRY_STOP_LEN 256

/*
 * The entry point is a process's first frame. The dynamic loader's
 * (glibc's RTLD_START: _start calls _dl_start, then _dl_start_user calls
 * _dl_init and jumps to the program) has no CFI at all, so a sample taken
 * while ld.so loads a program ended in "no unwind rule" one frame short of
 * the root. When no CFI covers the entry point, the bytes from it to the
 * next code CFI describes (at most ENTRY_STOP_LEN) are the outermost frame
 * (OP_RULE_STOP), as crt1's _start says of itself with DW_CFA_undefined rip.
 */
static int entry_stop(const GElf_Ehdr *ehdr, struct delta_vec *rows)
{
	uint64_t e = ehdr->e_entry, end;
	size_t lo = 0, hi = rows->n, at;
	int err;

	if (!e || e > UINT64_MAX - ENTRY_STOP_LEN)
		return 0;
	/* lo: the rows that start at or before the entry. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows->v[mid].addr <= e)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Only an entry no CFI covers, up to the next code CFI describes (row lo: after a
	 * gap comes a rule). */
	if (lo && rows->v[lo - 1].rule.cmd != ROW_HOLE)
		return 0;
	end = e + ENTRY_STOP_LEN;
	if (lo < rows->n && rows->v[lo].addr < end)
		end = rows->v[lo].addr;
	err = array__reserve(rows->v, rows->cap, rows->n + 2);
	if (err)
		return err;
	/* A gap that starts at the entry becomes the stop; else the stop is inserted. */
	at = lo && rows->v[lo - 1].addr == e ? lo - 1 : lo;
	if (at == lo) {
		memmove(&rows->v[at + 1], &rows->v[at], (rows->n - at) * sizeof(*rows->v));
		rows->n++;
	}
	rows->v[at] = (struct stack_delta){.addr = e, .rule = rule_cmd(OP_RULE_STOP)};
	/* The gap goes on after the stop unless a rule starts there. */
	if (at + 1 == rows->n || rows->v[at + 1].addr > end) {
		memmove(&rows->v[at + 2], &rows->v[at + 1], (rows->n - at - 1) * sizeof(*rows->v));
		rows->n++;
		rows->v[at + 1] = (struct stack_delta){.addr = end, .rule = rule_cmd(ROW_HOLE)};
	}
	return 0;
}

int stack_deltas__build(const struct elf_file *ef, struct stack_delta_table *out)
{
	struct delta_vec eh = {0}, dbg = {0}, go = {0};
	struct cfi_sections cs = {0};
	int err, err_eh, err_dbg, err_go;
	GElf_Ehdr ehdr;
	bool loader;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	elf = elf_begin(ef->fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	err = -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr))
		goto cleanup;
	/* Register numbers and the rules' meaning are x86-64's. */
	if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
	    ehdr.e_machine != EM_X86_64) {
		err = -EOPNOTSUPP;
		goto cleanup;
	}
	err = find_sections(elf, &cs);
	if (err)
		goto cleanup;
	/* What is parsed below is what is hashed here: the table and its id cannot disagree. */
	out->has_id = !cfi_id(ef, elf, false, out->id);

	loader = gelf_is_loader(elf, &ehdr);
	err_eh = elf_section_ranges(ef, cs.eh_frame, &cs.eh_shdr, false, loader, &eh, &out->stats);
	err_dbg =
	    elf_section_ranges(ef, cs.debug_frame, &cs.debug_shdr, true, loader, &dbg, &out->stats);
	err_go = go_section_ranges(ef, elf, &cs, &go, &out->stats);
	if (err_eh == -ENOMEM || err_dbg == -ENOMEM || err_go == -ENOMEM) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (!err_go) {
		/*
		 * Go's table describes exactly the Go functions, and is the one source
		 * for its stack switches and roots; CFI (C code linked in with cgo,
		 * Go's own .debug_frame) fills what it does not cover.
		 */
		if (!err_eh)
			err = rows__fill_gaps(&go, &eh);
		if (!err && !err_dbg)
			err = rows__fill_gaps(&go, &dbg);
		if (!err)
			table__from_rows(out, &go);
		goto cleanup;
	}
	if (err_eh && err_dbg) {
		/* Nothing usable: malformed beats absent. */
		err = err_eh == -ENOEXEC || err_dbg == -ENOEXEC ? -ENOEXEC : -ENOENT;
		goto cleanup;
	}
	if (err_eh) {
		free(eh.v);
		eh = dbg;
		dbg = (struct delta_vec){0};
	} else if (!err_dbg) {
		err = rows__fill_gaps(&eh, &dbg);
		if (err)
			goto cleanup;
	}
	err = crt_rows(ef, &cs, loader, &eh);
	if (!err)
		err = crtstuff_rows(ef, elf, &cs, loader, &eh);
	if (!err)
		err = entry_stop(&ehdr, &eh);
	if (!err)
		table__from_rows(out, &eh);
cleanup:
	free(eh.v);
	free(dbg.v);
	free(go.v);
	elf_end(elf);
	if (err) {
		struct stack_delta_stats stats = out->stats;

		stack_delta_table__free(out);
		out->stats = stats;
	}
	return err;
}

/* Memory per byte of CFI at a build's peak, the section's copy included (max RSS of
 * `stack_deltas_bench --dump` above its 5.2 MiB base; the rows are the table, see struct
 * delta_vec): libLLVM-14 4.8 MiB of .eh_frame took 26.8 MiB, libclang-cpp 4.8 took 27.3,
 * cc1 2.3 took 13.4, node 2.6 took 12.9 (8.1 to 8.7 per byte before). */
#define CFI_COST_PER_BYTE 6
/* A compressed .debug_frame inflates about 4 times (its header is not read here: libelf would
 * copy the section to read it). */
#define COMPRESSED_RATIO 4
/* .gopclntab yields far fewer rows per byte (one per function and stack-size change). */
#define GO_COST_PER_BYTE 2

static size_t section_cost(Elf_Scn *scn, const GElf_Shdr *shdr, size_t per_byte)
{
	if (!scn || shdr->sh_type == SHT_NOBITS)
		return 0;
	if (shdr->sh_flags & SHF_COMPRESSED)
		per_byte *= COMPRESSED_RATIO;
	return shdr->sh_size > SIZE_MAX / 64 ? SIZE_MAX / 64 : shdr->sh_size * per_byte;
}

size_t stack_deltas__build_cost(const struct elf_file *ef)
{
	struct cfi_sections cs = {0};
	Elf *elf = elf_begin(ef->fd, ELF_C_READ, NULL);
	size_t cost = 0;

	if (elf && elf_kind(elf) == ELF_K_ELF && !find_sections(elf, &cs))
		cost = section_cost(cs.eh_frame, &cs.eh_shdr, CFI_COST_PER_BYTE) +
		       section_cost(cs.debug_frame, &cs.debug_shdr, CFI_COST_PER_BYTE) +
		       section_cost(cs.gopclntab, &cs.go_shdr, GO_COST_PER_BYTE);
	elf_end(elf);
	return cost;
}

void stack_delta_table__free(struct stack_delta_table *t)
{
	if (!t)
		return;
	free(t->deltas);
	t->deltas = NULL;
	t->n = 0;
}

const struct stack_delta *stack_delta_table__find(const struct stack_delta_table *t, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!t || !t->n || addr < t->deltas[0].addr)
		return NULL;
	/* Invariant: deltas[lo].addr <= addr, and every index >= hi is above addr. */
	hi = t->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->deltas[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return &t->deltas[lo];
}

/* ---- table identity ------------------------------------------------------------------ */

struct id_hash {
	EVP_MD_CTX *ctx;
	bool failed;
};

static void id_hash__add(struct id_hash *h, const void *data, size_t len)
{
	if (!h->failed && EVP_DigestUpdate(h->ctx, data, len) != 1)
		h->failed = true;
}

static void id_hash__u64(struct id_hash *h, uint64_t v)
{
	id_hash__add(h, &v, sizeof(v));
}

/* Bytes hashed per read when a section is read straight from the file. */
#define ID_READ_CHUNK (64u << 10)

/*
 * An uncompressed section's bytes read from the file in bounded chunks:
 * the very bytes libelf's copy would hold (elf_rawdata() reads sh_size
 * bytes at sh_offset), without that copy (libLLVM-14: 4.8 MiB for every
 * table read back from the disk cache). False when it does not apply.
 */
static bool id_hash__streamed(struct id_hash *h, const struct elf_file *ef, const GElf_Shdr *shdr,
			      uint64_t tag)
{
	uint8_t buf[ID_READ_CHUNK];
	uint64_t done = 0;

	if (shdr->sh_type == SHT_NOBITS || shdr->sh_size == 0 ||
	    (shdr->sh_flags & SHF_COMPRESSED) || shdr->sh_offset > ef->size ||
	    shdr->sh_size > ef->size - shdr->sh_offset)
		return false;
	id_hash__u64(h, tag);
	id_hash__u64(h, 0);
	id_hash__u64(h, shdr->sh_addr);
	id_hash__u64(h, shdr->sh_size);
	while (done < shdr->sh_size && !h->failed) {
		size_t want = shdr->sh_size - done < sizeof(buf) ? (size_t)(shdr->sh_size - done)
								 : sizeof(buf);
		ssize_t n = pread(ef->fd, buf, want, (off_t)(shdr->sh_offset + done));

		if (n <= 0) {
			h->failed = true; /* no id: the table is built, not cached */
			break;
		}
		id_hash__add(h, buf, (size_t)n);
		done += (uint64_t)n;
	}
	return true;
}

/* One CFI section as stack_deltas__build() sees it: its outcome, address and
 * bytes (streamed: read from the file in chunks when that gives the same bytes). */
static void id_hash__section(struct id_hash *h, const struct elf_file *ef, Elf_Scn *scn,
			     const GElf_Shdr *shdr, uint64_t tag, bool streamed)
{
	Elf_Data *data = NULL;
	int err;

	if (scn && streamed && id_hash__streamed(h, ef, shdr, tag))
		return;
	err = scn ? section__bytes(ef, scn, shdr, &data) : -ENOENT;
	id_hash__u64(h, tag);
	id_hash__u64(h, (uint64_t)(int64_t)err);
	if (err)
		return;
	id_hash__u64(h, shdr->sh_addr);
	id_hash__u64(h, data->d_size);
	id_hash__add(h, data->d_buf, data->d_size);
}

/*
 * Hashes every input stack_deltas__build() reads, in the order it reads
 * them: the ELF header fields it checks, then .eh_frame, .debug_frame and .gopclntab (with .text's
 * address) (first of each name, bytes after decompression, the section address pc-relative
 * encodings use, or why the section is unusable). Must change whenever stack_deltas__build() starts
 * reading something else.
 */
/*
 * The id of the CFI elf (an open handle of ef) holds. Section bytes come from
 * libelf's copy of the handle (ELF_C_READ reads a section once), so a caller
 * that parses the same handle parses exactly the bytes hashed here.
 */
static int cfi_id(const struct elf_file *ef, Elf *elf, bool streamed,
		  uint8_t out[STACK_DELTAS_ID_LEN])
{
	unsigned char digest[EVP_MAX_MD_SIZE];
	struct cfi_sections cs = {0};
	struct id_hash h = {0};
	unsigned int digest_len = 0;
	GElf_Ehdr ehdr;
	int err = 0;

	h.ctx = EVP_MD_CTX_new();
	if (!h.ctx)
		return -ENOMEM;
	if (EVP_DigestInit_ex(h.ctx, EVP_sha256(), NULL) != 1) {
		err = -EIO;
		goto cleanup;
	}
	/* The builder's version: 3 since Go's systemstack_switch rule, 4 since
	 * rbx-based CFAs (OP_RULE_CFA_RBX), 5 since a loader's rbx slots (OP_CFA_F_BX). */
	id_hash__add(&h, "omniprof cfi 5", 14);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr)) {
		id_hash__u64(&h, 1); /* not an ELF file libelf can read: no table */
	} else {
		id_hash__u64(&h, ehdr.e_ident[EI_CLASS]);
		id_hash__u64(&h, ehdr.e_ident[EI_DATA]);
		id_hash__u64(&h, ehdr.e_machine);
		id_hash__u64(&h, ehdr.e_entry);		      /* entry_stop() */
		id_hash__u64(&h, gelf_is_loader(elf, &ehdr)); /* OP_CFA_F_BX */
		if (find_sections(elf, &cs)) {
			id_hash__u64(&h, 2); /* section headers unreadable */
		} else {
			id_hash__section(&h, ef, cs.eh_frame, &cs.eh_shdr, 3, streamed);
			id_hash__section(&h, ef, cs.debug_frame, &cs.debug_shdr, 4, streamed);
			const uint8_t *go;
			uint64_t text_addr;
			size_t go_len;

			id_hash__u64(&h, 5);
			if (!go_bytes(ef, elf, &cs, &go, &go_len, &text_addr)) {
				id_hash__u64(&h, text_addr);
				id_hash__u64(&h, go_len);
				id_hash__add(&h, go, go_len);
			}
			/* crtstuff_rows() */
			for (int i = 0; i < 2; i++) {
				uint64_t v = array_first(ef, &cs, i);
				uint8_t code[CRT_MAX];
				size_t n = code_at(ef, elf, v, code);

				id_hash__u64(&h, 8 + i);
				id_hash__u64(&h, v);
				id_hash__add(&h, code, n);
			}
			/* crt_rows() */
			for (int i = 0; i < 2; i++) {
				const uint8_t *p;
				size_t n;

				id_hash__u64(&h, 6 + i);
				if (crt_bytes(ef, &cs, i, &p, &n)) {
					id_hash__u64(&h, cs.crt_shdr[i].sh_addr);
					id_hash__add(&h, p, n);
				}
			}
		}
	}
	if (h.failed || EVP_DigestFinal_ex(h.ctx, digest, &digest_len) != 1 ||
	    digest_len < STACK_DELTAS_ID_LEN) {
		err = -EIO;
		goto cleanup;
	}
	memcpy(out, digest, STACK_DELTAS_ID_LEN);
cleanup:
	EVP_MD_CTX_free(h.ctx);
	return err;
}

int stack_deltas__table_id(const struct elf_file *ef, uint8_t out[STACK_DELTAS_ID_LEN])
{
	struct stat_memo_key before, after;
	bool keyed = stat_memo__key(ef->fd, STAT_MEMO_TABLE_ID, &before);
	Elf *elf;
	int err;

	/* The same file, unchanged since it was hashed this run: the id it had then. */
	if (keyed && stat_memo__find(&before, out, STACK_DELTAS_ID_LEN))
		return 0;
	elf = elf_begin(ef->fd, ELF_C_READ, NULL);
	/* Nothing parses this handle: the sections need not be libelf's copies. */
	err = cfi_id(ef, elf, true, out);
	elf_end(elf);
	/* Remembered only when nothing changed while it was read. */
	if (!err && keyed && stat_memo__key(ef->fd, STAT_MEMO_TABLE_ID, &after) &&
	    !memcmp(&before, &after, sizeof(before)))
		stat_memo__add(&before, out, STACK_DELTAS_ID_LEN);
	return err;
}

/* ---- one FDE at a time: a held stack copy's walk before its file's table exists ---------- */

/* An entry larger than this is not read on its own (the table will have it). */
#define FDE_ENTRY_MAX (64u << 10)
/* DW_EH_PE_datarel | DW_EH_PE_sdata4: the search table's encoding every linker writes. */
#define HDR_TABLE_ENC 0x3b

int stack_deltas__fde_index_parse(const uint8_t *hdr, size_t hdr_len, uint64_t hdr_size,
				  uint64_t hdr_vaddr, uint64_t hdr_off, uint64_t eh_vaddr,
				  uint64_t eh_off, uint64_t eh_size, struct fde_index *out)
{
	struct cursor c = {.data = hdr, .pos = 0, .end = hdr_len};
	uint8_t version, ptr_enc, count_enc, table_enc;
	uint64_t eh_ptr, count;

	memset(out, 0, sizeof(*out));
	version = cursor__u8(&c);
	ptr_enc = cursor__u8(&c);
	count_enc = cursor__u8(&c);
	table_enc = cursor__u8(&c);
	if (c.bad || version != 1 || table_enc != HDR_TABLE_ENC)
		return -EOPNOTSUPP;
	/* The frame pointer field: only where it says .eh_frame is (pc-relative or absolute). */
	if (cursor__encoded_addr(&c, ptr_enc, 8, hdr_vaddr, &eh_ptr) || eh_ptr != eh_vaddr)
		return -EOPNOTSUPP;
	if (count_enc == DW_EH_PE_omit || (count_enc & 0x70) ||
	    cursor__encoded_value(&c, count_enc, 8, &count))
		return -EOPNOTSUPP;
	/* The entries lie in the section (hdr_size bytes), read one by one later. */
	if (hdr_len > hdr_size || count == 0 || count > (hdr_size - c.pos) / 8 ||
	    count > UINT32_MAX)
		return -ENOENT;
	if (eh_size == 0 || eh_off > UINT64_MAX - eh_size || hdr_off > UINT64_MAX - hdr_size)
		return -ENOEXEC;
	out->eh_off = eh_off;
	out->eh_size = eh_size;
	out->eh_vaddr = eh_vaddr;
	out->hdr_vaddr = hdr_vaddr;
	out->table_off = hdr_off + c.pos;
	out->count = (uint32_t)count;
	return 0;
}

/* A section whose bytes are in the file as they are (lld types .eh_frame SHT_X86_64_UNWIND). */
static bool has_bytes(const GElf_Shdr *sh)
{
	return (sh->sh_type == SHT_PROGBITS || sh->sh_type == SHT_X86_64_UNWIND) &&
	       !(sh->sh_flags & SHF_COMPRESSED) && sh->sh_size > 0;
}

/* Program headers read for the index at most (libelf's PN_XNUM extension is left to
 * the build); the section headers' bounds are elf_sections'. */
#define INDEX_MAX_SEGMENTS 1024

int stack_deltas__fde_index_read(fde_read_fn read, void *ctx, uint64_t file_size,
				 struct fde_index *out)
{
	struct elf_sections secs = {0};
	const Elf64_Shdr *hs, *es;
	Elf64_Phdr *ph = NULL;
	bool has_interp = false;
	uint8_t head[64];
	Elf64_Ehdr eh;
	size_t n;
	int err;

	memset(out, 0, sizeof(*out));
	/* No section headers, or extended numbering: the build's business. */
	err = elf_sections__ehdr(read, ctx, file_size, &eh);
	if (err)
		return err;
	/* Register numbers and the rules' meaning are x86-64's (as the build). */
	if (eh.e_machine != EM_X86_64)
		return -EOPNOTSUPP;
	/* The program headers, for elf_is_loader() (as the build's, through libelf). */
	if (eh.e_phnum > INDEX_MAX_SEGMENTS || (eh.e_phnum && eh.e_phentsize != sizeof(*ph)))
		return -EOPNOTSUPP;
	if (eh.e_phnum) {
		n = (size_t)eh.e_phnum * sizeof(*ph);
		if (eh.e_phoff > file_size || n > file_size - eh.e_phoff)
			return -ENOEXEC;
		ph = malloc(n);
		if (!ph)
			return -ENOMEM;
		err = read(ctx, eh.e_phoff, ph, n);
		for (size_t i = 0; !err && i < eh.e_phnum; i++)
			has_interp |= ph[i].p_type == PT_INTERP;
		free(ph);
		if (err)
			return err;
	}
	err = elf_sections__read(read, ctx, file_size, &eh, &secs);
	if (err)
		return err;
	/* The first section of each name, as the build's find_sections(). Go's own table
	 * wins over CFI in the build; without a search table the whole section would have
	 * to be walked (the build does it): both wait for the table. */
	es = elf_sections__first(&secs, ".eh_frame");
	hs = elf_sections__first(&secs, ".eh_frame_hdr");
	err = -EOPNOTSUPP;
	if (elf_sections__first(&secs, ".gopclntab") || !es || !hs || !has_bytes(hs) ||
	    !has_bytes(es))
		goto cleanup;
	err = -ENOEXEC;
	if (hs->sh_offset > file_size || hs->sh_size > file_size - hs->sh_offset ||
	    es->sh_offset > file_size || es->sh_size > file_size - es->sh_offset)
		goto cleanup;
	/* The header's fields (at most 4 + 8 + 8 bytes); the table is read entry by entry. */
	n = hs->sh_size < sizeof(head) ? hs->sh_size : sizeof(head);
	err = read(ctx, hs->sh_offset, head, n);
	if (err)
		goto cleanup;
	err = stack_deltas__fde_index_parse(head, n, hs->sh_size, hs->sh_addr, hs->sh_offset,
					    es->sh_addr, es->sh_offset, es->sh_size, out);
	if (!err)
		out->track_bx = elf_is_loader(eh.e_type, eh.e_entry, has_interp);
cleanup:
	elf_sections__free(&secs);
	if (err)
		memset(out, 0, sizeof(*out));
	return err;
}

static int ef_pread(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct elf_file *ef = ctx;
	ssize_t n;

	if (off > ef->size || len > ef->size - off)
		return -ERANGE;
	n = pread(ef->fd, buf, len, (off_t)off);
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

int stack_deltas__fde_index(const struct elf_file *ef, struct fde_index *out)
{
	memset(out, 0, sizeof(*out));
	if (!ef || ef->fd < 0)
		return -EBADF;
	return stack_deltas__fde_index_read(ef_pread, (void *)ef, ef->size, out);
}

/* One search-table entry: an FDE's start and its offset in .eh_frame. 0 or -errno. */
static int fde_index__entry(const struct fde_index *ix, fde_read_fn read, void *ctx, uint32_t i,
			    uint64_t *loc, uint64_t *fde_off)
{
	uint8_t b[8];
	int32_t rel_loc, rel_fde;
	uint64_t fde;
	int err = read(ctx, ix->table_off + (uint64_t)i * 8, b, sizeof(b));

	if (err)
		return err;
	memcpy(&rel_loc, b, 4);
	memcpy(&rel_fde, b + 4, 4);
	*loc = ix->hdr_vaddr + (uint64_t)(int64_t)rel_loc;
	fde = ix->hdr_vaddr + (uint64_t)(int64_t)rel_fde;
	if (fde < ix->eh_vaddr || fde - ix->eh_vaddr >= ix->eh_size)
		return -ENOEXEC;
	*fde_off = fde - ix->eh_vaddr;
	return 0;
}

/* A read entry's bytes: grown to the largest entry read (an FDE is tens of bytes). */
struct entry_buf {
	uint8_t *p;
	size_t cap;
};

/*
 * Reads the entry at off of .eh_frame into b as a one-entry window of the
 * section (*s). 0, -ENOEXEC (malformed, a terminator), -EOPNOTSUPP (larger
 * than FDE_ENTRY_MAX), -ENOMEM, or the read's error.
 */
static int fde_index__read_entry(const struct fde_index *ix, fde_read_fn read, void *ctx,
				 uint64_t off, struct entry_buf *b, struct section *s,
				 struct entry *e)
{
	uint64_t length, total, avail = ix->eh_size - off;
	uint32_t len32;
	int err;

	if (off >= ix->eh_size || avail < 4)
		return -ENOEXEC;
	err = read(ctx, ix->eh_off + off, &len32, 4);
	if (err)
		return err;
	if (len32 == 0 || len32 >= 0xfffffff0)
		return len32 == 0xffffffff ? -EOPNOTSUPP
					   : -ENOEXEC; /* 64-bit: GCC never writes it */
	length = len32;
	total = 4 + length;
	if (total > avail)
		return -ENOEXEC;
	if (total > FDE_ENTRY_MAX)
		return -EOPNOTSUPP;
	if (total > b->cap) {
		uint8_t *p = realloc(b->p, (size_t)total);

		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = (size_t)total;
	}
	err = read(ctx, ix->eh_off + off, b->p, (size_t)total);
	if (err)
		return err;
	*s = (struct section){.data = b->p,
			      .len = (size_t)total,
			      .vaddr = ix->eh_vaddr + off,
			      .debug = false,
			      .track_bx = ix->track_bx,
			      .base = off};
	return entry__read(s, 0, e) == ENTRY_OK ? 0 : -ENOEXEC;
}

/* A CIE whose initial state names an expression: its bytes are in the CIE, not the FDE's window. */
static bool cie__init_has_expr(const struct cie *cie)
{
	const struct cfi_state *st = &cie->init;

	return st->cfa_how == CFA_EXPR || st->rbp.how == REG_EXPR || st->rbp.how == REG_VAL_EXPR ||
	       st->ra.how == REG_EXPR || st->ra.how == REG_VAL_EXPR;
}

/* The CIE at cie_off parsed into *cie (its own window in scratch). 0 or -errno. */
static int fde_index__cie(const struct fde_index *ix, fde_read_fn read, void *ctx, uint64_t cie_off,
			  struct entry_buf *scratch, struct cie *cie,
			  struct stack_delta_stats *stats)
{
	struct section s;
	struct entry e;
	int err = fde_index__read_entry(ix, read, ctx, cie_off, scratch, &s, &e);

	if (err)
		return err;
	if (!e.is_cie)
		return -ENOEXEC;
	err = cie__parse(&s, 0, cie, stats);
	if (err)
		return err;
	if (!cie->valid)
		return -ENOEXEC;
	return cie__init_has_expr(cie) ? -EOPNOTSUPP : 0;
}

/*
 * FDE i's range, read with its CIE (the one in *cie when it starts at
 * *cie_at, else parsed into it). 0, 1 for an FDE with no range, -errno.
 */
static int fde_index__range(const struct fde_index *ix, fde_read_fn read, void *ctx,
			    uint64_t fde_off, struct entry_buf *buf, struct entry_buf *scratch,
			    struct cie *cie, uint64_t *cie_at, struct stack_delta_stats *stats,
			    struct section *s, struct entry *e, uint64_t *start, uint64_t *end)
{
	size_t insn;
	int err = fde_index__read_entry(ix, read, ctx, fde_off, buf, s, e);

	if (err)
		return err;
	if (e->is_cie)
		return -ENOEXEC;
	if (*cie_at != e->cie_off) {
		*cie_at = UINT64_MAX;
		err = fde_index__cie(ix, read, ctx, e->cie_off, scratch, cie, stats);
		if (err)
			return err;
		*cie_at = e->cie_off;
	}
	if (fde__range(s, e, cie, start, end, &insn))
		return -ENOEXEC;
	return *start == *end ? 1 : 0;
}

int stack_deltas__fde_rows(const struct fde_index *ix, fde_read_fn read, void *ctx, uint64_t vaddr,
			   struct fde_rows *out)
{
	uint64_t loc, fde_off, start, end, nstart, nend, noff;
	uint64_t cie_at = UINT64_MAX, ncie_at = UINT64_MAX;
	struct entry_buf buf = {0}, nbuf = {0}, scratch = {0};
	struct stack_delta_stats stats = {0};
	struct delta_vec rows = {0};
	struct cie *cie = NULL, *ncie;
	struct interp *it = NULL;
	struct section s, ns;
	struct entry e, ne;
	uint32_t lo = 0, hi, i;
	int err;

	memset(out, 0, sizeof(*out));
	if (!ix->count)
		return -ENOENT;
	/* The last entry starting at or before vaddr: at most 32 probes. */
	hi = ix->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		err = fde_index__entry(ix, read, ctx, mid, &loc, &fde_off);
		if (err)
			return err;
		if (loc <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	i = lo - 1;
	err = fde_index__entry(ix, read, ctx, i, &loc, &fde_off);
	if (err)
		return err;
	cie = calloc(2, sizeof(*cie));
	it = calloc(1, sizeof(*it));
	err = -ENOMEM;
	if (!cie || !it)
		goto cleanup;
	ncie = &cie[1];
	err = fde_index__range(ix, read, ctx, fde_off, &buf, &scratch, cie, &cie_at, &stats, &s, &e,
			       &start, &end);
	if (err == 1)
		err = -ENOENT;
	if (err)
		goto cleanup;
	/* The table names the FDE by its start: another answer is a lying table. */
	err = -ENOEXEC;
	if (start != loc)
		goto cleanup;
	err = -ENOENT; /* a gap: .debug_frame or the entry point may fill it in the table */
	if (vaddr >= end)
		goto cleanup;
	/*
	 * The build keeps the lowest-starting FDE where two overlap (equal starts:
	 * the earlier in the section). The entries beside this one are checked
	 * for either; a file with such FDEs waits for its table.
	 */
	err = -EOPNOTSUPP;
	if (i + 1 < ix->count &&
	    (fde_index__entry(ix, read, ctx, i + 1, &nstart, &noff) || nstart == start))
		goto cleanup;
	if (i > 0) {
		int r;

		if (fde_index__entry(ix, read, ctx, i - 1, &nstart, &noff) || nstart == start)
			goto cleanup;
		*ncie = *cie;
		ncie_at = cie_at;
		r = fde_index__range(ix, read, ctx, noff, &nbuf, &scratch, ncie, &ncie_at, &stats,
				     &ns, &ne, &nstart, &nend);
		if (r < 0 || (r == 0 && nstart <= vaddr && vaddr < nend))
			goto cleanup;
	}
	err = fde__rows(&s, &e, cie, it, &rows, &stats, &start, &end);
	if (err == 1)
		err = -ENOENT;
	if (err == -EINVAL)
		err = -ENOEXEC;
	if (err)
		goto cleanup;
	out->start = start;
	out->end = end;
	out->fde_off = fde_off;
	/* Its last row is the ROW_HOLE at end: the rows cover [start, end) without it. */
	out->n = rows.n - 1;
	out->rows = rows.v;
	rows = (struct delta_vec){0};
cleanup:
	free(rows.v);
	free(buf.p);
	free(nbuf.p);
	free(scratch.p);
	free(cie);
	free(it);
	return err;
}

const struct op_unwind_rule *fde_rows__rule(const struct fde_rows *r, uint64_t vaddr)
{
	size_t lo = 0, hi = r->n;

	if (!r->n || vaddr < r->start || vaddr >= r->end)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->rows[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &r->rows[lo - 1].rule : NULL;
}

void fde_rows__free(struct fde_rows *r)
{
	if (!r)
		return;
	free(r->rows);
	*r = (struct fde_rows){0};
}
