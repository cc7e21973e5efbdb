// SPDX-License-Identifier: Apache-2.0
#include "util/debuginfod_api.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "util/dynlib.h"

static struct debuginfod_api api;
static bool api_ok;
static char api_why[320];
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

static void api_load(void)
{
	static const struct dynlib_sym syms[] = {
#define DEBUGINFOD_API_SYM(field, fn) {#fn, &api.field},
	    DEBUGINFOD_API_FUNCS(DEBUGINFOD_API_SYM)
#undef DEBUGINFOD_API_SYM
	};
	char why[256];

	api_ok = !dynlib__load(DEBUGINFOD_API_SONAME, syms, sizeof(syms) / sizeof(syms[0]), why,
			       sizeof(why));
	if (!api_ok)
		snprintf(api_why, sizeof(api_why), "cannot load libdebuginfod (%s)", why);
}

const struct debuginfod_api *debuginfod_api__get(const char **why)
{
	pthread_once(&api_once, api_load);
	if (!api_ok && why)
		*why = api_why;
	return api_ok ? &api : NULL;
}
