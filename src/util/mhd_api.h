/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OMNIPROF_UTIL_MHD_API_H
#define OMNIPROF_UTIL_MHD_API_H

#include <microhttpd.h> /* types and constants only: libmicrohttpd is not linked */

/*
 * The libmicrohttpd functions of serve (serve/server.c) and the metrics
 * endpoint (export/metrics_server.c), from libmicrohttpd.so.12 opened at
 * first use (util/dynlib.h): it brings GnuTLS, whose constructor costs every
 * start of every command that serves nothing.
 */
#define MHD_API_FUNCS(X)                                                                           \
	X(start_daemon, MHD_start_daemon)                                                          \
	X(stop_daemon, MHD_stop_daemon)                                                            \
	X(create_response_from_buffer, MHD_create_response_from_buffer)                            \
	X(add_response_header, MHD_add_response_header)                                            \
	X(queue_response, MHD_queue_response)                                                      \
	X(destroy_response, MHD_destroy_response)                                                  \
	X(lookup_connection_value, MHD_lookup_connection_value)

struct mhd_api {
#define MHD_API_FIELD(field, fn) __typeof__(fn) *field;
	MHD_API_FUNCS(MHD_API_FIELD)
#undef MHD_API_FIELD
};

#define MHD_API_SONAME "libmicrohttpd.so.12"

/*
 * libmicrohttpd's functions, the library opened at the first call
 * (thread-safe); NULL when it cannot be, with *why (when why is not NULL)
 * saying so for the caller's one error line; nothing logged here. The table
 * and the text live as long as the process.
 */
const struct mhd_api *mhd_api__get(const char **why);

#endif
