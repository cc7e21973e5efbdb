// SPDX-License-Identifier: Apache-2.0
#include "elf/elf_pages.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* pagemap: the page is present; it maps a file's page (a private copy made by
 * a write is anonymous and has this bit clear). */
#define PM_PRESENT (1ull << 63)
#define PM_FILE	   (1ull << 61)

/* /proc/self/pagemap, opened once and kept for the life of the process (-1 when
 * it cannot be read: nothing is dropped then). */
static int pagemap_fd(void)
{
	static int pagemap = -2;
	int fd = __atomic_load_n(&pagemap, __ATOMIC_ACQUIRE), expected = -2;

	if (fd != -2)
		return fd;
	/* Threads may race here: one descriptor is kept, the others closed. */
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (!__atomic_compare_exchange_n(&pagemap, &expected, fd, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		if (fd >= 0)
			close(fd);
		fd = expected;
	}
	return fd;
}

/*
 * One madvise() covers a whole run of file pages and the absent pages between
 * them (dropping an absent page does nothing): each call flushes the TLB of
 * every CPU the agent's threads run on, and one call per run of present pages
 * was 4.7% of a whole-system agent's steady CPU (issue 22). Only an anonymous
 * page (a private copy) ends a run.
 */
size_t elf_pages__drop_range(const void *p, size_t len)
{
	int pagemap = pagemap_fd();
	size_t page = (size_t)sysconf(_SC_PAGESIZE), dropped = 0, held = 0;
	uint64_t entries[512];
	uintptr_t first, end, run = 0, last = 0;

	if (pagemap < 0 || !len || !p)
		return 0;
	/* A mapping starts at a page and ends at one: the page holding the
	 * image's end is all the mapping's. Anything else, only whole pages. */
	first = ((uintptr_t)p + page - 1) / page;
	end = (uintptr_t)p % page ? ((uintptr_t)p + len) / page
				  : ((uintptr_t)p + len + page - 1) / page;
	for (uintptr_t at = first; at < end;) {
		size_t n = end - at < 512 ? end - at : 512;
		ssize_t got = pread(pagemap, entries, n * sizeof(*entries), (off_t)(at * 8));

		if (got <= 0)
			break;
		n = (size_t)got / sizeof(*entries);
		for (size_t i = 0; i < n; i++, at++) {
			if (!(entries[i] & PM_PRESENT))
				continue;
			if (entries[i] & PM_FILE) {
				if (!run)
					run = at;
				last = at + 1;
				held++;
				continue;
			}
			/* An anonymous page: the run ends at the last file page before it. */
			if (run &&
			    !madvise((void *)(run * page), (last - run) * page, MADV_DONTNEED))
				dropped += held * page;
			run = 0;
			held = 0;
		}
	}
	if (run && !madvise((void *)(run * page), (last - run) * page, MADV_DONTNEED))
		dropped += held * page;
	return dropped;
}

/* The bytes of scn's data (in the image when the Elf is mapped: the callers
 * read it already), or NULL when it has none or is not of type sh_type: a
 * hostile file's sh_link may name any section, which is not read here. */
static const void *section_bytes(Elf_Scn *scn, uint32_t sh_type, size_t *len)
{
	GElf_Shdr shdr;
	Elf_Data *data = scn && gelf_getshdr(scn, &shdr) && shdr.sh_type == sh_type
			     ? elf_getdata(scn, NULL)
			     : NULL;

	*len = data ? data->d_size : 0;
	return data && data->d_buf && data->d_size ? data->d_buf : NULL;
}

void elf_pages__drop_symbols_every(Elf *elf, Elf_Scn *scn, size_t i)
{
	GElf_Shdr shdr;
	const void *p;
	size_t len;

	if (!i || i % ELF_PAGES_SYMBOLS_EVERY || elf_kind(elf) != ELF_K_ELF ||
	    !gelf_getshdr(scn, &shdr) || !shdr.sh_entsize)
		return;
	/* All of each section: a fault maps a whole folio of the page cache (up
	 * to 2 MiB on a recent kernel), entries past i included. The names are
	 * read in no order. */
	p = section_bytes(scn, shdr.sh_type, &len);
	if (p)
		elf_pages__drop_range(p, len);
	p = section_bytes(elf_getscn(elf, shdr.sh_link), SHT_STRTAB, &len);
	if (p)
		elf_pages__drop_range(p, len);
}
