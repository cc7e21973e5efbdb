// SPDX-License-Identifier: Apache-2.0
/*
 * Loads bench/fp_floor.bpf.c on a cpu-clock event at HZ on every CPU for the
 * given processes and keeps it running for SECONDS (or until SIGINT/SIGTERM):
 * the frame-pointer floor bench/run.py's bpf-cost reads beside the sampler.
 * Prints "ready" once attached; at the end, the counters on stderr. The BPF
 * time per sample is the kernel's (kernel.bpf_stats_enabled), read by the
 * bench from this process's program and its "stats" map.
 *
 * Usage: fp_floor [--send] [-F HZ] [-d SECONDS] -p PID[,PID...]
 */
#include <errno.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fp_floor.h"
#include "fp_floor.skel.h"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static int print_warnings(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, args);
}

/* walk_send's records: counted, nothing else (the drain is the cost a profiler pays). */
static int on_record(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	(*(unsigned long *)ctx)++;
	return 0;
}

/* The pids of a comma-separated list into the filter map: 0 or -errno. */
static int add_pids(struct fp_floor_bpf *skel, const char *list)
{
	const char *p = list;
	__u8 one = 1;

	while (*p) {
		char *end;
		unsigned long pid = strtoul(p, &end, 10);
		__u32 key = (__u32)pid;

		if (end == p || pid == 0 || pid > 0xffffffffu || (*end && *end != ','))
			return -EINVAL;
		if (bpf_map__update_elem(skel->maps.pid_filter, &key, sizeof(key), &one,
					 sizeof(one), BPF_ANY))
			return -errno;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int open_cpu_clock(int cpu, unsigned hz)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .size = sizeof(attr),
	    .freq = 1,
	    .sample_freq = hz,
	    .disabled = 1,
	};
	int fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* The counters summed over CPUs into sum[FP_FLOOR_STAT_COUNT]: 0 or -errno. */
static int read_stats(struct fp_floor_bpf *skel, int ncpu, __u64 *sum)
{
	__u64 *v = calloc((size_t)ncpu, sizeof(*v));
	int err = 0;

	if (!v)
		return -ENOMEM;
	for (__u32 k = 0; k < FP_FLOOR_STAT_COUNT; k++) {
		sum[k] = 0;
		if (bpf_map__lookup_elem(skel->maps.stats, &k, sizeof(k), v,
					 sizeof(*v) * (size_t)ncpu, 0)) {
			err = -errno;
			break;
		}
		for (int c = 0; c < ncpu; c++)
			sum[k] += v[c];
	}
	free(v);
	return err;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {{"send", no_argument, NULL, 's'}, {0}};
	struct fp_floor_bpf *skel = NULL;
	struct bpf_link **links = NULL;
	struct ring_buffer *ring = NULL;
	const char *pids = NULL;
	unsigned hz = 999, seconds = 10;
	unsigned long records = 0;
	int ncpu = libbpf_num_possible_cpus(), attached = 0, err = 1, opt;
	bool send = false;
	struct timespec start, now;
	__u64 sum[FP_FLOOR_STAT_COUNT];

	while ((opt = getopt_long(argc, argv, "F:d:p:", longs, NULL)) != -1) {
		switch (opt) {
		case 'F':
			hz = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'd':
			seconds = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'p':
			pids = optarg;
			break;
		case 's':
			send = true;
			break;
		default:
			goto usage;
		}
	}
	if (!pids || !hz || ncpu <= 0)
		goto usage;
	libbpf_set_print(print_warnings);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	skel = fp_floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "fp_floor: cannot open the BPF object: %s\n", strerror(errno));
		goto cleanup;
	}
	bpf_program__set_autoload(send ? skel->progs.walk_only : skel->progs.walk_send, false);
	if (fp_floor_bpf__load(skel)) {
		fprintf(stderr, "fp_floor: cannot load the BPF object: %s\n", strerror(errno));
		goto cleanup;
	}
	if (add_pids(skel, pids)) {
		fprintf(stderr, "fp_floor: bad pid list '%s'\n", pids);
		goto cleanup;
	}
	links = calloc((size_t)ncpu, sizeof(*links));
	if (!links)
		goto cleanup;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		int fd = open_cpu_clock(cpu, hz);

		if (fd < 0) {
			if (fd == -ENODEV) /* offline CPU */
				continue;
			fprintf(stderr, "fp_floor: perf_event_open on cpu %d: %s\n", cpu,
				strerror(-fd));
			goto cleanup;
		}
		links[cpu] = bpf_program__attach_perf_event(
		    send ? skel->progs.walk_send : skel->progs.walk_only, fd);
		if (!links[cpu]) {
			fprintf(stderr, "fp_floor: attach on cpu %d: %s\n", cpu, strerror(errno));
			close(fd);
			goto cleanup;
		}
		attached++;
	}
	if (send) {
		ring = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, &records, NULL);
		if (!ring) {
			fprintf(stderr, "fp_floor: ring buffer: %s\n", strerror(errno));
			goto cleanup;
		}
	}
	printf("ready\n");
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		/* The records are not woken for: drained every 20 ms. */
		struct timespec tick = {0, 20 * 1000 * 1000};

		nanosleep(&tick, NULL);
		if (ring)
			ring_buffer__consume(ring);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!stopping && now.tv_sec - start.tv_sec < (time_t)seconds);

	if (read_stats(skel, ncpu, sum) == 0) {
		__u64 walked = sum[FP_FLOOR_STAT_SAMPLES] - sum[FP_FLOOR_STAT_IDLE] -
			       sum[FP_FLOOR_STAT_FILTERED];

		fprintf(stderr,
			"fp_floor: %s on %d CPUs at %u Hz: %llu runs, %llu walked, %.1f frames per "
			"walk, %llu errors, %llu ring full, %lu records read\n",
			send ? "walk_send" : "walk_only", attached, hz,
			(unsigned long long)sum[FP_FLOOR_STAT_SAMPLES], (unsigned long long)walked,
			walked ? (double)sum[FP_FLOOR_STAT_BYTES] / 8.0 / (double)walked : 0.0,
			(unsigned long long)sum[FP_FLOOR_STAT_ERRORS],
			(unsigned long long)sum[FP_FLOOR_STAT_RING_FULL], records);
	}
	err = 0;
	goto cleanup;
usage:
	fprintf(stderr, "usage: fp_floor [--send] [-F HZ] [-d SECONDS] -p PID[,PID...]\n");
	return 2;
cleanup:
	ring_buffer__free(ring);
	for (int cpu = 0; links && cpu < ncpu; cpu++)
		bpf_link__destroy(links[cpu]);
	free(links);
	fp_floor_bpf__destroy(skel);
	return err;
}
