// SPDX-License-Identifier: Apache-2.0
/*
 * Off-CPU in user space (src/profile/offcpu.c): the 1/P scaling (exact for
 * the thresholds the BPF side compares, unbiased over many sampled waits,
 * saturated), the pending-switch bookkeeping (a trace waits for its end
 * record, a mismatched end joins nothing, a newer start replaces an older
 * one, the bounds, exited processes, the end of a recording), and the
 * collector's routing: off-CPU records never reach the CPU profile's table.
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
#include "profile/offcpu.h"

static void test_threshold_and_scale(void **state)
{
	uint64_t tenth = offcpu__threshold(0.1);

	(void)state;
	assert_int_equal(offcpu__threshold(1), OFFCPU_THRESHOLD_ONE);
	assert_int_equal(offcpu__threshold(2), OFFCPU_THRESHOLD_ONE);
	assert_int_equal(offcpu__threshold(0.5), OFFCPU_THRESHOLD_ONE / 2);
	assert_true(offcpu__threshold(1e-12) >= 1); /* never 0: 0 is "off" */
	assert_int_equal(offcpu__threshold(0), 1);
	assert_int_equal(tenth, 429496730); /* 0.1 * 2^32, rounded */

	assert_int_equal(offcpu__scale(12345, OFFCPU_THRESHOLD_ONE), 12345);
	assert_int_equal(offcpu__scale(1000, OFFCPU_THRESHOLD_ONE / 2), 2000);
	assert_int_equal(offcpu__scale(1000, OFFCPU_THRESHOLD_ONE / 4), 4000);
	/* 2^32 / 429496730 is 9.99999999: 1 ms scales to 10 ms less a rounding step. */
	assert_true(offcpu__scale(1000000, tenth) >= 9999999 &&
		    offcpu__scale(1000000, tenth) <= 10000000);
	assert_int_equal(offcpu__scale(UINT64_MAX / 2, 1), UINT64_MAX);
	assert_int_equal(offcpu__scale(0, tenth), 0);
}

/* xorshift32: the BPF side's bpf_get_prandom_u32(), reproducibly. */
static uint32_t next_u32(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Waits of varied lengths, each kept when a random u32 is below the threshold
 * (the kernel's test): the scaled sum estimates the true total. */
static void test_scaling_unbiased(void **state)
{
	static const double ps[] = {0.5, 0.1, 0.01};
	uint32_t seed = 0x12345678u;

	(void)state;
	for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		uint64_t threshold = offcpu__threshold(ps[k]), total = 0, estimate = 0;

		for (int i = 0; i < 400000; i++) {
			uint64_t ns = 1000 + next_u32(&seed) % 2000000;

			total += ns;
			if ((uint64_t)next_u32(&seed) < threshold)
				estimate += offcpu__scale(ns, threshold);
		}
		print_message("    P = %g: estimate / total = %.4f\n", ps[k],
			      (double)estimate / (double)total);
		assert_true(estimate > total * 0.95 && estimate < total * 1.05);
	}
}

/* A trace of thread tid of process pid with one kernel frame at addr. */
static struct trace *make_trace(uint32_t pid, uint32_t tid, uint64_t addr)
{
	struct trace *t = calloc(1, sizeof(*t) + sizeof(t->frames[0]));

	assert_non_null(t);
	t->pid = pid;
	t->tid = tid;
	t->flags = OP_TRACE_F_OFF_CPU;
	t->n_frames = 1;
	t->frames[0] = (struct trace_frame){.addr = addr, .kind = OP_FRAME_KERNEL};
	return t;
}

static uint64_t table_weight(const struct trace_table *tt, uint64_t addr)
{
	uint64_t sum = 0;
	void *e;

	for (size_t i = 0; hashmap__next(&tt->traces, &i, &e);) {
		const struct trace *t = e;

		if (t->frames[0].addr == addr)
			sum += t->count;
	}
	return sum;
}

static void test_pending_bookkeeping(void **state)
{
	struct offcpu o;
	struct trace *a = make_trace(10, 11, 0xa), *b = make_trace(10, 12, 0xb);
	struct trace *c = make_trace(20, 21, 0xc);

	(void)state;
	offcpu__init(&o, OFFCPU_THRESHOLD_ONE / 4); /* P = 0.25 */
	assert_int_equal(offcpu__start(&o, a, 1000), 0);
	assert_int_equal(o.pending.len, 1);
	assert_true(o.bytes > 0);
	/* An end for another switch-out of the thread (its trace was lost) joins nothing. */
	assert_int_equal(offcpu__end(&o, 11, 999, 5000), -ENOENT);
	assert_int_equal(o.stats.unmatched, 1);
	assert_int_equal(o.pending.len, 1);
	/* The right one: 4000 ns, scaled by 4. */
	assert_int_equal(offcpu__end(&o, 11, 1000, 5000), 0);
	assert_int_equal(o.pending.len, 0);
	assert_int_equal(o.bytes, 0);
	assert_int_equal(table_weight(&o.traces, 0xa), 16000);
	assert_int_equal(o.stats.ns, 4000);
	/* Ended twice: the second end is not counted again. */
	assert_int_equal(offcpu__end(&o, 11, 1000, 5000), -ENOENT);
	assert_int_equal(table_weight(&o.traces, 0xa), 16000);
	/* The flag is not part of the stored trace (every off-CPU trace has it). */
	{
		size_t i = 0;
		void *e;

		assert_true(hashmap__next(&o.traces.traces, &i, &e));
		assert_int_equal(((struct trace *)e)->flags & OP_TRACE_F_OFF_CPU, 0);
	}

	/* A newer switch-out of the same thread replaces an older one whose end was lost. */
	assert_int_equal(offcpu__start(&o, b, 100), 0);
	assert_int_equal(offcpu__start(&o, b, 200), 0);
	assert_int_equal(o.stats.replaced, 1);
	assert_int_equal(offcpu__end(&o, 12, 100, 300), -ENOENT);
	assert_int_equal(offcpu__end(&o, 12, 200, 300), 0);
	assert_int_equal(table_weight(&o.traces, 0xb), 400);

	/* Bounds: past max_pending, not kept (counted). */
	o.max_pending = 1;
	assert_int_equal(offcpu__start(&o, a, 10), 0);
	assert_int_equal(offcpu__start(&o, c, 10), 0);
	assert_int_equal(o.stats.pending_full, 1);
	assert_int_equal(o.pending.len, 1);
	o.max_pending = 0;
	o.max_bytes = 1; /* smaller than any trace */
	assert_int_equal(offcpu__start(&o, c, 10), 0);
	assert_int_equal(o.stats.pending_full, 2);
	o.max_bytes = 0;

	/* The end of a recording: what is still pending is counted open, and freed. */
	assert_int_equal(offcpu__start(&o, c, 10), 0);
	assert_int_equal(o.pending.len, 2);
	offcpu__finish(&o);
	assert_int_equal(o.stats.open_at_end, 2);
	assert_int_equal(o.pending.len, 0);
	assert_int_equal(o.bytes, 0);
	offcpu__clear(&o);
	free(a);
	free(b);
	free(c);
}

static bool pid_is_20(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid == 20;
}

static void test_purge_exited(void **state)
{
	struct offcpu o;
	struct trace *a = make_trace(10, 11, 0xa), *b = make_trace(20, 21, 0xb);
	struct trace *c = make_trace(20, 22, 0xc);

	(void)state;
	offcpu__init(&o, OFFCPU_THRESHOLD_ONE);
	assert_int_equal(offcpu__start(&o, a, 1), 0);
	assert_int_equal(offcpu__start(&o, b, 1), 0);
	assert_int_equal(offcpu__start(&o, c, 1), 0);
	assert_int_equal(offcpu__purge(&o, pid_is_20, NULL), 2);
	assert_int_equal(o.stats.exited, 2);
	assert_int_equal(o.pending.len, 1);
	assert_int_equal(offcpu__end(&o, 11, 1, 11), 0);
	assert_int_equal(offcpu__end(&o, 21, 1, 11), -ENOENT);
	assert_int_equal(table_weight(&o.traces, 0xa), 10);
	assert_int_equal(o.bytes, 0);
	offcpu__clear(&o);
	free(a);
	free(b);
	free(c);
}

/* Records through the collector: the trace and its end reach the off-CPU
 * table, never the CPU one. */
static void test_collector_routing(void **state)
{
	struct collector c;
	struct offcpu o;
	uint8_t buf[OP_TRACE_SIZE(2, 0)];
	struct op_trace *t = (struct op_trace *)buf;
	uint64_t *kernel = (uint64_t *)(t + 1);
	struct op_offcpu_end end = {0};

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	offcpu__init(&o, OFFCPU_THRESHOLD_ONE);
	c.offcpu = &o;
	memset(buf, 0, sizeof(buf));
	t->hdr.type = OP_EVENT_TRACE;
	t->hdr.pid = 4242;
	t->tid = 4243;
	t->ktime_ns = 5000;
	t->flags = OP_TRACE_F_OFF_CPU;
	t->n_kernel = 2;
	kernel[0] = 0xffffffff81000010ull;
	kernel[1] = 0xffffffff81000020ull;
	assert_int_equal(collector__handle(&c, buf, sizeof(buf)), 0);
	assert_int_equal(c.traces.traces.len, 0);
	assert_int_equal(c.stats.traces, 0);
	assert_int_equal(o.pending.len, 1);

	end.hdr.type = OP_EVENT_OFFCPU_END;
	end.hdr.pid = 4242;
	end.tid = 4243;
	end.start_ns = 5000;
	end.end_ns = 12000;
	/* A short record is malformed, not an end. */
	assert_int_equal(collector__handle(&c, &end, sizeof(end) - 1), -EINVAL);
	assert_int_equal(o.pending.len, 1);
	assert_int_equal(collector__handle(&c, &end, sizeof(end)), 0);
	assert_int_equal(o.pending.len, 0);
	assert_int_equal(o.traces.samples, 7000);
	assert_int_equal(c.traces.traces.len, 0);

	/* With off-CPU off, such records are dropped quietly. */
	c.offcpu = NULL;
	t->ktime_ns = 20000;
	assert_int_equal(collector__handle(&c, buf, sizeof(buf)), 0);
	assert_int_equal(collector__handle(&c, &end, sizeof(end)), 0);
	assert_int_equal(c.traces.traces.len, 0);
	offcpu__clear(&o);
	collector__clear(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_threshold_and_scale), cmocka_unit_test(test_scaling_unbiased),
	    cmocka_unit_test(test_pending_bookkeeping), cmocka_unit_test(test_purge_exited),
	    cmocka_unit_test(test_collector_routing),
	};

	return cmocka_run_group_tests_name("offcpu", tests, NULL, NULL);
}
