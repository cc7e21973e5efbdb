// SPDX-License-Identifier: Apache-2.0
#include "symbol/frame_memo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

/* One remembered frame: offsets of its strings in the entry's string area. */
struct memo_frame {
	uint32_t name;
	uint32_t system_name;
	uint32_t file; /* NO_FILE: none */
	int32_t inlined;
	int64_t line;
};

#define NO_FILE UINT32_MAX

/* One address: its frames, then the strings they name (one allocation). */
struct memo_entry {
	uint64_t vaddr;
	uint32_t file_slot;
	uint32_t n;
	size_t size; /* of the allocation */
	struct memo_frame frames[];
};

struct memo_key {
	uint64_t vaddr;
	uint32_t file_slot;
};

static uint64_t key_hash(uint32_t file_slot, uint64_t vaddr)
{
	return hash_u64(vaddr * 31 + file_slot);
}

static bool entry_equal(const void *entry, const void *key, void *ctx)
{
	const struct memo_entry *e = entry;
	const struct memo_key *k = key;

	(void)ctx;
	return e->vaddr == k->vaddr && e->file_slot == k->file_slot;
}

void frame_memo__init(struct frame_memo *m, size_t limit)
{
	memset(m, 0, sizeof(*m));
	hashmap__init(&m->index, entry_equal, NULL);
	m->limit = limit ? limit : FRAME_MEMO_DEFAULT_BYTES;
}

void frame_memo__clear(struct frame_memo *m)
{
	void *e;

	if (!m)
		return;
	for (size_t it = 0; hashmap__next(&m->index, &it, &e);)
		free(e);
	hashmap__clear(&m->index);
	m->bytes = 0;
}

static const char *strings_of(const struct memo_entry *e)
{
	return (const char *)&e->frames[e->n];
}

long frame_memo__get(struct frame_memo *m, uint32_t file_slot, uint64_t vaddr,
		     struct sym_frame *out, size_t max)
{
	struct memo_key key = {.vaddr = vaddr, .file_slot = file_slot};
	const struct memo_entry *e = hashmap__find(&m->index, key_hash(file_slot, vaddr), &key);
	const char *strings;
	size_t n;

	if (!e) {
		m->stats.misses++;
		return -1;
	}
	m->stats.hits++;
	strings = strings_of(e);
	n = e->n < max ? e->n : max;
	for (size_t i = 0; i < n; i++) {
		const struct memo_frame *f = &e->frames[i];

		/* At most SYM_NAME_MAX - 1 bytes each (name_len()): they fit. */
		strcpy(out[i].name, strings + f->name);
		strcpy(out[i].system_name, strings + f->system_name);
		out[i].file = f->file == NO_FILE ? NULL : strings + f->file;
		out[i].line = f->line;
		out[i].inlined = f->inlined;
	}
	return (long)n;
}

/* The length kept of a sym_frame name: within its array, terminated or not. */
static size_t name_len(const char *name)
{
	return strnlen(name, SYM_NAME_MAX - 1);
}

/* Appends the len bytes of s and a NUL at *at in area; returns their offset. */
static uint32_t put_string(char *area, size_t *at, const char *s, size_t len)
{
	size_t off = *at;

	memcpy(area + off, s, len);
	area[off + len] = '\0';
	*at += len + 1;
	return (uint32_t)off;
}

int frame_memo__put(struct frame_memo *m, uint32_t file_slot, uint64_t vaddr,
		    const struct sym_frame *frames, size_t n)
{
	size_t strings = 0, at = 0, size;
	struct memo_entry *e;
	char *area;

	for (size_t i = 0; i < n; i++)
		strings += name_len(frames[i].name) + 1 + name_len(frames[i].system_name) + 1 +
			   (frames[i].file ? strlen(frames[i].file) + 1 : 0);
	size = sizeof(*e) + n * sizeof(e->frames[0]) + strings;
	if (strings > UINT32_MAX)
		return -ENOMEM;
	if (m->bytes + size > m->limit) {
		frame_memo__clear(m);
		m->stats.resets++;
	}
	e = malloc(size);
	if (!e)
		return -ENOMEM;
	e->vaddr = vaddr;
	e->file_slot = file_slot;
	e->n = (uint32_t)n;
	e->size = size;
	area = (char *)&e->frames[n];
	for (size_t i = 0; i < n; i++) {
		struct memo_frame *f = &e->frames[i];

		f->name = put_string(area, &at, frames[i].name, name_len(frames[i].name));
		f->system_name =
		    put_string(area, &at, frames[i].system_name, name_len(frames[i].system_name));
		f->file = frames[i].file
			      ? put_string(area, &at, frames[i].file, strlen(frames[i].file))
			      : NO_FILE;
		f->line = frames[i].line;
		f->inlined = frames[i].inlined;
	}
	if (hashmap__insert(&m->index, key_hash(file_slot, vaddr), e)) {
		free(e);
		return -ENOMEM;
	}
	m->bytes += size;
	return 0;
}

void frame_memo__forget_file(struct frame_memo *m, uint32_t file_slot)
{
	struct memo_entry **gone = NULL;
	size_t n = 0, cap = 0;
	void *e;

	for (size_t it = 0; hashmap__next(&m->index, &it, &e);) {
		if (((struct memo_entry *)e)->file_slot != file_slot)
			continue;
		if (array__grow(gone, cap, n)) {
			/* Cannot list them: forgetting everything is also right. */
			free(gone);
			frame_memo__clear(m);
			return;
		}
		gone[n++] = e;
	}
	/* Removed after the walk: removing moves other entries within the table. */
	for (size_t i = 0; i < n; i++) {
		hashmap__remove_entry(&m->index, key_hash(gone[i]->file_slot, gone[i]->vaddr),
				      gone[i]);
		m->bytes -= gone[i]->size;
		free(gone[i]);
	}
	free(gone);
}
