// SPDX-License-Identifier: Apache-2.0
#include "unwind/interp_ranges.h"

#include <errno.h>

#include <bpf/bpf.h>

int op_interp_proc__add(struct op_interp_proc *v, uint32_t interp, uint64_t start, uint64_t end,
			uint32_t flags)
{
	if (interp == OP_INTERP_NONE || interp >= OP_INTERP__COUNT || start >= end)
		return -EINVAL;
	for (int i = 0; i < OP_INTERP_MAX_RANGES; i++) {
		struct op_interp_range *r = &v->ranges[i];

		if (r->start != r->end)
			continue;
		*r = (struct op_interp_range){
		    .start = start, .end = end, .interp = interp, .flags = flags};
		return 0;
	}
	return -ENOSPC;
}

int op_interp_proc__empty(const struct op_interp_proc *v)
{
	for (int i = 0; i < OP_INTERP_MAX_RANGES; i++)
		if (v->ranges[i].start != v->ranges[i].end)
			return 0;
	return 1;
}

int interp_procs__publish(int map_fd, int gen_fd, uint32_t pid, const struct op_interp_proc *v)
{
	uint32_t zero = 0;
	uint64_t gen = 0;
	int err;

	if (map_fd < 0)
		return -EBADF;
	if (bpf_map_update_elem(map_fd, &pid, v, BPF_ANY))
		return -errno;
	if (gen_fd < 0)
		return 0;
	/* After the entry: a sample that read the old generation may still have
	 * missed it, one that reads the new one finds it. This process is the
	 * map's one writer. */
	if (bpf_map_lookup_elem(gen_fd, &zero, &gen)) {
		err = -errno;
		goto cleanup;
	}
	gen++;
	if (!bpf_map_update_elem(gen_fd, &zero, &gen, BPF_ANY))
		return 0;
	err = -errno;
cleanup:
	/* Not bumped: CPUs that remember pid without an entry would not see it, and
	 * the caller, told it failed, would never take it out (a reused pid would
	 * inherit the ranges). The entry goes with its bump or not at all. */
	bpf_map_delete_elem(map_fd, &pid);
	return err;
}

int interp_procs__remove(int map_fd, uint32_t pid)
{
	if (map_fd < 0)
		return -EBADF;
	if (bpf_map_delete_elem(map_fd, &pid) && errno != ENOENT)
		return -errno;
	return 0;
}
