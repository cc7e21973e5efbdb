// SPDX-License-Identifier: Apache-2.0
#include "util/dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(void (*)(void)) == sizeof(void *), "dlsym hands out functions as void *");

int dynlib__load(const char *soname, const struct dynlib_sym *syms, size_t n, char *why,
		 size_t why_len)
{
	const char *err;
	void *h;

	dlerror();
	h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		err = dlerror();
		snprintf(why, why_len, "%s", err ? err : soname);
		return -ENOENT;
	}
	for (size_t i = 0; i < n; i++) {
		void *addr;

		dlerror();
		addr = dlsym(h, syms[i].name);
		err = dlerror();
		if (err || !addr) {
			snprintf(why, why_len, "%s: no symbol %s", soname, syms[i].name);
			/* Not closed: its destructors at dlclose are a risk for nothing. */
			for (size_t j = 0; j < i; j++)
				memset(syms[j].fn_ptr, 0, sizeof(void *));
			return -ENOENT;
		}
		memcpy(syms[i].fn_ptr, &addr, sizeof(addr));
	}
	return 0;
}

bool dynlib__get(struct dynlib *lib, const char **why)
{
	bool ok;

	pthread_mutex_lock(&lib->lock);
	if (!lib->tried) {
		char err[256];

		lib->tried = true;
		lib->ok = !dynlib__load(lib->soname, lib->syms, lib->n_syms, err, sizeof(err));
		if (!lib->ok)
			snprintf(lib->why, sizeof(lib->why), "cannot load %s (%s)", lib->what, err);
	}
	ok = lib->ok;
	pthread_mutex_unlock(&lib->lock);
	if (!ok && why)
		*why = lib->why;
	return ok;
}
