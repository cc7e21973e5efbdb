// SPDX-License-Identifier: Apache-2.0
#include "engine/collector.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/targets.h"
#include "interp/interp.h"
#include "symbol/symbolizer.h"
#include "unwind/unwind_maps.h"
#include "omniprof/abi.h"
#include "omniprof/frame_pack.h"
#include "util/clock.h"
#include "util/log.h"

int collector__init(struct collector *c)
{
	memset(c, 0, sizeof(*c));
	/* (+ 1: the origin's frame, with mark_origin) */
	c->scratch = malloc(sizeof(struct trace) + (OP_MAX_KERNEL_FRAMES + 2 + OP_MAX_USER_FRAMES) *
						       sizeof(struct trace_frame));
	c->copy_trace = malloc(OP_TRACE_MAX_SIZE);
	if (!c->scratch || !c->copy_trace) {
		free(c->scratch);
		free(c->copy_trace);
		return -ENOMEM;
	}
	file_cache__init(&c->files);
	process_table__init(&c->procs, &c->files);
	trace_table__init(&c->traces);
	/*
	 * Samples may come before the session's first interval sets the offset:
	 * attaching a perf event's program enables it (libbpf) until the sampler
	 * disables it again, and the startup scan reads the ring meanwhile. A zero
	 * offset would stamp them in raw CLOCK_MONOTONIC time (1970 plus uptime).
	 */
	collector__set_clock_offset(c);
	return 0;
}

struct held_record {
	struct held_record *next;
	uint32_t pid;
	uint32_t size;
	/* A stack copy of a waiting process whose last walk met a file not ready
	 * (its slot; 0: not walked, or walked before that file was met). */
	uint32_t blocked_slot;
	/* blocked by a file still being opened: walked again once it is open (its
	 * CFI may give the rules before its table is in), else once the table is */
	bool blocked_open;
	bool not_early;		    /* never released before its process is published */
	_Alignas(8) uint8_t data[]; /* a record: read as its u64 fields */
};

void collector__set_clock_offset(struct collector *c)
{
	uint64_t mono = clock__ns(CLOCK_MONOTONIC);

	c->monotonic_to_wall_ns = (int64_t)(clock__ns(CLOCK_REALTIME) - mono);
}

void collector__clear(struct collector *c)
{
	if (!c)
		return;
	while (c->held_first) {
		struct held_record *r = c->held_first;

		c->held_first = r->next;
		free(r);
	}
	c->held_last = NULL;
	c->held.bytes = 0;
	trace_table__clear(&c->traces);
	process_table__clear(&c->procs);
	file_cache__clear(&c->files);
	free(c->scratch);
	free(c->copy_trace);
	c->scratch = NULL;
	c->copy_trace = NULL;
}

static void copy_comm(char *dst, const char *src)
{
	/* BPF may leave bytes after the NUL: zero them so equal names hash equal. */
	size_t len = strnlen(src, OP_TASK_COMM_LEN - 1);

	memset(dst, 0, OP_TASK_COMM_LEN);
	memcpy(dst, src, len);
}

/* Keeps a record of p while p waits for its files. True when held (a copy taken). */
static bool hold(struct collector *c, struct process *p, const void *data, size_t size)
{
	struct held_record *r;

	/* A published process's new records go behind those it still has held. */
	if (c->releasing || (!p->waiting && !p->held_bytes))
		return false;
	if (p->held_bytes + size > COLLECTOR_HELD_PROCESS_BYTES ||
	    c->held.bytes + size > COLLECTOR_HELD_BYTES) {
		c->held.overflow++;
		return false;
	}
	r = malloc(sizeof(*r) + size);
	if (!r) {
		c->held.overflow++;
		return false;
	}
	/* Its first held sample: the files it waits for go before the start-up
	 * scan's (files actually sampled first). */
	if (!p->held_bytes)
		c->held.promoted += process_table__promote(&c->procs, p);
	r->next = NULL;
	r->pid = p->pid;
	r->size = (uint32_t)size;
	r->blocked_slot = 0;
	r->blocked_open = false;
	/* Only a CPU sample's copy may go ahead of the process's older records
	 * (collector__release_loaded): an off-CPU start or end keeps its order. */
	r->not_early = size < sizeof(struct op_stack_copy) ||
		       ((const struct op_event_header *)data)->type != OP_EVENT_STACK_COPY ||
		       (((const struct op_stack_copy *)data)->flags & OP_TRACE_F_OFF_CPU);
	if (!r->not_early && p->waiting)
		c->loaded_pending = true;
	memcpy(r->data, data, size);
	if (c->held_last)
		c->held_last->next = r;
	else
		c->held_first = r;
	c->held_last = r;
	p->held_bytes += size;
	c->held.bytes += size;
	if (c->held.bytes > c->held.peak_bytes)
		c->held.peak_bytes = c->held.bytes;
	c->held.held++;
	return true;
}

/* Takes r out of the held list; prev is the record before it (NULL: r is first). */
static void held__unlink(struct collector *c, struct held_record *prev, struct held_record *r)
{
	if (prev)
		prev->next = r->next;
	else
		c->held_first = r->next;
	if (c->held_last == r)
		c->held_last = prev;
}

static int handle_trace(struct collector *c, const struct op_trace *e, size_t size);
static int handle_stack_copy(struct collector *c, const struct op_stack_copy *e, size_t size);

/* Handles the held records of pid (every pid: all), oldest first. */
static void release(struct collector *c, bool all, uint32_t pid)
{
	struct held_record *r = c->held_first, *prev = NULL, *next;

	c->releasing = true;
	for (; r; r = next) {
		struct process *p;

		next = r->next;
		if (!all && r->pid != pid) {
			prev = r;
			continue;
		}
		held__unlink(c, prev, r);
		p = process_table__find(&c->procs, r->pid);
		if (p) {
			p->held_bytes -= r->size;
			if (p->waiting)
				c->held.unready++;
			else
				c->held.released++;
		}
		c->held.bytes -= r->size;
		c->handling_unready = p && p->waiting;
		collector__handle(c, r->data, r->size);
		c->handling_unready = false;
		free(r);
	}
	c->releasing = false;
}

static void on_ready(void *ctx, struct process *p)
{
	struct collector *c = ctx;

	if (p->held_bytes)
		c->release_pending = true;
}

/*
 * Handles the held records of published processes, oldest first, until
 * budget_ns after start; the rest stay held, in order, for the next call
 * (c->release_pending).
 */
static void release_ready(struct collector *c, uint64_t start, uint64_t budget_ns)
{
	struct held_record *r = c->held_first, *prev = NULL, *next;

	c->releasing = true;
	for (; r; r = next) {
		struct process *p = process_table__find(&c->procs, r->pid);

		next = r->next;
		if (p && p->waiting) {
			prev = r;
			continue;
		}
		if (clock__now_ns() - start >= budget_ns) {
			c->held.slices_cut++;
			c->releasing = false;
			return;
		}
		held__unlink(c, prev, r);
		if (p) {
			p->held_bytes -= r->size;
			c->held.released++;
		}
		c->held.bytes -= r->size;
		collector__handle(c, r->data, r->size);
		free(r);
	}
	c->release_pending = false;
	c->releasing = false;
}

/* Whether the file of slot may have become ready since a walk was blocked by
 * it (the file level of stack_copy__mapping_ready(): cheap, no walk); a walk
 * blocked while it was being opened goes again once it is open. */
static bool slot_may_be_ready(const struct collector *c, uint32_t slot, bool open_only)
{
	const struct cached_file *f = file_cache__at(&c->files, slot);

	if (!f)
		return true;
	if (f->pending)
		return false;
	if (open_only)
		return true;
	return !c->procs.unwind || !f->elf || !f->table_id ||
	       unwind_maps__table_state(c->procs.unwind, f->table_id) == UNWIND_TABLE_READY;
}

/*
 * A held copy's walk stopped at slot: the file gives no rule until its job is
 * done (still opened, or a table to wait for where its CFI cannot be read one
 * FDE at a time: Go, no .eh_frame_hdr, a refused FDE). That job goes to the
 * head of the worker's queue: before, gofmt's table waited behind libLLVM's,
 * libclang-cpp's and cc1plus's, whose copies no longer wait for them, and was
 * built after the recording's end wait (issue 17, session 17).
 */
static void urge_blocking(struct collector *c, uint32_t slot)
{
	const struct cached_file *f = file_cache__at(&c->files, slot);
	const struct file_job *job;

	if (!f || !c->files.worker)
		return;
	job = f->pending ? f->open_job
	      : f->table_id && c->procs.unwind
		  ? unwind_maps__build_job_of(c->procs.unwind, f->table_id)
		  : NULL;
	/* (urgent is written by this thread only: read without the lock.) */
	if (job && !job->urgent && file_worker__urge(c->files.worker, job))
		c->held.urged++;
}

/*
 * Issue 17: a process is published once every file it maps is ready, so a
 * compiler whose files are all in but libLLVM's table held every copy for
 * that table, even those whose stack never enters libLLVM, and a loaded
 * machine built it after the recording's end wait (`unready`: frame
 * pointers). Here each held CPU-sample copy of a still waiting process is
 * walked with the tables loaded so far; one whose walk met only ready files
 * is handled now (counted `early`), one that met a file still opened or
 * built stays held with that file's slot, not walked again until the file
 * is ready (`blocked`); one with a pc in no mapping stays for its publish.
 * No copy is published from a walk that took frame pointers for a table
 * still to come. Walks stop budget_ns after start (c->loaded_pending then
 * stays set).
 */
static void release_loaded(struct collector *c, uint64_t start, uint64_t budget_ns)
{
	struct held_record *r = c->held_first, *prev = NULL, *next;
	const void *states[OP_INTERP__COUNT];

	if (!c->loaded_pending)
		return;
	c->releasing = true;
	for (; r; r = next) {
		struct process *p = process_table__find(&c->procs, r->pid);
		const struct op_stack_copy *e = (const struct op_stack_copy *)r->data;
		struct stack_copy_stats before;
		uint64_t unknown_pc;
		uint32_t slot;
		long n;

		next = r->next;
		if (!p || !p->waiting || r->not_early ||
		    (r->blocked_slot && !slot_may_be_ready(c, r->blocked_slot, r->blocked_open))) {
			prev = r;
			continue;
		}
		if (clock__now_ns() - start >= budget_ns) {
			c->held.loaded_cut++;
			c->loaded_cut = true;
			c->releasing = false;
			return;
		}
		before = c->copies;
		for (unsigned int i = 0; i < OP_INTERP__COUNT; i++)
			states[i] = interp__walk_state(c->interp, e->hdr.pid, i);
		n = stack_copy__walk_ready(
		    e, r->size, &c->procs, p, interp__ranges(c->interp, e->hdr.pid), states,
		    c->copy_trace, &c->copies, &unknown_pc, c->max_user_frames, &slot);
		/* (unknown_pc is also a pc in a mapping without table: only outside counts.) */
		if (unknown_pc && process_table__find_mapping(p, unknown_pc))
			unknown_pc = 0;
		if (n < 0 || slot || unknown_pc) {
			/* Walked again later: counted once, as the walk that is kept. */
			c->copies = before;
			r->blocked_slot = slot;
			if (slot) {
				const struct cached_file *f = file_cache__at(&c->files, slot);

				r->blocked_open = f && f->pending;
				c->held.blocked++;
				urge_blocking(c, slot);
			} else {
				/* Malformed, or a caller newly mapped: as before, at its publish.
				 */
				r->not_early = true;
				c->held.blocked_unmapped++;
			}
			prev = r;
			continue;
		}
		held__unlink(c, prev, r);
		p->held_bytes -= r->size;
		c->held.bytes -= r->size;
		c->held.early++;
		c->handling_copy = c->handling_early = true;
		handle_trace(c, c->copy_trace, (size_t)n);
		c->handling_copy = c->handling_early = false;
		free(r);
	}
	c->loaded_pending = c->loaded_cut = false;
	c->releasing = false;
}

bool collector__release_pending(const struct collector *c)
{
	/*
	 * A pass over waiting processes' copies that was cut goes on at once; new
	 * copies wait for the next poll (at most SESSION_BUSY_POLL_MS), or every
	 * sample of a waiting process would make the loop poll again at once.
	 */
	return (c->release_pending || c->loaded_cut) && c->held_first;
}

void collector__release_loaded(struct collector *c)
{
	c->loaded_pending = true;
	release_loaded(c, clock__now_ns(), UINT64_MAX);
}

static void on_job(void *ctx, struct file_job *job, bool abandoned)
{
	struct collector *c = ctx;

	if (job->kind == FILE_JOB_OPEN)
		file_cache__install(&c->files, (struct file_open_job *)job, abandoned);
	else if (job->kind == FILE_JOB_BUILD && c->procs.unwind)
		unwind_maps__finish_build(c->procs.unwind, (struct table_build_job *)job,
					  abandoned);
	if (!abandoned)
		job->free(job);
}

size_t collector__poll_files(struct collector *c)
{
	uint64_t start = clock__now_ns(), budget = COLLECTOR_RELEASE_BUDGET_MS * 1000000ull;
	size_t n;

	if (!c->files.worker)
		return 0;
	n = file_worker__poll(c->files.worker, on_job, c);
	if (n) {
		process_table__publish_ready(&c->procs, on_ready, c);
		/* Files opened, tables loaded: copies of waiting processes may walk now. */
		c->loaded_pending = true;
	}
	if (c->release_pending)
		release_ready(c, start, budget);
	/* What is left of the slice: copies whose own stacks' files are in. */
	release_loaded(c, start, budget);
	return n;
}

void collector__release_held(struct collector *c)
{
	release(c, true, 0);
}

/*
 * A sample that stopped in anonymous code no runtime claims: the runtime
 * that owns it may have refused the process at its last maps read (a JVM
 * not set up yet) and is offered it again only at the next one, which a JIT
 * whose code cache was mapped early may never cause. So the maps are read
 * again, at most every JIT_REREAD_NS: what a JIT no runtime knows costs.
 */
#define JIT_REREAD_NS (2000ull * 1000 * 1000)

static void reread_for_jit(struct collector *c, struct process *p)
{
	if (c->releasing || p->exited || p->gone || p->waiting ||
	    clock__now_ns() - p->refreshed_ns < JIT_REREAD_NS)
		return;
	c->stats.jit_rereads++;
	process_table__refresh(&c->procs, p);
}

/*
 * p's maps are read again because code was mapped over a range they hold
 * (handle_mmap). Its held records were taken before: handled first, with the
 * maps they were taken with, when it is published.
 */
static void remap_now(struct collector *c, struct process *p, uint64_t now)
{
	p->remapped_ns = now;
	p->remap_due = false;
	c->stats.remaps++;
	if (p->held_bytes && !p->waiting && !c->releasing)
		release(c, false, p->pid);
	process_table__refresh(&c->procs, p);
	/* Published by that read: what it held goes first, in order. */
	if (!c->releasing && !p->waiting && p->held_bytes)
		release(c, false, p->pid);
}

/*
 * Whether p's maps may be read again now for code mapped over them: at most
 * every COLLECTOR_REMAP_MIN_NS for p, and COLLECTOR_REMAPS_PER_SEC over all
 * processes (taken from that budget when allowed).
 */
static bool remap_allowed(struct collector *c, const struct process *p, uint64_t now)
{
	if (p->remapped_ns && now - p->remapped_ns < COLLECTOR_REMAP_MIN_NS)
		return false;
	if (now - c->remap_window_ns >= 1000000000ull) {
		c->remap_window_ns = now;
		c->remaps_in_window = 0;
	}
	if (c->remaps_in_window >= COLLECTOR_REMAPS_PER_SEC)
		return false;
	c->remaps_in_window++;
	return true;
}

/* A read put off by the rate limits is done at p's first sample past them. */
static void remap_if_due(struct collector *c, struct process *p)
{
	uint64_t now;

	if (!p->remap_due || c->releasing || p->exited || p->gone)
		return;
	now = clock__now_ns();
	if (remap_allowed(c, p, now))
		remap_now(c, p, now);
}

/* Whether mapping m holds e's file at e's place (device, inode, and the same file
 * offset at each address). */
static bool same_file(const struct collector *c, const struct process_mapping *m,
		      const struct op_mmap_event *e)
{
	const struct cached_file *f = file_cache__at(&c->files, m->file_slot);

	return f && f->inode == e->inode && f->dev_major == e->dev_major &&
	       f->dev_minor == e->dev_minor && m->start - m->offset == e->addr - e->pgoff;
}

/*
 * The sampler saw e's process map file code over a range the trie holds for
 * it (sampler.c on_mmap: a library dlclosed, another dlopened at its
 * address): no sample reports that (its addresses are all in known
 * mappings), so the old file's table would walk the new code and its names
 * name it. When the maps last read hold another file there (or nothing), they
 * are read again now, which replaces the range in the trie (a new range id:
 * the walks' mapping cache is dropped with the generation) and in the table
 * the collector names frames with. The records come in time order with the
 * samples, so those taken before were named with the old maps. Rate limited
 * per process (COLLECTOR_REMAP_MIN_NS).
 */
static int handle_mmap(struct collector *c, const struct op_mmap_event *e, size_t size)
{
	uint64_t end = e->addr + e->len, now;
	bool overlap = false, other = false;
	struct process *p;

	if (size < sizeof(*e) || end <= e->addr) {
		c->stats.bad_records++;
		return -EINVAL;
	}
	p = process_table__find(&c->procs, e->hdr.pid);
	if (!p || p->exited || p->gone)
		return 0;
	/* Behind the records it holds (taken before): handled when they are. */
	if (hold(c, p, e, size))
		return 0;
	c->stats.mmaps++;
	for (size_t i = 0; i < p->n_maps && p->maps[i].start < end; i++) {
		const struct process_mapping *m = &p->maps[i];

		if (m->end <= e->addr)
			continue;
		overlap = true;
		other |= !same_file(c, m, e);
	}
	/* (No overlap: the trie holds a range there that the last read has not.) */
	if (overlap && !other) {
		c->stats.remaps_same++;
		return 0;
	}
	now = clock__now_ns();
	if (!remap_allowed(c, p, now)) {
		c->stats.remaps_limited++;
		p->remap_due = true;
		if (!c->stats.remap_warned)
			pr_info("pid %u maps code over known code faster than its maps are read "
				"for it (every %llu ms a process, %d a second in all): read later "
				"(counted)",
				p->pid, COLLECTOR_REMAP_MIN_NS / 1000000, COLLECTOR_REMAPS_PER_SEC);
		c->stats.remap_warned = true;
		return 0;
	}
	remap_now(c, p, now);
	return 0;
}

/* Where the record handled now comes from (mark_origin). */
static enum trace_origin origin_of(const struct collector *c)
{
	if (c->handling_copy)
		return c->handling_early     ? TRACE_ORIGIN_COPY_EARLY
		       : c->handling_unready ? TRACE_ORIGIN_COPY_UNREADY
		       : c->releasing	     ? TRACE_ORIGIN_COPY_HELD
					     : TRACE_ORIGIN_COPY;
	return c->handling_unready ? TRACE_ORIGIN_WALK_UNREADY
	       : c->releasing	   ? TRACE_ORIGIN_WALK_HELD
				   : TRACE_ORIGIN_WALK;
}

static int handle_trace(struct collector *c, const struct op_trace *e, size_t size)
{
	const uint64_t *kernel = (const uint64_t *)(e + 1);
	const struct op_frame *user;
	const uint64_t *packed;
	struct trace *t = c->scratch;
	struct process *p = NULL;
	uint32_t n = 0;
	bool is_packed, is_wide;
	size_t want;

	/* The size must be exactly what the counts say (see struct op_trace). */
	if (size < sizeof(*e) || e->n_kernel > OP_MAX_KERNEL_FRAMES + 1 ||
	    e->n_user > OP_MAX_USER_FRAMES) {
		c->stats.bad_records++;
		return -EINVAL;
	}
	is_packed = e->flags & OP_TRACE_F_PACKED;
	is_wide = e->flags & OP_TRACE_F_PACKED_WIDE;
	want = is_packed ? OP_TRACE_PACKED_SIZE(e->n_kernel, e->n_user)
	       : is_wide ? OP_TRACE_WIDE_SIZE(e->n_kernel, e->n_user)
			 : OP_TRACE_SIZE(e->n_kernel, e->n_user);
	if ((is_packed && is_wide) || size != want) {
		c->stats.bad_records++;
		return -EINVAL;
	}
	user = (const struct op_frame *)(kernel + e->n_kernel);
	packed = kernel + e->n_kernel;
	if (!(e->flags & OP_TRACE_F_OFF_CPU) && e->ktime_ns < c->sampling_from_ns) {
		c->stats.before_start++;
		return 0;
	}
	if (e->n_user) {
		p = process_table__get(&c->procs, e->hdr.pid);
		if (!p) {
			c->stats.enomem++;
			return -ENOMEM;
		}
		/* Its frames are named against files still being opened: later. */
		if (hold(c, p, e, size))
			return 0;
		remap_if_due(c, p);
	} else if (e->flags & OP_TRACE_F_OFF_CPU) {
		/*
		 * A wait's start without user frames keeps its place among the
		 * process's held records all the same: its end is held while the
		 * process waits (handle_offcpu_end()), and a start handled before an
		 * older held start and end would be replaced by that start, both
		 * waits lost.
		 */
		p = process_table__find(&c->procs, e->hdr.pid);
		if (p && hold(c, p, e, size))
			return 0;
	}
	if (!(e->flags & OP_TRACE_F_OFF_CPU))
		c->stats.traces++;
	memset(t, 0, sizeof(*t));
	t->pid = e->hdr.pid;
	t->tid = e->tid;
	/* The record's form, not the trace's. */
	t->flags = e->flags & ~(OP_TRACE_F_PACKED | OP_TRACE_F_PACKED_WIDE);
	if (c->traces.keep_events && !(e->flags & OP_TRACE_F_OFF_CPU)) {
		t->cpu = e->cpu;
		t->time_ns = e->ktime_ns + (uint64_t)c->monotonic_to_wall_ns;
	}
	copy_comm(t->comm, e->comm);
	copy_comm(t->pcomm, e->pcomm);

	if (c->mark_origin && !(e->flags & OP_TRACE_F_OFF_CPU))
		t->frames[n++] = (struct trace_frame){.addr = TRACE_ORIGIN_BASE + origin_of(c),
						      .kind = OP_FRAME_ERROR};
	for (uint32_t i = 0; i < e->n_kernel; i++)
		t->frames[n++] = (struct trace_frame){.addr = kernel[i], .kind = OP_FRAME_KERNEL};

	for (uint32_t i = 0; i < e->n_user; i++) {
		struct op_frame unpacked;
		const struct op_frame *f = &user[i];
		struct trace_frame *tf = &t->frames[n++];

		if (is_packed) {
			unpacked = (struct op_frame){.addr = OP_PACKED_FRAME_ADDR(packed[i]),
						     .kind = OP_PACKED_FRAME_KIND(packed[i]),
						     .flags = OP_PACKED_FRAME_FLAGS(packed[i])};
			f = &unpacked;
		} else if (is_wide) {
			const __u64 w[2] = {packed[2 * i], packed[2 * i + 1]};

			op_frame__unpack_wide(w, &unpacked);
			f = &unpacked;
		}
		*tf = (struct trace_frame){.addr = f->addr, .kind = f->kind, .flags = f->flags};
		/* A runtime's frame: (frame-store id, offset), named while the process lives. */
		if (interp__resolve(c->interp, e->hdr.pid, f, &tf->frame_id, &tf->addr))
			continue;
		if (f->kind != OP_FRAME_NATIVE || f->data)
			continue;
		if (!process_table__resolve(&c->procs, p, f->addr, &tf->file_slot, &tf->addr))
			c->stats.unresolved++;
	}
	t->n_frames = n;
	if (p && n > e->n_kernel && t->frames[n - 1].kind == OP_FRAME_ERROR &&
	    t->frames[n - 1].addr == OP_UNWIND_ERR_ANON_CODE)
		reread_for_jit(c, p);
	/* A thread leaving the CPU: its trace waits for the time it stays away. */
	if (e->flags & OP_TRACE_F_OFF_CPU) {
		if (!c->offcpu)
			return 0;
		return offcpu__start(c->offcpu, t, e->ktime_ns);
	}
	if (trace_table__add(&c->traces, t)) {
		c->stats.enomem++;
		return -ENOMEM;
	}
	return 0;
}

static int handle_proc_event(struct collector *c, const struct op_proc_event *e, size_t size)
{
	struct process *p;

	if (size < sizeof(*e)) {
		c->stats.bad_records++;
		return -EINVAL;
	}
	if (e->hdr.type == OP_EVENT_EXIT) {
		c->stats.exits++;
		/* Published with records still held: those go with its maps, before they do. */
		p = process_table__find(&c->procs, e->hdr.pid);
		if (p && p->held_bytes && !p->waiting && !c->releasing)
			release(c, false, p->pid);
		process_table__mark_exited(&c->procs, e->hdr.pid);
		if (c->targets)
			targets__on_exit(c->targets, e->hdr.pid);
		return 0;
	}
	/* Not (or no longer) a target: its maps are not read, its samples not taken. */
	if (c->targets) {
		char comm[sizeof(e->comm) + 1];

		memcpy(comm, e->comm, sizeof(e->comm));
		comm[sizeof(e->comm)] = '\0';
		if (!targets__on_exec(c->targets, e->hdr.pid, comm))
			return 0;
	}
	/* A new program image: read its mappings now, while it runs. */
	c->stats.execs++;
	p = process_table__get(&c->procs, e->hdr.pid);
	if (!p)
		return -ENOMEM;
	/* Its program's path, for when the process is gone before anyone read its exe
	 * (only an absolute one names a file; the kernel's copy may lack the NUL). */
	free(p->exec_path);
	p->exec_path = NULL;
	if (size >= sizeof(struct op_exec_event)) {
		const struct op_exec_event *x = (const void *)e;
		size_t n = strnlen(x->path, sizeof(x->path) - 1);

		if (n && x->path[0] == '/')
			p->exec_path = strndup(x->path, n); /* NULL on ENOMEM: not named, no harm */
	}
	/* Held samples are the old image's: named with its maps, before they go. */
	if (p->held_bytes && !c->releasing)
		release(c, false, p->pid);
	p->exited = p->gone = false;
	/* Unless the entry was created (and read) after the exec, read it again. */
	if (p->refreshed_ns < e->ktime_ns) {
		if (c->files.worker)
			process_table__forget_image(&c->procs, p);
		process_table__refresh(&c->procs, p);
	}
	return 0;
}

/*
 * The in-kernel unwinder met a process or an address it has no table for.
 * An address outside every mapping read so far was mapped since (the dynamic
 * loader's libraries right after an exec, a dlopen): read the maps now, not
 * after the usual minimum interval, since the stack copy of the sample that
 * reported it comes next and the process's next samples wait for it. The
 * kernel sends at most one report per pid per 200 ms.
 */
static int handle_unknown(struct collector *c, const struct op_unknown_event *e, size_t size)
{
	const struct process_mapping *m;
	struct process *p;
	uint64_t reads;
	uint32_t pid;

	if (size < sizeof(*e)) {
		c->stats.bad_records++;
		return -EINVAL;
	}
	c->stats.unknown_reports++;
	pid = e->hdr.pid;
	reads = c->procs.stats.maps_reads;
	p = process_table__get(&c->procs, pid); /* reads the maps of a new process */
	if (!p)
		return -ENOMEM;
	if (reads != c->procs.stats.maps_reads)
		return 0; /* read just now */
	m = e->addr ? process_table__find_mapping(p, e->addr) : NULL;
	/*
	 * Waiting for its files, it has no pid marker: reports are expected
	 * until it is published. And past PROCESS_MAPS_MAX mappings, untracked
	 * addresses always miss. Both re-read at the slow rate only.
	 */
	if (p->waiting || p->truncated) {
		process_table__refresh_if_stale(&c->procs, p);
	} else if (e->addr && !m && !p->exited && !p->gone) {
		c->stats.unknown_rereads++;
		process_table__refresh(&c->procs, p);
	} else if (!m || (!m->range_id && c->procs.unwind)) {
		/* The whole process, or a mapping the BPF maps could not place: rate limited. */
		process_table__refresh_if_stale(&c->procs, p);
	}
	/* Else the address was mapped by the last read, after the sample: nothing new. */
	if (!c->releasing && !p->waiting && p->held_bytes)
		release(c, false, p->pid); /* published by that read */
	return 0;
}

/*
 * Reads p's maps again for a sample taken at ktime_ns that met an address
 * outside them: at once when they were read before the sample (the address
 * may be a mapping made since: the dynamic loader's libraries right after
 * the exec was handled), else only at the slow rate (it was not mapped when
 * they were read after the sample: a garbage address). True when read.
 */
static bool reread_for(struct collector *c, struct process *p, uint64_t ktime_ns)
{
	if (p->exited || p->gone)
		return false;
	if (p->refreshed_ns < ktime_ns) {
		c->stats.unknown_rereads++;
		process_table__refresh(&c->procs, p);
		return true;
	}
	return process_table__refresh_if_stale(&c->procs, p);
}

/*
 * A sample of a process whose tables were not loaded: read its maps now
 * unless done (loading its tables), then unwind the copy as the kernel would
 * have. Records arrive in order, so its exec event, when it had one, was
 * handled first and its exit comes after.
 */
static int handle_stack_copy(struct collector *c, const struct op_stack_copy *e, size_t size)
{
	const void *states[OP_INTERP__COUNT];
	struct process *p;
	long n;
	int err;

	if (size < sizeof(*e)) {
		c->copies.bad_records++;
		return -EINVAL;
	}
	/* Not worth unwinding (handle_trace would leave it out). */
	if (!(e->flags & OP_TRACE_F_OFF_CPU) && e->ktime_ns < c->sampling_from_ns) {
		c->stats.before_start++;
		return 0;
	}
	p = process_table__get(&c->procs, e->hdr.pid);
	if (!p) {
		c->stats.enomem++;
		return -ENOMEM;
	}
	if (p->exited && !c->releasing) {
		/* No sample follows an exit: this is a new process with the pid. */
		if (p->held_bytes)
			release(c, false, p->pid);
		p->exited = p->gone = false;
		process_table__refresh(&c->procs, p);
	}
	/*
	 * Unwound when its files are ready (opened, tables built), not before.
	 * A pc outside the maps read so far is a mapping made since (a dlopen,
	 * while waiting or not): read the maps again so its file is opened too
	 * before the copy is unwound.
	 */
	if (!c->releasing && !p->truncated && !process_table__find_mapping(p, e->pc))
		reread_for(c, p, e->ktime_ns);
	/* Published by that read: what it held goes first, in order. */
	if (!c->releasing && !p->waiting && p->held_bytes)
		release(c, false, p->pid);
	if (hold(c, p, e, size))
		return 0;
	remap_if_due(c, p);
	for (int attempt = 0;; attempt++) {
		struct stack_copy_stats before = c->copies;
		uint64_t unknown_pc;

		for (unsigned int i = 0; i < OP_INTERP__COUNT; i++)
			states[i] = interp__walk_state(c->interp, e->hdr.pid, i);
		n = stack_copy__to_trace(
		    e, size, &c->procs, p, interp__ranges(c->interp, e->hdr.pid), states,
		    c->copy_trace, &c->copies, &unknown_pc, c->max_user_frames);
		if (n < 0)
			return (int)n;
		/*
		 * A caller's frame in a mapping made since the last read: read
		 * the maps again (rate limited) and unwind once more, or hold the
		 * copy while the new files are readied.
		 */
		if (attempt || !unknown_pc || c->releasing || p->truncated ||
		    !reread_for(c, p, e->ktime_ns))
			break;
		/* Counted once, as the walk that is kept. */
		c->copies = before;
		c->copies.reread++;
		if (hold(c, p, e, size))
			return 0;
	}
	c->handling_copy = true;
	err = handle_trace(c, c->copy_trace, (size_t)n);
	c->handling_copy = false;
	return err;
}

/* A recorded thread runs again: its trace gets the time in between. In order
 * with the trace, which may be held while the process's files are readied. */
static int handle_offcpu_end(struct collector *c, const struct op_offcpu_end *e, size_t size)
{
	struct process *p;

	if (size < sizeof(*e)) {
		c->stats.bad_records++;
		return -EINVAL;
	}
	if (!c->offcpu)
		return 0;
	p = process_table__find(&c->procs, e->hdr.pid);
	if (p && hold(c, p, e, size))
		return 0;
	offcpu__end(c->offcpu, e->tid, e->start_ns, e->end_ns);
	return 0;
}

int collector__handle(struct collector *c, const void *data, size_t size)
{
	const struct op_event_header *h = data;

	if (size < sizeof(*h)) {
		c->stats.bad_records++;
		return -EINVAL;
	}
	switch (h->type) {
	case OP_EVENT_TRACE:
		return handle_trace(c, data, size);
	case OP_EVENT_EXEC:
	case OP_EVENT_EXIT:
		return handle_proc_event(c, data, size);
	case OP_EVENT_UNKNOWN:
		return handle_unknown(c, data, size);
	case OP_EVENT_STACK_COPY:
		return handle_stack_copy(c, data, size);
	case OP_EVENT_OFFCPU_END:
		return handle_offcpu_end(c, data, size);
	case OP_EVENT_MMAP:
		return handle_mmap(c, data, size);
	default:
		c->stats.bad_records++;
		return -EINVAL;
	}
}
