/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reader of one BPF ring buffer map that maps its data once. libbpf's
 * ring_buffer maps the data area twice, back to back, so that a record that
 * wraps past the end reads as one piece; the kernel puts every page of such a
 * mapping in at mmap time, so an 8 MiB ring cost 16 MiB of resident memory
 * (issue 22). Here a record that wraps (at most one per lap of the ring) is
 * copied into a buffer of its own for the callback instead. The callback and
 * consume semantics are libbpf's: a negative return moves the consumer past
 * that record, stops the read and is returned.
 */
#ifndef OMNIPROF_UTIL_BPF_RING_H
#define OMNIPROF_UTIL_BPF_RING_H

#include <stddef.h>

struct bpf_ring;

/* data is valid only during the call. */
typedef int (*bpf_ring_cb)(void *ctx, void *data, size_t size);

/* Maps the ring of map_fd (a BPF_MAP_TYPE_RINGBUF). NULL with errno set on
 * failure; the caller frees it with bpf_ring__free(). */
struct bpf_ring *bpf_ring__new(int map_fd, bpf_ring_cb cb, void *ctx);
/* Unmaps and frees; accepts NULL. */
void bpf_ring__free(struct bpf_ring *r);
/* Hands every record committed now to the callback, in order: their count
 * (discarded ones not counted), or the callback's negative return. */
int bpf_ring__consume(struct bpf_ring *r);
/* An epoll fd whose one entry is the ring's map (readable when the BPF side
 * wakes the reader), or -1. Owned by the ring. */
int bpf_ring__epoll_fd(const struct bpf_ring *r);
/* Resident bytes of the ring's mappings (for the tests and the bench). */
size_t bpf_ring__mapped_bytes(const struct bpf_ring *r);

#endif
