/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Another process's memory, read by value: every runtime, the stack-copy
 * unwinder and the vDSO reader read through this one interface, whatever the
 * bytes come from:
 *   live     process_vm_readv of a pid (the target is never stopped or written)
 *   overlay  a buffer standing for [base, base + len) of the target (a stack
 *            copy taken at the sample), every other address from a fallback
 *   snapshot tests/replay's captured memory (a source of its own, same contract)
 * A read is all or nothing.
 */
#ifndef OMNIPROF_PROC_REMOTE_MEMORY_H
#define OMNIPROF_PROC_REMOTE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

struct remote_memory {
	/* Copies len bytes at addr into buf: 0, or -errno (-EFAULT: not all readable). */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

static inline int remote_memory__read(const struct remote_memory *m, uint64_t addr, void *buf,
				      size_t len)
{
	return m->read(m->ctx, addr, buf, len);
}

/* The live process pid. Nothing to free. */
struct remote_memory remote_memory__live(uint32_t pid);

/* read() of a live source: ctx is the pid as (void *)(uintptr_t)pid. */
int remote_memory__read_live(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * bytes[0 .. len) stand for the target's [base, base + len); a read that
 * starts there takes what the buffer holds from it and the rest from
 * fallback (NULL: nothing else is readable). Counts the reads that went to
 * the fallback in *fallback_reads when not NULL. The overlay points at its
 * arguments: they must outlive its use.
 */
struct remote_memory_overlay {
	const uint8_t *bytes;
	uint64_t base;
	uint64_t len;
	const struct remote_memory *fallback;
	uint64_t *fallback_reads;
};

struct remote_memory remote_memory__overlay(struct remote_memory_overlay *o);

#endif
