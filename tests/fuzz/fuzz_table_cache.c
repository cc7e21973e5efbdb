// SPDX-License-Identifier: Apache-2.0
/*
 * A table-cache file (src/unwind/table_cache.c) read back both ways: as its
 * deltas (table_cache__load) and straight into leaf pages
 * (table_cache__load_leaves, delta_pages.c's delta_leaves). Both must refuse
 * the same files, and a file both accept must give the same table: each
 * delta's address less the first and its rule through the local index.
 * First byte, bit 0: 0, the rest is the file itself (its id taken from its
 * header, so the name matches); 1, the rest is deltas (16 bytes each) stored
 * through table_cache__store() under a good checksum, unsorted or far apart
 * as the bytes say, so that the reads get past the checksum.
 * The cache is a folder of its own under /tmp, removed at exit.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/delta_pages.h"
#include "unwind/table_cache.h"

static char dir[64];
static struct table_cache *tc;

static void cleanup(void)
{
	char path[400];
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	table_cache__put(tc);
	rmdir(dir);
}

/* Writes the file of id (len bytes) into the folder. */
static int put_file(const uint8_t *id, const uint8_t *bytes, size_t len)
{
	char path[160], name[40];
	int fd;

	table_cache__name(id, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (len && write(fd, bytes, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_delta_table t = {0}, in = {0};
	struct stack_delta_stats stats;
	struct delta_leaves l;
	uint8_t id[STACK_DELTAS_ID_LEN] = {0};
	int a, b;

	if (!tc) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_table_cache.XXXXXX");
		if (!mkdtemp(dir) || table_cache__open(dir, 0, &tc))
			abort();
		atexit(cleanup);
	}
	if (!size)
		return 0;
	if (data[0] & 1) {
		/* Deltas under a good checksum, stored as the agent stores a table. */
		in.n = (size - 1) / sizeof(struct stack_delta);
		in.deltas = in.n ? malloc(in.n * sizeof(*in.deltas)) : NULL;
		if (in.n && !in.deltas)
			return 0;
		if (in.n)
			memcpy(in.deltas, data + 1, in.n * sizeof(*in.deltas));
		memcpy(in.id, id, sizeof(id));
		in.has_id = true;
		if (table_cache__store(tc, &in)) {
			free(in.deltas);
			return 0;
		}
		free(in.deltas);
	} else {
		/* The file as given: named by the id its header holds (bytes 16..31). */
		memset(id, 0, sizeof(id));
		if (size - 1 >= 16 + sizeof(id))
			memcpy(id, data + 1 + 16, sizeof(id));
		if (put_file(id, data + 1, size - 1))
			abort();
	}
	a = table_cache__load(tc, id, &t);
	/* A refused file is removed: put back for the other reader. */
	if (a && (data[0] & 1) == 0 && put_file(id, data + 1, size - 1))
		abort();
	if (a && (data[0] & 1)) {
		stack_delta_table__free(&t);
		return 0; /* refused: stored again by the next input */
	}
	b = table_cache__load_leaves(tc, id, &l, &stats);
	if ((a == 0) != (b == 0))
		abort();
	if (!a) {
		if (l.n != t.n || (t.n && l.base != t.deltas[0].addr))
			abort();
		for (size_t i = 0; i < t.n; i++) {
			const struct op_delta_page *p = &l.pages[i / OP_PAGE_DELTAS];
			uint64_t off = t.deltas[i].addr - t.deltas[0].addr;
			uint16_t r = p->rule[i % OP_PAGE_DELTAS];

			if (off >= OP_DELTA_PAD) {
				if (!l.too_wide)
					abort();
				continue;
			}
			if (p->addr[i % OP_PAGE_DELTAS] != (uint32_t)off)
				abort();
			if (l.rules_full)
				continue;
			if (r >= l.n_rules ||
			    memcmp(&l.rules[r], &t.deltas[i].rule, sizeof(l.rules[r])))
				abort();
		}
		if (stats.fdes != t.stats.fdes || stats.bad_entries != t.stats.bad_entries)
			abort();
	}
	delta_leaves__free(&l);
	stack_delta_table__free(&t);
	return 0;
}
