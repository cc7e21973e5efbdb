/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The `interp_procs` BPF map (pid -> struct op_interp_proc, omniprof/abi.h):
 * where each process's runtimes have their code, so the walk hands those
 * frames to the runtime's step (omniprof/unwind/walk.h). The runtimes'
 * user-space side (src/interp/) fills the value from the files it inspected
 * when a process's maps are read, and removes it when the process exits or
 * execs into something else.
 */
#ifndef OMNIPROF_UNWIND_INTERP_RANGES_H
#define OMNIPROF_UNWIND_INTERP_RANGES_H

#include <stdint.h>

#include "omniprof/abi.h"

/* Adds [start, end) of runtime interp, with OP_INTERP_RANGE_F_* flags, to v.
 * 0, or -ENOSPC when v is full (OP_INTERP_MAX_RANGES), -EINVAL for an empty
 * range or OP_INTERP_NONE. */
int op_interp_proc__add(struct op_interp_proc *v, uint32_t interp, uint64_t start, uint64_t end,
			uint32_t flags);

/* Whether v holds no range. */
int op_interp_proc__empty(const struct op_interp_proc *v);

/*
 * Sets pid's value in the map map_fd, then bumps the generation in gen_fd
 * (the sampler's interp_gen: the walk remembers pids it found without an
 * entry until the generation changes; -1: none). 0 or -errno; on an error pid
 * has no value in map_fd (one whose generation could not be bumped is
 * taken out again).
 */
int interp_procs__publish(int map_fd, int gen_fd, uint32_t pid, const struct op_interp_proc *v);

/* Deletes pid's value. 0 (also when there was none) or -errno. */
int interp_procs__remove(int map_fd, uint32_t pid);

#endif
