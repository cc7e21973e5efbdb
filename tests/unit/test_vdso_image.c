// SPDX-License-Identifier: Apache-2.0
/*
 * The vDSO as a file: copied out of this process's own [vdso] mapping, it is
 * an ELF image whose .eh_frame gives a stack-delta table (the entry of
 * __vdso_clock_gettime has CFA = rsp + 8, as every function's first
 * instruction), whose .dynsym names its functions through the file cache, and
 * whose identity is its content (two reads give one cache entry).
 */
#include <errno.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/elf_file.h"
#include "proc/file_cache.h"
#include "unwind/stack_deltas.h"
#include "proc/vdso_image.h"
#include "proc/proc_maps.h"
#include "symbol/symbolizer.h"

/* This process's [vdso] line of /proc/self/maps; fails the test when absent. */
static struct proc_map *own_vdso(struct proc_map **all, size_t *n)
{
	assert_int_equal(proc_maps__read(getpid(), all, n), 0);
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*all)[i].path, "[vdso]"))
			return &(*all)[i];
	fail_msg("no [vdso] in /proc/self/maps");
	return NULL;
}

/* The st_value of symbol name in the image's .dynsym, or 0. */
static uint64_t dynsym_value(int fd, const char *name)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	uint64_t value = 0;

	while (elf && !value && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			s = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				value = sym.st_value;
				break;
			}
		}
	}
	elf_end(elf);
	return value;
}

static void test_vdso_table_and_symbols(void **state)
{
	struct stack_delta_table t = {0};
	const struct stack_delta *d;
	struct proc_map *all = NULL, *m;
	struct elf_file *ef = NULL;
	struct remote_memory self = remote_memory__live((uint32_t)getpid());
	struct file_cache fc;
	uint64_t fn, vaddr;
	const char *name;
	struct symbolizer sym;
	const struct sym_frame *frames;
	uint32_t slot;
	size_t n = 0;
	int fd;

	(void)state;
	m = own_vdso(&all, &n);
	fd = vdso_image__copy(&self, m->start, m->end);
	assert_true(fd >= 0);
	assert_int_equal(elf_file__open("[vdso]", fd, &ef), 0);
	fn = dynsym_value(ef->fd, "__vdso_clock_gettime");
	assert_true(fn != 0);
	/* The code segment covers the whole mapping from offset 0. */
	assert_true(elf_file__mapping_bias(ef, m->offset, m->end - m->start, PF_X, &vaddr));
	assert_int_equal(vaddr, 0);

	assert_int_equal(stack_deltas__build(ef, &t), 0);
	printf("    [vdso]: %zu bytes, %zu stack deltas\n", (size_t)(m->end - m->start), t.n);
	assert_true(t.n > 2);
	d = stack_delta_table__find(&t, fn);
	assert_non_null(d);
	assert_int_equal(d->rule.cmd, OP_RULE_CFA);
	assert_int_equal(d->rule.cfa_base, OP_CFA_RSP);
	assert_int_equal(d->rule.cfa_offset, 8);

	/* Through the file cache: one entry for both reads, named by its .dynsym. */
	file_cache__init(&fc);
	slot = file_cache__get(&fc, getpid(), m);
	assert_true(slot != 0);
	assert_int_equal(file_cache__get(&fc, getpid(), m), slot);
	assert_non_null(file_cache__at(&fc, slot)->elf);
	assert_true(file_cache__at(&fc, slot)->table_id != 0);
	assert_int_equal(symbolizer__init(&sym, &fc, NULL), 0);
	assert_true(symbolizer__native(&sym, slot, fn + 1, &frames) >= 1);
	name = frames[0].name;
	assert_non_null(strstr(name, "clock_gettime"));
	symbolizer__clear(&sym);
	assert_int_equal(fc.stats.vdso_errors, 0);

	file_cache__clear(&fc);
	stack_delta_table__free(&t);
	elf_file__close(ef);
	proc_maps__free(all, n);
}

static void test_vdso_copy_errors(void **state)
{
	struct remote_memory self = remote_memory__live((uint32_t)getpid());

	(void)state;
	/* A range that is not a vDSO's size, and one nobody maps. */
	assert_int_equal(vdso_image__copy(&self, 0x1000, 0x1000 + VDSO_IMAGE_MAX + 1), -E2BIG);
	assert_int_equal(vdso_image__copy(&self, 0x1000, 0x1000), -E2BIG);
	assert_int_equal(vdso_image__copy(&self, 0x1000, 0x3000), -EFAULT);
}

/* The whole content of fd (len bytes expected) into a new buffer. */
static uint8_t *read_back(int fd, size_t len)
{
	uint8_t *buf = malloc(len + 1);

	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, len + 1, 0), (ssize_t)len);
	return buf;
}

/*
 * The reader takes its bytes from the remote-memory source it is given, not
 * from a process of its own choosing: an overlay puts a marked first page
 * over this process's real vDSO (the live source behind it), and the memfd
 * holds the marked page, then the real rest; without a fallback, a range
 * longer than the overlay is not readable.
 */
static void test_vdso_copy_through_source(void **state)
{
	struct remote_memory self = remote_memory__live((uint32_t)getpid());
	struct proc_map *all = NULL, *m;
	struct remote_memory_overlay o;
	struct remote_memory over;
	uint64_t fallback_reads = 0;
	uint8_t *real, *got, mark[256];
	size_t n = 0, len;
	int fd;

	(void)state;
	m = own_vdso(&all, &n);
	len = (size_t)(m->end - m->start);
	assert_true(len > sizeof(mark));
	for (size_t i = 0; i < sizeof(mark); i++)
		mark[i] = (uint8_t)(0xa5 ^ i);
	o = (struct remote_memory_overlay){mark, m->start, sizeof(mark), &self, &fallback_reads};
	over = remote_memory__overlay(&o);

	fd = vdso_image__copy(&self, m->start, m->end);
	assert_true(fd >= 0);
	real = read_back(fd, len);
	close(fd);
	fd = vdso_image__copy(&over, m->start, m->end);
	assert_true(fd >= 0);
	got = read_back(fd, len);
	close(fd);
	assert_int_equal(fallback_reads, 1);
	assert_memory_equal(got, mark, sizeof(mark));
	assert_memory_equal(got + sizeof(mark), real + sizeof(mark), len - sizeof(mark));
	assert_memory_not_equal(got, real, sizeof(mark));

	/* The overlay alone: its own bytes are a copy, anything longer is -EFAULT. */
	o.fallback = NULL;
	fd = vdso_image__copy(&over, m->start, m->start + sizeof(mark));
	assert_true(fd >= 0);
	free(got);
	got = read_back(fd, sizeof(mark));
	close(fd);
	assert_memory_equal(got, mark, sizeof(mark));
	assert_int_equal(vdso_image__copy(&over, m->start, m->end), -EFAULT);
	assert_int_equal(fallback_reads, 1);
	free(got);
	free(real);
	proc_maps__free(all, n);
}

/*
 * A child that rewrites the last byte of its own vDSO (through /proc/self/mem,
 * as a debugger's breakpoint would), then waits to be killed. Returns its pid
 * once the write is done; fails the test if it could not write.
 */
static pid_t rewritten_vdso_child(const struct proc_map *m)
{
	int pipefd[2];
	char ok = 0;
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		uint8_t b = *(volatile uint8_t *)(uintptr_t)(m->end - 1);

		b ^= 0xff;
		ok = fd >= 0 && pwrite(fd, &b, 1, (off_t)(m->end - 1)) == 1 &&
		     *(volatile uint8_t *)(uintptr_t)(m->end - 1) == b;
		if (write(pipefd[1], &ok, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &ok, 1), 1);
	close(pipefd[0]);
	if (!ok) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("the child could not rewrite its own [vdso]");
	}
	return pid;
}

/*
 * One image, one hash: later processes (here the same one again) with the
 * same bytes are recognised by comparison, not copied and hashed again; a
 * process whose vDSO differs by one byte gets its own entry, and the first
 * image's entry is still found after it.
 */
static void test_vdso_hashed_once_per_image(void **state)
{
	struct proc_map *all = NULL, *m;
	struct file_cache fc;
	uint32_t slot, other;
	size_t n = 0;
	pid_t child;

	(void)state;
	m = own_vdso(&all, &n);
	file_cache__init(&fc);
	slot = file_cache__get(&fc, getpid(), m);
	assert_true(slot != 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(file_cache__get(&fc, getpid(), m), slot);
	assert_int_equal(fc.stats.vdso_hashed, 1);

	child = rewritten_vdso_child(m);
	other = file_cache__get(&fc, child, m);
	assert_int_equal(file_cache__get(&fc, child, m), other);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_true(other != 0);
	assert_int_not_equal(other, slot);
	assert_int_not_equal(file_cache__at(&fc, other)->content_id,
			     file_cache__at(&fc, slot)->content_id);
	assert_int_equal(fc.stats.vdso_hashed, 2);
	assert_int_equal(file_cache__get(&fc, getpid(), m), slot);
	assert_int_equal(fc.stats.vdso_hashed, 2);
	assert_int_equal(fc.stats.vdso_errors, 0);

	file_cache__clear(&fc);
	proc_maps__free(all, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vdso_table_and_symbols),
	    cmocka_unit_test(test_vdso_copy_errors),
	    cmocka_unit_test(test_vdso_copy_through_source),
	    cmocka_unit_test(test_vdso_hashed_once_per_image),
	};

	return cmocka_run_group_tests_name("vdso_image", tests, NULL, NULL);
}
