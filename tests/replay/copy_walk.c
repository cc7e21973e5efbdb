// SPDX-License-Identifier: Apache-2.0
#include "copy_walk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "elf/file_id.h"
#include "engine/stack_copy.h"
#include "proc/process_table.h"
#include "proc/remote_memory.h"
#include "unwind/stack_deltas.h"
#include "unwind/unwind_maps.h"

#define PAGE 4096u

/* The four maps unwind_maps writes and stack_copy reads, shaped as in
 * bpf/sampler.bpf.c (exe_mappings, unwind_tables, table_info, unwind_rules). */
struct copy_maps {
	int inner, mappings, tables, info, rules;
};

static void copy_maps__close(struct copy_maps *m)
{
	int *fds[] = {&m->inner, &m->mappings, &m->tables, &m->info, &m->rules};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

static int copy_maps__create(struct copy_maps *m)
{
	LIBBPF_OPTS(bpf_map_create_opts, inner_opts, .map_flags = BPF_F_INNER_MAP);
	LIBBPF_OPTS(bpf_map_create_opts, lpm_opts, .map_flags = BPF_F_NO_PREALLOC);
	LIBBPF_OPTS(bpf_map_create_opts, outer_opts);
	int err = 0;

	*m = (struct copy_maps){-1, -1, -1, -1, -1};
	m->inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "op_inner", sizeof(uint32_t),
				  sizeof(struct op_delta_page), 1, &inner_opts);
	if (m->inner < 0)
		goto fail;
	outer_opts.inner_map_fd = m->inner;
	m->tables = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "op_tables", sizeof(uint32_t),
				   sizeof(uint32_t), OP_MAX_DELTA_CHUNKS, &outer_opts);
	m->mappings =
	    bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "op_mappings", sizeof(struct op_mapping_key),
			   sizeof(struct op_mapping_value), 1024, &lpm_opts);
	m->info = bpf_map_create(BPF_MAP_TYPE_HASH, "op_info", sizeof(uint64_t),
				 sizeof(struct op_table_info), 1024, NULL);
	m->rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "op_rules", sizeof(uint32_t),
				  sizeof(struct op_unwind_rule), OP_MAX_RULES, NULL);
	if (m->tables >= 0 && m->mappings >= 0 && m->info >= 0 && m->rules >= 0)
		return 0;
fail:
	err = -errno;
	copy_maps__close(m);
	return err ? err : -EIO;
}

/*
 * The Go switch as bpf/stack_copy.h's copy_go_switch() and copy_go_stack()
 * capture it at the sample, from the snapshot: the switch's own check
 * (stack_copy__go_curg), curg.sched.sp in curg's stack; then up to go_max
 * bytes of that stack from sched.sp, after the copied stack.
 */
static void build_copy_go(const struct remote_memory *mem, struct op_stack_copy *c, uint32_t go_max)
{
	uint64_t g = 0, m = 0, curg, sp = 0, bp = 0, lo = 0, hi = 0, n;
	uint8_t *go_stack = (uint8_t *)(c + 1) + c->stack_len;

	if (!go_max || !(curg = stack_copy__go_curg(mem, c->tls_base, &g, &m)) ||
	    remote_memory__read(mem, curg + OP_GO_G_SCHED + OP_GO_GOBUF_SP, &sp, 8) ||
	    remote_memory__read(mem, curg + OP_GO_G_SCHED + OP_GO_GOBUF_BP, &bp, 8) ||
	    remote_memory__read(mem, curg, &lo, 8) ||
	    remote_memory__read(mem, curg + OP_GO_G_STACK_HI, &hi, 8) || sp < lo || sp >= hi)
		return;
	n = hi - sp;
	if (n > go_max)
		n = go_max;
	if (n > OP_STACK_COPY_GO_MAX)
		n = OP_STACK_COPY_GO_MAX;
	if (remote_memory__read(mem, sp, go_stack, n))
		return;
	c->go_flags = OP_STACK_COPY_F_GO;
	c->go_g = g;
	c->go_m = m;
	c->go_curg = curg;
	c->go_sched_sp = sp;
	c->go_sched_bp = bp;
	c->go_stack_len = (uint32_t)n;
}

/*
 * The record the sampler sends (bpf/stack_copy.h): no kernel frames, the
 * stack from rsp up to the end of what the snapshot holds there (the stack's
 * mapping), whole pages after the first, at most OP_STACK_COPY_MAX.
 * Returns the record (caller frees) and its size in *size, or NULL.
 */
static struct op_stack_copy *build_copy(const struct snapshot *s, const struct snapshot_thread *t,
					uint32_t go_max, size_t *size)
{
	struct remote_memory mem = snapshot__memory(s);
	struct op_stack_copy *c =
	    calloc(1, OP_STACK_COPY_SIZE(0, OP_STACK_COPY_MAX) + OP_STACK_COPY_GO_MAX);
	uint64_t sp = t->regs.rsp, at = sp;
	uint8_t *stack;

	if (!c)
		return NULL;
	stack = (uint8_t *)(c + 1);
	while (at - sp < OP_STACK_COPY_MAX) {
		uint64_t end = (at & ~(uint64_t)(PAGE - 1)) + PAGE;

		if (end - sp > OP_STACK_COPY_MAX)
			end = sp + OP_STACK_COPY_MAX;
		if (remote_memory__read(&mem, at, stack + (at - sp), end - at))
			break;
		at = end;
	}
	c->hdr.type = OP_EVENT_STACK_COPY;
	c->hdr.pid = s->pid;
	c->tid = t->tid;
	memcpy(c->comm, t->comm,
	       sizeof(c->comm) < sizeof(t->comm) ? sizeof(c->comm) : sizeof(t->comm));
	c->pc = t->regs.rip;
	c->sp = sp;
	c->fp = t->regs.rbp;
	c->tls_base = t->regs.fs_base;
	c->bx = t->regs.rbx;
	c->stack_len = (uint32_t)(at - sp);
	build_copy_go(&mem, c, go_max);
	*size = OP_STACK_COPY_SIZE(0, c->stack_len) + c->go_stack_len;
	return c;
}

int copy_walk__run(const struct snapshot *s, const struct snapshot_thread *t,
		   const struct space *sp, struct op_frame *frames, uint32_t *n_frames,
		   uint32_t go_max, uint32_t *stack_len, struct stack_copy_stats *stats)
{
	struct process_table pt = {0};
	struct process p = {.pid = s->pid, .refreshes = 1};
	struct unwind_maps um;
	struct copy_maps m;
	struct op_stack_copy *copy = NULL;
	struct op_trace *out = NULL;
	uint8_t id[STACK_DELTAS_ID_LEN];
	size_t size = 0;
	long len;
	int err;

	*n_frames = 0;
	err = copy_maps__create(&m);
	if (err)
		return err;
	unwind_maps__init(&um, m.mappings, m.tables, m.info, m.rules, OP_MAX_RULES);
	p.maps = calloc(sp->n_maps ? sp->n_maps : 1, sizeof(*p.maps));
	copy = build_copy(s, t, go_max, &size);
	out = malloc(OP_TRACE_MAX_SIZE);
	if (!p.maps || !copy || !out) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* The process table of a process whose maps were read and tables built
	 * since the sample: each file's table under the agent's id for it. */
	for (size_t i = 0; i < sp->n_maps; i++) {
		const struct space_map *sm = &sp->maps[i];
		struct process_mapping *pm = &p.maps[p.n_maps++];

		*pm = (struct process_mapping){.start = sm->start,
					       .end = sm->end,
					       .offset = sm->offset,
					       .bias = sm->bias,
					       .has_bias = sm->has_bias,
					       .file_slot = (uint32_t)i + 1};
		if (!sm->file && sm->inode == 0 && !sm->is_vdso) {
			pm->range_id = OP_TABLE_ID_ANON;
			continue;
		}
		if (!sm->file || !sm->file->ef || !sm->has_bias)
			continue;
		/* The agent's id of the table: from the bytes it is built from. */
		if (stack_deltas__table_id(sm->file->ef, id))
			continue;
		pm->table_id = file_id__from_htlhash(id);
		/* No CFI (or none usable): frame pointers, as the agent does (table id 0). */
		if (unwind_maps__acquire(&um, pm->table_id, sm->file->ef))
			pm->table_id = 0;
	}
	pt.unwind = &um;
	len = stack_copy__to_trace(copy, size, &pt, &p, NULL, NULL, out, stats, NULL,
				   OP_MAX_USER_FRAMES);
	if (len < 0) {
		err = (int)len;
		goto cleanup;
	}
	*n_frames = out->n_user;
	*stack_len = copy->stack_len;
	memcpy(frames, (const uint64_t *)(out + 1) + out->n_kernel,
	       out->n_user * sizeof(struct op_frame));
cleanup:
	unwind_maps__clear(&um);
	copy_maps__close(&m);
	free(p.maps);
	free(copy);
	free(out);
	return err;
}
