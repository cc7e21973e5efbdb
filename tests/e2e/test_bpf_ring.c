// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end: util/bpf_ring.c reads a real BPF ring buffer map with its data
 * mapped once (issue 22: libbpf's double mapping was 8 MiB of resident memory
 * for the sampler's ring). A socket-filter program, run by BPF_PROG_TEST_RUN,
 * copies the packet it is given into the ring (bpf_ringbuf_output), so the
 * test knows every record's bytes. Records of two sizes that do not divide
 * the ring go round it many times, so some wrap past its end: each must come
 * whole and in order; so must they through a window of one page over a ring
 * of 4, moved as the reading goes round. Also: a callback's error stops the
 * read after that record, and the mappings hold the data once (or the
 * window). Needs root.
 */
#include <errno.h>
#include <stdbool.h>
#include <linux/bpf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/bpf.h>

#include "util/bpf_ring.h"

#define RING_BYTES 4096
#define BIG_RING   (4 * 4096) /* read through a window of one page */
#define LONG_LEN   200	      /* with its 8-byte header: 208, not a divisor of the ring */
#define SHORT_LEN  56

struct prog {
	int map_fd;
	int long_fd, short_fd;
	struct prog *big; /* the same over a ring of BIG_RING bytes */
};

#define INSN(c, d, s, o, i)                                                                        \
	((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})

/* A program that copies the packet's first len bytes into the ring: its fd or -errno. */
static int load_copier(int map_fd, int len)
{
	struct bpf_insn insns[] = {
	    INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
	    /* bpf_skb_load_bytes(skb, 0, fp - len, len) */
	    INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 0),
	    INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0),
	    INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -len),
	    INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, len),
	    INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_skb_load_bytes),
	    INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 8, 0),
	    /* bpf_ringbuf_output(map, fp - len, len, 0) */
	    INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd),
	    INSN(0, 0, 0, 0, 0),
	    INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
	    INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -len),
	    INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, len),
	    INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0),
	    INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output),
	    INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	    /* the load failed */
	    INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1),
	    INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "ring_copier", "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	return fd < 0 ? -errno : fd;
}

static int prog__open(struct prog *p, uint32_t bytes)
{
	p->map_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ring_test", 0, 0, bytes, NULL);
	if (p->map_fd < 0) {
		fprintf(stderr, "ringbuf map: %s (needs root)\n", strerror(errno));
		return -1;
	}
	p->long_fd = load_copier(p->map_fd, LONG_LEN);
	p->short_fd = load_copier(p->map_fd, SHORT_LEN);
	if (p->long_fd < 0 || p->short_fd < 0) {
		fprintf(stderr, "program load: %s\n",
			strerror(-(p->long_fd < 0 ? p->long_fd : p->short_fd)));
		return -1;
	}
	return 0;
}

static int setup(void **state)
{
	static struct prog p, big;

	if (prog__open(&p, RING_BYTES) || prog__open(&big, BIG_RING))
		return -1;
	p.big = &big;
	*state = &p;
	return 0;
}

static int teardown(void **state)
{
	struct prog *p = *state;

	for (int i = 0; i < 2; i++, p = p->big) {
		close(p->long_fd);
		close(p->short_fd);
		close(p->map_fd);
	}
	return 0;
}

/* Record i's length and bytes. */
static size_t record_len(unsigned i)
{
	return i % 3 == 2 ? SHORT_LEN : LONG_LEN;
}

static void record_bytes(unsigned i, uint8_t *out)
{
	for (size_t k = 0; k < record_len(i); k++)
		out[k] = (uint8_t)(i * 31 + k * 7 + (k >> 8));
}

/* A socket filter's test run starts the packet after its Ethernet header. */
#define ETH_HEADER 14

static void emit(struct prog *p, unsigned i)
{
	uint8_t pkt[ETH_HEADER + LONG_LEN] = {0};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
		    .data_size_in = ETH_HEADER + record_len(i));

	record_bytes(i, pkt + ETH_HEADER);
	assert_int_equal(
	    bpf_prog_test_run_opts(record_len(i) == LONG_LEN ? p->long_fd : p->short_fd, &opts), 0);
	/* The program's return: 0 once the record is in the ring. */
	assert_int_equal(opts.retval, 0);
}

struct seen {
	unsigned next;	  /* the record expected next */
	unsigned fail_at; /* the callback fails on this record (~0u: never) */
	int bad;
};

static int check_record(void *ctx, void *data, size_t size)
{
	struct seen *s = ctx;
	uint8_t want[LONG_LEN];
	unsigned i = s->next++;

	record_bytes(i, want);
	if (size != record_len(i) || memcmp(data, want, size))
		s->bad++;
	return i == s->fail_at ? -E2BIG : 0;
}

/* Bursts of 1 to 7 records (at most 7 * 208 bytes: under a page), read after
 * each, round a ring of ring_bytes read by r: all whole and in order, and
 * records really did straddle the ring's end (the test's point). */
static void round_the_ring(struct prog *p, struct bpf_ring *r, size_t ring_bytes, unsigned bursts,
			   struct seen *seen)
{
	unsigned i = 0, wraps = 0;
	uint64_t pos = 0;

	for (unsigned burst = 0; burst < bursts; burst++) {
		unsigned n = 1 + burst % 7;

		for (unsigned k = 0; k < n; k++, i++) {
			size_t rec = (8 + record_len(i) + 7) & ~(size_t)7;

			/* The sample (after its header) runs past the ring's end. */
			if ((pos + 8) % ring_bytes + record_len(i) > ring_bytes)
				wraps++;
			pos += rec;
			emit(p, i);
		}
		assert_int_equal(bpf_ring__consume(r), (int)n);
	}
	assert_int_equal(seen->next, i);
	assert_int_equal(seen->bad, 0);
	assert_true(wraps >= 10);
	assert_int_equal(bpf_ring__consume(r), 0);
}

static void test_records_whole_across_the_wrap(void **state)
{
	struct prog *p = *state;
	struct seen seen = {.fail_at = ~0u};
	struct bpf_ring *r = bpf_ring__new(p->map_fd, check_record, &seen);

	assert_non_null(r);
	round_the_ring(p, r, RING_BYTES, 400, &seen);
	bpf_ring__free(r);
}

/* Resident KiB of this process's BPF map mappings (only the test's maps are mapped). */
static long map_rss_kib(void);

/*
 * A window of one page over a ring of 4: it moves as the reading goes round
 * (a record straddling the window's end maps two pages from its own), and
 * what is resident is the window, never the ring's data.
 */
static void test_records_whole_through_a_window(void **state)
{
	struct prog *p = ((struct prog *)*state)->big;
	struct seen seen = {.fail_at = ~0u};
	long page = sysconf(_SC_PAGESIZE), before = map_rss_kib();
	struct bpf_ring *r = bpf_ring__new_window(p->map_fd, 1, check_record, &seen);
	uint64_t laps;

	assert_non_null(r);
	assert_int_equal(bpf_ring__mapped_bytes(r), 3 * (size_t)page);
	/* ~3,200 records of 208 and 64 bytes: about 31 laps of the ring. */
	round_the_ring(p, r, BIG_RING, 800, &seen);
	laps = (uint64_t)seen.next * (2 * 208 + 64) / 3 / BIG_RING;
	assert_true(laps >= 10);
	/* At least once a page read; at most twice a record (its header, then the rest). */
	assert_true(bpf_ring__window_moves(r) >= laps * (BIG_RING / page) - 1);
	assert_true(bpf_ring__window_moves(r) <= 2 * (uint64_t)seen.next);
	/* The two position pages and a window of one page, or two for a straddling record. */
	assert_true(bpf_ring__mapped_bytes(r) <= 4 * (size_t)page);
	assert_true(map_rss_kib() - before <= 4 * page / 1024);
	bpf_ring__free(r);
	assert_int_equal(map_rss_kib(), before);
}

static void test_callback_error_stops_after_its_record(void **state)
{
	struct prog *p = *state;
	struct seen seen = {.fail_at = 1};
	struct bpf_ring *r = bpf_ring__new(p->map_fd, check_record, &seen);

	assert_non_null(r);
	/* Whatever the first test left is read first: none (it read every record). */
	for (unsigned i = 0; i < 4; i++)
		emit(p, i);
	assert_int_equal(bpf_ring__consume(r), -E2BIG);
	assert_int_equal(seen.next, 2);
	/* Record 1 is consumed, the rest come in the next read. */
	assert_int_equal(bpf_ring__consume(r), 2);
	assert_int_equal(seen.next, 4);
	assert_int_equal(seen.bad, 0);
	bpf_ring__free(r);
}

static long map_rss_kib(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in_map = false;
	long kib = 0, v;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strstr(line, " 00:") && strchr(line, '/') == NULL)
			in_map = strstr(line, "anon_inode:bpf-map") != NULL;
		else if (strstr(line, "anon_inode:bpf-map"))
			in_map = true;
		else if (in_map && sscanf(line, "Rss: %ld kB", &v) == 1)
			kib += v;
	}
	fclose(f);
	return kib;
}

static void test_data_mapped_once(void **state)
{
	struct prog *p = *state;
	struct seen seen = {.fail_at = ~0u};
	long before = map_rss_kib();
	struct bpf_ring *r = bpf_ring__new(p->map_fd, check_record, &seen);
	long page_kib = sysconf(_SC_PAGESIZE) / 1024;

	assert_non_null(r);
	assert_int_equal(bpf_ring__mapped_bytes(r), RING_BYTES + 2 * (size_t)sysconf(_SC_PAGESIZE));
	/* The consumer's and the producer's page, then the data once (libbpf: twice). */
	assert_true(map_rss_kib() - before <= RING_BYTES / 1024 + 2 * page_kib);
	bpf_ring__free(r);
	assert_int_equal(map_rss_kib(), before);
}

static void test_not_a_ring(void **state)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "not_ring", 4, 8, 1, NULL);

	(void)state;
	assert_true(fd >= 0);
	errno = 0;
	assert_null(bpf_ring__new(fd, check_record, NULL));
	assert_int_equal(errno, EINVAL);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_records_whole_across_the_wrap),
	    cmocka_unit_test(test_records_whole_through_a_window),
	    cmocka_unit_test(test_callback_error_stops_after_its_record),
	    cmocka_unit_test(test_data_mapped_once),
	    cmocka_unit_test(test_not_a_ring),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
