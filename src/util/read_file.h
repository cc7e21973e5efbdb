/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OMNIPROF_UTIL_READ_FILE_H
#define OMNIPROF_UTIL_READ_FILE_H

#include <stddef.h>

/* The most read_file() reads: a file that goes on is refused (-EFBIG). */
#define READ_FILE_MAX (256u << 20)

/*
 * Reads a whole file into a NUL-terminated buffer (the caller frees it).
 * Works for /proc and /sys files, which report a size of 0. Only regular
 * files (procfs and sysfs ones included; -ENODEV for FIFOs, sockets and
 * devices, -EISDIR for folders), opened without blocking, at most
 * READ_FILE_MAX bytes. For paths the profiler builds itself (/proc/PID/...,
 * runtime state under the host's root); files a target names go through
 * util/safe_open.h. Returns 0 with *buf and *len, or -errno.
 */
int read_file(const char *path, char **buf, size_t *len);

#endif
