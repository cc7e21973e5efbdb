// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * Says "ready", waits until the file FLAG exists, then maps the code segment
 * of a big library LIB (a copy of libLLVM, whose stack-delta table takes the
 * profiler a second or more to build; mapped as the loader would, without
 * running or relocating it, which would take longer than the build) and
 * right after it dlopens lib/late_lib.so
 * (next to this program), and spins in main -> lib_outer -> lib_mid ->
 * lib_leaf (no frame pointers) until SECONDS after the start. Samples taken
 * while the big table is built are only complete if the profiler kept them
 * and unwound them once the process's tables were in.
 * Usage: big_lib_chain SECONDS LIB FLAG
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload.h"

typedef unsigned long (*lib_fn)(unsigned long x, time_t deadline);

/* Maps path's executable PT_LOAD segment read-only and executable. 0 or -1. */
static int map_code(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		return -1;
	for (int i = 0; i < eh.e_phnum; i++) {
		off_t off = (off_t)eh.e_phoff + (off_t)i * eh.e_phentsize;
		uint64_t start;

		if (pread(fd, &ph, sizeof(ph), off) != sizeof(ph))
			return -1;
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		start = ph.p_offset & ~4095ull;
		if (mmap(NULL, ph.p_filesz + (ph.p_offset - start), PROT_READ | PROT_EXEC,
			 MAP_PRIVATE, fd, (off_t)start) == MAP_FAILED)
			return -1;
		close(fd);
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	time_t deadline = wl_deadline(argc, argv);
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	char *slash;
	void *lib;
	lib_fn outer;
	unsigned long r;

	if (argc < 4 || n <= 0) {
		fprintf(stderr, "usage: big_lib_chain SECONDS LIB FLAG\n");
		return 2;
	}
	wl_ready();
	while (access(argv[3], F_OK))
		usleep(20000);
	if (map_code(argv[2])) {
		fprintf(stderr, "big_lib_chain: cannot map %s\n", argv[2]);
		return 1;
	}
	path[n] = '\0';
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "lib/late_lib.so");
	lib = dlopen(path, RTLD_NOW);
	outer = lib ? (lib_fn)dlsym(lib, "lib_outer") : NULL;
	if (!outer) {
		fprintf(stderr, "big_lib_chain: %s\n", dlerror());
		return 1;
	}
	r = outer(1, deadline);
	WL_OPAQUE(r);
	printf("%lu\n", r & 1);
	return 0;
}
