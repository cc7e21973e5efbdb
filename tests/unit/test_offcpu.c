// SPDX-License-Identifier: Apache-2.0
/*
 * Off-CPU in user space (src/profile/offcpu.c): the 1/P scaling (exact for
 * the thresholds the BPF side compares, unbiased over many sampled waits,
 * saturated), the pending-switch bookkeeping (a trace waits for its end
 * record, a mismatched end joins nothing, a newer start replaces an older
 * one, the bounds, exited processes, the end of a recording), and the
 * collector's routing: off-CPU records never reach the CPU profile's table;
 * and the exports of an off-CPU profile (pprof and OTLP: off_cpu/nanoseconds,
 * folded: microseconds).
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

#include "cli/cli.h"
#include "cli/options.h"
#include "engine/collector.h"
#include "export/exporters.h"
#include "export/otlp.h"
#include "otlp_profiles_service.pb-c.h"
#include "pprof_read.h"
#include "profile/offcpu.h"
#include "profile/profile.h"

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

/* An off-CPU profile of one stack (a kernel frame under a native one), 2.5004 ms. */
static struct profile *offcpu_profile(void)
{
	struct profile *p = profile__new(20);
	uint32_t f_user, f_k, l_user, l_k, stack[2];

	assert_non_null(p);
	p->off_cpu = true;
	p->duration_ns = 1000000000ull;
	f_user = profile__add_function(p, "wait_here", "wait_here", "w.c");
	f_k = profile__add_function(p, "schedule", "schedule", "");
	l_user = profile__add_location(p, 0, 0x1234, PROFILE_FRAME_NATIVE,
				       &(struct profile_line){f_user, 0}, 1);
	l_k = profile__add_location(p, 0, 0xffffffff81000000ull, PROFILE_FRAME_KERNEL,
				    &(struct profile_line){f_k, 0}, 1);
	stack[0] = l_k;
	stack[1] = l_user;
	assert_int_equal(profile__add_sample(p, stack, 2, 100, 101, "app", "waiter", 2500400), 0);
	return p;
}

static void test_exports(void **state)
{
	struct profile *p = offcpu_profile();
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest *req;
	const Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary *d;
	const Opentelemetry__Proto__Profiles__V1development__Profile *prof;
	Perftools__Profiles__Profile *pp;
	char path[] = "/tmp/omniprof-offcpu-XXXXXX", *text = NULL;
	size_t len = 0;
	uint8_t *buf = NULL;
	FILE *f;
	int fd;

	(void)state;
	/* OTLP: its own profile type, values in nanoseconds. */
	assert_int_equal(otlp__encode(p, NULL, NULL, &buf, &len), 0);
	req =
	    opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	assert_non_null(req);
	d = req->dictionary;
	assert_int_equal(req->n_resource_profiles, 1);
	prof = req->resource_profiles[0]->scope_profiles[0]->profiles[0];
	assert_string_equal(d->string_table[prof->sample_type->type_strindex], "off_cpu");
	assert_string_equal(d->string_table[prof->sample_type->unit_strindex], "nanoseconds");
	assert_string_equal(d->string_table[prof->period_type->type_strindex], "off_cpu");
	assert_int_equal(prof->period, 1);
	assert_int_equal(prof->n_samples, 1);
	assert_int_equal(prof->samples[0]->n_values, 1);
	assert_int_equal(prof->samples[0]->values[0], 2500400);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
	    req, NULL);
	free(buf);

	/* pprof: one sample type, off_cpu/nanoseconds. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(pprof__write_fd(p, fd), 0);
	close(fd);
	pp = tu_read_pprof(path);
	unlink(path);
	assert_non_null(pp);
	assert_int_equal(pp->n_sample_type, 1);
	assert_string_equal(pp->string_table[pp->sample_type[0]->type], "off_cpu");
	assert_string_equal(pp->string_table[pp->sample_type[0]->unit], "nanoseconds");
	assert_int_equal(pp->n_sample, 1);
	assert_int_equal(pp->sample[0]->n_value, 1);
	assert_int_equal(pp->sample[0]->value[0], 2500400);
	perftools__profiles__profile__free_unpacked(pp, NULL);

	/* Folded: microseconds, rounded. */
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(folded__write(p, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "wait_here;schedule_[k] 2500\n"));
	free(text);

	/* The flame graph says what its counts are. */
	text = NULL;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(flamegraph__write(p, f, "off"), 0);
	fclose(f);
	assert_non_null(strstr(text, "\"unit\":\"ns off CPU\""));
	free(text);

	/* The summary's table names the stack and its time. */
	text = NULL;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	summary__print_offcpu(p, f, 10);
	fclose(f);
	assert_non_null(strstr(text, "Top off-CPU stacks"));
	assert_non_null(strstr(text, "2.500"));
	assert_non_null(strstr(text, "wait_here"));
	free(text);
	profile__free(p);
}

static void test_cli_parse(void **state)
{
	uint64_t t = 0;

	(void)state;
	assert_int_equal(cli__parse_offcpu(NULL, 0.01, &t), 0);
	assert_int_equal(t, offcpu__threshold(0.01));
	assert_int_equal(cli__parse_offcpu("0.1", 1, &t), 0);
	assert_int_equal(t, offcpu__threshold(0.1));
	assert_int_equal(cli__parse_offcpu("1", 0.01, &t), 0);
	assert_int_equal(t, OFFCPU_THRESHOLD_ONE);
	assert_int_equal(cli__parse_offcpu("1e-6", 1, &t), 0);
	for (const char *const *bad =
		 (const char *const[]){"0", "-0.5", "1.5", "abc", "", "0.5x", "1e-7", "nan", NULL};
	     *bad; bad++)
		assert_int_equal(cli__parse_offcpu(*bad, 1, &t), -EINVAL);
}

struct own_seen {
	int calls;
	const char *arg;
};

static int own_cb(void *ctx, int key, const char *arg)
{
	struct own_seen *s = ctx;

	(void)key;
	s->calls++;
	s->arg = arg;
	return 0;
}

/* An optional argument: --name alone gives NULL, --name=ARG gives ARG. */
static void test_optional_option(void **state)
{
	static const struct cli_option opts[] = {
	    {.key = CLI_KEY_OWN, .name = "off-cpu", .arg = "P", .optional = true, .help = "x"},
	    {.key = CLI_KEY_FREQUENCY},
	};
	static const struct cli_command cmd = {
	    .name = "record", .synopsis = "", .options = opts, .n_options = 2, .own = own_cb};
	struct cli_common *c = calloc(1, sizeof(*c));
	struct own_seen seen = {0};
	char *argv1[] = {"record", "--off-cpu", "-F", "49", NULL};
	char *argv2[] = {"record", "--off-cpu=0.25", NULL};
	int first = 0;

	(void)state;
	assert_non_null(c);
	cli_common__init(c, false);
	assert_int_equal(cli__parse(&cmd, 4, argv1, c, &seen, &first), 0);
	assert_int_equal(seen.calls, 1);
	assert_null(seen.arg);
	assert_int_equal(c->frequency_hz, 49);
	assert_int_equal(cli__parse(&cmd, 2, argv2, c, &seen, &first), 0);
	assert_int_equal(seen.calls, 2);
	assert_string_equal(seen.arg, "0.25");
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_threshold_and_scale), cmocka_unit_test(test_scaling_unbiased),
	    cmocka_unit_test(test_pending_bookkeeping), cmocka_unit_test(test_purge_exited),
	    cmocka_unit_test(test_collector_routing),	cmocka_unit_test(test_exports),
	    cmocka_unit_test(test_cli_parse),		cmocka_unit_test(test_optional_option),
	};

	return cmocka_run_group_tests_name("offcpu", tests, NULL, NULL);
}
