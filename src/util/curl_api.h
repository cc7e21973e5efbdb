/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OMNIPROF_UTIL_CURL_API_H
#define OMNIPROF_UTIL_CURL_API_H

#include <curl/curl.h> /* types and constants only: libcurl is not linked */

/*
 * The libcurl functions the exporters use (OTLP, Pyroscope), from
 * libcurl.so.4 opened at first use (util/dynlib.h). Fields drop the curl_
 * prefix: curl_easy_setopt and curl_easy_getinfo are macros in curl.h.
 */
#define CURL_API_FUNCS(X)                                                                          \
	X(global_init, curl_global_init)                                                           \
	X(easy_init, curl_easy_init)                                                               \
	X(easy_cleanup, curl_easy_cleanup)                                                         \
	X(easy_reset, curl_easy_reset)                                                             \
	X(easy_setopt, curl_easy_setopt)                                                           \
	X(easy_perform, curl_easy_perform)                                                         \
	X(easy_getinfo, curl_easy_getinfo)                                                         \
	X(easy_strerror, curl_easy_strerror)                                                       \
	X(slist_append, curl_slist_append)                                                         \
	X(slist_free_all, curl_slist_free_all)                                                     \
	X(free, curl_free)                                                                         \
	X(url, curl_url)                                                                           \
	X(url_cleanup, curl_url_cleanup)                                                           \
	X(url_get, curl_url_get)                                                                   \
	X(url_set, curl_url_set)                                                                   \
	X(url_strerror, curl_url_strerror)

struct curl_api {
#define CURL_API_FIELD(field, fn) __typeof__(fn) *field;
	CURL_API_FUNCS(CURL_API_FIELD)
#undef CURL_API_FIELD
};

#define CURL_API_SONAME "libcurl.so.4"

/*
 * libcurl's functions, the library opened at the first call (thread-safe);
 * NULL when it cannot be, with *why (when why is not NULL) saying so in a
 * few words for the caller's one error line; nothing logged here.
 * curl_global_init is the caller's (transport.h). The table and the text
 * live as long as the process.
 */
const struct curl_api *curl_api__get(const char **why);

#endif
