/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OMNIPROF_UTIL_DYNLIB_H
#define OMNIPROF_UTIL_DYNLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Shared libraries opened at first use (dlopen) instead of linked: libcurl
 * (exporters), libdebuginfod (debuginfod lookups), libmicrohttpd (the
 * metrics endpoint, serve). Linked, their constructors (GnuTLS, p11-kit,
 * curl_global_init in libdebuginfod's) run in every start of every command
 * and their pages stay mapped, for features most runs never use.
 *
 * One table of function pointers a library, filled once for the process by
 * dynlib__load(): either every symbol resolves or the table is unusable, so a
 * caller checks one pointer, not each function.
 */

struct dynlib_sym {
	const char *name;
	/* The address of one function pointer of the table: dlsym's answer is copied
	 * there byte for byte (POSIX: a function pointer and a void * are alike). */
	void *fn_ptr;
};

/*
 * Opens soname (RTLD_NOW | RTLD_LOCAL) and fills every function pointer of syms. The
 * handle is kept for the life of the process. 0, or -ENOENT with why
 * (why_len bytes) saying which library or symbol is missing, nothing logged:
 * the caller says what is off without it. Not thread-safe: call it under a
 * pthread_once, as the tables do.
 */
int dynlib__load(const char *soname, const struct dynlib_sym *syms, size_t n, char *why,
		 size_t why_len);

/*
 * One library's table, loaded once for the process at its first
 * dynlib__get(): a static of the library's *_api.c, made with DYNLIB_INIT.
 */
struct dynlib {
	const char *what; /* the library's name in the error line, e.g. "libcurl" */
	const char *soname;
	const struct dynlib_sym *syms;
	size_t n_syms;
	pthread_mutex_t lock;
	bool tried;
	bool ok;
	char why[320];
};

#define DYNLIB_INIT(what_, soname_, syms_)                                                         \
	{                                                                                          \
		.what = (what_), .soname = (soname_), .syms = (syms_),                             \
		.n_syms = sizeof(syms_) / sizeof((syms_)[0]), .lock = PTHREAD_MUTEX_INITIALIZER,   \
	}

/*
 * Loads lib at the first call (thread-safe) and says whether its table is
 * usable. When it is not, *why (when why is not NULL) says so in a few words
 * for the caller's one error line ("cannot load libcurl (...)"); nothing is
 * logged here. The text lives as long as lib.
 */
bool dynlib__get(struct dynlib *lib, const char **why);

#endif
