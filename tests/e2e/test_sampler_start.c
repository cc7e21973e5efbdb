// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end: the perf events are attached to the BPF program without being
 * started (libbpf's bpf_program__attach_perf_event would start them, and a
 * sample of that moment came before the session's clock offset). While this
 * test keeps a CPU busy, the attached events must count no time and deliver
 * no sample until sampler__set_enabled(s, true); after it, both. Real BPF,
 * whole system; needs root: without it the test fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "omniprof/abi.h"
#include "sampler/sampler.h"

#define FREQUENCY 997
#define BUSY_MS	  300

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int count_samples(void *ctx, const void *data, size_t size)
{
	const struct op_event_header *h = data;

	if (size >= sizeof(*h) && h->type == OP_EVENT_TRACE)
		(*(uint64_t *)ctx)++;
	return 0;
}

/* Spins for ms of CPU on this thread (a sample is due every ~1 ms while it runs). */
static void spin(unsigned int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
	volatile uint64_t x = 0;

	while (now_ns() < end)
		x++;
}

static void test_events_start_stopped(void **state)
{
	struct sampler_opts o = {.frequency_hz = FREQUENCY, .kernel_stacks = true};
	struct sampler *s = NULL;
	uint64_t samples = 0;

	(void)state;
	assert_int_equal(sampler__open(&o, count_samples, &samples, &s), 0);
	assert_true(sampler__n_cpus(s) > 0);
	spin(BUSY_MS);
	assert_true(sampler__drain(s) >= 0);
	print_message("attached, not started: %llu ns enabled, %llu samples\n",
		      (unsigned long long)sampler__time_enabled_ns(s), (unsigned long long)samples);
	assert_int_equal(sampler__time_enabled_ns(s), 0);
	assert_int_equal(samples, 0);

	sampler__set_enabled(s, true);
	spin(BUSY_MS);
	sampler__set_enabled(s, false);
	assert_true(sampler__drain(s) >= 0);
	print_message("started: %llu ns enabled, %llu samples\n",
		      (unsigned long long)sampler__time_enabled_ns(s), (unsigned long long)samples);
	/* Each event counted from the enable on, this thread's CPU at least the spin. */
	assert_true(sampler__time_enabled_ns(s) >= (uint64_t)BUSY_MS * 1000000ull);
	assert_true(samples > 0);
	sampler__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_events_start_stopped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
