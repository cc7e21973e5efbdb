/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OMNIPROF_PROC_PROC_PIDS_H
#define OMNIPROF_PROC_PROC_PIDS_H

#include <stdint.h>

/*
 * Calls fn for each process id listed in /proc (entries that are whole
 * decimal numbers in 1..UINT32_MAX), in readdir's order, until fn returns
 * non-zero. Returns fn's non-zero value, 0 when every pid was seen, or -errno
 * when /proc cannot be read. A process that exits meanwhile may or may not be
 * listed: callers treat each pid as a hint.
 */
int proc_pids__for_each(int (*fn)(uint32_t pid, void *ctx), void *ctx);

#endif
