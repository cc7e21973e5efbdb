// SPDX-License-Identifier: Apache-2.0
#include "util/memory.h"

#include <dirent.h>
#include <stdbool.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/clock.h"

#define MMAP_THRESHOLD (256 << 10)
#define TRIM_THRESHOLD (16 << 20)
#define TOP_PAD	       (4 << 20)

void memory__tune(void)
{
	/* Setting it also turns glibc's dynamic threshold off. */
	mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	/*
	 * Building tables frees and allocates hundreds of KiB per file: with
	 * glibc's 128 KiB trim threshold the heap top went back to the kernel
	 * after nearly every file and faulted in again for the next (a TLB
	 * shootdown each time), a third of the start-up CPU. Free pages stay
	 * until memory__release(), called after each such batch.
	 */
	mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
	mallopt(M_TOP_PAD, TOP_PAD);
	/*
	 * One arena for every thread. glibc gives each thread that allocates
	 * while another holds the lock an arena of its own (up to 8 per CPU);
	 * the file workers' table reads and builds then leave free memory in
	 * theirs, each kept up to the trim threshold and trimmed only by
	 * memory__release(): 15-45 MiB of a whole-system agent's or record's
	 * [anon] at their peaks (issue 22, session 18: high-water 87.5 against
	 * 96.5 MiB, median of 4 side-by-side runs; record 38-49 against 52-53).
	 * The threads are a few, mostly waiting on I/O and the kernel: the
	 * lock they now share cost no CPU measurable in the same runs.
	 */
	mallopt(M_ARENA_MAX, 1);
}

size_t memory__heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	/* Small chunks in use plus the big ones served by their own mappings. */
	return mi.uordblks + mi.hblkhd;
}

/* Free heap below which a release is not worth its cost (see below). */
#define RELEASE_MIN TRIM_THRESHOLD

/*
 * mallinfo2's free bytes still count the pages a trim gave back (they stay
 * free chunks, only their pages go), so "free heap over the threshold" holds
 * after a trim as before it. A release trims when the free heap grew by the
 * threshold since the last trim (or since its lowest seen since), and
 * otherwise at most once a minute: pages reused and freed again between two
 * calls are resident again, and mallinfo2 cannot tell them apart.
 */
#define RELEASE_EVERY_NS (60ull * 1000000000ull)
static size_t free_floor;
static uint64_t last_trim_ns;
static unsigned long n_trims;

bool memory__trim_due(size_t free_now, size_t free_floor, uint64_t last_trim_ns, uint64_t now_ns)
{
	if (free_now < RELEASE_MIN)
		return false;
	if (free_now >= free_floor && free_now - free_floor >= RELEASE_MIN)
		return true;
	return !last_trim_ns || now_ns - last_trim_ns >= RELEASE_EVERY_NS;
}

void memory__release_at(uint64_t now_ns)
{
	struct mallinfo2 mi = mallinfo2();
	size_t floor = __atomic_load_n(&free_floor, __ATOMIC_RELAXED);
	uint64_t last = __atomic_load_n(&last_trim_ns, __ATOMIC_RELAXED);

	if (mi.fordblks < floor) {
		floor = mi.fordblks;
		__atomic_store_n(&free_floor, floor, __ATOMIC_RELAXED);
	}
	/*
	 * Trimming returns pages with madvise over the whole heap, and each call
	 * ends in a TLB shootdown on every CPU; the next interval then faults the
	 * same pages in again. Done every agent interval, the two cost more than
	 * building the interval's profile. So up to the trim threshold of free
	 * heap stays for reuse, as it would at the top of the heap.
	 */
	if (!memory__trim_due(mi.fordblks, floor, last, now_ns))
		return;
	malloc_trim(0);
	__atomic_fetch_add(&n_trims, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&last_trim_ns, now_ns ? now_ns : 1, __ATOMIC_RELAXED);
	__atomic_store_n(&free_floor, mallinfo2().fordblks, __ATOMIC_RELAXED);
}

void memory__release(void)
{
	memory__release_at(clock__now_ns());
}

unsigned long memory__release_trims(void)
{
	return __atomic_load_n(&n_trims, __ATOMIC_RELAXED);
}

void memory__trim(void)
{
	malloc_trim(0);
}

/* Maps counted once each up to this many (more: counted per descriptor). */
#define MAX_MAP_IDS 2048

size_t memory__bpf_map_bytes(size_t *n_maps)
{
	static unsigned int ids[MAX_MAP_IDS]; /* called from one thread: the sampling one */
	DIR *d = opendir("/proc/self/fdinfo");
	struct dirent *e;
	size_t total = 0, n = 0;
	char buf[1024];

	if (n_maps)
		*n_maps = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		unsigned long long memlock = 0;
		unsigned int id = 0;
		bool is_map = false, seen = false;
		char *p;
		ssize_t len;
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
			if (!strncmp(p, "map_type:", 9))
				is_map = true;
			else if (!strncmp(p, "map_id:", 7))
				id = (unsigned int)strtoul(p + 7, NULL, 10);
			else if (!strncmp(p, "memlock:", 8))
				memlock = strtoull(p + 8, NULL, 10);
		}
		if (!is_map)
			continue;
		for (size_t i = 0; i < n && i < MAX_MAP_IDS && !seen; i++)
			seen = ids[i] == id;
		if (seen)
			continue;
		if (n < MAX_MAP_IDS)
			ids[n] = id;
		n++;
		total += memlock;
	}
	closedir(d);
	if (n_maps)
		*n_maps = n;
	return total;
}

/* /proc/self/smaps read at most this far (some 25 lines a mapping, ~100 mappings). */
#define SMAPS_MAX (1u << 20)

/* One mapping of /proc/self/smaps being read. */
struct smaps_vma {
	uintptr_t start, end;
	bool droppable; /* read-only, private, of a file mapped executable somewhere */
	bool anon_seen; /* its Anonymous line was read (not cut off by the read's bound) */
	size_t rss_kib, anon_kib;
};

/* Adjacent mappings given back in one call (each call is a TLB flush on every CPU). */
struct drop_range {
	uintptr_t start, end;
	size_t kib, dropped;
};

/* Mappings with less than this resident are left alone: not worth a flush. */
#define DROP_MIN_KIB 128

static void drop_flush(struct drop_range *d)
{
	if (d->end > d->start && !madvise((void *)d->start, d->end - d->start, MADV_DONTNEED))
		d->dropped += d->kib << 10;
	d->start = d->end = 0;
	d->kib = 0;
}

static void drop_vma(struct drop_range *d, const struct smaps_vma *v)
{
	/* Anonymous pages in a private file mapping are its copied-on-write
	 * ones (relocations): MADV_DONTNEED would put the file's bytes back. */
	if (!v->droppable || !v->anon_seen || v->rss_kib < DROP_MIN_KIB || v->anon_kib)
		return;
	if (v->start != d->end)
		drop_flush(d);
	if (!d->kib)
		d->start = v->start;
	d->end = v->end;
	d->kib += v->rss_kib;
}

/* A mapping's first line starts with its address in lowercase hex; the
 * fields' lines with a capitalised name. */
static bool smaps_head(const char *line)
{
	return (*line >= '0' && *line <= '9') || (*line >= 'a' && *line <= 'f');
}

size_t memory__drop_code_pages(void)
{
	char *text = NULL, *line, *next, *nl, paths[64][256];
	struct smaps_vma v = {0};
	struct drop_range d = {0};
	size_t len = 0, n_paths = 0;
	ssize_t got;
	int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	text = malloc(SMAPS_MAX + 1);
	if (!text)
		goto cleanup;
	while (len < SMAPS_MAX && (got = read(fd, text + len, SMAPS_MAX - len)) > 0)
		len += (size_t)got;
	text[len] = '\0';
	/* The files mapped executable: the binary and its libraries (up to 64). */
	for (line = text; line && *line; line = nl ? nl + 1 : NULL) {
		char perms[8], path[256];

		nl = strchr(line, '\n');
		if (n_paths < 64 && smaps_head(line) &&
		    sscanf(line, "%*x-%*x %7s %*x %*x:%*x %*u %255s", perms, path) == 2 &&
		    path[0] == '/' && strchr(perms, 'x'))
			snprintf(paths[n_paths++], sizeof(paths[0]), "%s", path);
	}
	for (line = text; line && *line; line = next) {
		char perms[8], path[256];
		unsigned long a, b;
		int fields;

		nl = strchr(line, '\n');
		next = nl ? nl + 1 : NULL;
		if (!strncmp(line, "Rss:", 4)) {
			v.rss_kib = strtoul(line + 4, NULL, 10);
			continue;
		}
		if (!strncmp(line, "Anonymous:", 10)) {
			v.anon_kib = strtoul(line + 10, NULL, 10);
			v.anon_seen = true;
			continue;
		}
		if (!smaps_head(line))
			continue;
		path[0] = '\0';
		fields = sscanf(line, "%lx-%lx %7s %*x %*x:%*x %*u %255s", &a, &b, perms, path);
		if (fields < 3)
			continue;
		drop_vma(&d, &v);
		v = (struct smaps_vma){.start = a, .end = b};
		for (size_t i = 0; fields == 4 && i < n_paths && !v.droppable; i++)
			v.droppable = !strcmp(paths[i], path) && perms[0] == 'r' &&
				      perms[1] == '-' && perms[3] == 'p';
	}
	drop_vma(&d, &v);
	drop_flush(&d);
cleanup:
	free(text);
	close(fd);
	return d.dropped;
}
