// SPDX-License-Identifier: Apache-2.0
#include "profile/profile_builder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"
#include "elf/file_cache.h"
#include "interp/python/python.h"
#include "profile/profile.h"
#include "profile/trace_table.h"
#include "symbol/symbolizer.h"
#include "types.h"
#include "util/hashmap.h"

/* Frames seen before map to the same location: name each distinct frame once. */
struct frame_location {
	struct trace_frame frame;
	uint32_t location_id;
};

static bool frame_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return !memcmp(&((const struct frame_location *)entry)->frame, key,
		       sizeof(struct trace_frame));
}

struct builder {
	struct profile *p;
	struct symbolizer *sym;
	struct hashmap frames;
	uint32_t kernel_mapping;
};

static uint32_t file_mapping(struct builder *b, uint32_t file_id)
{
	const struct cached_file *f = file_cache__at(b->sym->files, file_id);
	uint64_t limit = 0;

	if (!f)
		return 0;
	if (f->elf)
		for (size_t i = 0; i < f->elf->n_segments; i++) {
			const struct elf_segment *s = &f->elf->segments[i];

			if (s->vaddr + s->memsz > limit)
				limit = s->vaddr + s->memsz;
		}
	return profile__add_mapping(b->p, 0, limit ? limit : UINT64_MAX, 0, f->path,
				    f->elf && f->elf->build_id ? f->elf->build_id : "");
}

static uint32_t new_location(struct builder *b, const struct trace_frame *tf)
{
	bool is_return = tf->flags & OP_FRAME_F_RETURN_ADDRESS;
	enum profile_frame_kind kind = PROFILE_FRAME_NATIVE;
	struct profile_line line = {0, 0};
	uint32_t mapping = 0;
	const char *name, *module, *filename = "";
	char buf[512], modname[300];

	switch (tf->kind) {
	case OP_FRAME_KERNEL:
		kind = PROFILE_FRAME_KERNEL;
		name = symbolizer__kernel(b->sym, tf->addr, is_return, &module, buf, sizeof(buf));
		if (module) {
			snprintf(modname, sizeof(modname), "[%s]", module);
			mapping = profile__add_mapping(b->p, 0, UINT64_MAX, 0, modname, "");
		} else {
			if (!b->kernel_mapping)
				b->kernel_mapping = profile__add_mapping(b->p, 0, UINT64_MAX, 0,
									 "[kernel.kallsyms]", "");
			mapping = b->kernel_mapping;
		}
		break;
	case OP_FRAME_NATIVE:
		name =
		    symbolizer__native(b->sym, tf->file_id, tf->addr, is_return, buf, sizeof(buf));
		mapping = file_mapping(b, tf->file_id);
		break;
	case OP_FRAME_PYTHON:
		kind = PROFILE_FRAME_PYTHON;
		python__describe(b->sym->python, tf->file_id, (uint32_t)tf->addr, &name, &filename,
				 &line.line);
		break;
	default:
		kind = PROFILE_FRAME_ERROR;
		name = symbolizer__error(tf->addr);
		break;
	}
	line.function_id = profile__add_function(b->p, name, name, filename);
	if (!line.function_id)
		return 0;
	return profile__add_location(b->p, mapping, tf->addr, kind, &line, 1);
}

static uint32_t location_of(struct builder *b, const struct trace_frame *tf)
{
	uint64_t h = hash_bytes(tf, sizeof(*tf), 0);
	struct frame_location *fl = hashmap__find(&b->frames, h, tf);

	if (fl)
		return fl->location_id;
	fl = malloc(sizeof(*fl));
	if (!fl)
		return 0;
	fl->frame = *tf;
	fl->location_id = new_location(b, tf);
	if (!fl->location_id || hashmap__insert(&b->frames, h, fl)) {
		free(fl);
		return 0;
	}
	return fl->location_id;
}

int profile_builder__build(struct profile *p, const struct trace_table *tt, struct symbolizer *sym)
{
	struct builder b = {.p = p, .sym = sym};
	uint32_t *ids = NULL;
	size_t cap = 0;
	void *e;
	int err = 0;

	hashmap__init(&b.frames, frame_equal, NULL);
	for (size_t it = 0; hashmap__next(&tt->traces, &it, &e);) {
		const struct trace *t = e;

		if (t->n_frames > cap) {
			uint32_t *tmp = realloc(ids, t->n_frames * sizeof(*ids));

			if (!tmp) {
				err = -ENOMEM;
				goto cleanup;
			}
			ids = tmp;
			cap = t->n_frames;
		}
		for (uint32_t i = 0; i < t->n_frames; i++) {
			ids[i] = location_of(&b, &t->frames[i]);
			if (!ids[i]) {
				err = -ENOMEM;
				goto cleanup;
			}
		}
		err = profile__add_sample(p, ids, t->n_frames, t->pid, t->tid, t->pcomm, t->comm,
					  (int64_t)t->count);
		if (err)
			goto cleanup;
	}
	p->stats.truncated += tt->truncated;
cleanup:
	for (size_t it = 0; hashmap__next(&b.frames, &it, &e);)
		free(e);
	hashmap__clear(&b.frames);
	free(ids);
	return err;
}
