// SPDX-License-Identifier: Apache-2.0
#include "snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/read_file.h"

#define MAGIC "OPSNAP01"

enum {
	TAG_META = 1,
	TAG_MAPS = 2,
	TAG_THREAD = 3,
	TAG_MEM = 4,
	TAG_FILE = 5,
	TAG_ZERO = 6,
};

struct record_header {
	uint32_t tag;
	uint32_t zero;
	uint64_t len;
};

void snapshot__init(struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
}

void snapshot__clear(struct snapshot *s)
{
	if (!s)
		return;
	free(s->maps);
	free(s->threads);
	for (size_t i = 0; i < s->n_mems; i++)
		free(s->mems[i].data);
	free(s->mems);
	for (size_t i = 0; i < s->n_files; i++) {
		free(s->files[i].path);
		free(s->files[i].build_id);
	}
	free(s->files);
	snapshot__init(s);
}

int snapshot__add_thread(struct snapshot *s, const struct snapshot_thread *t)
{
	struct snapshot_thread *threads =
	    realloc(s->threads, (s->n_threads + 1) * sizeof(*threads));

	if (!threads)
		return -ENOMEM;
	s->threads = threads;
	s->threads[s->n_threads++] = *t;
	return 0;
}

/* Adds [addr, addr + len), data copied, or zeros when data is NULL. */
static int add_range(struct snapshot *s, uint64_t addr, const void *data, uint64_t len)
{
	struct snapshot_mem *mems;
	uint8_t *copy = NULL;
	size_t at = 0, hi = s->n_mems;

	if (!len || addr + len < addr)
		return -EINVAL;
	/* Where it goes (sorted by address); disjoint ranges only: a reader must
	 * find one range per address. */
	while (at < hi) {
		size_t mid = at + (hi - at) / 2;

		if (s->mems[mid].addr < addr)
			at = mid + 1;
		else
			hi = mid;
	}
	if ((at > 0 && s->mems[at - 1].addr + s->mems[at - 1].len > addr) ||
	    (at < s->n_mems && s->mems[at].addr < addr + len))
		return -EEXIST;
	if (data) {
		copy = malloc(len);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, data, len);
	}
	mems = realloc(s->mems, (s->n_mems + 1) * sizeof(*mems));
	if (!mems) {
		free(copy);
		return -ENOMEM;
	}
	s->mems = mems;
	memmove(&s->mems[at + 1], &s->mems[at], (s->n_mems - at) * sizeof(*mems));
	s->mems[at] = (struct snapshot_mem){addr, len, copy};
	s->n_mems++;
	return 0;
}

int snapshot__add_mem(struct snapshot *s, uint64_t addr, const void *data, uint64_t len)
{
	return data ? add_range(s, addr, data, len) : -EINVAL;
}

int snapshot__add_zero(struct snapshot *s, uint64_t addr, uint64_t len)
{
	return add_range(s, addr, NULL, len);
}

int snapshot__add_file(struct snapshot *s, const char *path, const char *build_id)
{
	struct snapshot_file *files = realloc(s->files, (s->n_files + 1) * sizeof(*files));
	char *p = strdup(path), *b = strdup(build_id ? build_id : "");

	if (files)
		s->files = files;
	if (!files || !p || !b) {
		free(p);
		free(b);
		return -ENOMEM;
	}
	s->files[s->n_files++] = (struct snapshot_file){p, b};
	return 0;
}

static int put(FILE *f, uint32_t tag, const void *a, size_t alen, const void *b, size_t blen)
{
	struct record_header h = {tag, 0, alen + blen};

	if (fwrite(&h, sizeof(h), 1, f) != 1 || (alen && fwrite(a, alen, 1, f) != 1) ||
	    (blen && fwrite(b, blen, 1, f) != 1))
		return -EIO;
	return 0;
}

int snapshot__write(const struct snapshot *s, const char *path)
{
	uint32_t meta[2] = {s->pid, s->stopped_tid};
	FILE *f = fopen(path, "wb");
	int err = 0;

	if (!f)
		return -errno;
	if (fwrite(MAGIC, 8, 1, f) != 1)
		err = -EIO;
	if (!err)
		err = put(f, TAG_META, meta, sizeof(meta), NULL, 0);
	if (!err)
		err = put(f, TAG_MAPS, s->maps, s->maps_len, NULL, 0);
	for (size_t i = 0; !err && i < s->n_threads; i++) {
		const struct snapshot_thread *t = &s->threads[i];
		uint8_t head[4 + 16 + 4] = {0};

		memcpy(head, &t->tid, 4);
		memcpy(head + 4, t->comm, 16);
		err = put(f, TAG_THREAD, head, sizeof(head), &t->regs, sizeof(t->regs));
	}
	for (size_t i = 0; !err && i < s->n_mems; i++)
		err = s->mems[i].data
			  ? put(f, TAG_MEM, &s->mems[i].addr, 8, s->mems[i].data, s->mems[i].len)
			  : put(f, TAG_ZERO, &s->mems[i].addr, 8, &s->mems[i].len, 8);
	for (size_t i = 0; !err && i < s->n_files; i++) {
		const struct snapshot_file *sf = &s->files[i];

		err = put(f, TAG_FILE, sf->path, strlen(sf->path) + 1, sf->build_id,
			  strlen(sf->build_id) + 1);
	}
	if (fclose(f) && !err)
		err = -EIO;
	return err;
}

/* One record's payload: checks every length against what is left. */
static int parse_record(struct snapshot *s, uint32_t tag, const uint8_t *p, uint64_t len)
{
	struct snapshot_thread t;
	const char *path, *bid;
	uint64_t addr, zero_len;

	switch (tag) {
	case TAG_META:
		if (len != 8)
			return -EINVAL;
		memcpy(&s->pid, p, 4);
		memcpy(&s->stopped_tid, p + 4, 4);
		return 0;
	case TAG_MAPS:
		free(s->maps);
		s->maps = malloc(len + 1);
		if (!s->maps)
			return -ENOMEM;
		memcpy(s->maps, p, len);
		s->maps[len] = 0;
		s->maps_len = len;
		return 0;
	case TAG_THREAD:
		if (len != 24 + sizeof(t.regs))
			return -EINVAL;
		memset(&t, 0, sizeof(t));
		memcpy(&t.tid, p, 4);
		memcpy(t.comm, p + 4, 16);
		t.comm[15] = 0;
		memcpy(&t.regs, p + 24, sizeof(t.regs));
		return snapshot__add_thread(s, &t);
	case TAG_MEM:
		if (len <= 8)
			return -EINVAL;
		memcpy(&addr, p, 8);
		return snapshot__add_mem(s, addr, p + 8, len - 8);
	case TAG_ZERO:
		if (len != 16)
			return -EINVAL;
		memcpy(&addr, p, 8);
		memcpy(&zero_len, p + 8, 8);
		return snapshot__add_zero(s, addr, zero_len);
	case TAG_FILE:
		path = (const char *)p;
		bid = memchr(p, 0, len);
		if (!bid || !memchr(bid + 1, 0, len - (size_t)(bid + 1 - path)))
			return -EINVAL;
		return snapshot__add_file(s, path, bid + 1);
	default:
		return 0;
	}
}

int snapshot__read(struct snapshot *s, const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0, off = 8;
	int err;

	err = read_file(path, (char **)&buf, &len);
	if (err)
		return err;
	if (len < 8 || memcmp(buf, MAGIC, 8)) {
		err = -EINVAL;
		goto cleanup;
	}
	while (!err && off < len) {
		struct record_header h;

		if (len - off < sizeof(h)) {
			err = -EINVAL;
			break;
		}
		memcpy(&h, buf + off, sizeof(h));
		off += sizeof(h);
		if (h.len > len - off) {
			err = -EINVAL;
			break;
		}
		err = parse_record(s, h.tag, buf + off, h.len);
		off += h.len;
	}
	if (!err && !s->maps)
		err = -EINVAL;
cleanup:
	if (err)
		snapshot__clear(s);
	free(buf);
	return err;
}

int snapshot__read_mem(const struct snapshot *s, void *dst, size_t len, uint64_t addr)
{
	size_t lo = 0, hi = s->n_mems;
	uint8_t *out = dst;

	/* The last range starting at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->mems[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -EFAULT;
	/* Then on through the ranges that follow it without a gap (a mapping's
	 * copied bytes and its zero pages are ranges of their own). */
	for (size_t i = lo - 1; len; i++) {
		const struct snapshot_mem *m = &s->mems[i];
		uint64_t n;

		if (i >= s->n_mems || addr < m->addr || addr - m->addr >= m->len)
			return -EFAULT;
		n = m->len - (addr - m->addr);
		if (n > len)
			n = len;
		if (m->data)
			memcpy(out, m->data + (addr - m->addr), n);
		else
			memset(out, 0, n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

const char *snapshot__build_id(const struct snapshot *s, const char *path)
{
	for (size_t i = 0; i < s->n_files; i++)
		if (!strcmp(s->files[i].path, path))
			return s->files[i].build_id;
	return NULL;
}

static int snapshot_memory_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return snapshot__read_mem(ctx, buf, len, addr) ? -EFAULT : 0;
}

struct remote_memory snapshot__memory(const struct snapshot *s)
{
	return (struct remote_memory){.read = snapshot_memory_read, .ctx = (void *)s};
}
