// SPDX-License-Identifier: Apache-2.0
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "testutil.h"

/* Given to the linker in upper case: the note holds bytes, we print lower case. */
#define CHOSEN_BUILD_ID "0123456789ABCDEF00112233445566778899AABB"

static const char lib_src[] =
    "#define NOINL __attribute__((noinline))\n"
    "volatile int omni_sink;\n"
    "int omni_data[512] = {1};\n"
    "NOINL int omni_alpha(int x) {\n"
    "  int s = 0; for (int i = 0; i < x; i++) s += i * omni_sink;\n"
    "  return s; }\n"
    "NOINL int omni_beta(int x) { return omni_alpha(x) * 3 + omni_data[x]; }\n";

static const char main_src[] = "#include <stdio.h>\n"
			       "__attribute__((noinline)) int omni_main_fn(int x) {\n"
			       "  return x * 7; }\n"
			       "int main(int argc, char **argv) {\n"
			       "  (void)argv; printf(\"%d\\n\", omni_main_fn(argc)); return 0; }\n";

struct fixture {
	char *dir;
	char lib[256];	 /* shared library, CHOSEN_BUILD_ID */
	char pie[256];	 /* PIE executable, sha1 build id */
	char nobid[256]; /* shared library without a build id */
};

static struct fixture fx;

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	char path[256], *out = NULL;
	int rc;

	(void)state;
	fx.dir = tu_mkdtemp();
	if (!fx.dir)
		return -1;
	snprintf(path, sizeof(path), "%s/lib.c", fx.dir);
	write_text(path, lib_src);
	snprintf(path, sizeof(path), "%s/main.c", fx.dir);
	write_text(path, main_src);
	snprintf(fx.lib, sizeof(fx.lib), "%s/libomni.so", fx.dir);
	snprintf(fx.pie, sizeof(fx.pie), "%s/pie", fx.dir);
	snprintf(fx.nobid, sizeof(fx.nobid), "%s/libnobid.so", fx.dir);

	rc = tu_run(&out,
		    "cc -O1 -fPIC -shared -Wl,--build-id=0x" CHOSEN_BUILD_ID
		    " -o '%s' '%s/lib.c' && "
		    "cc -O1 -fPIE -pie -Wl,--build-id=sha1 -o '%s' '%s/main.c' && "
		    "cc -O1 -fPIC -shared -Wl,--build-id=none -o '%s' '%s/lib.c'",
		    fx.lib, fx.dir, fx.pie, fx.dir, fx.nobid, fx.dir);
	if (rc != 0)
		fprintf(stderr, "building test inputs failed:\n%s\n", out ? out : "");
	free(out);
	return rc == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	tu_rmtree(fx.dir);
	free(fx.dir);
	return 0;
}

/* The PT_LOAD rows of `readelf -lW`, to compare against ours. */
static size_t readelf_loads(const char *path, struct elf_segment *segs, size_t max)
{
	char *out = NULL, *line, *save = NULL;
	size_t n = 0;

	assert_int_equal(tu_run(&out, "readelf -lW '%s'", path), 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long off, vaddr, paddr, filesz, memsz;

		if (sscanf(line, " LOAD %llx %llx %llx %llx %llx", &off, &vaddr, &paddr, &filesz,
			   &memsz) != 5)
			continue;
		assert_true(n < max);
		segs[n++] = (struct elf_segment){
		    .vaddr = vaddr, .memsz = memsz, .offset = off, .filesz = filesz};
	}
	free(out);
	return n;
}

static void check_segments_match_readelf(const struct elf_file *ef)
{
	struct elf_segment want[16];
	size_t n = readelf_loads(ef->path, want, 16);
	bool any_exec = false;

	assert_true(n >= 2);
	assert_int_equal(ef->n_segments, n);
	for (size_t i = 0; i < n; i++) {
		assert_true(ef->segments[i].offset == want[i].offset);
		assert_true(ef->segments[i].vaddr == want[i].vaddr);
		assert_true(ef->segments[i].filesz == want[i].filesz);
		assert_true(ef->segments[i].memsz == want[i].memsz);
		any_exec |= (ef->segments[i].flags & PF_X) != 0;
	}
	assert_true(any_exec);
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

static void test_shared_library(void **state)
{
	struct elf_file *ef = NULL;

	(void)state;
	assert_int_equal(elf_file__open(fx.lib, -1, &ef), 0);
	assert_non_null(ef);
	assert_int_equal(ef->type, ET_DYN);
	assert_string_equal(ef->path, fx.lib);
	assert_true(ef->fd >= 0);
	assert_non_null(ef->build_id);
	assert_string_equal(ef->build_id, "0123456789abcdef00112233445566778899aabb");
	assert_true(ef->size == file_size(fx.lib));
	check_segments_match_readelf(ef);
	elf_file__close(ef);
}

static void test_pie_build_id_matches_readelf(void **state)
{
	struct elf_file *ef = NULL;
	char *out = NULL, *p, want[129];

	(void)state;
	assert_int_equal(tu_run(&out, "readelf -n '%s'", fx.pie), 0);
	p = strstr(out, "Build ID: ");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "Build ID: %128[0-9a-f]", want), 1);
	free(out);
	assert_int_equal(strlen(want), 40); /* sha1 */

	assert_int_equal(elf_file__open(fx.pie, -1, &ef), 0);
	assert_int_equal(ef->type, ET_DYN);
	assert_string_equal(ef->build_id, want);
	check_segments_match_readelf(ef);
	elf_file__close(ef);
}

static void test_no_build_id(void **state)
{
	struct elf_file *ef = NULL;

	(void)state;
	assert_int_equal(elf_file__open(fx.nobid, -1, &ef), 0);
	assert_null(ef->build_id);
	assert_true(ef->n_segments >= 2);
	elf_file__close(ef);
}

static void test_open_from_fd(void **state)
{
	struct elf_file *ef = NULL;
	int fd = open(fx.lib, O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(elf_file__open("[label for reports]", fd, &ef), 0);
	assert_int_equal(ef->fd, fd);
	assert_string_equal(ef->path, "[label for reports]");
	assert_string_equal(ef->build_id, "0123456789abcdef00112233445566778899aabb");
	elf_file__close(ef);
	/* elf_file__close() closed the fd it owned. */
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
}

static void test_offset_to_vaddr_segments(void **state)
{
	struct elf_file *ef = NULL;
	uint64_t v;

	(void)state;
	assert_int_equal(elf_file__open(fx.lib, -1, &ef), 0);
	for (size_t i = 0; i < ef->n_segments; i++) {
		const struct elf_segment *s = &ef->segments[i];
		uint64_t probes[] = {0, s->filesz / 2, s->filesz - 1};

		for (size_t k = 0; k < 3; k++) {
			assert_true(elf_file__offset_to_vaddr(ef, s->offset + probes[k], &v));
			assert_true(v == s->vaddr + probes[k]);
		}
	}
	assert_false(elf_file__offset_to_vaddr(ef, ef->size, &v));
	assert_false(elf_file__offset_to_vaddr(ef, UINT64_MAX, &v));
	elf_file__close(ef);
}

/* Maps nm's address of a function back through its section's file offset. */
static void test_offset_to_vaddr_matches_sections(void **state)
{
	struct elf_file *ef = NULL;
	char *out = NULL, *p;
	unsigned long long fn_addr, text_addr, text_off;
	uint64_t v;

	(void)state;
	assert_int_equal(tu_run(&out, "nm '%s' | grep ' T omni_beta$'", fx.lib), 0);
	assert_int_equal(sscanf(out, "%llx", &fn_addr), 1);
	free(out);
	assert_int_equal(tu_run(&out, "readelf -SW '%s'", fx.lib), 0);
	p = strstr(out, " .text ");
	assert_non_null(p);
	assert_int_equal(sscanf(p, " .text PROGBITS %llx %llx", &text_addr, &text_off), 2);
	free(out);
	assert_true(fn_addr >= text_addr);

	assert_int_equal(elf_file__open(fx.lib, -1, &ef), 0);
	assert_true(elf_file__offset_to_vaddr(ef, fn_addr - text_addr + text_off, &v));
	assert_true(v == fn_addr);
	elf_file__close(ef);
}

/* What the profiler does: an address in /proc/PID/maps back to an ELF vaddr. */
static void test_offset_from_proc_maps(void **state)
{
	struct elf_file *ef = NULL;
	struct link_map *lm = NULL;
	char line[512], *maps_path = NULL;
	void *handle, *fn;
	uint64_t addr, v;
	bool found = false;
	FILE *maps;

	(void)state;
	handle = dlopen(fx.lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(handle);
	fn = dlsym(handle, "omni_beta");
	assert_non_null(fn);
	assert_int_equal(dlinfo(handle, RTLD_DI_LINKMAP, &lm), 0);
	addr = (uint64_t)(uintptr_t)fn;

	maps = fopen("/proc/self/maps", "r");
	assert_non_null(maps);
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, pgoff;
		char path[256] = "";

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %255s", &start, &end, &pgoff, path) <
		    3)
			continue;
		if (addr < start || addr >= end)
			continue;
		assert_string_equal(path, fx.lib);
		maps_path = strdup(path);
		assert_int_equal(elf_file__open(maps_path, -1, &ef), 0);
		assert_true(elf_file__offset_to_vaddr(ef, addr - start + pgoff, &v));
		/* For ET_DYN the link map's l_addr is the load bias. */
		assert_true(v == addr - lm->l_addr);
		found = true;
		break;
	}
	fclose(maps);
	assert_true(found);
	elf_file__close(ef);
	free(maps_path);
	dlclose(handle);
}

static void write_bytes(const char *path, const void *bytes, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_true(write(fd, bytes, len) == (ssize_t)len);
	close(fd);
}

static void expect_open_fails(const char *path, int want)
{
	struct elf_file *ef = (struct elf_file *)0x1;

	assert_int_equal(elf_file__open(path, -1, &ef), want);
	assert_null(ef);
}

static void test_malformed_inputs(void **state)
{
	char path[256];
	unsigned char garbage[4096];
	size_t len;
	char *lib;
	uint32_t x = 12345;

	(void)state;
	lib = tu_read_file(fx.lib, &len);
	assert_non_null(lib);
	snprintf(path, sizeof(path), "%s/bad", fx.dir);

	write_bytes(path, "", 0);
	expect_open_fails(path, -ENOEXEC);

	for (size_t i = 0; i < sizeof(garbage); i++) {
		x = x * 1103515245 + 12345;
		garbage[i] = (unsigned char)(x >> 16);
	}
	write_bytes(path, garbage, sizeof(garbage));
	expect_open_fails(path, -ENOEXEC);

	/* The ELF magic followed by noise. */
	memcpy(garbage, ELFMAG, SELFMAG);
	write_bytes(path, garbage, sizeof(garbage));
	expect_open_fails(path, -ENOEXEC);

	/* Just the ELF header: the program headers it points at are missing. */
	write_bytes(path, lib, 64);
	expect_open_fails(path, -ENOEXEC);

	write_bytes(path, lib, len / 2);
	expect_open_fails(path, -ENOEXEC);

	write_bytes(path, lib, len - 1);
	expect_open_fails(path, -ENOEXEC);

	expect_open_fails("/nonexistent/omniprof/lib.so", -ENOENT);
	expect_open_fails(fx.dir, -ENOEXEC);
	free(lib);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Opens bytes through a memfd; returns elf_file__open()'s result. */
static int open_bytes(const void *bytes, size_t len, struct elf_file **ef)
{
	int fd = memfd_create("omniprof-test", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_true(write(fd, bytes, len) == (ssize_t)len);
	return elf_file__open("memfd", fd, ef);
}

/* Whatever is accepted must be self-consistent. */
static void check_invariants(const struct elf_file *ef, size_t len)
{
	uint64_t v;

	assert_true(ef->size == len);
	for (size_t i = 0; i < ef->n_segments; i++) {
		const struct elf_segment *s = &ef->segments[i];

		assert_true(s->offset <= len && s->filesz <= len - s->offset);
		assert_true(s->filesz <= s->memsz);
		if (s->filesz)
			assert_true(elf_file__offset_to_vaddr(ef, s->offset, &v));
	}
	if (ef->build_id)
		for (const char *p = ef->build_id; *p; p++)
			assert_non_null(strchr("0123456789abcdef", *p));
}

static void test_mutated_files(void **state)
{
	struct elf_file *ef;
	size_t len, accepted = 0;
	char *lib, *buf;

	(void)state;
	lib = tu_read_file(fx.lib, &len);
	assert_non_null(lib);
	buf = malloc(len);
	assert_non_null(buf);

	/* Truncated at many lengths. */
	for (size_t cut = 0; cut < len; cut += 53) {
		ef = NULL;
		int err = open_bytes(lib, cut, &ef);

		assert_true(err == 0 || err == -ENOEXEC);
		if (!err) {
			check_invariants(ef, cut);
			accepted++;
		}
		elf_file__close(ef);
	}
	/* The section headers come last, so every cut loses some of them. */
	assert_int_equal(accepted, 0);

	/* A few bytes changed, mostly in the headers and tables libelf reads. */
	for (int iter = 0; iter < 3000; iter++) {
		memcpy(buf, lib, len);
		for (int k = (int)(rng() % 6); k >= 0; k--) {
			size_t pos = rng() % 4 ? rng() % 1024 : rng() % len;

			if (rng() % 2)
				buf[pos] = (char)rng();
			else
				buf[(pos + len - 1024) % len] = (char)rng();
		}
		ef = NULL;
		int err = open_bytes(buf, len, &ef);

		assert_true(err == 0 || err == -ENOEXEC);
		if (!err)
			check_invariants(ef, len);
		elf_file__close(ef);
	}
	free(buf);
	free(lib);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shared_library),
	    cmocka_unit_test(test_pie_build_id_matches_readelf),
	    cmocka_unit_test(test_no_build_id),
	    cmocka_unit_test(test_open_from_fd),
	    cmocka_unit_test(test_offset_to_vaddr_segments),
	    cmocka_unit_test(test_offset_to_vaddr_matches_sections),
	    cmocka_unit_test(test_offset_from_proc_maps),
	    cmocka_unit_test(test_malformed_inputs),
	    cmocka_unit_test(test_mutated_files),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
