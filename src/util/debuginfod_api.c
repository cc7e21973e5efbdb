// SPDX-License-Identifier: Apache-2.0
#include "util/debuginfod_api.h"

#include "util/dynlib.h"

static struct debuginfod_api api;
static const struct dynlib_sym syms[] = {
#define DEBUGINFOD_API_SYM(field, fn) {#fn, &api.field},
    DEBUGINFOD_API_FUNCS(DEBUGINFOD_API_SYM)
#undef DEBUGINFOD_API_SYM
};
static struct dynlib lib = DYNLIB_INIT("libdebuginfod", DEBUGINFOD_API_SONAME, syms);

const struct debuginfod_api *debuginfod_api__get(const char **why)
{
	return dynlib__get(&lib, why) ? &api : NULL;
}
