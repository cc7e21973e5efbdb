// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * A library replaced by another at the same address: dlopens lib/swap_a.so
 * (next to this program), says "ready" and spins in it (main -> run_a ->
 * sa_outer -> sa_mid -> sa_leaf) until SIGUSR1; then dlcloses it, dlopens
 * lib/swap_b.so, which the kernel places where swap_a was (both have one
 * size), writes both load addresses to OUT ("a 0x... b 0x...") and spins in
 * it (main -> run_b -> sb_outer -> sb_mid -> sb_leaf) until SECONDS after
 * the start. The test checks the addresses are equal.
 * Usage: dlopen_swap SECONDS OUT
 */
#define _GNU_SOURCE /* dlinfo */
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

typedef unsigned long (*lib_fn)(unsigned long x, const volatile int *stop, time_t deadline);

static volatile int stop_a;

static void on_usr1(int sig)
{
	(void)sig;
	stop_a = 1;
}

/* dlopens lib/NAME next to this program; exits on failure. */
static void *open_lib(const char *name, const char *fn_name, lib_fn *fn, uintptr_t *base)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
	struct link_map *lm = NULL;
	char *slash;
	void *lib;

	if (n <= 0)
		exit(1);
	path[n] = '\0';
	slash = strrchr(path, '/');
	snprintf(slash ? slash + 1 : path, 64, "lib/%s", name);
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib || !(*fn = (lib_fn)dlsym(lib, fn_name)) || dlinfo(lib, RTLD_DI_LINKMAP, &lm) ||
	    !lm) {
		fprintf(stderr, "dlopen_swap: %s\n", dlerror());
		exit(1);
	}
	*base = lm->l_addr;
	return lib;
}

WL_NOINLINE unsigned long run_a(lib_fn fn, time_t deadline)
{
	unsigned long r = fn(1, &stop_a, deadline);

	WL_OPAQUE(r);
	return r ^ 1;
}

WL_NOINLINE unsigned long run_b(lib_fn fn, time_t deadline)
{
	static const volatile int never;
	unsigned long r = fn(2, &never, deadline);

	WL_OPAQUE(r);
	return r ^ 2;
}

int main(int argc, char **argv)
{
	time_t deadline = wl_deadline(argc, argv);
	uintptr_t base_a, base_b;
	unsigned long r;
	lib_fn fn;
	void *lib;
	FILE *out;

	if (argc < 3)
		return 2;
	signal(SIGUSR1, on_usr1);
	lib = open_lib("swap_a.so", "sa_outer", &fn, &base_a);
	wl_ready();
	r = run_a(fn, deadline);
	if (dlclose(lib)) {
		fprintf(stderr, "dlopen_swap: %s\n", dlerror());
		return 1;
	}
	lib = open_lib("swap_b.so", "sb_outer", &fn, &base_b);
	out = fopen(argv[2], "w");
	if (!out)
		return 1;
	fprintf(out, "a 0x%lx b 0x%lx\n", (unsigned long)base_a, (unsigned long)base_b);
	fclose(out);
	r ^= run_b(fn, deadline);
	printf("%lu\n", r & 1);
	return 0;
}
