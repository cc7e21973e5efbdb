// SPDX-License-Identifier: Apache-2.0
#include "profile/profile_builder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"
#include "proc/file_cache.h"
#include "elf/file_id.h"
#include "interp/interp.h"
#include "profile/profile.h"
#include "profile/trace_table.h"
#include "symbol/symbolizer.h"
#include "omniprof/abi.h"
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
	/* The mapping of the file named last: native frames come file by file
	 * (name_native_frames), and hex-encoding its hash per frame was a third
	 * of a steady interval's instructions. */
	uint32_t last_slot, last_mapping;
};

static uint32_t file_mapping_of(struct builder *b, uint32_t file_slot)
{
	const struct cached_file *f = file_cache__at(b->sym->files, file_slot);
	static const uint8_t zero[FILE_ID_HTLHASH_LEN];
	char hash[2 * FILE_ID_HTLHASH_LEN + 1] = "";
	uint64_t limit = 0;

	if (!f)
		return 0;
	if (memcmp(f->htlhash, zero, sizeof(zero)))
		file_id__hex(f->htlhash, hash);
	if (f->elf)
		for (size_t i = 0; i < f->elf->n_segments; i++) {
			const struct elf_segment *s = &f->elf->segments[i];

			if (s->vaddr + s->memsz > limit)
				limit = s->vaddr + s->memsz;
		}
	return profile__add_file_mapping(b->p, 0, limit ? limit : UINT64_MAX, 0, f->path,
					 f->elf && f->elf->build_id ? f->elf->build_id : "",
					 f->elf ? f->elf->go_build_id : NULL, hash);
}

/* The profile's mapping of file_slot's file (the same id every time), or 0. */
static uint32_t file_mapping(struct builder *b, uint32_t file_slot)
{
	if (!b->last_mapping || b->last_slot != file_slot) {
		b->last_mapping = file_mapping_of(b, file_slot);
		b->last_slot = file_slot;
	}
	return b->last_mapping;
}

/*
 * A native frame: one line per frame the symbolizer found (inlined calls
 * first), or one line "file+0xOFFSET" with an empty system name when nothing
 * names it. The location's address is the one looked up.
 */
static uint32_t native_location(struct builder *b, const struct trace_frame *tf, bool is_return)
{
	uint64_t vaddr = is_return && tf->addr ? tf->addr - 1 : tf->addr;
	uint32_t mapping = file_mapping(b, tf->file_slot);
	struct profile_line lines[SYM_MAX_FRAMES];
	const struct sym_frame *frames;
	size_t n = symbolizer__native(b->sym, tf->file_slot, vaddr, &frames);
	char buf[512];

	for (size_t i = 0; i < n; i++) {
		lines[i].function_id =
		    profile__add_function(b->p, frames[i].name, frames[i].system_name,
					  frames[i].file ? frames[i].file : "");
		lines[i].line = frames[i].line;
		if (!lines[i].function_id)
			return 0;
	}
	if (!n) {
		const struct cached_file *f = file_cache__at(b->sym->files, tf->file_slot);

		snprintf(buf, sizeof(buf), "%s+0x%llx", f ? f->basename : "[unknown]",
			 (unsigned long long)vaddr);
		lines[0].function_id = profile__add_function(b->p, buf, "", "");
		lines[0].line = 0;
		if (!lines[0].function_id)
			return 0;
		n = 1;
	}
	return profile__add_location(b->p, mapping, vaddr, PROFILE_FRAME_NATIVE, lines,
				     (uint32_t)n);
}

static bool is_runtime_kind(unsigned int kind)
{
	return interp__of_kind(kind) != NULL;
}

/*
 * A runtime's frame: one line per function it ran, inlined ones first (as
 * a native frame's inlined calls), each a frame of its own in every output.
 */
static uint32_t runtime_location(struct builder *b, const struct trace_frame *tf)
{
	struct interp_line il[INTERP_MAX_LINES];
	struct profile_line lines[INTERP_MAX_LINES];
	size_t n = interp__describe_lines(b->sym->interp, tf->kind, tf->frame_id, tf->addr, il,
					  INTERP_MAX_LINES);

	for (size_t i = 0; i < n; i++) {
		/*
		 * No system name: a runtime's names are not symbols, and equal
		 * name and system name make pprof's demangling heuristics strip
		 * "<module>", "<lambda>", "<listcomp>" to nothing.
		 */
		lines[i].function_id = profile__add_function_at(b->p, il[i].name, "",
								il[i].filename, il[i].start_line);
		lines[i].line = il[i].line;
		if (!lines[i].function_id)
			return 0;
	}
	return profile__add_location(b->p, 0, tf->addr, (enum profile_frame_kind)tf->kind, lines,
				     (uint32_t)n);
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
		return native_location(b, tf, is_return);
	default:
		/* A runtime's frame: (frame-store id, offset) from interp__resolve(). */
		if (is_runtime_kind(tf->kind))
			return runtime_location(b, tf);
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
	uint64_t h = hash_mem(tf, sizeof(*tf), 0);
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

static int native_frame_cmp(const void *a, const void *b)
{
	const struct trace_frame *x = *(struct trace_frame *const *)a;
	const struct trace_frame *y = *(struct trace_frame *const *)b;

	if (x->file_slot != y->file_slot)
		return x->file_slot < y->file_slot ? -1 : 1;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

/*
 * Names every distinct native frame, one file after the other, before the
 * samples are built: each file's symbols are then needed once, so a symbol
 * cache smaller than the files of one profile holds one file at a time
 * instead of loading them again and again. 0 or -ENOMEM.
 */
static int name_native_frames(struct builder *b, const struct trace_table *tt)
{
	struct trace_frame **frames = NULL;
	size_t n = 0, cap = 0;
	struct hashmap seen;
	void *e;
	int err = 0;

	hashmap__init(&seen, frame_equal, NULL);
	for (size_t it = 0; hashmap__next(&tt->traces, &it, &e);) {
		struct trace *t = e;

		for (uint32_t i = 0; i < t->n_frames; i++) {
			struct trace_frame *tf = &t->frames[i];
			uint64_t h = hash_mem(tf, sizeof(*tf), 0);

			if (tf->kind != OP_FRAME_NATIVE || hashmap__find(&seen, h, tf))
				continue;
			if (n == cap) {
				size_t c = cap ? cap * 2 : 256;
				struct trace_frame **tmp = realloc(frames, c * sizeof(*tmp));

				if (!tmp) {
					err = -ENOMEM;
					goto cleanup;
				}
				frames = tmp;
				cap = c;
			}
			/* The key compares a frame_location's leading trace_frame: tf is one. */
			if (hashmap__insert(&seen, h, tf)) {
				err = -ENOMEM;
				goto cleanup;
			}
			frames[n++] = tf;
		}
	}
	if (n > 1) /* frames is NULL when no frame is native: qsort(NULL, 0) is undefined */
		qsort(frames, n, sizeof(*frames), native_frame_cmp);
	for (size_t i = 0; i < n; i++)
		if (!location_of(b, frames[i])) {
			err = -ENOMEM;
			break;
		}
cleanup:
	hashmap__clear(&seen);
	free(frames);
	return err;
}

int profile_builder__build(struct profile *p, const struct trace_table *tt, struct symbolizer *sym)
{
	struct builder b = {.p = p, .sym = sym};
	uint32_t *ids = NULL;
	size_t cap = 0;
	void *e;
	int err = 0;

	hashmap__init(&b.frames, frame_equal, NULL);
	symbolizer__new_pass(sym);
	err = name_native_frames(&b, tt);
	/* Nothing reads the files until the next pass (an agent's next interval). */
	symbolizer__drop_file_pages(sym);
	if (err)
		goto cleanup;
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
		if (!err && tt->keep_events)
			err = profile__set_sample_events(
			    p, t->cpu, t->timestamps,
			    t->n_timestamps == t->count ? t->n_timestamps : 0);
		if (err)
			goto cleanup;
	}
	p->stats.truncated += tt->truncated;
	p->has_events = tt->keep_events;
cleanup:
	for (size_t it = 0; hashmap__next(&b.frames, &it, &e);)
		free(e);
	hashmap__clear(&b.frames);
	free(ids);
	return err;
}
