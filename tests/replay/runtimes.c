// SPDX-License-Identifier: Apache-2.0
#include "runtimes.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"
#include "proc/proc_maps.h"
#include "space.h"

static struct remote_memory memory_of(void *ctx, uint32_t pid)
{
	const struct runtimes *rt = ctx;

	return rt->live ? remote_memory__live(pid) : rt->mem;
}

/* The slot of the file a mapping of path shows (the space's ELF file, else a
 * pseudo file as file_cache__get makes for anonymous code), added on first sight. */
static uint32_t slot_of(struct runtimes *rt, const struct space *sp, const struct proc_map *m)
{
	struct file_cache *fc = &rt->files;
	const char *path = m->path[0] ? m->path : "[anon]";
	struct cached_file *f, **files;

	for (size_t i = 0; i < fc->n_files; i++)
		if (!strcmp(fc->files[i]->path, path))
			return fc->files[i]->slot;
	files = realloc(fc->files, (fc->n_files + 1) * sizeof(*files));
	if (!files)
		return 0;
	fc->files = files;
	f = calloc(1, sizeof(*f));
	if (!f)
		return 0;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return 0;
	}
	f->basename = strrchr(f->path, '/') ? strrchr(f->path, '/') + 1 : f->path;
	f->inode = m->inode;
	f->dev_major = m->dev_major;
	f->dev_minor = m->dev_minor;
	for (size_t i = 0; i < sp->n_files; i++)
		if (!strcmp(sp->files[i]->path, path)) {
			f->elf = sp->files[i]->ef; /* the space's: not closed here */
			f->open_error = sp->files[i]->open_error;
		}
	f->slot = (uint32_t)fc->n_files + 1;
	fc->files[fc->n_files++] = f;
	fc->n_open = fc->n_files;
	return f->slot;
}

int runtimes__open(struct runtimes *rt, const struct space *sp, const char *maps, size_t len,
		   uint32_t pid, const struct remote_memory *mem)
{
	struct interp_env env = {.memory = memory_of, .memory_ctx = rt};
	struct proc_map *raw = NULL;
	size_t n_raw = 0;
	uint64_t vaddr;
	int err;

	memset(rt, 0, sizeof(*rt));
	rt->live = !mem;
	if (mem)
		rt->mem = *mem;
	env.files = &rt->files;
	err = proc_maps__parse(maps, len, &raw, &n_raw, NULL);
	if (err)
		return err;
	rt->proc.pid = pid;
	rt->proc.maps = calloc(n_raw ? n_raw : 1, sizeof(*rt->proc.maps));
	if (!rt->proc.maps) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* As process_table's maps read: executable mappings, bias from the code segment. */
	for (size_t i = 0; i < n_raw; i++) {
		struct process_mapping *pm = &rt->proc.maps[rt->proc.n_maps];
		const struct cached_file *f;
		uint32_t slot;

		if (!(raw[i].perms & PROC_MAP_X))
			continue;
		slot = slot_of(rt, sp, &raw[i]);
		if (!slot) {
			err = -ENOMEM;
			goto cleanup;
		}
		*pm = (struct process_mapping){.start = raw[i].start,
					       .end = raw[i].end,
					       .offset = raw[i].offset,
					       .file_slot = slot};
		f = file_cache__at(&rt->files, slot);
		if (f->elf && elf_file__mapping_bias(f->elf, raw[i].offset,
						     raw[i].end - raw[i].start, PF_X, &vaddr)) {
			pm->bias = raw[i].start - vaddr;
			pm->has_bias = true;
		}
		rt->proc.n_maps++;
	}
	err = interp__new(&env, NULL, &rt->in);
	if (!err)
		interp__sync_process(rt->in, &rt->proc);
cleanup:
	proc_maps__free(raw, n_raw);
	if (err)
		runtimes__close(rt);
	return err;
}

void runtimes__close(struct runtimes *rt)
{
	if (!rt)
		return;
	interp__free(rt->in);
	for (size_t i = 0; i < rt->files.n_files; i++) {
		free(rt->files.files[i]->path);
		free(rt->files.files[i]);
	}
	free(rt->files.files);
	free(rt->proc.maps);
	memset(rt, 0, sizeof(*rt));
}

/* The registry's runtime called name, or NULL. */
static const struct interp_ops *runtime_named(const char *name)
{
	for (size_t r = 0; r < interp_registry_len; r++)
		if (!strcmp(interp_registry[r]->name, name))
			return interp_registry[r];
	return NULL;
}

bool runtimes__running(const struct runtimes *rt, const char *name)
{
	const struct interp_ops *ops = runtime_named(name);

	return ops && rt->in && interp__walk_state(rt->in, rt->proc.pid, ops->interp);
}

const char *runtimes__names(const struct runtimes *rt, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (size_t r = 0; r < interp_registry_len && used < len; r++)
		if (runtimes__running(rt, interp_registry[r]->name))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 interp_registry[r]->name);
	return buf;
}

bool runtimes__in_ranges(const struct runtimes *rt, const char *name, uint64_t pc)
{
	const struct interp_ops *ops = runtime_named(name);
	const struct op_interp_proc *v = rt->in ? interp__ranges(rt->in, rt->proc.pid) : NULL;

	for (int i = 0; ops && v && i < OP_INTERP_MAX_RANGES; i++)
		if (v->ranges[i].interp == ops->interp && pc >= v->ranges[i].start &&
		    pc < v->ranges[i].end)
			return true;
	return false;
}

struct user_unwind_result
runtimes__walk(const struct runtimes *rt, const struct user_unwind_ops *ops,
	       int (*read)(void *ctx, void *dst, size_t size, uint64_t addr), void *read_ctx,
	       const struct user_unwind_regs *regs, struct op_frame *frames, uint32_t max_frames,
	       struct interp_walk_stats *stats)
{
	/* Each runtime's state for this walk, as src/engine/stack_copy.c keeps it
	 * (static: the suite walks one thread at a time). */
	static _Alignas(max_align_t) unsigned char walks[OP_INTERP__COUNT][INTERP_WALK_MAX_SIZE];
	struct user_unwind_interp interp = {.ranges = rt->in ? interp__ranges(rt->in, rt->proc.pid)
							     : NULL};
	struct user_unwind_result r;

	for (unsigned int i = 1; rt->in && i < OP_INTERP__COUNT; i++) {
		const struct interp_ops *ops_i = interp__of_id(i);
		struct interp_walk_env env = {.state = interp__walk_state(rt->in, rt->proc.pid, i),
					      .thread_ptr = regs->fsbase,
					      .read = read,
					      .read_ctx = read_ctx};

		if (!env.state || !ops_i || !ops_i->walk_begin ||
		    ops_i->walk_size > sizeof(walks[i]))
			continue;
		memset(walks[i], 0, ops_i->walk_size);
		interp.runtimes[i] = ops_i->walk_begin(walks[i], &env);
	}
	r = user_unwind__walk_regs(ops, &interp, rt->proc.pid, regs, frames, max_frames);
	for (unsigned int i = 0; stats && i < OP_INTERP__COUNT; i++) {
		const struct interp_ops *ops_i = interp__of_id(i);

		memset(&stats[i], 0, sizeof(stats[i]));
		if (interp.runtimes[i].step && ops_i && ops_i->walk_end)
			ops_i->walk_end(walks[i], &stats[i]);
	}
	return r;
}

size_t runtimes__name(struct runtimes *rt, const struct op_frame *f, const char **runtime,
		      const char **suffix, struct interp_line *out, size_t max)
{
	const struct interp_ops *ops = interp__of_kind(f->kind);
	uint64_t offset = 0;
	uint32_t id = 0;

	if (!ops || !interp__resolve(rt->in, rt->proc.pid, f, &id, &offset))
		return 0;
	*runtime = ops->name;
	if (suffix)
		*suffix = interp__folded_suffix(f->kind, offset);
	return interp__describe_lines(rt->in, f->kind, id, offset, out, max);
}
