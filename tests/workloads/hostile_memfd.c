// build: gcc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls
/*
 * A program that runs from memory only: it copies its own executable into
 * a memfd_create() file and fexecve()s it, so the running image has no path
 * (/proc/PID/maps says "/memfd:hx_memfd (deleted)"). The new image names
 * its process "hx_memfd" and runs main -> mf_01 .. mf_06 -> mf_leaf,
 * spinning, until SECONDS pass. Built with frame pointers: what it tests is
 * a file with no path, not unwinding without them.
 * Usage: hostile_memfd SECONDS
 */
#define _GNU_SOURCE /* memfd_create */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workload.h"

static time_t deadline;

WL_NOINLINE unsigned long mf_leaf(unsigned long x)
{
	return wl_spin_until(x, deadline);
}

#define LINK(n, next)                                                                              \
	WL_NOINLINE unsigned long mf_##n(unsigned long x)                                          \
	{                                                                                          \
		unsigned long r = next(x + 1##n);                                                  \
		WL_OPAQUE(r);                                                                      \
		return r ^ 1##n;                                                                   \
	}
LINK(06, mf_leaf)
LINK(05, mf_06)
LINK(04, mf_05)
LINK(03, mf_04)
LINK(02, mf_03)
LINK(01, mf_02)

extern char **environ;

int main(int argc, char **argv)
{
	char buf[1 << 16];
	ssize_t n;
	int in, fd;

	if (argc > 2 && !strcmp(argv[2], "from-memfd")) {
		prctl(PR_SET_NAME, "hx_memfd");
		deadline = wl_deadline(argc, argv);
		wl_ready();
		return (int)(mf_01(1) & 0);
	}
	in = open("/proc/self/exe", O_RDONLY);
	fd = memfd_create("hx_memfd", MFD_CLOEXEC);
	if (in < 0 || fd < 0) {
		perror("memfd");
		return 1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n) {
			perror("write memfd");
			return 1;
		}
	close(in);
	{
		char *args[] = {"hx_memfd", argc > 1 ? argv[1] : "10", "from-memfd", NULL};

		fexecve(fd, args, environ);
	}
	perror("fexecve");
	return 1;
}
