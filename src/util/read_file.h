/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OMNIPROF_UTIL_READ_FILE_H
#define OMNIPROF_UTIL_READ_FILE_H

#include <stddef.h>

/*
 * Reads a whole file into a NUL-terminated buffer (the caller frees it).
 * Works for /proc and /sys files, which report a size of 0.
 * Returns 0 with *buf and *len, or -errno.
 */
int read_file(const char *path, char **buf, size_t *len);

#endif
