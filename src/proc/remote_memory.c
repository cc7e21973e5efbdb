// SPDX-License-Identifier: Apache-2.0
#include "proc/remote_memory.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

int remote_memory__read_live(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint32_t pid = (uint32_t)(uintptr_t)ctx;
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

struct remote_memory remote_memory__live(uint32_t pid)
{
	return (struct remote_memory){.read = remote_memory__read_live,
				      .ctx = (void *)(uintptr_t)pid};
}

static int overlay_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct remote_memory_overlay *o = ctx;
	size_t head = 0;

	if (addr >= o->base && addr - o->base < o->len) {
		uint64_t left = o->len - (addr - o->base);

		head = left < len ? (size_t)left : len;
		memcpy(buf, o->bytes + (addr - o->base), head);
		if (head == len)
			return 0;
	}
	if (!o->fallback)
		return -EFAULT;
	if (o->fallback_reads)
		(*o->fallback_reads)++;
	return remote_memory__read(o->fallback, addr + head, (uint8_t *)buf + head, len - head);
}

struct remote_memory remote_memory__overlay(struct remote_memory_overlay *o)
{
	return (struct remote_memory){.read = overlay_read, .ctx = o};
}
