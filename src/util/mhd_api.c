// SPDX-License-Identifier: Apache-2.0
#include "util/mhd_api.h"

#include "util/dynlib.h"

static struct mhd_api api;
static const struct dynlib_sym syms[] = {
#define MHD_API_SYM(field, fn) {#fn, &api.field},
    MHD_API_FUNCS(MHD_API_SYM)
#undef MHD_API_SYM
};
static struct dynlib lib = DYNLIB_INIT("libmicrohttpd", MHD_API_SONAME, syms);

const struct mhd_api *mhd_api__get(const char **why)
{
	return dynlib__get(&lib, why) ? &api : NULL;
}
