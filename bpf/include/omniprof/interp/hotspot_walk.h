/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HotSpot frame reader, written once for two targets like
 * omniprof/unwind/native.h (include it and omniprof/unwind/walk.h first): the BPF step
 * (bpf/interp/hotspot.bpf.h) and the C build the unit tests, the fuzz target
 * and user-space walks use (src/interp/hotspot/hotspot_unwind.c). It reads
 * one frame in the JVM's code cache and moves the unwinder to its caller (see
 * omniprof/interp/hotspot_abi.h for the three kinds of frame).
 *
 * The includer defines
 *   OP_JVM_READ(jw, dst, size, addr)  copy user memory; 0 on success
 *   OP_JVM_STAT(which)               count an enum op_jvm_stat
 * and may define OP_JVM_SUBPROG (the linkage of the step's larger parts) and
 *   OP_JVM_PC_CACHE_GET(jw, pc)       the struct op_jvm_pc_entry remembered
 *                                    for this pid's return address pc, or NULL
 *   OP_JVM_PC_CACHE_PUT(jw, proc, pc, b)  remember blob b for pc
 * (the BPF step's cross-sample cache; without them every sample reads anew)
 * and
 *   OP_JVM_CHAIN_SLOT(jw, i)          the struct op_jvm_chain in slot i of
 *                                    the scope chain cache, or NULL
 * (without it every sample decodes a compiled frame's scopes anew).
 *
 * Every loop is bounded (OP_JVM_MAX_HEAPS heaps, OP_JVM_SEGMAP_STEPS steps
 * back through a segment map) and every value read is checked before it
 * steers a read: a hostile JVM can make its own frames wrong, never the walk
 * long.
 */
#ifndef OMNIPROF_INTERP_HOTSPOT_WALK_H
#define OMNIPROF_INTERP_HOTSPOT_WALK_H

#include "omniprof/abi.h"
#include "omniprof/interp/hotspot_abi.h"

#ifndef OMNIPROF_UNWIND_WALK_H
#error "include omniprof/unwind/walk.h before omniprof/interp/hotspot_walk.h"
#endif
#if !defined(OP_JVM_READ) || !defined(OP_JVM_STAT)
#error "define OP_JVM_READ and OP_JVM_STAT before including omniprof/interp/hotspot_walk.h"
#endif
/* How a part the step calls is built: BPF makes it a global function (checked once). */
#ifndef OP_JVM_SUBPROG
#define OP_JVM_SUBPROG static __always_inline
#endif

/* A frame larger than this (bytes) is garbage: HotSpot frames are small. */
#define OP_JVM_MAX_FRAME (1u << 20)

/*
 * The segment where the block holding segment seg of a segment map begins,
 * -1 when none does. Each map byte says how many segments back to step (0:
 * the block starts here, 0xff: a free segment). The OP_JVM_SEGMAP_WINDOW
 * bytes ending at seg are read at once and the steps that stay among them
 * cost no read: a small blob, the usual nmethod, is found with one read
 * instead of two; then one byte a step, as far as OP_JVM_SEGMAP_STEPS.
 * Its own function in BPF (OP_JVM_SUBPROG), and the window's walk ends
 * before the byte-a-step one begins: the verifier checks each loop once, and
 * the caller sees one unknown number (inline, the window's byte position,
 * known at each step, multiplied the verifier's states: on_sample 56k ->
 * 336k instructions, session 13).
 */
OP_JVM_SUBPROG __s64 op_jvm_segmap_start(struct op_jvm_walker *jw, __u64 segmap, __u64 seg)
{
	__u8 win[OP_JVM_SEGMAP_WINDOW];

	if (!jw) /* a global function's pointers may be NULL for the verifier */
		return -1;
	/* Never past seg: the map may not be committed beyond it. */
	if (seg >= OP_JVM_SEGMAP_WINDOW - 1 &&
	    !OP_JVM_READ(jw, win, OP_JVM_SEGMAP_WINDOW,
			 segmap + seg - (OP_JVM_SEGMAP_WINDOW - 1))) {
		__u32 pos = OP_JVM_SEGMAP_WINDOW - 1;

		/* Each step goes back one byte or more: the window is left within its size. */
		for (int i = 0; i < OP_JVM_SEGMAP_WINDOW; i++) {
			__u8 back = win[pos & (OP_JVM_SEGMAP_WINDOW - 1)];

			if (back == 0xff)
				return -1;
			if (!back)
				return (__s64)seg;
			if (back > seg)
				return -1;
			seg -= back;
			if (back > pos)
				break;
			pos -= back;
		}
	}
	for (int i = 0; i < OP_JVM_SEGMAP_STEPS; i++) {
		__u8 back;

		if (OP_JVM_READ(jw, &back, 1, segmap + seg))
			return -1;
		if (back == 0xff)
			return -1;
		if (!back)
			return (__s64)seg;
		if (back > seg)
			return -1;
		seg -= back;
	}
	return -1;
}

/* The code blob holding pc (through its heap's segment map), 0 when none does. */
static __always_inline __u64 op_jvm_find_blob(struct op_jvm_walker *jw,
					      const struct op_jvm_proc *proc, __u64 pc)
{
	for (int h = 0; h < OP_JVM_MAX_HEAPS; h++) {
		const struct op_jvm_heap *heap = &proc->heaps[h];
		__u32 shift = heap->log2_segment & 31;
		__u64 seg;
		__s64 start;

		if (h >= proc->n_heaps)
			break;
		if (pc < heap->low || pc >= heap->high)
			continue;
		seg = (pc - heap->low) >> shift;
		start = op_jvm_segmap_start(jw, heap->segmap, seg);
		if (start < 0 || (__u64)start > seg)
			return 0;
		return heap->low + ((__u64)start << shift);
	}
	return 0;
}

/*
 * The blob's s32 / u64 field at off: from its block when the block holds it
 * (the block begins block_skip bytes before the blob, at its HeapBlock). 0 or -1.
 */
static __always_inline int op_jvm_s32(struct op_jvm_walker *jw, __u64 blob, __u32 off, __s32 *v)
{
	__u32 at = off + jw->block_skip;

	if (at <= OP_JVM_BLOCK - 8 && at + 4 <= jw->block_len) {
		__builtin_memcpy(v, &jw->block[at], 4);
		return 0;
	}
	return OP_JVM_READ(jw, v, 4, blob + off);
}

static __always_inline int op_jvm_u64(struct op_jvm_walker *jw, __u64 blob, __u32 off, __u64 *v)
{
	__u32 at = off + jw->block_skip;

	if (at <= OP_JVM_BLOCK - 8 && at + 8 <= jw->block_len) {
		__builtin_memcpy(v, &jw->block[at], 8);
		return 0;
	}
	return OP_JVM_READ(jw, v, 8, blob + off);
}

/* An address field of the blob: a pointer, or with OP_JVM_F_OFFSETS an int offset from it. */
static __always_inline int op_jvm_addr(struct op_jvm_walker *jw, const struct op_jvm_proc *proc,
				       __u64 blob, __u32 off, __u64 *v)
{
	__s32 rel = 0;

	if (!(proc->flags & OP_JVM_F_OFFSETS))
		return op_jvm_u64(jw, blob, off, v);
	if (op_jvm_s32(jw, blob, off, &rel) || rel < 0)
		return -1;
	*v = blob + (__u32)rel;
	return 0;
}

/*
 * Reads the block of the CodeHeap block at hb_at (its HeapBlock header, hb
 * bytes, then the blob): all of it, or its first OP_JVM_BLOCK_SHORT bytes.
 */
static __always_inline void op_jvm_load_block(struct op_jvm_walker *jw, __u64 hb_at, __u32 hb)
{
	jw->block_len = 0;
	jw->block_skip = (__u8)hb;
	if (!OP_JVM_READ(jw, jw->block, OP_JVM_BLOCK, hb_at))
		jw->block_len = OP_JVM_BLOCK;
	else if (!OP_JVM_READ(jw, jw->block, OP_JVM_BLOCK_SHORT, hb_at))
		jw->block_len = OP_JVM_BLOCK_SHORT;
}

/* Empties what the walk remembers: called once per sample, before its first HotSpot step. */
static __always_inline void op_jvm_walker__begin(struct op_jvm_walker *jw)
{
	jw->next = 0;
	jw->nm_name = 0;
	jw->nm_slot = 0;
	jw->blob_next = 0;
	jw->scope_next = 0;
	jw->scope_hint = 0;
	jw->chain_slot = 0;
	for (int i = 0; i < OP_JVM_BLOBS; i++)
		jw->blobs[i].blob = 0;
	for (int i = 0; i < OP_JVM_SCOPES; i++)
		jw->scope_cache[i].at = 0;
	for (int i = 0; i < OP_JVM_METHODS; i++)
		jw->methods[i].method = 0;
	jw->epoch = 0;
	jw->epoch_known = 0;
	jw->code_mark = 0;
	jw->pid = 0;
}

/*
 * The JVM's collection count (plus its safepoint count when set) into
 * jw->epoch, once per walk (a sample's frames share it). Both only grow, so
 * their sum moves whenever either does.
 */
static __always_inline void op_jvm_walker__epoch(struct op_jvm_walker *jw,
						 const struct op_jvm_proc *proc)
{
	__u32 count = 0, safepoints = 0;

	if (!proc->gc_count || OP_JVM_READ(jw, &count, 4, proc->gc_count))
		return;
	if (proc->safepoint_count && OP_JVM_READ(jw, &safepoints, 4, proc->safepoint_count))
		return;
	jw->epoch = count + safepoints;
	jw->epoch_known = 1;
	/* The code count, + 1 (a count of ~0 reads as not known: checked as before). */
	count = 0;
	if (proc->code_count && !OP_JVM_READ(jw, &count, 4, proc->code_count))
		jw->code_mark = count + 1;
}

/* Method::_constMethod of method, remembered for the walk. 0 or -1. */
static __always_inline int op_jvm_const_method(struct op_jvm_walker *jw,
					       const struct op_jvm_proc *proc, __u64 method,
					       __u64 *cm)
{
	struct op_jvm_method *m =
	    &jw->methods[((method >> 3) ^ (method >> 9)) & (OP_JVM_METHODS - 1)];

	if (!method)
		return -1;
	if (m->method == method) {
		*cm = m->cm;
		return 0;
	}
	if (OP_JVM_READ(jw, cm, 8, method + proc->method_const))
		return -1;
	m->method = method;
	m->cm = *cm;
	return 0;
}

static __always_inline void op_jvm_frame(const struct op_jvm_walker *jw, struct op_frame *frame,
					 __u64 addr, __u64 fingerprint, __u32 type, __u32 bci)
{
	frame->addr = addr;
	frame->data = (fingerprint & OP_JVM_FP_MASK) | ((__u64)type << OP_JVM_TYPE_SHIFT);
	frame->aux = (bci & OP_JVM_BCI_MASK) | (type << OP_JVM_AUX_TYPE_SHIFT);
	frame->kind = OP_FRAME_HOTSPOT;
	frame->flags = 0;
	frame->reserved = (__u16)jw->epoch;
}

static __always_inline int op_jvm_error(struct op_jvm_walker *jw, struct op_frame *frame)
{
	OP_JVM_STAT(jw, OP_JVM_STAT_READ_ERR);
	op_frame__set_error(frame, OP_UNWIND_ERR_HOTSPOT);
	return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_HOTSPOT;
}

/*
 * A binary search by 4-byte reads through the n PcDescs at base, narrowed
 * until at most OP_JVM_PCDESC_WINDOW are left: lo such that the first
 * PcDesc whose pc offset is >= target (n: none) is in [lo, lo + WINDOW],
 * -1 when a read fails. Its own function in BPF (OP_JVM_SUBPROG): what it
 * returns is one unknown number to the verifier, not a path per probe.
 */
OP_JVM_SUBPROG int op_jvm_pcdesc_narrow(struct op_jvm_walker *jw, __u64 base, __u32 n, __s32 target)
{
	__u32 lo = 0, hi = n;

	if (!jw || n > (1u << OP_JVM_PCDESC_STEPS))
		return -1;
	for (int i = 0; i < OP_JVM_PCDESC_STEPS + 1; i++) {
		__s32 pc_offset = 0;
		__u32 mid;

		if (hi - lo <= OP_JVM_PCDESC_WINDOW)
			return (int)lo;
		mid = lo + (hi - lo) / 2;
		if (OP_JVM_READ(jw, &pc_offset, 4, base + (__u64)mid * OP_JVM_PCDESC_SIZE))
			return -1;
		if (pc_offset < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * The scope decode offset of the PcDesc for pc offset target in the blob in
 * slot (the first whose pc offset is >= target: a return address has its
 * own, a pc elsewhere the next one, as HotSpot's approximate search does;
 * past the last one with a scope, the one before target), 0 when none. The
 * search narrows to OP_JVM_PCDESC_WINDOW PcDescs, then reads those and
 * their neighbours at once (a small nmethod's are all read in one go); the
 * answer is remembered for the blob (a recursion returns to the same pc
 * frame after frame).
 */
static __always_inline __u32 op_jvm_pcdesc(struct op_jvm_walker *jw, __u32 slot, __s32 target)
{
	struct op_jvm_blob *b = &jw->blobs[slot & (OP_JVM_BLOBS - 1)];
	__s32 pc_offset = 0;
	__u32 n, first, last, scope = 0, before = 0;
	int lo, have_before = 0;
	__u64 base, len;

	if (b->last_target == target)
		return b->last_scope;
	/* From the blob the PcDescs follow its header; immutable data may begin with them. */
	if (b->pcs_begin < 0 || (b->pcs_begin == 0 && b->pcs_base == b->blob) ||
	    b->pcs_end <= b->pcs_begin || b->pcs_end - b->pcs_begin > (1 << 20))
		return 0;
	base = b->pcs_base + (__u32)b->pcs_begin;
	n = (__u32)(b->pcs_end - b->pcs_begin) / OP_JVM_PCDESC_SIZE;
	lo = op_jvm_pcdesc_narrow(jw, base, n, target);
	if (!n || lo < 0 || (__u32)lo >= n)
		return 0;
	/* One read: [lo - 1, lo + WINDOW], the one before the answer included. */
	first = lo ? (__u32)lo - 1 : 0;
	last = (__u32)lo + OP_JVM_PCDESC_WINDOW < n ? (__u32)lo + OP_JVM_PCDESC_WINDOW : n - 1;
	len = (__u64)(last - first + 1) * OP_JVM_PCDESC_SIZE;
	/* The bound checked on len itself, as the read gets it (the verifier's view). */
	__asm__ __volatile__("" : "+r"(len));
	if (len > (OP_JVM_PCDESC_WINDOW + 2) * OP_JVM_PCDESC_SIZE)
		return 0;
	jw->block_len = 0; /* the block is scratch now */
	jw->block_skip = 0;
	if (OP_JVM_READ(jw, jw->block, len, base + (__u64)first * OP_JVM_PCDESC_SIZE))
		return 0;
	/* The first at or after target and the one before it, in one pass. */
	for (__u32 j = 0; j < OP_JVM_PCDESC_WINDOW + 2; j++) {
		__s32 at = 0;
		__u32 sc = 0;

		if (first + j > last)
			break;
		__builtin_memcpy(&at, &jw->block[j * OP_JVM_PCDESC_SIZE], 4);
		__builtin_memcpy(&sc, &jw->block[j * OP_JVM_PCDESC_SIZE + 4], 4);
		if (first + j >= (__u32)lo && at >= target) {
			scope = sc;
			break;
		}
		pc_offset = at;
		before = sc;
		have_before = 1;
	}
	/* None after pc (the end sentinel has no scope): the one before, if real. */
	if (!scope && have_before && pc_offset >= 0)
		scope = before;
	b->last_target = target;
	b->last_scope = scope;
	return scope;
}

/*
 * Decodes the scope at offset off of jw's nmethod (HotSpot's ScopeDesc
 * header: the sender's offset, the method's metadata index, bci + 1, each
 * an UNSIGNED5 number: bytes >= 192 go on, 6 more bits each; from JDK 20
 * each byte is its bits + 1, OP_JVM_F_UNSIGNED5_X1). 0 or -1.
 */
static __always_inline int op_jvm_scope(const struct op_jvm_proc *proc, struct op_jvm_walker *jw,
					__u32 off, __u64 *method, __u64 *cm, __u32 *bci,
					__u32 *sender)
{
	struct op_jvm_scope *sc;
	__u64 at = jw->scopes + off;
	__u8 b[16];
	__u32 v[3] = {0, 0, 0}, pos = 0, x = proc->flags & OP_JVM_F_UNSIGNED5_X1 ? 1 : 0;

	if (!off || off > (1u << 24))
		return -1;
	/* The next of a chain copied in (op_jvm_chain_begin): found in one look. */
	sc = &jw->scope_cache[jw->scope_hint & (OP_JVM_SCOPES - 1)];
	if (sc->at == at) {
		*method = sc->method;
		*cm = sc->cm;
		*bci = sc->bci;
		*sender = sc->sender;
		jw->scope_hint++;
		return 0;
	}
	/*
	 * Then the slot written last: a remembered nmethod's scope was just put
	 * there (op_jvm_blob_remembered), which the search below finds only after
	 * the walk's other scopes (all 16 slots full on a stack of distinct
	 * nmethods).
	 */
	sc = &jw->scope_cache[(jw->scope_next - 1) & (OP_JVM_SCOPES - 1)];
	for (int i = -1; i < OP_JVM_SCOPES; i++) {
		if (i >= 0)
			sc = &jw->scope_cache[i];
		if (sc->at == at) {
			*method = sc->method;
			*cm = sc->cm;
			*bci = sc->bci;
			*sender = sc->sender;
			return 0;
		}
	}
	if (OP_JVM_READ(jw, b, sizeof(b), at))
		return -1;
	for (int k = 0; k < 3; k++) {
		__u32 sum = 0, shift = 0;

		for (int i = 0; i < 5; i++) {
			__u32 c = b[pos & 15];

			pos++;
			sum += (c - x) << shift;
			if (c < 192)
				break;
			shift += 6;
		}
		v[k] = sum;
	}
	if (!v[1] || v[1] > 0xffff)
		return -1;
	if (!v[0] && jw->nm_slot) {
		/* The root scope is the compiled method itself: no metadata read. */
		const struct op_jvm_blob *nm = &jw->blobs[(jw->nm_slot - 1) & (OP_JVM_BLOBS - 1)];

		*method = nm->method;
		*cm = nm->cm;
	} else if (OP_JVM_READ(jw, method, 8, jw->metadata + (__u64)(v[1] - 1) * 8) || !*method ||
		   op_jvm_const_method(jw, proc, *method, cm)) {
		return -1;
	}
	*bci = v[2] && v[2] <= 0x10000 ? v[2] - 1 : 0;
	*sender = v[0];
	sc = &jw->scope_cache[jw->scope_next++ & (OP_JVM_SCOPES - 1)];
	sc->at = at;
	sc->method = *method;
	sc->cm = *cm;
	sc->bci = *bci;
	sc->sender = *sender;
	return 0;
}

#ifdef OP_JVM_CHAIN_SLOT
/* The chain cache slot of key k (direct-mapped). */
static __always_inline __u32 op_jvm_chain_index(const struct op_jvm_chain_key *k)
{
	__u64 h = (k->at ^ ((__u64)k->pid << 40) ^ ((__u64)(__u32)k->compile_id << 16)) *
		  0x9e3779b97f4a7c15ull;

	return (__u32)(h >> 32) & (OP_JVM_CHAIN_SLOTS - 1);
}

/*
 * Whether chain c holds the whole of its chain, or as much as one entry
 * can: a walk that stopped while decoding it leaves a prefix, built again.
 */
static __always_inline int op_jvm_chain_complete(const struct op_jvm_chain *c)
{
	__u32 n = c->n;

	return n && n <= OP_JVM_CHAIN &&
	       (n == OP_JVM_CHAIN || !c->s[(n - 1) & (OP_JVM_CHAIN - 1)].sender);
}

/*
 * After the first scope (at decode offset first) of a compiled frame of
 * the nmethod with compile id id is written into *frame, when it has a
 * sender (jw->next: a frame with nothing inlined never comes here, so it
 * pays nothing): when the chain cache holds its chain (the same first
 * scope of the same compilation, in the same JVM image and epoch), the
 * rest of the chain is copied into the walk's scopes, where op_jvm_scope()
 * finds each in turn (jw->scope_hint) without a read; else the slot is
 * claimed with the first scope, and op_jvm_chain_add() appends the others
 * as they are decoded. 1 when taken. Nothing without a compile id or a
 * known epoch. Its own function in BPF: verified once, apart from the step.
 */
OP_JVM_SUBPROG int op_jvm_chain_begin(struct op_jvm_walker *jw, const struct op_jvm_proc *proc,
				      __s32 id, __u32 first, const struct op_frame *frame)
{
	struct op_jvm_chain_key k;
	struct op_jvm_chain *c;
	__u32 i, n, j, start, off;

	/* A global function's pointers may be NULL for the verifier. */
	if (!jw || !proc || !frame)
		return 0;
	jw->chain_slot = 0;
	if (!id || !jw->epoch_known || !first || !jw->next || !jw->scopes)
		return 0;
	k.at = jw->scopes + first;
	k.interp_start = proc->interp_start;
	k.pid = jw->pid;
	k.gen = proc->gen;
	k.epoch = jw->epoch;
	k.compile_id = id;
	i = op_jvm_chain_index(&k);
	c = OP_JVM_CHAIN_SLOT(jw, i);
	if (!c)
		return 0;
	if (c->key.at != k.at || c->key.compile_id != k.compile_id || c->key.pid != k.pid ||
	    c->key.gen != k.gen || c->key.epoch != k.epoch ||
	    c->key.interp_start != k.interp_start || !op_jvm_chain_complete(c) ||
	    c->s[0].sender != jw->next) {
		/* Samples on this CPU do not nest: emptied, then keyed, then filled. */
		c->key.at = 0;
		c->n = 0;
		c->key.interp_start = k.interp_start;
		c->key.pid = k.pid;
		c->key.gen = k.gen;
		c->key.epoch = k.epoch;
		c->key.compile_id = k.compile_id;
		c->key.at = k.at;
		/* The first scope as op_jvm_pending() wrote it (op_jvm_frame). */
		c->s[0].method = frame->addr;
		c->s[0].cm = frame->data & OP_JVM_FP_MASK;
		c->s[0].bci = (__u32)(frame->aux & OP_JVM_BCI_MASK);
		c->s[0].sender = jw->next;
		c->n = 1;
		jw->chain_slot = i + 1;
		return 0;
	}
	n = c->n;
	start = jw->scope_next;
	off = jw->next;
	for (j = 1; j < OP_JVM_CHAIN; j++) {
		struct op_jvm_scope *sc = &jw->scope_cache[(start + j - 1) & (OP_JVM_SCOPES - 1)];

		if (j >= n || !off)
			break;
		sc->at = jw->scopes + off;
		sc->method = c->s[j].method;
		sc->cm = c->s[j].cm;
		sc->bci = c->s[j].bci;
		sc->sender = c->s[j].sender;
		off = c->s[j].sender;
	}
	jw->scope_next = (__u8)(start + j - 1);
	jw->scope_hint = start;
	OP_JVM_STAT(jw, OP_JVM_STAT_CHAIN);
	return 1;
}

/* A scope just decoded, appended to the chain being built (jw->chain_slot). */
static __always_inline void op_jvm_chain_add(struct op_jvm_walker *jw, __u64 method, __u64 cm,
					     __u32 bci, __u32 sender)
{
	struct op_jvm_chain *c =
	    OP_JVM_CHAIN_SLOT(jw, (jw->chain_slot - 1) & (OP_JVM_CHAIN_SLOTS - 1));
	__u32 n;

	if (!c || c->n >= OP_JVM_CHAIN) {
		jw->chain_slot = 0;
		return;
	}
	n = c->n & (OP_JVM_CHAIN - 1);
	c->s[n].method = method;
	c->s[n].cm = cm;
	c->s[n].bci = bci;
	c->s[n].sender = sender;
	c->n = n + 1;
	if (!sender || n + 1 >= OP_JVM_CHAIN)
		jw->chain_slot = 0;
}
#endif

/*
 * Writes the next pending inlined scope of a compiled frame (jw->next) into
 * *frame. An enum op_step_result: jw->deferred after the last one. Its own
 * function in BPF (OP_JVM_SUBPROG): the step calls it from two places, and
 * the verifier then checks the scope's decoding once, not at each.
 */
OP_JVM_SUBPROG int op_jvm_pending(const struct op_jvm_proc *proc, struct op_jvm_walker *jw,
				  struct op_frame *frame)
{
	__u64 method = 0, cm = 0;
	__u32 bci = 0, sender = 0, off;

	if (!proc || !jw || !frame) /* a global function's pointers may be NULL for the verifier */
		return OP_STEP_END;
	off = jw->next;
	jw->next = 0;
	if (op_jvm_scope(proc, jw, off, &method, &cm, &bci, &sender)) {
		/* The frames already written stand; the rest of this one is lost. */
		jw->chain_slot = 0;
		OP_JVM_STAT(jw, OP_JVM_STAT_READ_ERR);
		op_frame__set_error(frame, OP_UNWIND_ERR_HOTSPOT);
		return OP_STEP_ERROR_BASE + OP_UNWIND_ERR_HOTSPOT;
	}
#ifdef OP_JVM_CHAIN_SLOT
	if (jw->chain_slot)
		op_jvm_chain_add(jw, method, cm, bci, sender);
#endif
	op_jvm_frame(jw, frame, method, cm, sender ? OP_JVM_T_INLINED : OP_JVM_T_COMPILED, bci);
	OP_JVM_STAT(jw, sender ? OP_JVM_STAT_INLINED : OP_JVM_STAT_COMPILED);
	if (!sender)
		return jw->deferred;
	jw->next = sender;
	return OP_STEP_CONTINUE;
}

/*
 * An nmethod's debug info into b: its PcDescs (pcs_base + [pcs_begin,
 * pcs_end)), scopes data and metadata table; b->scopes and b->metadata stay
 * 0 when they cannot be read. To JDK 22 all three are in the blob; JDK 23+
 * (OP_JVM_F_IMMUTABLE) keeps PcDescs and scopes in the nmethod's immutable
 * data and the metadata in its data section (23, 24) or mutable data (25).
 */
static __always_inline void op_jvm_debug_info(struct op_jvm_walker *jw,
					      const struct op_jvm_proc *proc, __u64 blob,
					      struct op_jvm_blob *b)
{
	__u64 imm = 0, meta = 0;
	__s32 scopes = 0, nmd = 0, base = 0;

	if (!(proc->flags & OP_JVM_F_IMMUTABLE)) {
		if (!op_jvm_addr(jw, proc, blob, proc->nm_scopes_data, &b->scopes) && b->scopes &&
		    !op_jvm_s32(jw, blob, proc->nm_pcs_offset, &b->pcs_begin) &&
		    !op_jvm_s32(jw, blob, proc->nm_pcs_end_offset, &b->pcs_end) &&
		    !op_jvm_s32(jw, blob, proc->nm_metadata_offset, &nmd) && nmd > 0)
			b->metadata = blob + (__u32)nmd;
		b->pcs_base = blob;
		return;
	}
	/* The PcDescs end where the scopes data begins (nmethod::scopes_pcs_end). */
	if (op_jvm_u64(jw, blob, proc->nm_immutable_data, &imm) || !imm ||
	    op_jvm_s32(jw, blob, proc->nm_pcs_offset, &b->pcs_begin) ||
	    op_jvm_s32(jw, blob, proc->nm_scopes_data, &scopes) || scopes <= 0)
		return;
	b->pcs_end = scopes;
	b->pcs_base = imm;
	b->scopes = imm + (__u32)scopes;
	if (proc->flags & OP_JVM_F_META_MUTABLE) {
		/* JDK 25: _mutable_data + _relocation_size. */
		if (op_jvm_u64(jw, blob, proc->nm_meta_base, &meta) || !meta ||
		    op_jvm_s32(jw, blob, proc->nm_metadata_offset, &nmd) || nmd < 0)
			return;
		b->metadata = meta + (__u32)nmd;
		return;
	}
	/* JDK 23, 24: blob + _data_offset + _metadata_offset (a u2). */
	if (op_jvm_s32(jw, blob, proc->nm_meta_base, &base) || base <= 0 ||
	    op_jvm_s32(jw, blob, proc->nm_metadata_offset, &nmd))
		return;
	b->metadata = blob + (__u32)base + ((__u32)nmd & 0xffff);
}

/*
 * The slot of the code blob whose code holds lpc: one the walk has read,
 * one the cross-sample cache remembers under key (the return address, or
 * OP_JVM_PC_LEAF for an exact pc; 0: none), or found through its heap's
 * segment map, read (one block) and remembered. OP_JVM_NO_BLOB when there is none (a pc in a free
 * segment or in no heap), -1 when it cannot be read or is not sane. Its own function in BPF
 * (OP_JVM_SUBPROG): the verifier checks the blob's reading once, and it
 * returns a number, as global functions must.
 */
#define OP_JVM_NO_BLOB (-2)

/*
 * What the cross-sample cache keeps of blob b, read for jw's walk of proc:
 * the blob with its last PcDesc answer, and that PcDesc's scope decoded.
 */
static __always_inline void op_jvm_pc_entry__fill(struct op_jvm_pc_entry *e,
						  const struct op_jvm_walker *jw,
						  const struct op_jvm_proc *proc,
						  const struct op_jvm_blob *b)
{
	__u64 at = b->scopes + b->last_scope;

	__builtin_memcpy(&e->blob, b, sizeof(e->blob));
	/* Read (or checked) in this walk: the code count it began with. */
	e->blob.remembered = jw->code_mark;
	e->interp_start = proc->interp_start;
	e->epoch = jw->epoch;
	e->gen = proc->gen;
	/* Its scope at the remembered PcDesc, as this walk decoded it (at 0: none). */
	e->scope.at = 0;
	if (!b->scopes || !b->last_scope)
		return;
	for (int i = 0; i < OP_JVM_SCOPES; i++) {
		if (jw->scope_cache[i].at == at) {
			__builtin_memcpy(&e->scope, &jw->scope_cache[i], sizeof(e->scope));
			return;
		}
	}
}

#ifdef OP_JVM_PC_CACHE_GET
/*
 * Where the segment map byte of the CodeHeap block at block is, when the
 * block, length segments long, covers pc (in pc's heap, its length within
 * the heap: a freed block's bytes may be anything later, pc before its
 * end); 0 when it does not.
 */
static __always_inline __u64 op_jvm_block_covers(const struct op_jvm_proc *proc, __u64 block,
						 __u64 length, __u64 pc)
{
	for (int h = 0; h < OP_JVM_MAX_HEAPS; h++) {
		const struct op_jvm_heap *heap = &proc->heaps[h];
		__u32 shift = heap->log2_segment & 31;

		if (h >= proc->n_heaps)
			break;
		if (pc < heap->low || pc >= heap->high)
			continue;
		if (block < heap->low || block > pc || length > (heap->high - block) >> shift ||
		    pc - block >= length << shift)
			return 0;
		return heap->segmap + ((block - heap->low) >> shift);
	}
	return 0;
}

/*
 * The slot of the nmethod remembered under key ra (a return address, or
 * OP_JVM_PC_LEAF: the pid's last leaf nmethod; the cross-sample cache) when
 * it is still the compilation read then and holds
 * lpc, -1 when not: the same image of the pid (gen, interp_start), the same
 * epoch (its Method and ConstMethod stand), read again at its address the
 * same compile id and Method* (its code range and name are those of that
 * compilation), and its CodeHeap block still used and covering lpc. The
 * block: HotSpot frees an nmethod by marking its HeapBlock free (_used
 * false), the rest of its header left as it was, and carves a new block
 * from the tail of a free one, shortening the free one's _length; so a new
 * blob past the old header, a return address in it equal to a remembered
 * one, would pass the ids alone (counted: OP_JVM_STAT_FREED); and the
 * block must still begin where it did (its segment map byte 0): a freed
 * block merged into the free one before it, a new blob carved from that
 * beginning before the old header and covering it, would hold there what the
 * old header held when that part of it was left unwritten (a block's tail
 * past its blob: HotSpot hands out a whole free block when the rest would be
 * too small), with a later blob holding the pc. One read from the HeapBlock
 * to the later of the two fields (324 bytes in JDK 17: two reads cost nearly
 * twice one), one of the map's byte. Neither read while the JVM's code
 * count (op_jvm_proc.code_count) is as when the entry was last read or
 * checked: no nmethod live then has been freed since (counted
 * OP_JVM_STAT_UNCHANGED); one checked under a new count is stored again
 * with it. Its own function in BPF: verified once, apart from the blob
 * reading.
 */
OP_JVM_SUBPROG int op_jvm_blob_remembered(struct op_jvm_walker *jw, const struct op_jvm_proc *proc,
					  __u64 lpc, __u64 ra)
{
	const struct op_jvm_pc_entry *e;
	struct op_jvm_blob *b;
	__u32 id_off, m_off, slot, unchanged;
	__u64 method = 0, length = 0, len, id_at, m_at, hb, len_at, used_at, start_at;
	__s32 id = 0;
	__u8 used = 0, back = 0xff;

	if (!jw || !proc) /* a global function's pointers may be NULL for the verifier */
		return -1;
	e = OP_JVM_PC_CACHE_GET(jw, ra);
	if (!e || !jw->epoch_known || e->epoch != jw->epoch || e->gen != proc->gen ||
	    e->interp_start != proc->interp_start || !e->blob.blob || !e->blob.compile_id ||
	    e->blob.kind != OP_JVM_B_NMETHOD || lpc < e->blob.code_begin || lpc >= e->blob.code_end)
		return -1;
	/*
	 * The code count as when the entry was last checked: no nmethod's block
	 * has been freed since, and this one, live then (its pc was on a stack),
	 * is still the one at its address.
	 */
	unchanged = jw->code_mark && e->blob.remembered == jw->code_mark;
	if (unchanged)
		goto take;
	id_off = proc->nm_compile_id;
	m_off = proc->nmethod_method;
	hb = proc->heap_block_size;
	len_at = proc->hb_fields & 0xf;
	used_at = proc->hb_fields >> 4;
	len = hb + (id_off + 4 > m_off + 8 ? id_off + 4 : m_off + 8);
	id_at = hb + id_off;
	m_at = hb + m_off;
	/* The bounds checked on what the read and the copies get (the verifier's view). */
	__asm__ __volatile__("" : "+r"(len), "+r"(id_at), "+r"(m_at));
	if (!id_off || len_at + 8 > hb || used_at >= hb || e->blob.blob < hb ||
	    len > OP_JVM_SCRATCH || id_at > OP_JVM_SCRATCH - 4 || m_at > OP_JVM_SCRATCH - 8)
		return -1;
	jw->block_len = 0; /* the block is scratch: not this blob's first bytes */
	jw->block_skip = 0;
	if (OP_JVM_READ(jw, jw->block, len, e->blob.blob - hb))
		return -1;
	__builtin_memcpy(&id, &jw->block[id_at], 4);
	__builtin_memcpy(&method, &jw->block[m_at], 8);
	__builtin_memcpy(&length, &jw->block[len_at], 8);
	if (proc->flags & OP_JVM_F_HB_LEN32)
		length &= 0xffffffffull; /* the bytes after it are _used's */
	used = jw->block[used_at];
	/* Its block freed and taken by another nmethod (counted: test_hotspot's swept case). */
	if (id != e->blob.compile_id || method != e->blob.method) {
		OP_JVM_STAT(jw, method != e->blob.method ? OP_JVM_STAT_REPLACED
							 : OP_JVM_STAT_RECOMPILED);
		return -1;
	}
	/*
	 * Still a block's start in the segment map (byte 0): a block that a
	 * freed one was merged into, and a new blob carved from it that begins
	 * before the old header and covers it, step back past it. Such a blob
	 * may hold the old header's bytes as they were (an unwritten block
	 * tail) or its own equal to them; only the map tells.
	 */
	start_at = used ? op_jvm_block_covers(proc, e->blob.blob - hb, length, lpc) : 0;
	if (!start_at || OP_JVM_READ(jw, &back, 1, start_at) || back) {
		OP_JVM_STAT(jw, OP_JVM_STAT_FREED);
		return -1;
	}
take:
	slot = jw->blob_next & (OP_JVM_BLOBS - 1);
	b = &jw->blobs[slot];
	__builtin_memcpy(b, &e->blob, sizeof(*b));
	/* Checked under a new code count: stored again with it (op_jvm_pc_entry__fill). */
	b->remembered = unchanged || !jw->code_mark;
	jw->blob_next++;
	if (unchanged)
		OP_JVM_STAT(jw, OP_JVM_STAT_UNCHANGED);
	/* Its first scope decoded: a frame with nothing inlined reads no scope. */
	if (e->scope.at && e->scope.at == b->scopes + b->last_scope)
		__builtin_memcpy(&jw->scope_cache[jw->scope_next++ & (OP_JVM_SCOPES - 1)],
				 &e->scope, sizeof(e->scope));
	OP_JVM_STAT(jw, ra == OP_JVM_PC_LEAF ? OP_JVM_STAT_LEAF : OP_JVM_STAT_REMEMBERED);
	return (int)slot;
}
#endif

OP_JVM_SUBPROG int op_jvm_blob_at(struct op_jvm_walker *jw, const struct op_jvm_proc *proc,
				  __u64 lpc, __u64 key)
{
	struct op_jvm_blob *b;
	__u64 blob, name8 = 0, rest = 0;
	__u32 slot;

	if (!jw || !proc) /* a global function's pointers may be NULL for the verifier */
		return -1;
	for (int i = 0; i < OP_JVM_BLOBS; i++) {
		b = &jw->blobs[i];
		if (b->blob && lpc >= b->code_begin && lpc < b->code_end)
			return i;
	}
#ifdef OP_JVM_PC_CACHE_GET
	if (proc->nm_compile_id) {
		int got = op_jvm_blob_remembered(jw, proc, lpc, key);

		if (got >= 0)
			return got;
	}
#else
	(void)key;
#endif
	blob = op_jvm_find_blob(jw, proc, lpc);
	if (!blob)
		return OP_JVM_NO_BLOB;
	slot = jw->blob_next & (OP_JVM_BLOBS - 1);
	b = &jw->blobs[slot];
	b->blob = 0;
	/* Its HeapBlock read with it: its _used (known with the compile id, see
	 * op_jvm_proc.hb_fields) says whether the block is a blob at all. The
	 * segment map leaves a freed block's bytes as they were, so a pc in a
	 * freed nmethod (a stale return address) finds the freed header. */
	op_jvm_load_block(jw, blob, proc->heap_block_size);
	if (proc->nm_compile_id && (proc->hb_fields >> 4) < proc->heap_block_size &&
	    (proc->hb_fields >> 4) < jw->block_len && !jw->block[(proc->hb_fields >> 4) & 15]) {
		OP_JVM_STAT(jw, OP_JVM_STAT_FREE_BLOCK);
		return OP_JVM_NO_BLOB;
	}
	blob += proc->heap_block_size;
	if (op_jvm_s32(jw, blob, proc->blob_frame_size, &b->frame_size) ||
	    op_jvm_s32(jw, blob, proc->blob_frame_complete, &b->complete) ||
	    op_jvm_addr(jw, proc, blob, proc->blob_code_begin, &b->code_begin) ||
	    op_jvm_addr(jw, proc, blob, proc->blob_code_end, &b->code_end) ||
	    op_jvm_u64(jw, blob, proc->blob_name, &b->name))
		return -1;
	/*
	 * CodeBlob::_frame_complete_offset is an int to JDK 22 and an int16_t in
	 * JDK 25's vmStructs (23 and 24 not checked): four bytes read at an
	 * int16_t hold its neighbour in their high half. A frame-complete offset
	 * is a small offset into the blob's code (HotSpot's 16 bits say it
	 * fits), so a value outside int16_t is the narrow field: its low half.
	 */
	if (b->complete > 0x7fff || b->complete < -1)
		b->complete = (__s16)b->complete;
	if (lpc < b->code_begin || lpc >= b->code_end || b->frame_size < 0 ||
	    (__u64)b->frame_size * 8 > OP_JVM_MAX_FRAME)
		return -1;
	b->kind = OP_JVM_B_OTHER;
	if (b->name && b->name == jw->nm_name) {
		b->kind = OP_JVM_B_NMETHOD;
	} else if (b->name && !OP_JVM_READ(jw, &name8, 8, b->name)) {
		/* "native nmethod": a native method's wrapper, an nmethod too. */
		if (name8 == OP_JVM_NMETHOD_NAME ||
		    (name8 == OP_JVM_NATIVE_NAME && !OP_JVM_READ(jw, &rest, 7, b->name + 8) &&
		     rest == OP_JVM_NATIVE_NAME2))
			b->kind = OP_JVM_B_NMETHOD;
		else if ((name8 & 0xffffffffffffull) == OP_JVM_VTABLE_NAME ||
			 (name8 & 0xffffffffffffull) == OP_JVM_ITABLE_NAME)
			b->kind = OP_JVM_B_FRAMELESS;
		if (name8 == OP_JVM_NMETHOD_NAME)
			jw->nm_name = b->name;
	}
	b->method = b->cm = b->scopes = b->metadata = 0;
	b->pcs_begin = b->pcs_end = 0;
	b->pcs_base = 0;
	b->last_target = -1;
	b->last_scope = 0;
	b->orig_pc_offset = 0;
	b->deopt_handler = b->deopt_mh_handler = 0;
	b->compile_id = 0;
	b->remembered = 0;
	if (b->kind == OP_JVM_B_NMETHOD) {
		if (op_jvm_u64(jw, blob, proc->nmethod_method, &b->method) ||
		    op_jvm_const_method(jw, proc, b->method, &b->cm))
			return -1;
		if (proc->nm_compile_id &&
		    op_jvm_s32(jw, blob, proc->nm_compile_id, &b->compile_id))
			b->compile_id = 0;
		if (proc->nm_scopes_data)
			op_jvm_debug_info(jw, proc, blob, b);
		if (proc->nm_orig_pc_offset &&
		    (op_jvm_s32(jw, blob, proc->nm_orig_pc_offset, &b->orig_pc_offset) ||
		     op_jvm_addr(jw, proc, blob, proc->nm_deopt_handler, &b->deopt_handler)))
			b->orig_pc_offset = 0;
		/* JDK 23+ writes -1 for no method-handle deopt handler (Temurin 25): none. */
		if (b->orig_pc_offset &&
		    op_jvm_addr(jw, proc, blob, proc->nm_deopt_mh_handler, &b->deopt_mh_handler))
			b->deopt_mh_handler = 0;
	}
	b->blob = blob;
	jw->blob_next++;
	return (int)slot;
}

/* The nmethod in blob slot remember - 1 (0: none) remembered for return address pc. */
static __always_inline void
op_jvm_remember(struct op_jvm_walker *jw, const struct op_jvm_proc *proc, __u64 pc, __u32 remember)
{
#ifdef OP_JVM_PC_CACHE_PUT
	if (remember)
		OP_JVM_PC_CACHE_PUT(jw, proc, pc, &jw->blobs[(remember - 1) & (OP_JVM_BLOBS - 1)]);
#else
	(void)jw;
	(void)proc;
	(void)pc;
	(void)remember;
#endif
}

/*
 * The frame at u's pc (in the code cache) into *frame, and u moved to its
 * caller. An enum op_step_result; an error comes with its error frame in
 * *frame. A compiled frame that inlined methods writes its innermost scope
 * and leaves the others in jw (jw->next != 0): op_jvm_pending() writes them,
 * one per step, before the walk goes on with the caller.
 *
 * Reads on the stack go lowest first: the sampler's 8-byte reads there come
 * from a window that starts at the first address read.
 */
static __always_inline int op_jvm_step(struct op_unwinder *u, const struct op_jvm_proc *proc,
				       struct op_jvm_walker *jw, struct op_frame *frame)
{
	__u32 nm_scope = 0;
	__u64 pc = u->regs.pc, sp = u->regs.sp, fp = u->regs.fp;
	__u64 lpc = u->pc_exact ? pc : pc - 1;
	/* The cache's key: the return address, or for an exact pc (a leaf) the pid's last leaf. */
	__u64 key = u->pc_exact ? OP_JVM_PC_LEAF : pc;
	__u64 ra = 0, nsp = 0, nfp = 0, method = 0, cm = 0;
	struct op_jvm_blob *b;
	__u32 slot = 0, remember = 0;
	__s32 nm_id = 0;
	int found;

	if (lpc >= proc->interp_start && lpc < proc->interp_end) {
		__u64 bcp = 0, ssp = 0, base;
		__u32 bci = OP_JVM_BCI_NONE;

		/* An interpreted frame: rbp-based (bcp is the lowest slot). */
		if (fp < sp || fp - sp > OP_JVM_MAX_FRAME)
			return op_jvm_error(jw, frame);
		if (OP_JVM_READ(jw, &bcp, 8, fp + (__s64)proc->ifr_bcp * 8) ||
		    OP_JVM_READ(jw, &method, 8, fp + (__s64)proc->ifr_method * 8) ||
		    OP_JVM_READ(jw, &ssp, 8, fp + (__s64)proc->ifr_sender_sp * 8) ||
		    OP_JVM_READ(jw, &nfp, 8, fp) || OP_JVM_READ(jw, &ra, 8, fp + 8))
			return op_jvm_error(jw, frame);
		if (!method || op_jvm_const_method(jw, proc, method, &cm))
			return op_jvm_error(jw, frame);
		base = cm + proc->const_method_size;
		if (bcp >= base && bcp - base < 0x10000)
			bci = (__u32)(bcp - base);
		/* The caller's unextended sp (a compiled caller's frame size counts from it). */
		nsp = ssp >= fp + 16 && ssp - fp < OP_JVM_MAX_FRAME ? ssp : fp + 16;
		op_jvm_frame(jw, frame, method, cm, OP_JVM_T_INTERPRETED, bci);
		OP_JVM_STAT(jw, OP_JVM_STAT_INTERPRETED);
		goto caller;
	}

	found = op_jvm_blob_at(jw, proc, lpc, key);
	if (found < 0) {
		if (found == OP_JVM_NO_BLOB)
			OP_JVM_STAT(jw, OP_JVM_STAT_NO_BLOB);
		return op_jvm_error(jw, frame);
	}
	slot = (__u32)found & (OP_JVM_BLOBS - 1);
	b = &jw->blobs[slot];
	if (b->kind == OP_JVM_B_NMETHOD) {
		__u64 at = pc;

		method = b->method;
		cm = b->cm;
		op_jvm_frame(jw, frame, method, cm, OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
		jw->next = 0;
		if (!u->pc_exact && b->orig_pc_offset > 0 &&
		    (__u32)b->orig_pc_offset < OP_JVM_MAX_FRAME &&
		    (pc == b->deopt_handler || pc == b->deopt_mh_handler)) {
			/* Deoptimised while its callee ran: named from the pc it had. */
			if (OP_JVM_READ(jw, &at, 8, sp + (__u32)b->orig_pc_offset) ||
			    at <= b->code_begin || at > b->code_end)
				return op_jvm_error(jw, frame);
			OP_JVM_STAT(jw, OP_JVM_STAT_DEOPT);
		}
		if (b->scopes) {
			jw->scopes = b->scopes;
			jw->metadata = b->metadata;
			jw->nm_slot = slot + 1;
			nm_id = b->compile_id;
			nm_scope = op_jvm_pcdesc(
			    jw, slot, (__s32)(at - b->code_begin) + (u->pc_exact ? 1 : 0));
		}
		if (!nm_scope)
			OP_JVM_STAT(jw, OP_JVM_STAT_NO_PCDESC);
		/*
		 * Remembered for its return address, or a leaf as the pid's last
		 * leaf, once its first scope is decoded (below).
		 */
		if (!b->remembered && b->compile_id && jw->epoch_known)
			remember = slot + 1;
	} else {
		op_jvm_frame(jw, frame, b->name, b->blob, OP_JVM_T_STUB, OP_JVM_BCI_NONE);
		OP_JVM_STAT(jw, OP_JVM_STAT_STUB);
	}
	if (b->frame_size > 0) {
		if (u->pc_exact && b->complete > 0 && lpc - b->code_begin < (__u64)b->complete) {
			/* Stopped in the prologue: only the return address is pushed. */
			nsp = sp + 8;
			nfp = fp;
			if (OP_JVM_READ(jw, &ra, 8, sp))
				return op_jvm_error(jw, frame);
		} else {
			nsp = sp + (__u64)b->frame_size * 8;
			if (OP_JVM_READ(jw, &nfp, 8, nsp - 16) || OP_JVM_READ(jw, &ra, 8, nsp - 8))
				return op_jvm_error(jw, frame);
		}
	} else if (u->pc_exact && b->kind == OP_JVM_B_FRAMELESS) {
		/* Stopped in a vtable/itable stub: no frame, the return address at sp. */
		nsp = sp + 8;
		nfp = fp;
		if (OP_JVM_READ(jw, &ra, 8, sp))
			return op_jvm_error(jw, frame);
	} else {
		/* No frame size: the stub routines (call stub, ...) keep rbp. */
		if (fp < sp || fp - sp > OP_JVM_MAX_FRAME)
			return op_jvm_error(jw, frame);
		nsp = fp + 16;
		if (OP_JVM_READ(jw, &nfp, 8, fp) || OP_JVM_READ(jw, &ra, 8, fp + 8))
			return op_jvm_error(jw, frame);
	}
caller:
	u->regs.pc = ra;
	u->regs.sp = nsp;
	u->regs.fp = nfp;
	u->pc_exact = 0;
	u->n_frames++;
	if (nm_scope) {
		int ret;

		/* The compiled frame's scopes replace the frame written above. */
		jw->deferred = ra ? OP_STEP_CONTINUE : OP_STEP_END;
		jw->next = nm_scope;
		if (jw->metadata) {
			ret = op_jvm_pending(proc, jw, frame);
#ifdef OP_JVM_CHAIN_SLOT
			if (jw->next)
				op_jvm_chain_begin(jw, proc, nm_id, nm_scope, frame);
#else
			(void)nm_id;
#endif
			op_jvm_remember(jw, proc, key, remember);
			if (ret <= OP_STEP_END)
				return ret;
		}
		/* No readable scope: the nmethod's own method, without a line. */
		jw->next = 0;
		op_jvm_frame(jw, frame, method, cm, OP_JVM_T_COMPILED, OP_JVM_BCI_NONE);
		OP_JVM_STAT(jw, OP_JVM_STAT_COMPILED);
		return jw->deferred;
	}
	op_jvm_remember(jw, proc, key, remember);
	if (method && frame->kind == OP_FRAME_HOTSPOT &&
	    (frame->data >> OP_JVM_TYPE_SHIFT) == OP_JVM_T_COMPILED)
		OP_JVM_STAT(jw, OP_JVM_STAT_COMPILED);
	return ra ? OP_STEP_CONTINUE : OP_STEP_END;
}

/*
 * HotSpot's step (OP_INTERP_STEP of omniprof/unwind/walk.h for
 * OP_INTERP_HOTSPOT): a frame in the code cache (res ==
 * OP_STEP_RUNTIME_UNWINDS), or, while w->active is HotSpot, the next inlined
 * scope of the compiled frame just written. proc NULL (the pid's state is
 * gone): the frame is left to the native rules.
 */
static __always_inline int op_jvm_walk_step(struct op_walk *w, const struct op_jvm_proc *proc,
					    struct op_jvm_walker *jw, struct op_frame *frame,
					    int res)
{
	int ret;

	if (w->active == OP_INTERP_HOTSPOT) {
		if (!proc) {
			w->active = 0;
			return res;
		}
		ret = op_jvm_pending(proc, jw, frame);
		if (!jw->next)
			w->active = 0;
		return ret;
	}
	if (res != OP_STEP_RUNTIME_UNWINDS || !proc)
		return res;
	jw->next = 0;
	jw->chain_slot = 0;
	ret = op_jvm_step(&w->u, proc, jw, frame);
	if (jw->next)
		w->active = OP_INTERP_HOTSPOT;
	return ret;
}

#endif
