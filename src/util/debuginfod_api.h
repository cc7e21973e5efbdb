/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OMNIPROF_UTIL_DEBUGINFOD_API_H
#define OMNIPROF_UTIL_DEBUGINFOD_API_H

#include <elfutils/debuginfod.h> /* types and constants only: libdebuginfod is not linked */

/*
 * The libdebuginfod functions symbol/debuginfo.c uses, from
 * libdebuginfod.so.1 opened at the first lookup really made (util/dynlib.h):
 * its constructor initialises libcurl and GnuTLS, which no run without
 * DEBUGINFOD_URLS needs.
 */
#define DEBUGINFOD_API_FUNCS(X)                                                                    \
	X(begin, debuginfod_begin)                                                                 \
	X(end, debuginfod_end)                                                                     \
	X(find_debuginfo, debuginfod_find_debuginfo)                                               \
	X(set_progressfn, debuginfod_set_progressfn)                                               \
	X(set_user_data, debuginfod_set_user_data)                                                 \
	X(get_user_data, debuginfod_get_user_data)

struct debuginfod_api {
#define DEBUGINFOD_API_FIELD(field, fn) __typeof__(fn) *field;
	DEBUGINFOD_API_FUNCS(DEBUGINFOD_API_FIELD)
#undef DEBUGINFOD_API_FIELD
};

#define DEBUGINFOD_API_SONAME "libdebuginfod.so.1"

/*
 * libdebuginfod's functions, the library opened at the first call
 * (thread-safe); NULL when it cannot be, with *why (when why is not NULL)
 * saying so for the caller's one line; nothing logged here. The table and
 * the text live as long as the process.
 */
const struct debuginfod_api *debuginfod_api__get(const char **why);

#endif
