// SPDX-License-Identifier: Apache-2.0
#include "util/curl_api.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "util/dynlib.h"

static struct curl_api api;
static bool api_ok;
static char api_why[320];
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

static void api_load(void)
{
	static const struct dynlib_sym syms[] = {
#define CURL_API_SYM(field, fn) {#fn, &api.field},
	    CURL_API_FUNCS(CURL_API_SYM)
#undef CURL_API_SYM
	};
	char why[256];

	api_ok =
	    !dynlib__load(CURL_API_SONAME, syms, sizeof(syms) / sizeof(syms[0]), why, sizeof(why));
	if (!api_ok)
		snprintf(api_why, sizeof(api_why), "cannot load libcurl (%s)", why);
}

const struct curl_api *curl_api__get(const char **why)
{
	pthread_once(&api_once, api_load);
	if (!api_ok && why)
		*why = api_why;
	return api_ok ? &api : NULL;
}
