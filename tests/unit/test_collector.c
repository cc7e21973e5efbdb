// SPDX-License-Identifier: Apache-2.0
/*
 * The collector's reading of ring-buffer records: trace records in their
 * compact layout (header, kernel frames, then user frames) taken exactly at
 * the size their counts give, anything else counted as malformed; and the
 * unknown-address report, which re-reads a process's maps at once for an
 * address outside them and leaves them alone for one they already hold;
 * off-CPU starts and ends kept in order while their process is held.
 * The process is this test itself (its own /proc/self/maps). And the
 * wall-clock time a sample is stamped with (keep_events), even for a sample
 * handled before the session first set the clock offset. The wide packed
 * form of a JVM's frames (omniprof/frame_pack.h) gives back every field of
 * every kind it takes, refuses what it cannot hold, and reads as the same
 * trace as the struct op_frame form.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/collector.h"
#include "symbol/symbolizer.h"
#include "unwind/unwind_maps.h"
#include "omniprof/frame_pack.h"
#include "util/clock.h"

/* A trace record of this process with nk kernel and nu user frames; free() it. */
static struct op_trace *new_trace(uint16_t nk, uint16_t nu, size_t *size)
{
	struct op_trace *t;
	uint64_t *kernel;
	struct op_frame *user;

	*size = OP_TRACE_SIZE(nk, nu);
	t = calloc(1, *size + 64);
	assert_non_null(t);
	t->hdr.type = OP_EVENT_TRACE;
	t->hdr.pid = (uint32_t)getpid();
	t->tid = t->hdr.pid;
	strcpy(t->comm, "test");
	strcpy(t->pcomm, "test");
	t->n_kernel = nk;
	t->n_user = nu;
	kernel = (uint64_t *)(t + 1);
	for (uint16_t i = 0; i < nk; i++)
		kernel[i] = 0xffffffff81000000ull + 16 * i;
	user = (struct op_frame *)(kernel + nk);
	for (uint16_t i = 0; i < nu; i++)
		user[i] = (struct op_frame){.addr = OP_UNWIND_ERR_READ, .kind = OP_FRAME_ERROR};
	return t;
}

/* The one trace in the table (the test adds one distinct trace). */
static const struct trace *only_trace(struct collector *c)
{
	size_t i = 0;
	void *e = NULL;

	assert_true(hashmap__next(&c->traces.traces, &i, &e));
	return e;
}

static void test_trace_layout(void **state)
{
	struct collector c;
	const struct trace *t;
	struct op_trace *rec;
	size_t size;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	rec = new_trace(3, 2, &size);
	assert_int_equal(collector__handle(&c, rec, size), 0);
	assert_int_equal(c.stats.traces, 1);
	t = only_trace(&c);
	/* Kernel frames first, then the user frames found right after them. */
	assert_int_equal(t->n_frames, 5);
	assert_int_equal(t->frames[0].kind, OP_FRAME_KERNEL);
	assert_int_equal(t->frames[2].addr, 0xffffffff81000020ull);
	assert_int_equal(t->frames[3].kind, OP_FRAME_ERROR);
	assert_int_equal(t->frames[4].addr, OP_UNWIND_ERR_READ);
	free(rec);
	collector__clear(&c);
}

static void test_trace_size_must_match(void **state)
{
	struct collector c;
	struct op_trace *rec;
	size_t size;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	rec = new_trace(2, 4, &size);
	/* Shorter than the header, a byte short, a frame too long, 8 bytes over. */
	assert_int_equal(collector__handle(&c, rec, 20), -EINVAL);
	assert_int_equal(collector__handle(&c, rec, size - 1), -EINVAL);
	assert_int_equal(collector__handle(&c, rec, size + sizeof(struct op_frame)), -EINVAL);
	assert_int_equal(collector__handle(&c, rec, size + 8), -EINVAL);
	/* Counts beyond the maxima, whatever the size says. */
	rec->n_kernel = OP_MAX_KERNEL_FRAMES + 2;
	assert_int_equal(
	    collector__handle(&c, rec, OP_TRACE_SIZE(OP_MAX_KERNEL_FRAMES + 2, rec->n_user)),
	    -EINVAL);
	assert_int_equal(c.stats.bad_records, 5);
	assert_int_equal(c.stats.traces, 0);
	free(rec);
	collector__clear(&c);
}

static void test_unknown_address_rereads_at_once(void **state)
{
	struct op_unknown_event e = {.hdr = {.type = OP_EVENT_UNKNOWN, .pid = (uint32_t)getpid()}};
	struct collector c;
	struct process *p;
	uint64_t reads;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	p = process_table__get(&c.procs, (uint32_t)getpid()); /* reads the maps */
	assert_non_null(p);
	assert_true(p->n_maps > 0);
	reads = c.procs.stats.maps_reads;

	/* An address no mapping held: read again now, however recent the last read. */
	e.addr = 8; /* never mapped */
	assert_int_equal(collector__handle(&c, &e, sizeof(e)), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads + 1);
	assert_int_equal(c.stats.unknown_rereads, 1);

	/* An address the maps already hold (the report predates the read): nothing. */
	e.addr = (uint64_t)(uintptr_t)&test_unknown_address_rereads_at_once;
	assert_int_equal(collector__handle(&c, &e, sizeof(e)), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads + 1);
	assert_int_equal(c.stats.unknown_rereads, 1);
	assert_int_equal(c.stats.unknown_reports, 2);
	collector__clear(&c);
}

/*
 * Code mapped over a known range (OP_EVENT_MMAP, the sampler's mapping
 * records): the file the maps hold there reads nothing; another file reads
 * the maps at once, then at most every COLLECTOR_REMAP_MIN_NS and
 * COLLECTOR_REMAPS_PER_SEC host-wide (the read put off is done at the
 * process's first sample past them); untracked processes are
 * left alone; a malformed record is counted.
 */
static void test_code_mapped_over_known_range(void **state)
{
	struct op_mmap_event e = {.hdr = {.type = OP_EVENT_MMAP, .pid = (uint32_t)getpid()}};
	const struct process_mapping *m;
	const struct cached_file *f;
	struct collector c;
	struct process *p;
	struct op_trace *t;
	uint64_t reads;
	size_t size;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	c.sampling_from_ns = 0;
	p = process_table__get(&c.procs, (uint32_t)getpid());
	assert_non_null(p);
	m = process_table__find_mapping(p, (uint64_t)(uintptr_t)&test_code_mapped_over_known_range);
	assert_non_null(m);
	f = file_cache__at(&c.files, m->file_slot);
	assert_non_null(f);
	assert_true(f->inode != 0);
	reads = c.procs.stats.maps_reads;

	/* This very mapping, as the maps hold it: nothing to read. */
	e.addr = m->start;
	e.len = m->end - m->start;
	e.pgoff = m->offset;
	e.inode = f->inode;
	e.dev_major = f->dev_major;
	e.dev_minor = f->dev_minor;
	assert_int_equal(collector__handle(&c, &e, sizeof(e)), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads);
	assert_int_equal(c.stats.remaps_same, 1);

	/* Another file there (another inode; then another offset): read at once. */
	e.inode = f->inode + 1;
	assert_int_equal(collector__handle(&c, &e, sizeof(e)), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads + 1);
	assert_int_equal(c.stats.remaps, 1);
	/* Within COLLECTOR_REMAP_MIN_NS: put off, not read. */
	e.inode = f->inode;
	e.pgoff += 4096;
	assert_int_equal(collector__handle(&c, &e, sizeof(e)), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads + 1);
	assert_int_equal(c.stats.remaps_limited, 1);
	assert_true(p->remap_due);
	/* ... done at its first sample past the interval. */
	t = new_trace(0, 1, &size);
	t->ktime_ns = clock__now_ns();
	assert_int_equal(collector__handle(&c, t, size), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads + 1);
	p->remapped_ns -= COLLECTOR_REMAP_MIN_NS;
	assert_int_equal(collector__handle(&c, t, size), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads + 2);
	assert_int_equal(c.stats.remaps, 2);
	assert_false(p->remap_due);

	/* The host-wide budget spent (other processes' reads): put off too, past this
	 * process's own interval, and done at its first sample in the next second. */
	p->remapped_ns -= COLLECTOR_REMAP_MIN_NS;
	c.remaps_in_window = COLLECTOR_REMAPS_PER_SEC;
	e.pgoff -= 4096;
	e.inode = f->inode + 1;
	assert_int_equal(collector__handle(&c, &e, sizeof(e)), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads + 2);
	assert_int_equal(c.stats.remaps_limited, 2);
	assert_true(p->remap_due);
	assert_int_equal(collector__handle(&c, t, size), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads + 2);
	c.remap_window_ns -= 1000000000ull;
	assert_int_equal(collector__handle(&c, t, size), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads + 3);
	assert_int_equal(c.stats.remaps, 3);
	assert_int_equal(c.remaps_in_window, 1);
	assert_false(p->remap_due);
	free(t);

	/* A process not tracked: nothing. */
	e.hdr.pid = 0x7ffffff0;
	assert_int_equal(collector__handle(&c, &e, sizeof(e)), 0);
	assert_int_equal(c.stats.mmaps, 4);
	/* Malformed: a range that wraps, a short record. */
	e.hdr.pid = (uint32_t)getpid();
	e.len = ~0ull;
	assert_int_equal(collector__handle(&c, &e, sizeof(e)), -EINVAL);
	assert_int_equal(collector__handle(&c, &e, sizeof(e) - 8), -EINVAL);
	assert_int_equal(c.stats.bad_records, 2);
	collector__clear(&c);
}

/*
 * A process past its exit_mm (here a zombie: exited, not reaped) reads as no
 * mapping at all. Its samples still queued were taken while it ran, so a read
 * then (an unknown address, an exec event handled late) must not leave it
 * without maps: its frames would be named [unknown].
 */
static void test_exiting_process_keeps_its_maps(void **state)
{
	struct collector c;
	struct process *p;
	siginfo_t si = {0};
	int go[2];
	size_t n_maps;
	char b = 0;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(go[1]);
		(void)!read(go[0], &b, 1);
		_exit(0);
	}
	close(go[0]);
	assert_int_equal(collector__init(&c), 0);
	p = process_table__get(&c.procs, (uint32_t)pid); /* reads its maps while it runs */
	assert_non_null(p);
	n_maps = p->n_maps;
	assert_true(n_maps > 0);
	close(go[1]); /* it exits */
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);

	assert_int_equal(process_table__refresh(&c.procs, p), -ESRCH);
	assert_int_equal(p->n_maps, n_maps);
	assert_true(p->gone);
	collector__clear(&c);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/*
 * A sample stopped in anonymous code (a JIT no runtime has claimed yet) reads
 * the maps again, so the runtimes are offered the process again, but at
 * most every 2 s; other stops do not.
 */
static void test_jit_stop_rereads_slowly(void **state)
{
	struct collector c;
	struct process *p;
	struct op_trace *t;
	struct op_frame *user;
	uint64_t reads;
	size_t size;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	c.sampling_from_ns = 0;
	p = process_table__get(&c.procs, (uint32_t)getpid());
	assert_non_null(p);
	assert_false(p->waiting);
	reads = c.procs.stats.maps_reads;
	t = new_trace(0, 1, &size);
	t->ktime_ns = clock__now_ns();
	user = (struct op_frame *)(t + 1);
	user[0] = (struct op_frame){.addr = OP_UNWIND_ERR_ANON_CODE, .kind = OP_FRAME_ERROR};

	/* Read just now: not again. */
	assert_int_equal(collector__handle(&c, t, size), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads);
	/* Read 3 s ago: read again, once. */
	p->refreshed_ns -= 3000ull * 1000 * 1000;
	assert_int_equal(collector__handle(&c, t, size), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads + 1);
	assert_int_equal(c.stats.jit_rereads, 1);
	assert_int_equal(collector__handle(&c, t, size), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads + 1);
	/* Another stop (an unreadable stack) never reads them. */
	p->refreshed_ns -= 3000ull * 1000 * 1000;
	user[0].addr = OP_UNWIND_ERR_READ;
	assert_int_equal(collector__handle(&c, t, size), 0);
	assert_int_equal(c.procs.stats.maps_reads, reads + 1);
	assert_int_equal(c.stats.jit_rereads, 1);
	free(t);
	collector__clear(&c);
}

/* The end of tid's wait that started at start_ns. */
static struct op_offcpu_end offcpu_end(uint64_t start_ns, uint64_t end_ns)
{
	struct op_offcpu_end e = {0};

	e.hdr.type = OP_EVENT_OFFCPU_END;
	e.hdr.pid = (uint32_t)getpid();
	e.tid = e.hdr.pid;
	e.start_ns = start_ns;
	e.end_ns = end_ns;
	return e;
}

/*
 * While a process waits for its files its off-CPU records are held, in
 * order: a wait's start without user frames (no file to wait for) is held
 * too, or it would be handled before an older held start and replaced by
 * it, both waits lost.
 */
static void test_offcpu_order_while_held(void **state)
{
	struct collector c;
	struct offcpu o;
	struct op_offcpu_end end = offcpu_end(1000, 1500);
	struct op_trace *with_user, *kernel_only;
	struct process *p;
	size_t size_u, size_k;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	offcpu__init(&o, 0);
	c.offcpu = &o;
	p = process_table__get(&c.procs, (uint32_t)getpid());
	assert_non_null(p);
	p->waiting = true; /* as while the file worker opens its files */
	with_user = new_trace(2, 1, &size_u);
	with_user->flags = OP_TRACE_F_OFF_CPU;
	with_user->ktime_ns = 1000;
	kernel_only = new_trace(3, 0, &size_k);
	kernel_only->flags = OP_TRACE_F_OFF_CPU;
	kernel_only->ktime_ns = 2000;
	assert_int_equal(collector__handle(&c, with_user, size_u), 0);
	assert_int_equal(collector__handle(&c, &end, sizeof(end)), 0);
	assert_int_equal(collector__handle(&c, kernel_only, size_k), 0);
	assert_int_equal(o.stats.started, 0); /* all three held */
	p->waiting = false;
	collector__release_held(&c);
	assert_int_equal(o.stats.started, 2);
	assert_int_equal(o.stats.ended, 1);
	assert_int_equal(o.stats.replaced, 0);
	assert_int_equal(o.stats.unmatched, 0);
	/* The second wait is pending, and its end is matched. */
	end = offcpu_end(2000, 2600);
	assert_int_equal(collector__handle(&c, &end, sizeof(end)), 0);
	assert_int_equal(o.stats.ended, 2);
	assert_int_equal(o.stats.ns, 500 + 600);
	free(with_user);
	free(kernel_only);
	c.offcpu = NULL;
	offcpu__clear(&o);
	collector__clear(&c);
}

/*
 * A sample handled before the session's first interval started (sampler__open
 * enables each event for a moment when attaching its program, and the startup
 * scan reads the ring): stamped in wall-clock time all the same, never in raw
 * CLOCK_MONOTONIC time (an OTLP sample 3.6 hours "after" boot, in 1970).
 */
static void test_sample_before_offset_is_wall_clock(void **state)
{
	struct collector c;
	const struct trace *t;
	struct op_trace *rec;
	uint64_t wall_before, wall_after;
	size_t size;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	c.traces.keep_events = true;
	c.traces.max_timestamps = 16;
	rec = new_trace(1, 0, &size);
	wall_before = clock__ns(CLOCK_REALTIME);
	rec->ktime_ns = clock__ns(CLOCK_MONOTONIC);
	assert_int_equal(collector__handle(&c, rec, size), 0);
	wall_after = clock__ns(CLOCK_REALTIME);
	t = only_trace(&c);
	assert_int_equal(t->n_timestamps, 1);
	/* The offset's two clock reads are a few microseconds apart at most. */
	assert_true(t->timestamps[0] + 1000000 >= wall_before);
	assert_true(t->timestamps[0] <= wall_after + 1000000);
	free(rec);
	collector__clear(&c);
}

/*
 * Samples taken before the session's first interval (sampling_from_ns) are
 * left out, counted (the first profile's range starts there and must hold
 * every sample's time); those taken from then on count, stamped in wall time.
 */
static void test_samples_before_start_left_out(void **state)
{
	struct op_stack_copy copy = {.hdr = {.type = OP_EVENT_STACK_COPY}};
	const struct trace *t;
	struct collector c;
	struct op_trace *rec;
	uint64_t now = clock__ns(CLOCK_MONOTONIC);
	size_t size;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	c.sampling_from_ns = now;
	c.traces.keep_events = true;
	c.traces.max_timestamps = 16;
	rec = new_trace(1, 0, &size);
	rec->ktime_ns = now - 1;
	assert_int_equal(collector__handle(&c, rec, size), 0);
	assert_int_equal(c.stats.before_start, 1);
	assert_int_equal(c.stats.traces, 0);
	assert_int_equal(c.traces.samples, 0);
	/* A stack copy of then: not unwound, not held. */
	copy.hdr.pid = (uint32_t)getpid();
	copy.ktime_ns = now - 1;
	assert_int_equal(collector__handle(&c, &copy, sizeof(copy)), 0);
	assert_int_equal(c.stats.before_start, 2);
	assert_int_equal(c.held.held, 0);
	assert_int_equal(c.copies.bad_records, 0);

	rec->ktime_ns = now + 2000;
	assert_int_equal(collector__handle(&c, rec, size), 0);
	rec->ktime_ns = now;
	assert_int_equal(collector__handle(&c, rec, size), 0);
	assert_int_equal(c.stats.before_start, 2);
	assert_int_equal(c.traces.samples, 2);
	t = only_trace(&c);
	assert_int_equal(t->n_timestamps, 2);
	assert_int_equal(t->timestamps[0], now + 2000 + (uint64_t)c.monotonic_to_wall_ns);
	assert_int_equal(t->timestamps[1], now + (uint64_t)c.monotonic_to_wall_ns);
	free(rec);
	collector__clear(&c);
}

/* A copy of the only trace of a collector fed one record; free() it. */
static struct trace *only_trace_of(const struct op_trace *rec, size_t size)
{
	const struct trace *in;
	struct collector c;
	struct trace *t;
	size_t bytes;

	assert_int_equal(collector__init(&c), 0);
	assert_int_equal(collector__handle(&c, rec, size), 0);
	assert_int_equal(c.stats.traces, 1);
	in = only_trace(&c);
	bytes = sizeof(*in) + in->n_frames * sizeof(in->frames[0]);
	t = malloc(bytes);
	assert_non_null(t);
	memcpy(t, in, bytes);
	collector__clear(&c);
	return t;
}

/* A packed record (OP_TRACE_F_PACKED: a __u64 per user frame) reads as the
 * same trace as its struct op_frame form: a native frame of this process
 * (resolved through its mappings), a return address, an error frame. */
static void test_packed_trace_reads_as_unpacked(void **state)
{
	uint64_t pc = (uint64_t)(uintptr_t)&test_packed_trace_reads_as_unpacked;
	struct op_frame *user;
	struct op_trace *rec, *prec;
	struct trace *t, *pt;
	uint64_t *packed;
	size_t size, psize;

	(void)state;
	rec = new_trace(2, 3, &size);
	user = (struct op_frame *)((uint64_t *)(rec + 1) + 2);
	user[0] = (struct op_frame){.addr = pc, .kind = OP_FRAME_NATIVE};
	user[1] = (struct op_frame){
	    .addr = pc + 16, .kind = OP_FRAME_NATIVE, .flags = OP_FRAME_F_RETURN_ADDRESS};
	psize = OP_TRACE_PACKED_SIZE(2, 3);
	prec = calloc(1, psize);
	assert_non_null(prec);
	memcpy(prec, rec, OP_TRACE_PACKED_SIZE(2, 0));
	prec->flags |= OP_TRACE_F_PACKED;
	packed = (uint64_t *)(prec + 1) + 2;
	for (int i = 0; i < 3; i++)
		packed[i] = OP_PACKED_FRAME(user[i].addr, user[i].kind, user[i].flags);

	t = only_trace_of(rec, size);
	pt = only_trace_of(prec, psize);
	assert_int_equal(pt->n_frames, 5);
	assert_int_equal(pt->n_frames, t->n_frames);
	assert_int_equal(pt->frames[2].kind, OP_FRAME_NATIVE);
	assert_int_equal(pt->frames[3].flags, OP_FRAME_F_RETURN_ADDRESS);
	assert_int_equal(pt->frames[4].kind, OP_FRAME_ERROR);
	assert_int_equal(pt->frames[4].addr, OP_UNWIND_ERR_READ);
	/* The same trace: the packing is the record's, not the trace's. */
	assert_int_equal(pt->flags, t->flags);
	for (uint32_t i = 0; i < t->n_frames; i++) {
		assert_int_equal(pt->frames[i].addr, t->frames[i].addr);
		assert_int_equal(pt->frames[i].kind, t->frames[i].kind);
		assert_int_equal(pt->frames[i].flags, t->frames[i].flags);
		assert_int_equal(pt->frames[i].file_slot, t->frames[i].file_slot);
	}
	free(pt);
	free(t);
	/* A packed record is taken at its own size only. */
	{
		struct collector c;

		assert_int_equal(collector__init(&c), 0);
		assert_int_equal(collector__handle(&c, prec, OP_TRACE_SIZE(2, 3)), -EINVAL);
		assert_int_equal(collector__handle(&c, prec, psize + 8), -EINVAL);
		assert_int_equal(c.stats.bad_records, 2);
		collector__clear(&c);
	}
	free(prec);
	free(rec);
}

/* A HotSpot frame as the walker writes it (omniprof/interp/hotspot_walk.h: op_jvm_frame). */
static struct op_frame jvm_frame(uint64_t addr, uint64_t fingerprint, uint32_t type, uint32_t bci,
				 uint16_t epoch)
{
	return (struct op_frame){.addr = addr,
				 .data = (fingerprint & OP_JVM_FP_MASK) |
					 ((uint64_t)type << OP_JVM_TYPE_SHIFT),
				 .aux = (bci & OP_JVM_BCI_MASK) | (type << OP_JVM_AUX_TYPE_SHIFT),
				 .kind = OP_FRAME_HOTSPOT,
				 .reserved = epoch};
}

static void assert_frame_equal(const struct op_frame *a, const struct op_frame *b)
{
	assert_int_equal(a->addr, b->addr);
	assert_int_equal(a->data, b->data);
	assert_int_equal(a->aux, b->aux);
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->reserved, b->reserved);
}

/* Every kind of frame the wide form takes comes back field for field. */
static void test_wide_round_trip(void **state)
{
	const struct op_frame fits[] = {
	    {.addr = 0x7f0012345678ull, .kind = OP_FRAME_NATIVE},
	    {.addr = OP_PACKED_ADDR_MASK,
	     .kind = OP_FRAME_NATIVE,
	     .flags = OP_FRAME_F_RETURN_ADDRESS},
	    {.addr = 0xffffffff81000000ull & OP_PACKED_ADDR_MASK, .kind = OP_FRAME_KERNEL},
	    {.addr = OP_UNWIND_ERR_HOTSPOT, .kind = OP_FRAME_ERROR},
	    /* Method frames: the highest user address, bci 0, the largest, none. */
	    jvm_frame(0x7ffffffffff8ull, 0x7ffffffffff8ull, OP_JVM_T_INTERPRETED, 0, 0),
	    jvm_frame(0x800001008ull, 0x800002010ull, OP_JVM_T_INTERPRETED, 17, 0xffff),
	    jvm_frame(0x800001008ull, 0x800002010ull, OP_JVM_T_COMPILED, OP_JVM_BCI_NONE, 3),
	    jvm_frame(0x7f00deadbee8ull, 8, OP_JVM_T_INLINED, 0xfffe, 0x8001),
	    /* A stub: its name pointer at any byte, the blob 8-byte aligned. */
	    jvm_frame(0x7f1234567891ull, 0x7f0010000090ull, OP_JVM_T_STUB, OP_JVM_BCI_NONE, 42),
	    jvm_frame(0x7fffffffffffull, 0, OP_JVM_T_STUB, OP_JVM_BCI_NONE, 0),
	};
	struct op_frame refused[] = {
	    /* Another runtime's frame, a native frame with a payload, a kernel-half address. */
	    {.addr = 0x7f0000001000ull, .data = 99, .aux = 7, .kind = OP_FRAME_PYTHON},
	    {.addr = 0x401000, .data = 1, .kind = OP_FRAME_NATIVE},
	    {.addr = 0x401000, .reserved = 1, .kind = OP_FRAME_NATIVE},
	    {.addr = 1ull << 56, .kind = OP_FRAME_NATIVE},
	    /* HotSpot values it cannot hold: unaligned or kernel-half pointers, a bci
	     * past 16 bits, types that disagree, a stub with a bci, flags. */
	    jvm_frame(0x800001009ull, 0x800002010ull, OP_JVM_T_COMPILED, 1, 0),
	    jvm_frame(0x800001008ull, 0x800002014ull, OP_JVM_T_COMPILED, 1, 0),
	    jvm_frame(1ull << 47, 0x800002010ull, OP_JVM_T_INTERPRETED, 1, 0),
	    jvm_frame(0x800001008ull, 1ull << 47, OP_JVM_T_INTERPRETED, 1, 0),
	    jvm_frame(0x800001008ull, 0x800002010ull, OP_JVM_T_INTERPRETED, 0xffff, 0),
	    jvm_frame(0x800001008ull, 0x800002010ull, OP_JVM_T_INTERPRETED, 0x10000, 0),
	    jvm_frame(0x800001001ull, 0x800002010ull, OP_JVM_T_STUB, 5, 0),
	    jvm_frame(0x800001008ull, 0x800002010ull, OP_JVM_T_COMPILED, 1, 0),
	    jvm_frame(0x800001008ull, 0x800002010ull, OP_JVM_T_COMPILED, 1, 0),
	    jvm_frame(0x800001008ull, 0x800002010ull, 4, 1, 0),
	};
	__u64 w[2] = {0, 0};

	(void)state;
	refused[11].aux = 1 | (OP_JVM_T_INLINED << OP_JVM_AUX_TYPE_SHIFT);
	refused[12].flags = OP_FRAME_F_RETURN_ADDRESS;
	for (size_t i = 0; i < sizeof(fits) / sizeof(fits[0]); i++) {
		struct op_frame back;

		memset(&back, 0xa5, sizeof(back));
		assert_int_equal(op_frame__pack_wide(&fits[i], w), 0);
		op_frame__unpack_wide(w, &back);
		assert_frame_equal(&back, &fits[i]);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		assert_int_equal(op_frame__pack_wide(&refused[i], w), -1);
}

/* A wide record (OP_TRACE_F_PACKED_WIDE) reads as the same trace as its
 * struct op_frame form, and is taken at its own size only. */
static void test_wide_trace_reads_as_unpacked(void **state)
{
	uint64_t pc = (uint64_t)(uintptr_t)&test_wide_trace_reads_as_unpacked;
	struct op_frame *user;
	struct op_trace *rec, *wrec;
	struct trace *t, *wt;
	uint64_t *wide;
	size_t size, wsize;

	(void)state;
	rec = new_trace(2, 4, &size);
	user = (struct op_frame *)((uint64_t *)(rec + 1) + 2);
	user[0] = jvm_frame(0x800001008ull, 0x800002010ull, OP_JVM_T_COMPILED, 12, 7);
	user[1] =
	    jvm_frame(0x7f1234567891ull, 0x7f0010000090ull, OP_JVM_T_STUB, OP_JVM_BCI_NONE, 7);
	user[2] = (struct op_frame){
	    .addr = pc + 16, .kind = OP_FRAME_NATIVE, .flags = OP_FRAME_F_RETURN_ADDRESS};
	wsize = OP_TRACE_WIDE_SIZE(2, 4);
	wrec = calloc(1, wsize);
	assert_non_null(wrec);
	memcpy(wrec, rec, OP_TRACE_WIDE_SIZE(2, 0));
	wrec->flags |= OP_TRACE_F_PACKED_WIDE;
	wide = (uint64_t *)(wrec + 1) + 2;
	for (int i = 0; i < 4; i++) {
		__u64 w[2] = {0, 0};

		assert_int_equal(op_frame__pack_wide(&user[i], w), 0);
		wide[2 * i] = w[0];
		wide[2 * i + 1] = w[1];
	}

	t = only_trace_of(rec, size);
	wt = only_trace_of(wrec, wsize);
	assert_int_equal(wt->n_frames, 6);
	assert_int_equal(wt->n_frames, t->n_frames);
	assert_int_equal(wt->frames[2].kind, OP_FRAME_HOTSPOT);
	assert_int_equal(wt->frames[3].kind, OP_FRAME_HOTSPOT);
	assert_int_equal(wt->frames[4].flags, OP_FRAME_F_RETURN_ADDRESS);
	assert_int_equal(wt->frames[5].kind, OP_FRAME_ERROR);
	assert_int_equal(wt->flags, t->flags);
	for (uint32_t i = 0; i < t->n_frames; i++) {
		assert_int_equal(wt->frames[i].addr, t->frames[i].addr);
		assert_int_equal(wt->frames[i].kind, t->frames[i].kind);
		assert_int_equal(wt->frames[i].flags, t->frames[i].flags);
		assert_int_equal(wt->frames[i].file_slot, t->frames[i].file_slot);
	}
	free(wt);
	free(t);
	{
		struct collector c;

		assert_int_equal(collector__init(&c), 0);
		assert_int_equal(collector__handle(&c, wrec, OP_TRACE_SIZE(2, 4)), -EINVAL);
		assert_int_equal(collector__handle(&c, wrec, OP_TRACE_PACKED_SIZE(2, 4)), -EINVAL);
		/* Both packed forms at once is no form. */
		wrec->flags |= OP_TRACE_F_PACKED;
		assert_int_equal(collector__handle(&c, wrec, wsize), -EINVAL);
		assert_int_equal(c.stats.bad_records, 3);
		collector__clear(&c);
	}
	free(wrec);
	free(rec);
}

#define COPY_SP 0x7ffd00001000ull

/*
 * A stack copy of this process, its frame-pointer chain giving frames pc,
 * ra1, ra2 (outermost); free() it.
 */
static struct op_stack_copy *new_fp_copy(uint64_t pc, uint64_t ra1, uint64_t ra2, size_t *size)
{
	struct op_stack_copy *e = calloc(1, OP_STACK_COPY_MAX_SIZE);
	uint8_t *stack;
	const uint64_t words[][2] = {{0x40, COPY_SP + 0x80}, {0x48, ra1}, {0x80, 0}, {0x88, ra2}};

	assert_non_null(e);
	e->hdr.type = OP_EVENT_STACK_COPY;
	e->hdr.pid = (uint32_t)getpid();
	e->tid = e->hdr.pid;
	strcpy(e->comm, "test");
	e->n_kernel = 1;
	((uint64_t *)(e + 1))[0] = 0xffffffff81000010ull;
	e->pc = pc;
	e->sp = COPY_SP;
	e->fp = COPY_SP + 0x40;
	e->stack_len = 0x100;
	stack = (uint8_t *)((uint64_t *)(e + 1) + e->n_kernel);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		memcpy(stack + words[i][0], &words[i][1], 8);
	*size = OP_STACK_COPY_SIZE(e->n_kernel, e->stack_len);
	return e;
}

static int no_open(void *ctx)
{
	(void)ctx;
	return -ENOENT;
}

/*
 * Issue 17: a process waits while any file it maps is opened or has its
 * table built (libLLVM's, seconds), but a held copy whose own stack is in
 * files that are ready is released then, walked and named; a copy with a
 * frame in the file still to come stays held, through the file's open and
 * its table's build, and is released once that table is in (here: failed).
 */
static void test_copy_released_when_its_files_are_in(void **state)
{
	uint64_t in_exe[3] = {(uintptr_t)&new_trace, (uintptr_t)&only_trace,
			      (uintptr_t)&new_fp_copy};
	uint64_t in_libc = (uintptr_t)&getpid;
	struct table_source src = {.open = no_open};
	const struct process_mapping *m_exe, *m_libc;
	struct op_stack_copy *a, *b;
	struct table_build_job *job;
	struct cached_file *libc, *exe;
	struct unwind_maps um;
	struct collector c;
	const struct trace *t;
	struct process *p;
	size_t size_a, size_b;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	p = process_table__get(&c.procs, (uint32_t)getpid());
	assert_non_null(p);
	m_exe = process_table__find_mapping(p, in_exe[0]);
	m_libc = process_table__find_mapping(p, in_libc);
	assert_non_null(m_exe);
	assert_non_null(m_libc);
	assert_int_not_equal(m_exe->file_slot, m_libc->file_slot);
	assert_true(m_libc->has_bias);
	libc = file_cache__at(&c.files, m_libc->file_slot);
	assert_non_null(libc);
	assert_non_null(libc->elf);
	/* libc is being opened (its table is built next); the executable is ready. */
	unwind_maps__init(&um, -1, -1, -1, -1, 1 << 16);
	c.procs.unwind = &um;
	if (!libc->table_id)
		libc->table_id = 0x1234;
	/* The executable's table came back (failed here: no BPF maps; ready all the same). */
	exe = file_cache__at(&c.files, m_exe->file_slot);
	assert_non_null(exe);
	if (!exe->table_id)
		exe->table_id = 0x5678;
	job = unwind_maps__build_job(&um, exe->table_id, &src);
	assert_non_null(job);
	job->job.err = -EIO;
	unwind_maps__finish_build(&um, job, false);
	job->job.free(&job->job);
	src = (struct table_source){.open = no_open};
	libc->pending = true;
	p->waiting = true;

	a = new_fp_copy(in_exe[0], in_exe[1], in_exe[2], &size_a);
	b = new_fp_copy(in_exe[0], in_libc, in_exe[2], &size_b);
	assert_int_equal(collector__handle(&c, a, size_a), 0);
	assert_int_equal(collector__handle(&c, b, size_b), 0);
	assert_int_equal(c.held.held, 2);
	assert_int_equal(c.stats.traces, 0);

	/* a's stack is in the executable only: out, whole, named; b stays. */
	collector__release_loaded(&c);
	assert_int_equal(c.held.early, 1);
	assert_int_equal(c.held.blocked, 1);
	assert_int_equal(c.stats.traces, 1);
	assert_int_equal(p->held_bytes, size_b);
	assert_int_equal(c.copies.received, 1); /* b's blocked walk not counted */
	assert_int_equal(c.copies.complete, 1);
	t = only_trace(&c);
	assert_int_equal(t->n_frames, 1 + 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(t->frames[1 + i].kind, OP_FRAME_NATIVE);
		assert_int_equal(t->frames[1 + i].file_slot, m_exe->file_slot);
	}
	assert_int_equal(t->flags & OP_TRACE_F_USER_TRUNCATED, 0);

	/* Nothing changed for libc: b is not walked again. */
	collector__release_loaded(&c);
	assert_int_equal(c.held.blocked, 1);

	/* libc opened, its table building: b is walked once more (libc's CFI may
	 * give its rules before the table: unwind_maps__fde_rule), but its pc
	 * there (getpid's first byte, a return address: the walk looks up the
	 * byte before it) is no FDE's alone, so it stays held, not taking frame
	 * pointers where the table comes, and is not walked again. */
	libc->pending = false;
	job = unwind_maps__build_job(&um, libc->table_id, &src);
	assert_non_null(job);
	collector__release_loaded(&c);
	assert_int_equal(c.held.early, 1);
	assert_int_equal(c.held.blocked, 2);
	assert_int_equal(c.stats.traces, 1);
	assert_int_equal(p->held_bytes, size_b);
	collector__release_loaded(&c);
	assert_int_equal(c.held.blocked, 2);
	/* A new copy into libc, walked now: its table is not in, it stays. */
	assert_int_equal(collector__handle(&c, b, size_b), 0);
	collector__release_loaded(&c);
	assert_int_equal(c.held.early, 1);
	assert_int_equal(c.held.blocked, 3);
	assert_int_equal(p->held_bytes, 2 * size_b);

	/* The build ended (failed: frame pointers for good, as once published). */
	job->job.err = -EIO;
	unwind_maps__finish_build(&um, job, false);
	job->job.free(&job->job);
	collector__release_loaded(&c);
	assert_int_equal(c.held.early, 3);
	assert_int_equal(c.held.blocked, 3);
	assert_int_equal(c.stats.traces, 3);
	assert_int_equal(p->held_bytes, 0);
	assert_null(c.held_first);

	p->waiting = false;
	c.procs.unwind = NULL;
	unwind_maps__clear(&um);
	free(a);
	free(b);
	collector__clear(&c);
}

/* Samples of origin o (mark_origin's frame at the leaf) in the table. */
static uint64_t samples_of_origin(struct collector *c, enum trace_origin o)
{
	uint64_t n = 0;
	size_t i = 0;
	void *e = NULL;

	while (hashmap__next(&c->traces.traces, &i, &e)) {
		const struct trace *t = e;

		assert_true(t->n_frames >= 1);
		assert_int_equal(t->frames[0].kind, OP_FRAME_ERROR);
		if (t->frames[0].addr == TRACE_ORIGIN_BASE + o)
			n += t->count;
	}
	return n;
}

/*
 * mark_origin (the tests' COLLECTOR_MARK_ORIGIN_ENV): every CPU trace gets a
 * frame at its leaf naming where its user stack came from: a BPF walk
 * handled at once, held while its process waited and handled once it was
 * published, or handled at the end with the process never published; the
 * frames after it are the record's, as without it.
 */
static void test_origin_marked(void **state)
{
	struct collector c;
	const struct trace *t;
	struct op_trace *rec;
	struct process *p;
	size_t size;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	c.mark_origin = true;
	rec = new_trace(3, 2, &size);
	assert_int_equal(collector__handle(&c, rec, size), 0);
	t = only_trace(&c);
	assert_int_equal(t->n_frames, 1 + 5);
	assert_int_equal(t->frames[0].addr, TRACE_ORIGIN_BASE + TRACE_ORIGIN_WALK);
	assert_string_equal(symbolizer__error(t->frames[0].addr), "[sampled: BPF walk]");
	assert_int_equal(t->frames[1].kind, OP_FRAME_KERNEL);
	assert_int_equal(t->frames[5].addr, OP_UNWIND_ERR_READ);
	/* (the last user frame is still the one a truncated walk ends with) */
	assert_int_equal(t->frames[t->n_frames - 1].kind, OP_FRAME_ERROR);

	/* Held while the process waits: published, then handled. */
	p = process_table__get(&c.procs, (uint32_t)getpid());
	assert_non_null(p);
	p->waiting = true;
	assert_int_equal(collector__handle(&c, rec, size), 0);
	assert_int_equal(c.held.held, 1);
	p->waiting = false;
	collector__release_held(&c);
	assert_int_equal(samples_of_origin(&c, TRACE_ORIGIN_WALK_HELD), 1);

	/* Held, and the recording ends before the process is published. */
	p->waiting = true;
	assert_int_equal(collector__handle(&c, rec, size), 0);
	assert_int_equal(collector__handle(&c, rec, size), 0);
	collector__release_held(&c);
	assert_int_equal(samples_of_origin(&c, TRACE_ORIGIN_WALK_UNREADY), 2);
	assert_int_equal(samples_of_origin(&c, TRACE_ORIGIN_WALK), 1);
	assert_string_equal(symbolizer__error(TRACE_ORIGIN_BASE + TRACE_ORIGIN_COPY_EARLY),
			    "[sampled: stack copy, held, walked early]");
	p->waiting = false;
	free(rec);
	collector__clear(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trace_layout),
	    cmocka_unit_test(test_origin_marked),
	    cmocka_unit_test(test_trace_size_must_match),
	    cmocka_unit_test(test_packed_trace_reads_as_unpacked),
	    cmocka_unit_test(test_unknown_address_rereads_at_once),
	    cmocka_unit_test(test_exiting_process_keeps_its_maps),
	    cmocka_unit_test(test_jit_stop_rereads_slowly),
	    cmocka_unit_test(test_offcpu_order_while_held),
	    cmocka_unit_test(test_copy_released_when_its_files_are_in),
	    cmocka_unit_test(test_sample_before_offset_is_wall_clock),
	    cmocka_unit_test(test_samples_before_start_left_out),
	    cmocka_unit_test(test_wide_round_trip),
	    cmocka_unit_test(test_wide_trace_reads_as_unpacked),
	    cmocka_unit_test(test_code_mapped_over_known_range),
	};

	return cmocka_run_group_tests_name("collector", tests, NULL, NULL);
}
