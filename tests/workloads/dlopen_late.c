// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * Starts, says "ready", sleeps DELAY seconds (default 1), and only then
 * dlopens lib/late_lib.so (next to this program) and calls into it:
 * main -> run_late -> lib_outer -> lib_mid -> lib_leaf, which spins until
 * SECONDS after the start. A profiler attached before the dlopen must pick
 * up the new mapping.
 * Usage: dlopen_late SECONDS [DELAY]
 */
#include <dlfcn.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

typedef unsigned long (*lib_fn)(unsigned long x, time_t deadline);

WL_NOINLINE unsigned long run_late(time_t deadline)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	char *slash;
	void *lib;
	lib_fn outer;
	unsigned long r;

	if (n <= 0)
		return 0;
	path[n] = '\0';
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "lib/late_lib.so");
	lib = dlopen(path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopen_late: %s\n", dlerror());
		exit(1);
	}
	outer = (lib_fn)dlsym(lib, "lib_outer");
	if (!outer) {
		fprintf(stderr, "dlopen_late: %s\n", dlerror());
		exit(1);
	}
	r = outer(1, deadline);
	WL_OPAQUE(r);
	return r ^ 1;
}

int main(int argc, char **argv)
{
	time_t deadline = wl_deadline(argc, argv);
	unsigned int delay = argc > 2 ? (unsigned int)atoi(argv[2]) : 1;
	unsigned long r;

	wl_ready();
	sleep(delay);
	r = run_late(deadline);
	printf("%lu\n", r & 1);
	return 0;
}
