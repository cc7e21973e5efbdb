// SPDX-License-Identifier: Apache-2.0
#include "util/bpf_ring.h"

#include <errno.h>
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
	size_t size; /* the data area's bytes: a power of two */
	unsigned long *consumer;
	/* The producer's page, then the data area once. */
	void *prod_map;
	const unsigned long *producer;
	const uint8_t *data;
	int epoll_fd;
};

struct bpf_ring *bpf_ring__new(int map_fd, bpf_ring_cb cb, void *ctx)
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
	r->prod_map = MAP_FAILED;
	r->epoll_fd = -1;
	/* The consumer position's page: the one page the kernel lets us write. */
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto cleanup;
	}
	r->consumer = p;
	/*
	 * The producer's page and the data area once: the kernel also accepts the
	 * data's second copy after it (what libbpf maps), which is what costs the
	 * resident memory this reader saves.
	 */
	r->prod_map = mmap(NULL, r->page + r->size, PROT_READ, MAP_SHARED, map_fd, (off_t)r->page);
	if (r->prod_map == MAP_FAILED) {
		err = -errno;
		goto cleanup;
	}
	r->producer = r->prod_map;
	r->data = (const uint8_t *)r->prod_map + r->page;
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
	if (r->prod_map != MAP_FAILED)
		munmap(r->prod_map, r->page + r->size);
	if (r->consumer)
		munmap(r->consumer, r->page);
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
			/* Headers are 8-byte aligned in a ring of whole pages: never split. */
			const uint32_t *hdr = (const uint32_t *)(r->data + (cons & mask));
			uint32_t len_flags = __atomic_load_n(hdr, __ATOMIC_ACQUIRE), len;
			size_t off, first;
			void *copy = NULL;
			uint8_t *sample;
			int err;

			if (len_flags & BPF_RINGBUF_BUSY_BIT)
				goto done; /* reserved, not committed yet: records after it wait */
			len = len_flags & RING_LEN_MASK;
			/* A length the kernel never writes (over the ring) would read past
			 * the mapping: stop rather than trust it. */
			if ((uint64_t)len + BPF_RINGBUF_HDR_SZ > r->size)
				goto done;
			off = (size_t)((cons + BPF_RINGBUF_HDR_SZ) & mask);
			cons += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
			if (len_flags & BPF_RINGBUF_DISCARD_BIT) {
				__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
				continue;
			}
			sample = (uint8_t *)r->data + off;
			if (off + len > r->size) {
				/* Wraps past the end: one piece for the callback. */
				first = r->size - off;
				copy = malloc(len);
				if (!copy) {
					__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
					return -ENOMEM;
				}
				memcpy(copy, sample, first);
				memcpy((uint8_t *)copy + first, r->data, len - first);
				sample = copy;
			}
			err = r->cb(r->ctx, sample, len);
			free(copy);
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
	return r ? 2 * r->page + r->size : 0;
}
