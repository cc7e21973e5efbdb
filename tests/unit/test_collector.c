// SPDX-License-Identifier: Apache-2.0
/*
 * The collector's reading of ring-buffer records: trace records in their
 * compact layout (header, kernel frames, then user frames) taken exactly at
 * the size their counts give, anything else counted as malformed; and the
 * unknown-address report, which re-reads a process's maps at once for an
 * address outside them and leaves them alone for one they already hold.
 * The process is this test itself (its own /proc/self/maps).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/collector.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trace_layout),
	    cmocka_unit_test(test_trace_size_must_match),
	    cmocka_unit_test(test_packed_trace_reads_as_unpacked),
	    cmocka_unit_test(test_unknown_address_rereads_at_once),
	};

	return cmocka_run_group_tests_name("collector", tests, NULL, NULL);
}
