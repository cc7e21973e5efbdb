// SPDX-License-Identifier: GPL-2.0 OR Apache-2.0
/*
 * The frame-pointer floor (bench only, never in the shipped binary): a
 * perf_event program that does of a sample only what every frame-pointer
 * profiler must do, the kernel's own frame-pointer walk of the user stack
 * (bpf_get_stack with BPF_F_USER_STACK) into a per-CPU buffer, for the
 * processes in pid_filter. bench/run.py's bpf-cost runs it beside omniprof's
 * sampler on a frame-pointer build of the same workload, so the sampler's BPF
 * time per sample is read against what the walk alone costs on this host.
 *
 * walk_only: the walk and nothing else (no ring, no map update but the
 * counters). walk_send: the walk, then the stack with a small header through
 * a ring buffer, as a real profiler sends it. The loader loads one of the two.
 *
 * The counters are at the sampler's indices (samples, idle, filtered first:
 * enum op_stat in omniprof/abi.h) in a per-CPU array also called "stats", so
 * the bench reads both programs' BPF time per walked sample the same way.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "fp_floor.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FP_FLOOR_MAX_PIDS);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} pid_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_floor_record);
} buf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FP_FLOOR_STAT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

static __always_inline void stat_add(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		*v += n;
}

/*
 * The walk, with the same entry as the sampler's (the tgid, idle and filter
 * checks, counted alike): the record filled, its frames' bytes or NULL.
 */
static __always_inline struct fp_floor_record *walk(struct bpf_perf_event_data *ctx, long *bytes)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0;
	struct fp_floor_record *r;
	long n;

	stat_add(FP_FLOOR_STAT_SAMPLES, 1);
	if (tgid == 0) {
		stat_add(FP_FLOOR_STAT_IDLE, 1);
		return NULL;
	}
	if (!bpf_map_lookup_elem(&pid_filter, &tgid)) {
		stat_add(FP_FLOOR_STAT_FILTERED, 1);
		return NULL;
	}
	r = bpf_map_lookup_elem(&buf, &zero);
	if (!r)
		return NULL;
	n = bpf_get_stack(ctx, r->ips, sizeof(r->ips), BPF_F_USER_STACK);
	if (n < 0) {
		stat_add(FP_FLOOR_STAT_ERRORS, 1);
		return NULL;
	}
	stat_add(FP_FLOOR_STAT_BYTES, n);
	r->pid = tgid;
	r->tid = (__u32)id;
	*bytes = n;
	return r;
}

SEC("perf_event")
int walk_only(struct bpf_perf_event_data *ctx)
{
	long n;

	walk(ctx, &n);
	return 0;
}

SEC("perf_event")
int walk_send(struct bpf_perf_event_data *ctx)
{
	struct fp_floor_record *r;
	long n = 0;
	__u64 size;

	r = walk(ctx, &n);
	if (!r)
		return 0;
	r->ktime_ns = bpf_ktime_get_ns();
	r->n_ips = n / 8;
	size = offsetof(struct fp_floor_record, ips) + (__u64)n;
	if (size > sizeof(*r))
		size = sizeof(*r);
	/* No wake-up: the loader drains the ring on its own clock, as the sampler batches. */
	if (bpf_ringbuf_output(&events, r, size, BPF_RB_NO_WAKEUP))
		stat_add(FP_FLOOR_STAT_RING_FULL, 1);
	return 0;
}
