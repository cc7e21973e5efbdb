/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One-line diagnostics on stderr. log_warn_once-style rate limiting lives with
 * the callers that need it (they count every occurrence and log the first).
 */
#ifndef OMNIPROF_UTIL_LOG_H
#define OMNIPROF_UTIL_LOG_H

#include <stdbool.h>

extern int log_verbosity; /* 0 = warnings and errors, 1 = -v, 2 = -vv */

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define LOG_ERROR 0
#define LOG_WARN  1
#define LOG_INFO  2
#define LOG_DEBUG 3

#define pr_err(...)   log_msg(LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
