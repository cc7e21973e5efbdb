// build: gcc -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls
/*
 * A process that maps a damaged copy of its own executable and runs code
 * from it, the way a hostile user would try to confuse a profiler that
 * opens and parses every file a process maps executable. The copy is
 * written to DIR/hx_MODE.bin, damaged as MODE says, and the page holding
 * hx_stub() is mapped PROT_EXEC from it; hx_stub() uses no data, so the
 * copy of its bytes runs anywhere. Then main -> hx_run -> hx_stub (in the
 * copy) -> hx_cb -> hx_leaf, hx_leaf spinning about a millisecond, then a
 * 3 ms of sleep, until SECONDS pass. MODE:
 *   ehdr       ELF header: header tables past the end, absurd counts/sizes
 *   shdr       every section header out of bounds, links to themselves
 *   notes      every note: absurd name and descriptor sizes
 *   ehframe    .eh_frame: CIE pointers to non-CIEs (themselves, other FDEs),
 *              lengths past the end, unterminated augmentation strings;
 *              .eh_frame_hdr: absurd count and table
 *   truncated  the file ends one page after hx_stub's page
 *   empty      an empty file mapped PROT_EXEC (never touched); hx_stub runs
 *              from the executable itself
 *   maps       an intact copy whose stub page is mapped COUNT times at
 *              distinct addresses; each round runs the stub of the next one
 *   jit        COUNT anonymous executable regions (JIT code), each holding
 *              a copy of hx_stub's bytes; each round runs the next one
 * The process names itself hx_MODE (its command name in profiles).
 * Usage: hostile_elf MODE DIR SECONDS [COUNT]
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workload.h"

#define PAGE 4096ul
/* More than hx_stub's code (18 bytes with GCC 12 -O2). */
#define STUB_BYTES 64

typedef unsigned long (*cb_fn)(unsigned long);
typedef unsigned long (*stub_fn)(cb_fn, unsigned long);

WL_NOINLINE unsigned long hx_leaf(unsigned long x)
{
	return wl_spin_n(x, 300000);
}

WL_NOINLINE unsigned long hx_cb(unsigned long x)
{
	unsigned long r = hx_leaf(x + 1);

	WL_OPAQUE(r);
	return r ^ 7;
}

/* Runs from the copy: no data, no calls but through its argument. */
WL_NOINLINE unsigned long hx_stub(cb_fn fn, unsigned long x)
{
	unsigned long r = fn(x);

	WL_OPAQUE(r);
	return r + 1;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* The whole executable, read into memory (malloc'd, *len bytes). */
static uint8_t *read_self(size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open("/proc/self/exe", O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		die("/proc/self/exe");
	buf = malloc((size_t)st.st_size);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size)
		die("read /proc/self/exe");
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* The file offset of the executable's byte at address a, from /proc/self/maps. */
static uint64_t file_offset_of(const void *a)
{
	unsigned long start, end, off, addr = (unsigned long)a;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &off) == 3 && addr >= start &&
		    addr < end) {
			fclose(f);
			return off + (addr - start);
		}
	die("hx_stub not in /proc/self/maps");
	return 0;
}

static Elf64_Shdr *shdrs(uint8_t *b)
{
	return (Elf64_Shdr *)(b + ((Elf64_Ehdr *)b)->e_shoff);
}

static Elf64_Shdr *section(uint8_t *b, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	Elf64_Shdr *sh = shdrs(b);
	const char *names = (const char *)b + sh[eh->e_shstrndx].sh_offset;

	for (int i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, name))
			return &sh[i];
	return NULL;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void corrupt_ehdr(uint8_t *b, size_t len)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;

	eh->e_phoff = 0xfffffffffffff000ull;
	eh->e_shoff = len + 12345;
	eh->e_phnum = 0xffff; /* PN_XNUM: the real count would be in section 0 */
	eh->e_shnum = 0;
	eh->e_shstrndx = 0xfffe;
	eh->e_phentsize = 7;
	eh->e_shentsize = 0xffff;
}

static void corrupt_shdr(uint8_t *b)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	Elf64_Shdr *sh = shdrs(b);

	for (int i = 1; i < eh->e_shnum; i++) {
		if (i % 2) {
			sh[i].sh_offset = 0xfffffffffffff000ull ^ (uint64_t)i;
			sh[i].sh_size = 1ull << 60;
		} else {
			sh[i].sh_size = sh[i].sh_size * 1000 + 1;
		}
		sh[i].sh_link = (uint32_t)i;
		sh[i].sh_info = (uint32_t)i;
		sh[i].sh_entsize = 3;
		sh[i].sh_name = 0xfffffff0u;
	}
}

/* Rewrites the first note header of [p, p + size). */
static void corrupt_note(uint8_t *p, size_t size, int variant)
{
	if (size < 12)
		return;
	put32(p, variant ? 0xfffffff0u : 4);	  /* n_namesz */
	put32(p + 4, variant ? 20 : 0xfffffff0u); /* n_descsz */
	put32(p + 8, NT_GNU_BUILD_ID);
}

static void corrupt_notes(uint8_t *b)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	Elf64_Phdr *ph = (Elf64_Phdr *)(b + eh->e_phoff);
	Elf64_Shdr *sh = shdrs(b);
	int n = 0;

	for (int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_NOTE)
			corrupt_note(b + sh[i].sh_offset, sh[i].sh_size, n++ % 2);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_NOTE)
			corrupt_note(b + ph[i].p_offset, ph[i].p_filesz, n++ % 2);
}

static void corrupt_ehframe(uint8_t *b)
{
	Elf64_Shdr *ef = section(b, ".eh_frame"), *hdr = section(b, ".eh_frame_hdr");
	uint8_t *p;
	size_t off = 0, size, prev_fde = 0, last = 0;
	int i = 0;

	if (!ef)
		die("no .eh_frame");
	p = b + ef->sh_offset;
	size = ef->sh_size;
	while (off + 8 <= size) {
		uint32_t len, id;

		memcpy(&len, p + off, 4);
		memcpy(&id, p + off + 4, 4);
		if (!len || len == 0xffffffffu || len > size - off - 4)
			break;
		if (id && i % 3 == 1)
			put32(p + off + 4, 4); /* CIE pointer: the FDE itself */
		else if (id && i % 3 == 2 && prev_fde)
			put32(p + off + 4, (uint32_t)(off + 4 - prev_fde)); /* another FDE */
		else if (!id && i % 2 && len > 8)
			memset(p + off + 9, 'z', len - 5); /* "zzzz..." to the end, no NUL */
		if (id)
			prev_fde = off;
		last = off;
		off += 4 + len;
		i++;
	}
	/* One record ends past the section, one says its 64-bit length is absurd. */
	if (last)
		put32(p + last, 0xfffffff0u);
	if (off + 16 <= size) {
		put32(p + off, 0xffffffffu);
		memset(p + off + 4, 0x7f, 8);
	}
	if (hdr && hdr->sh_size >= 12) {
		uint8_t *h = b + hdr->sh_offset;

		put32(h + 8, 0x7fffffffu); /* fde_count */
		memset(h + 12, 0xee, hdr->sh_size - 12);
	}
}

/* Writes len bytes of buf to path, truncated to keep bytes (0: all). */
static void write_file(const char *path, const uint8_t *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);

	if (fd < 0 || (len && write(fd, buf, len) != (ssize_t)len) || close(fd))
		die(path);
}

static void *map_page(const char *path, uint64_t off, void *at)
{
	int fd = open(path, O_RDONLY);
	void *p;

	if (fd < 0)
		die(path);
	p = mmap(at, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | (at ? MAP_FIXED_NOREPLACE : 0), fd,
		 (off_t)off);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

WL_NOINLINE unsigned long hx_run(stub_fn *stubs, long n, time_t deadline)
{
	unsigned long x = 1;
	struct timespec nap = {0, 3000000};

	for (long i = 0; time(NULL) < deadline; i++) {
		x = stubs[i % n](hx_cb, x);
		WL_OPAQUE(x);
		nanosleep(&nap, NULL);
	}
	return x;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 3 ? argv[1] : "";
	time_t deadline;
	uint64_t off, page_off;
	size_t len;
	uint8_t *self;
	char path[4096];
	stub_fn *stubs;
	long n = 1, count = argc > 4 ? atol(argv[4]) : 50000;

	if (argc < 4) {
		fprintf(stderr, "usage: hostile_elf MODE DIR SECONDS [COUNT]\n");
		return 2;
	}
	deadline = time(NULL) + atoi(argv[3]);
	snprintf(path, sizeof(path), "hx_%s", mode);
	prctl(PR_SET_NAME, path); /* one command name per mode */
	self = read_self(&len);
	off = file_offset_of((const void *)hx_stub);
	page_off = off & ~(PAGE - 1);
	snprintf(path, sizeof(path), "%s/hx_%s.bin", argv[2], mode);
	if (!strcmp(mode, "ehdr"))
		corrupt_ehdr(self, len);
	else if (!strcmp(mode, "shdr"))
		corrupt_shdr(self);
	else if (!strcmp(mode, "notes"))
		corrupt_notes(self);
	else if (!strcmp(mode, "ehframe"))
		corrupt_ehframe(self);
	else if (!strcmp(mode, "truncated"))
		len = page_off + 2 * PAGE;
	else if (!strcmp(mode, "empty"))
		len = 0;
	else if (strcmp(mode, "maps") && strcmp(mode, "jit"))
		die("unknown mode");
	/* Padding makes each damaged copy's length, and so its file id (htlhash:
	 * length, first and last 4 KiB), its own: else a copy damaged past its
	 * first 4 KiB would share the intact executable's id and table. */
	if (len && strcmp(mode, "truncated")) {
		uint8_t *tmp = realloc(self, len + 64);

		if (!tmp)
			die("realloc");
		self = tmp;
		memset(self + len, 0, 64);
		len += 8 + strlen(mode);
	}
	write_file(path, self, len);
	free(self);

	stubs = malloc(sizeof(*stubs) * (size_t)count);
	if (!stubs)
		die("malloc");
	if (!strcmp(mode, "empty")) {
		if (!map_page(path, 0, NULL))
			die("mmap empty file");
		stubs[0] = hx_stub;
	} else if (!strcmp(mode, "jit")) {
		/* As the maps mode, anonymous: hx_stub is position-independent. */
		uint8_t *base = (uint8_t *)0x200000000000ul;

		for (n = 0; n < count; n++) {
			uint8_t *p =
			    mmap(base + (uint64_t)n * 2 * PAGE, PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

			if (p == MAP_FAILED) {
				fprintf(stderr, "region %ld: %s\n", n, strerror(errno));
				return 1;
			}
			memcpy(p, (const void *)hx_stub, STUB_BYTES);
			if (mprotect(p, PAGE, PROT_READ | PROT_EXEC))
				die("mprotect");
			stubs[n] = (stub_fn)(void *)p;
		}
	} else if (!strcmp(mode, "maps")) {
		/* Two pages apart: no two mappings merge, nothing else lies between. */
		uint8_t *base = (uint8_t *)0x100000000000ul;

		for (n = 0; n < count; n++) {
			uint8_t *p = map_page(path, page_off, base + (uint64_t)n * 2 * PAGE);

			if (!p) {
				fprintf(stderr, "mapping %ld: %s\n", n, strerror(errno));
				return 1;
			}
			stubs[n] = (stub_fn)(void *)(p + (off - page_off));
		}
	} else {
		uint8_t *p = map_page(path, page_off, NULL);

		if (!p)
			die("mmap copy");
		stubs[0] = (stub_fn)(void *)(p + (off - page_off));
	}
	wl_ready();
	hx_run(stubs, n, deadline);
	return 0;
}
