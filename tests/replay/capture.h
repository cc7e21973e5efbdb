/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Captures a snapshot of a workload the test runs itself: starts it, waits
 * for "ready", stops all its threads with ptrace (a child needs no
 * privilege), moves them towards the case's stop point (resuming for a few
 * milliseconds at a time, or single-stepping the main thread), then copies
 * registers, stack memory, the vDSO and the maps, and kills the workload.
 * Only the test's own child is stopped; the agent never does this.
 */
#ifndef OMNIPROF_TESTS_REPLAY_CAPTURE_H
#define OMNIPROF_TESTS_REPLAY_CAPTURE_H

#include <stddef.h>

struct replay_case;
struct snapshot;

/* Fills snap (snapshot__init'ed). 0, or -errno with a message in err. */
int capture__run(const struct replay_case *c, const char *build_dir, struct snapshot *snap,
		 char *err, size_t len);

#endif
