/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reader of one BPF ring buffer map that maps a window of its data at a
 * time. libbpf's ring_buffer maps the data area twice, back to back, so that a
 * record that wraps past the end reads as one piece; the kernel puts every
 * page of such a mapping in at mmap time, so an 8 MiB ring cost 16 MiB of
 * resident memory (issue 22), pages the BPF map memory counts already. Here
 * only a window of the kernel's doubled area is mapped (BPF_RING_WINDOW_BYTES,
 * or the whole ring when smaller), moved (mmap, munmap) when the next record
 * is not in it: a record that wraps still reads as one piece, from the window
 * over the end, and the ring holds a window's pages, not the data's. The
 * callback and consume semantics are libbpf's: a negative return moves the
 * consumer past that record, stops the read and is returned.
 */
#ifndef OMNIPROF_UTIL_BPF_RING_H
#define OMNIPROF_UTIL_BPF_RING_H

#include <stddef.h>
#include <stdint.h>

/* The data mapped at a time: more than the sampler's largest record (a stack
 * copy, 513 KiB), so a move comes at most once per half a window read. */
#define BPF_RING_WINDOW_BYTES (1u << 20)

struct bpf_ring;

/* data is valid only during the call. */
typedef int (*bpf_ring_cb)(void *ctx, void *data, size_t size);

/* Maps the ring of map_fd (a BPF_MAP_TYPE_RINGBUF). NULL with errno set on
 * failure; the caller frees it with bpf_ring__free(). */
struct bpf_ring *bpf_ring__new(int map_fd, bpf_ring_cb cb, void *ctx);
/* The same with a window of window bytes (rounded up to pages, at most the
 * ring); map_fd is copied (the window is mapped again through it). */
struct bpf_ring *bpf_ring__new_window(int map_fd, size_t window, bpf_ring_cb cb, void *ctx);
/* Unmaps and frees; accepts NULL. */
void bpf_ring__free(struct bpf_ring *r);
/* Hands every record committed now to the callback, in order: their count
 * (discarded ones not counted), or the callback's negative return. */
int bpf_ring__consume(struct bpf_ring *r);
/* An epoll fd whose one entry is the ring's map (readable when the BPF side
 * wakes the reader), or -1. Owned by the ring. */
int bpf_ring__epoll_fd(const struct bpf_ring *r);
/* Resident bytes of the ring's mappings now (for the tests and the bench). */
size_t bpf_ring__mapped_bytes(const struct bpf_ring *r);
/* The times the window moved (the reader's thread, or under its lock). */
uint64_t bpf_ring__window_moves(const struct bpf_ring *r);

#endif
