// SPDX-License-Identifier: Apache-2.0
#include "engine/stack_copy.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <bpf/bpf.h>

#include "elf/elf_file.h"
#include "proc/file_cache.h"
#include "proc/process_table.h"
#include "proc/remote_memory.h"
#include "unwind/lpm_ranges.h"
#include "unwind/unwind_maps.h"
#include "unwind/user_unwind.h"
#include "util/clock.h"
#include "omniprof/unwind/lookup_cache.h"

/*
 * The native unwinder's Go switch check (op_go_switch__curg) over the live
 * process: an unwinder whose reads go to its mem. Only that check is used
 * here; the walk itself runs in unwind/user_unwind.c.
 */
struct op_unwinder;
static int live_read(struct op_unwinder *u, void *dst, size_t size, uint64_t addr);

#define OP_READ_USER(u, dst, size, addr) live_read((u), (dst), (size), (addr))
#define OP_FIND_RULE(u, pc, rule)	 ((void)(pc), op_rule__set_invalid(rule))
#include "omniprof/unwind/native.h"

struct live_unwinder {
	struct op_unwinder u;
	const struct remote_memory *mem;
};

static int live_read(struct op_unwinder *u, void *dst, size_t size, uint64_t addr)
{
	const struct live_unwinder *lu =
	    (const struct live_unwinder *)((uintptr_t)u - offsetof(struct live_unwinder, u));

	return remote_memory__read(lu->mem, addr, dst, size);
}

struct copy_walk {
	const struct op_stack_copy *copy;
	struct process_table *pt;
	const struct process *p;
	struct stack_copy_stats *stats;
	struct remote_memory stack;    /* the copied bytes: [sp, sp + stack_len), nothing else */
	struct remote_memory interp;   /* the copy over the live process */
	struct remote_memory go_stack; /* the second copied region: F_GO, F_SIGNAL */
	bool go_captured;	       /* the walk met a Go switch the copy captured */
	bool beyond_copy;	       /* a stack read fell outside the copied bytes */
	bool go_switch;		       /* the walk met a Go stack switch's rule */
	bool go_stale;	     /* ... whose thread had moved on: past the copy is not the sample's */
	bool guessed;	     /* the last rule looked up was frame pointers' */
	bool no_table;	     /* a frame in a mapped file whose table is not in the maps */
	uint64_t unknown_pc; /* a trusted pc in no mapping read (0: none) */
	bool check_ready;    /* note the first file met that is not ready */
	uint32_t blocked_slot; /* ... its file slot (0: none met) */
};

/*
 * The words of a Go switch the copy captured at the sample (struct
 * op_stack_copy's go_*), at the addresses op_go_switch__curg and the switch
 * step read them from: g from TLS, g.m, m.g0, m.curg, curg.m, curg.sched's
 * sp and bp. 0 with *dst set, -EFAULT for any other read.
 */
static int go_captured_read(const struct op_stack_copy *c, void *dst, size_t size, uint64_t addr)
{
	const struct {
		uint64_t addr, value;
	} words[] = {
	    {c->tls_base + (int64_t)OP_GO_G_TLS_OFFSET, c->go_g},
	    {c->go_g + OP_GO_G_M, c->go_m},
	    {c->go_m + OP_GO_M_G0, c->go_g},
	    {c->go_m + OP_GO_M_CURG, c->go_curg},
	    {c->go_curg + OP_GO_G_M, c->go_m},
	    {c->go_curg + OP_GO_G_SCHED + OP_GO_GOBUF_SP, c->go_sched_sp},
	    {c->go_curg + OP_GO_G_SCHED + OP_GO_GOBUF_BP, c->go_sched_bp},
	};

	if (size != sizeof(uint64_t))
		return -EFAULT;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (words[i].addr == addr) {
			memcpy(dst, &words[i].value, sizeof(uint64_t));
			return 0;
		}
	}
	return -EFAULT;
}

/*
 * The unwinder's reads: the target's stack is what was copied. Once the walk
 * meets a Go stack switch (OP_RULE_GO_SWITCH: the sample is on g0, in C or
 * the runtime), what lies outside the copy is read from the live process:
 * g from TLS, m, curg.sched, and the goroutine's stack, which stays parked
 * while its thread runs on g0. The switch rule's checks (g is m.g0, curg.m
 * is m, asmcgocall's saved g, read from the copy, is curg) hold back reads of
 * a thread that moved on; a goroutine that switched again since is walked
 * from its newer switch (counted, as the runtimes' live reads). A copy that
 * captured its switch at the sample (OP_STACK_COPY_F_GO) is walked from that
 * alone: the switch's words and the goroutine's copied stack, never the
 * live process (a read past them is past the copy). A copy of a signal's
 * alternate stack (OP_STACK_COPY_F_SIGNAL) holds the interrupted stack as
 * well, read where the signal frame's registers lead.
 */
static int copy_read(void *ctx, void *dst, size_t size, uint64_t addr)
{
	struct copy_walk *w = ctx;
	int err = remote_memory__read(&w->stack, addr, dst, size);

	if (err && (w->copy->go_flags & OP_STACK_COPY_F_SIGNAL)) {
		/* The stack the signal interrupted, as copied with the sample. */
		err = remote_memory__read(&w->go_stack, addr, dst, size);
		if (err)
			w->beyond_copy |= addr >= w->copy->go_sched_sp;
	}
	if (err && w->go_captured) {
		err = go_captured_read(w->copy, dst, size, addr);
		if (err)
			err = remote_memory__read(&w->go_stack, addr, dst, size);
		if (err)
			w->beyond_copy |= addr >= w->copy->go_sched_sp;
	} else if (err && w->go_switch) {
		err = remote_memory__read(&w->interp, addr, dst, size);
		if (!err)
			w->stats->switch_reads++;
	}
	if (err)
		w->beyond_copy |= addr >= w->copy->sp;
	return err;
}

/*
 * The runtimes' reads: the copy where it holds the address (an
 * interpreter's frames may live on the machine stack), else the live process, read with
 * process_vm_readv (never stopped nor written). The live memory is newer
 * than the sample: see stack_copy.h. A read that starts in the copy and runs
 * past its end (a frame's whole block) takes what the copy holds from the
 * copy, so the fields in it are the sample's.
 */
static int copy_read_interp(void *ctx, void *dst, size_t size, uint64_t addr)
{
	struct copy_walk *w = ctx;

	return remote_memory__read(&w->interp, addr, dst, size);
}

/* The lookup's storage (omniprof/unwind/lookup.h): the process table's
 * mappings, and the tables user space loaded, read back from the BPF maps. */
struct copy_lookup {
	struct copy_walk *w;
	struct op_mapping_value m; /* the mapping found, as its LPM entry would be */
	int chunk_fd;
	struct op_delta_page page;
	struct op_unwind_rule rule;
	struct op_lookup_cache cache;
};

static const struct op_mapping_value *copy_mapping(struct copy_lookup *l, uint64_t pc);
static const struct op_table_info *copy_table(struct copy_lookup *l, uint64_t table_id);
static void *copy_chunk(struct copy_lookup *l, uint32_t chunk);
static const struct op_delta_page *copy_page(struct copy_lookup *l, uint32_t index);
static const struct op_unwind_rule *copy_rule(struct copy_lookup *l, uint32_t index);

#define OP_LOOKUP_MAPPING(ctx, pid, pc) copy_mapping((ctx), (pc))
#define OP_LOOKUP_TABLE(ctx, id)	copy_table((ctx), (id))
#define OP_LOOKUP_CHUNK(ctx, chunk)	copy_chunk((ctx), (chunk))
#define OP_LOOKUP_RULE(ctx, index)	copy_rule((ctx), (index))
#define OP_DELTA_PAGE(chunk, index)	copy_page((chunk), (index))
#define OP_LOOKUP_CACHED(ctx, id, vaddr, rule)                                                     \
	unwind_maps__rule_cached(((struct copy_lookup *)(ctx))->w->pt->unwind, (id), (vaddr),      \
				 (rule))
#define OP_LOOKUP_REMEMBER(ctx, id, vaddr, rule)                                                   \
	unwind_maps__rule_remember(((struct copy_lookup *)(ctx))->w->pt->unwind, (id), (vaddr),    \
				   (rule))
#include "omniprof/unwind/lookup.h"

/*
 * The file of m when its table is not ready yet but the file is open (its ELF
 * checked, its descriptor open): its CFI can be read one FDE at a time
 * (unwind_maps__fde_rule). NULL otherwise.
 */
static const struct cached_file *fde_file(const struct process_table *pt,
					  const struct process_mapping *m)
{
	const struct cached_file *f;

	if (!pt->unwind || !pt->files || !m->has_bias)
		return NULL;
	f = file_cache__at(pt->files, m->file_slot);
	if (!f || f->pending || !f->elf || f->elf->fd < 0 || !f->table_id)
		return NULL;
	if (unwind_maps__table_state(pt->unwind, f->table_id) == UNWIND_TABLE_READY)
		return NULL;
	return f;
}

static const struct op_mapping_value *copy_mapping(struct copy_lookup *l, uint64_t pc)
{
	const struct process_mapping *m = process_table__find_mapping(l->w->p, pc);

	const struct cached_file *f;
	uint32_t pages;

	/* The process is known (its maps were read): outside them is the marker. */
	l->m = (struct op_mapping_value){0};
	if (!m)
		return &l->m;
	/* A file whose CFI can be read at once blocks only where it gives no rule
	 * (copy_find_rule). */
	if (l->w->check_ready && !l->w->blocked_slot && !stack_copy__mapping_ready(l->w->pt, m) &&
	    !fde_file(l->w->pt, m))
		l->w->blocked_slot = m->file_slot;
	l->m = (struct op_mapping_value){
	    .table_id = m->range_id == OP_TABLE_ID_ANON ? OP_TABLE_ID_ANON : m->table_id,
	    .bias = m->bias,
	    .start = m->start,
	    .end = m->end};
	/*
	 * A mapping that took no table although its file's is loaded: a process
	 * that exited while it waited is never published (its mappings acquire
	 * nothing), and its held copies, a short compiler's samples, were walked
	 * by frame pointers once the table was in (issue 17, session 16); also a
	 * process at its page share. The copy is walked with the table all the
	 * same (looked up, no reference taken: unloaded later, it is not found).
	 */
	if (!l->m.table_id && m->has_bias && l->w->pt->unwind && l->w->pt->files) {
		f = file_cache__at(l->w->pt->files, m->file_slot);
		if (f && f->elf && f->table_id &&
		    unwind_maps__table_loaded(l->w->pt->unwind, f->table_id, &pages)) {
			l->m.table_id = f->table_id;
			l->w->stats->unpublished_tables++;
		}
	}
	/*
	 * A waiting process's mappings have no range id yet (taken when it is
	 * published): anonymous code is told from its file as the publish would,
	 * so a copy released before (stack_copy__walk_ready) gets the kernel's
	 * anonymous-code rule there, not frame pointers.
	 */
	if (!l->m.table_id && !m->range_id && l->w->p->waiting && l->w->pt->files) {
		f = file_cache__at(l->w->pt->files, m->file_slot);
		if (f && !f->pending &&
		    lpm_ranges__range_id(f->elf != NULL, f->table_id, f->open_error,
					 f->inode == 0) == OP_TABLE_ID_ANON)
			l->m.table_id = OP_TABLE_ID_ANON;
	}
	return &l->m;
}

static const struct op_table_info *copy_table(struct copy_lookup *l, uint64_t table_id)
{
	return l->w->pt->unwind ? unwind_maps__table_info(l->w->pt->unwind, table_id) : NULL;
}

static void *copy_chunk(struct copy_lookup *l, uint32_t chunk)
{
	if (chunk >= l->w->pt->unwind->n_chunks)
		return NULL;
	l->chunk_fd = l->w->pt->unwind->chunks[chunk].fd;
	return l;
}

static const struct op_delta_page *copy_page(struct copy_lookup *l, uint32_t index)
{
	return bpf_map_lookup_elem(l->chunk_fd, &index, &l->page) ? NULL : &l->page;
}

static const struct op_unwind_rule *copy_rule(struct copy_lookup *l, uint32_t index)
{
	return bpf_map_lookup_elem(l->w->pt->unwind->rules_fd, &index, &l->rule) ? NULL : &l->rule;
}

/*
 * A pc in a file whose table is not loaded yet: the rule from the file's CFI
 * (the FDE covering it, as the table will have it), as perf --call-graph
 * dwarf unwinds a copy without any table. True with *rule; false where the
 * file alone gives none (a walk that checks readiness waits for the table).
 */
static bool copy_fde_rule(struct copy_lookup *l, uint64_t pc, struct op_unwind_rule *rule)
{
	const struct process_mapping *m = process_table__find_mapping(l->w->p, pc);
	const struct cached_file *f = m ? fde_file(l->w->pt, m) : NULL;
	uint64_t t0;
	int err;

	if (!f)
		return false;
	t0 = clock__now_ns();
	err = unwind_maps__fde_rule(l->w->pt->unwind, f->table_id, f->elf, pc - m->bias, rule);
	l->w->stats->fde_ns += clock__now_ns() - t0;
	if (err < 0) {
		if (unwind_maps__fde_file_is_go(l->w->pt->unwind, f->table_id))
			l->w->stats->go_refused++;
		else
			l->w->stats->fde_refused++;
		if (l->w->check_ready && !l->w->blocked_slot)
			l->w->blocked_slot = m->file_slot;
		return false;
	}
	switch (err) {
	case UNWIND_FDE_REMEMBERED:
		l->w->stats->frames_fde_memo++;
		break;
	case UNWIND_GO_READ:
		l->w->stats->frames_go++;
		break;
	case UNWIND_GO_REMEMBERED:
		l->w->stats->frames_go_memo++;
		break;
	default:
		l->w->stats->frames_fde++;
		break;
	}
	return true;
}

uint64_t stack_copy__go_curg(const struct remote_memory *mem, uint64_t tls_base, uint64_t *g,
			     uint64_t *m)
{
	struct live_unwinder lu = {.mem = mem};
	__u64 gg = 0, mm = 0,
	      curg =
		  op_go_switch__curg(&lu.u, tls_base, OP_GO_G_TLS_OFFSET, OP_GO_M_CURG, &gg, &mm);

	*g = gg;
	*m = mm;
	return curg;
}

/*
 * Whether a Go switch's checks (op_go_switch__curg, the switch rule's own)
 * hold in the live process now: g from TLS is its m's g0, m.curg another
 * goroutine of that m. Only then is the goroutine parked where the switch
 * left it and its stack, past the copy, worth reading live. Otherwise it has
 * run on since the sample: the frame-pointer fallback would read its stack as
 * it is now (frames of garbage), so nothing past the copy is read and the walk
 * stops with OP_UNWIND_ERR_GO_STALE.
 */
static bool go_switch_live(struct copy_walk *w, const struct op_unwind_rule *rule)
{
	struct live_unwinder lu = {.mem = &w->interp};
	__u64 g, m;

	return op_go_switch__curg(&lu.u, w->copy->tls_base, rule->cfa_offset,
				  (uint16_t)rule->fp_offset, &g, &m) != 0;
}

/* OP_FIND_RULE of bpf/sampler.bpf.c (lookup_rule), over the process table. */
static void copy_find_rule(void *ctx, uint32_t pid, uint64_t pc, struct op_unwind_rule *rule)
{
	struct copy_lookup *l = ctx;
	const struct op_mapping_value *m;
	uint32_t how;

	bool guessed = l->w->guessed;

	l->w->guessed = true;
	how = op_lookup__rule(l, &l->cache, pid, pc, rule, &m);
	if ((how == OP_LOOKUP_FP_NO_TABLE || how == OP_LOOKUP_FP_NO_MAPPING) &&
	    copy_fde_rule(l, pc, rule))
		how = OP_LOOKUP_CFI;
	switch (how) {
	case OP_LOOKUP_CFI:
	case OP_LOOKUP_INVALID: /* a gap of a loaded table: its rule, as the kernel's */
		l->w->stats->frames_cfi++;
		l->w->guessed = false;
		break;
	case OP_LOOKUP_FP_NO_MAPPING:
		/* As the sampler: a pc the walk can trust, in no mapping read so far. */
		if (!guessed && !l->w->unknown_pc)
			l->w->unknown_pc = pc;
		/* In a mapping (it has no table: none built, or no CFI), not outside. */
		l->w->no_table |= l->m.end != 0 && l->m.table_id == 0;
		l->w->stats->frames_fp++;
		break;
	case OP_LOOKUP_FP_NO_TABLE: /* the mapping names a table that is not loaded */
		l->w->no_table = true;
		l->w->stats->frames_fp++;
		break;
	default: /* frame pointers, or anonymous code's */
		l->w->stats->frames_fp++;
		break;
	}
	if (rule->cmd == OP_RULE_GO_SWITCH) {
		if (l->w->copy->go_flags & OP_STACK_COPY_F_GO) {
			l->w->stats->go_captured += !l->w->go_captured;
			l->w->go_captured = true;
		} else if (go_switch_live(l->w, rule))
			l->w->go_switch = true;
		else
			l->w->go_stale = true;
	}
	/* A walk that met a file not ready is thrown away (stack_copy__walk_ready):
	 * it stops here rather than go on by frame pointers (cc1plus: 640 frames). */
	if (l->w->blocked_slot)
		op_rule__set_invalid(rule);
}

bool stack_copy__mapping_ready(const struct process_table *pt, const struct process_mapping *m)
{
	const struct cached_file *f = pt->files ? file_cache__at(pt->files, m->file_slot) : NULL;

	if (!f)
		return true;
	if (f->pending)
		return false;
	/* As process_table's files_ready(): no table to wait for. */
	if (!pt->unwind || !f->elf || !f->table_id || !m->has_bias)
		return true;
	return unwind_maps__table_state(pt->unwind, f->table_id) == UNWIND_TABLE_READY;
}

static long walk(const struct op_stack_copy *copy, size_t size, struct process_table *pt,
		 const struct process *p, const struct op_interp_proc *ranges,
		 const void *const *states, struct op_trace *out, struct stack_copy_stats *stats,
		 uint64_t *unknown_pc, uint32_t max_frames, uint32_t *blocked_slot)
{
	const uint64_t *kernel = (const uint64_t *)(copy + 1);
	struct copy_walk w = {
	    .copy = copy, .pt = pt, .p = p, .stats = stats, .check_ready = blocked_slot != NULL};
	struct remote_memory live = remote_memory__live(copy->hdr.pid);
	struct remote_memory_overlay stack = {.base = copy->sp, .len = copy->stack_len};
	struct remote_memory_overlay interp_mem = {.base = copy->sp,
						   .len = copy->stack_len,
						   .fallback = &live,
						   .fallback_reads = &stats->interp_reads};
	struct remote_memory_overlay go_stack = {.base = copy->go_sched_sp,
						 .len = copy->go_stack_len};
	struct copy_lookup lookup = {.w = &w};
	struct user_unwind_ops ops = {copy_read, copy_find_rule, &w, &lookup};
	/* Each runtime's state for this walk (interp_ops.walk_size bytes). */
	_Alignas(max_align_t) unsigned char walks[OP_INTERP__COUNT][INTERP_WALK_MAX_SIZE];
	const struct interp_ops *runtime[OP_INTERP__COUNT] = {0};
	struct user_unwind_interp interp = {.ranges = ranges};
	struct user_unwind_result res;
	uint64_t *out_kernel = (uint64_t *)(out + 1);
	struct op_frame *user;

	if (unknown_pc)
		*unknown_pc = 0;
	/* The size must be exactly what the counts say (see struct op_stack_copy). */
	if (size < sizeof(*copy) || copy->stack_len > OP_STACK_COPY_MAX ||
	    copy->n_kernel > OP_MAX_KERNEL_FRAMES + 1 ||
	    copy->go_stack_len > OP_STACK_COPY_GO_MAX ||
	    (copy->go_stack_len &&
	     !(copy->go_flags & (OP_STACK_COPY_F_GO | OP_STACK_COPY_F_SIGNAL))) ||
	    (copy->go_flags & OP_STACK_COPY_F_GO && copy->go_flags & OP_STACK_COPY_F_SIGNAL) ||
	    size != OP_STACK_COPY_SIZE(copy->n_kernel, copy->stack_len) + copy->go_stack_len) {
		stats->bad_records++;
		return -EINVAL;
	}
	stats->received++;
	stats->stack_bytes += copy->stack_len;
	stack.bytes = interp_mem.bytes = (const uint8_t *)(kernel + copy->n_kernel);
	go_stack.bytes = stack.bytes + copy->stack_len;
	w.stack = remote_memory__overlay(&stack);
	w.go_stack = remote_memory__overlay(&go_stack);
	w.interp = remote_memory__overlay(&interp_mem);
	for (unsigned int i = 1; states && i < OP_INTERP__COUNT; i++) {
		const struct interp_ops *ops = interp__of_id(i);
		struct interp_walk_env env = {.state = states[i],
					      .thread_ptr = copy->tls_base,
					      .read = copy_read_interp,
					      .read_ctx = &w,
					      .late = true};

		if (!states[i] || !ops || !ops->walk_begin || ops->walk_size > sizeof(walks[i]))
			continue;
		memset(walks[i], 0, ops->walk_size);
		interp.runtimes[i] = ops->walk_begin(walks[i], &env);
		runtime[i] = ops;
	}
	/* The header is op_trace's, field for field (see bpf/include/omniprof/abi.h). */
	memcpy(out, copy, sizeof(*out));
	out->hdr.type = OP_EVENT_TRACE;
	out->n_user = 0;
	memcpy(out_kernel, kernel, copy->n_kernel * sizeof(kernel[0]));
	user = (struct op_frame *)(out_kernel + out->n_kernel);

	if (!p || !p->n_maps) {
		/* Nothing to unwind with: keep where it was, and say why it stops there. */
		stats->no_maps++;
		user[0] = (struct op_frame){.addr = copy->pc, .kind = OP_FRAME_NATIVE};
		user[1] = (struct op_frame){.addr = OP_UNWIND_ERR_NO_MAPS, .kind = OP_FRAME_ERROR};
		out->n_user = 2;
		out->flags |= OP_TRACE_F_USER_TRUNCATED;
	} else {
		/* As the sampler: frames in a runtime's code go to its step. */
		/* With the thread pointer (Go's switches read g from TLS) and rbx (ld.so's
		 * lazy-binding trampoline, OP_RULE_CFA_RBX). */
		struct user_unwind_regs regs = {.pc = copy->pc,
						.sp = copy->sp,
						.fp = copy->fp,
						.fsbase = copy->tls_base,
						.bx = copy->bx,
						.has_bx = true};

		res = user_unwind__walk_regs(&ops, &interp, copy->hdr.pid, &regs, user,
					     max_frames && max_frames < OP_MAX_USER_FRAMES
						 ? max_frames
						 : OP_MAX_USER_FRAMES);
		for (unsigned int i = 1; i < OP_INTERP__COUNT; i++)
			if (runtime[i] && runtime[i]->walk_end)
				runtime[i]->walk_end(walks[i], &stats->interp[i]);
		/* A read that failed past a Go switch whose thread had moved on:
		 * say why (the goroutine's stack is no longer the sample's). */
		if (w.go_stale && !w.go_switch && (res.flags & OP_TRACE_F_USER_TRUNCATED) &&
		    res.n_frames && user[res.n_frames - 1].kind == OP_FRAME_ERROR &&
		    user[res.n_frames - 1].addr == OP_UNWIND_ERR_READ)
			user[res.n_frames - 1].addr = OP_UNWIND_ERR_GO_STALE;
		out->n_user = (uint16_t)res.n_frames;
		out->flags |= res.flags;
		if (unknown_pc)
			*unknown_pc = w.unknown_pc;
		/*
		 * Every native frame is named with its mapping's file, the last
		 * one's rule not always looked up (a walk cut at max_frames): a
		 * file still being opened there blocks the copy as well.
		 */
		for (uint32_t i = 0; blocked_slot && !w.blocked_slot && i < res.n_frames; i++) {
			const struct process_mapping *m;

			if (user[i].kind != OP_FRAME_NATIVE || user[i].data)
				continue;
			m = process_table__find_mapping(p, user[i].addr);
			/* Named once opened: an open file whose table is to come does not block. */
			if (m && !stack_copy__mapping_ready(pt, m) && !fde_file(pt, m))
				w.blocked_slot = m->file_slot;
		}
		stats->without_table += w.no_table;
		if (res.flags & OP_TRACE_F_USER_TRUNCATED) {
			const struct op_frame *last = &user[res.n_frames ? res.n_frames - 1 : 0];
			uint64_t reason =
			    res.n_frames && last->kind == OP_FRAME_ERROR ? last->addr : 0;

			stats->truncated++;
			stats->beyond_copy += w.beyond_copy;
			stats->truncated_without_table += w.no_table;
			stats->stopped[reason < STACK_COPY_REASONS ? reason : 0]++;
		} else {
			stats->complete++;
		}
	}
	if (blocked_slot)
		*blocked_slot = w.blocked_slot;
	return (long)OP_TRACE_SIZE(out->n_kernel, out->n_user);
}

long stack_copy__to_trace(const struct op_stack_copy *copy, size_t size, struct process_table *pt,
			  const struct process *p, const struct op_interp_proc *ranges,
			  const void *const *states, struct op_trace *out,
			  struct stack_copy_stats *stats, uint64_t *unknown_pc, uint32_t max_frames)
{
	return walk(copy, size, pt, p, ranges, states, out, stats, unknown_pc, max_frames, NULL);
}

long stack_copy__walk_ready(const struct op_stack_copy *copy, size_t size, struct process_table *pt,
			    const struct process *p, const struct op_interp_proc *ranges,
			    const void *const *states, struct op_trace *out,
			    struct stack_copy_stats *stats, uint64_t *unknown_pc,
			    uint32_t max_frames, uint32_t *blocked_slot)
{
	*blocked_slot = 0;
	return walk(copy, size, pt, p, ranges, states, out, stats, unknown_pc, max_frames,
		    blocked_slot);
}
