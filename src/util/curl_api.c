// SPDX-License-Identifier: Apache-2.0
#include "util/curl_api.h"

#include "util/dynlib.h"

static struct curl_api api;
static const struct dynlib_sym syms[] = {
#define CURL_API_SYM(field, fn) {#fn, &api.field},
    CURL_API_FUNCS(CURL_API_SYM)
#undef CURL_API_SYM
};
static struct dynlib lib = DYNLIB_INIT("libcurl", CURL_API_SONAME, syms);

const struct curl_api *curl_api__get(const char **why)
{
	return dynlib__get(&lib, why) ? &api : NULL;
}
