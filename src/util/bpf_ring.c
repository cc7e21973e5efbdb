// SPDX-License-Identifier: Apache-2.0
#include "util/bpf_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

struct bpf_ring {
	bpf_ring_cb cb;
	void *ctx;
	size_t page;
	size_t size;   /* the data area's bytes: a power of two */
	size_t window; /* the bytes of the data mapped at a time (at least a page) */
	int map_fd;    /* a copy of the caller's: the window is mapped again through it */
	unsigned long *consumer;
	const unsigned long *producer; /* the producer's page */
	/*
	 * The part of the data mapped now: bytes [win_off, win_off + win_len) of
	 * the kernel's doubled data area (the data, then the same pages again), so
	 * a record that wraps past the end reads as one piece without the whole
	 * area mapped twice; NULL when nothing is mapped.
	 */
	const uint8_t *win;
	size_t win_off, win_len;
	uint64_t moves;
	int epoll_fd;
};

/*
 * Bytes [off, off + len) of the data (off < size, len <= size) as one piece:
 * from the window mapped now (or its second copy of the data), else the
 * window moves to the page holding off, as long as the window or len needs.
 * The kernel puts every page of a ring's mapping in at mmap time, so what is
 * mapped is resident: a window, not the whole data, is what this reader
 * holds (issue 22: the sampler's 8 MiB ring was 8 MiB of its RSS, the same
 * pages the BPF map memory already counts). A move is an mmap and an munmap
 * (a TLB flush), once per window's bytes read. A pointer valid until the
 * next call, or NULL with errno set.
 */
static const uint8_t *ring_view(struct bpf_ring *r, size_t off, size_t len)
{
	size_t start, need, want;
	void *p;

	if (r->win) {
		if (off >= r->win_off && off + len <= r->win_off + r->win_len)
			return r->win + (off - r->win_off);
		/* The window runs into the data's second copy, where off wrapped to. */
		if (off + r->size >= r->win_off && off + r->size + len <= r->win_off + r->win_len)
			return r->win + (off + r->size - r->win_off);
	}
	start = off & ~(r->page - 1);
	need = (off - start + len + r->page - 1) & ~(r->page - 1);
	want = need > r->window ? need : r->window;
	/* Within the doubled area: start <= size - page and need <= size + page. */
	if (start + want > 2 * r->size)
		want = 2 * r->size - start;
	/* The data starts after the consumer's and the producer's pages. */
	p = mmap(NULL, want, PROT_READ, MAP_SHARED, r->map_fd, (off_t)(2 * r->page + start));
	if (p == MAP_FAILED)
		return NULL;
	if (r->win)
		munmap((void *)r->win, r->win_len);
	r->win = p;
	r->win_off = start;
	r->win_len = want;
	r->moves++;
	return r->win + (off - start);
}

struct bpf_ring *bpf_ring__new(int map_fd, bpf_ring_cb cb, void *ctx)
{
	return bpf_ring__new_window(map_fd, BPF_RING_WINDOW_BYTES, cb, ctx);
}

struct bpf_ring *bpf_ring__new_window(int map_fd, size_t window, bpf_ring_cb cb, void *ctx)
{
	struct bpf_map_info info = {0};
	uint32_t len = sizeof(info);
	struct bpf_ring *r = NULL;
	struct epoll_event ev = {.events = EPOLLIN};
	void *p;
	int err;

	if (!cb) {
		err = -EINVAL;
		goto cleanup;
	}
	err = bpf_obj_get_info_by_fd(map_fd, &info, &len);
	if (err) {
		err = -errno;
		goto cleanup;
	}
	/* The kernel requires a power of two of pages; anything else is not a ring. */
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1))) {
		err = -EINVAL;
		goto cleanup;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		err = -ENOMEM;
		goto cleanup;
	}
	r->cb = cb;
	r->ctx = ctx;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->size = info.max_entries;
	/* Whole pages, at most the ring (a record is never longer than the ring). */
	window = (window + r->page - 1) & ~(r->page - 1);
	r->window = window < r->page ? r->page : window > r->size ? r->size : window;
	r->epoll_fd = -1;
	r->map_fd = fcntl(map_fd, F_DUPFD_CLOEXEC, 0);
	if (r->map_fd < 0) {
		err = -errno;
		goto cleanup;
	}
	/* The consumer position's page: the one page the kernel lets us write. */
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto cleanup;
	}
	r->consumer = p;
	p = mmap(NULL, r->page, PROT_READ, MAP_SHARED, map_fd, (off_t)r->page);
	if (p == MAP_FAILED) {
		err = -errno;
		goto cleanup;
	}
	r->producer = p;
	/* The first window, where the reading starts, so that a mapping failure shows now. */
	if (!ring_view(r, 0, r->page)) {
		err = -errno;
		goto cleanup;
	}
	r->moves = 0;
	r->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epoll_fd < 0 || epoll_ctl(r->epoll_fd, EPOLL_CTL_ADD, map_fd, &ev) < 0) {
		err = -errno;
		goto cleanup;
	}
	return r;
cleanup:
	bpf_ring__free(r);
	errno = -err;
	return NULL;
}

void bpf_ring__free(struct bpf_ring *r)
{
	if (!r)
		return;
	if (r->epoll_fd >= 0)
		close(r->epoll_fd);
	if (r->win)
		munmap((void *)r->win, r->win_len);
	if (r->producer)
		munmap((void *)r->producer, r->page);
	if (r->consumer)
		munmap(r->consumer, r->page);
	if (r->map_fd >= 0)
		close(r->map_fd);
	free(r);
}

/* Record header flags and size (linux/bpf.h): the length's two top bits are flags. */
#define RING_LEN_MASK (~(uint32_t)(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT))

int bpf_ring__consume(struct bpf_ring *r)
{
	unsigned long cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	uint64_t mask = r->size - 1;
	int n = 0;

	for (;;) {
		unsigned long prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);

		if (cons >= prod)
			break;
		while (cons < prod) {
			size_t off = (size_t)(cons & mask);
			/* Headers are 8-byte aligned in a ring of whole pages: never split. */
			const uint8_t *rec = ring_view(r, off, BPF_RINGBUF_HDR_SZ);
			uint32_t len_flags, len;
			int err;

			if (!rec) {
				err = -errno;
				__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
				return err;
			}
			len_flags = __atomic_load_n((const uint32_t *)rec, __ATOMIC_ACQUIRE);
			if (len_flags & BPF_RINGBUF_BUSY_BIT)
				goto done; /* reserved, not committed yet: records after it wait */
			len = len_flags & RING_LEN_MASK;
			/* A length the kernel never writes (over the ring) would read past
			 * the mapping: stop rather than trust it. */
			if ((uint64_t)len + BPF_RINGBUF_HDR_SZ > r->size)
				goto done;
			if (len_flags & BPF_RINGBUF_DISCARD_BIT) {
				cons += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
				__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
				continue;
			}
			/* The header and the sample in one piece, wrapped or not. */
			rec = ring_view(r, off, BPF_RINGBUF_HDR_SZ + len);
			if (!rec) {
				err = -errno;
				__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
				return err;
			}
			cons += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
			err = r->cb(r->ctx, (void *)(rec + BPF_RINGBUF_HDR_SZ), len);
			if (err < 0) {
				__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
				return err;
			}
			n++;
			/* Room for the producer record by record, as libbpf does. */
			__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
		}
	}
done:
	__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
	return n;
}

int bpf_ring__epoll_fd(const struct bpf_ring *r)
{
	return r ? r->epoll_fd : -1;
}

size_t bpf_ring__mapped_bytes(const struct bpf_ring *r)
{
	return r ? 2 * r->page + r->win_len : 0;
}

uint64_t bpf_ring__window_moves(const struct bpf_ring *r)
{
	return r ? r->moves : 0;
}
