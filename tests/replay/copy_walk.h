/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The replay of a sample taken before its process's tables existed: the
 * record the BPF sampler sends then (struct op_stack_copy: registers and the
 * stack from rsp up to the top of its mapping, at most OP_STACK_COPY_MAX)
 * built from a snapshot's thread, the snapshot's files' tables loaded into
 * BPF maps as the agent loads them (unwind_maps), a process whose mappings
 * are the snapshot's, and the copy unwound by the agent's own
 * stack_copy__to_trace(), which reads its rules back from those maps.
 * Needs BPF (maps only, no program): fails with -errno without it.
 */
#ifndef OMNIPROF_TESTS_REPLAY_COPY_WALK_H
#define OMNIPROF_TESTS_REPLAY_COPY_WALK_H

#include <stdint.h>

#include "engine/stack_copy.h"
#include "omniprof/abi.h"
#include "snapshot.h"
#include "space.h"

/*
 * Unwinds thread t of snapshot s (its executable mappings in sp) from a
 * copy. go_max: when the thread is on a Go g0 stack with a goroutine switched
 * away from, the copy also captures the switch and up to go_max bytes of the
 * goroutine's stack, as the sampler does (0: the copy captures none, as
 * before the sampler did; at most OP_STACK_COPY_GO_MAX). frames gets up to OP_MAX_USER_FRAMES user
 * frames (error frames as the record holds them), *n_frames their count, *stack_len the bytes
 * copied, stats what stack_copy counted. 0, or -errno (no BPF, no memory,
 * a malformed record).
 */
int copy_walk__run(const struct snapshot *s, const struct snapshot_thread *t,
		   const struct space *sp, struct op_frame *frames, uint32_t *n_frames,
		   uint32_t go_max, uint32_t *stack_len, struct stack_copy_stats *stats);

#endif
