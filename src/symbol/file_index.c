// SPDX-License-Identifier: Apache-2.0
#include "symbol/file_index.h"

#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "elf/elf_file.h"
#include "elf/file_id.h"
#include "util/log.h"
#include "util/array.h"

/* A folder with more files than this is not a debug-file collection (or is a mistake). */
#define MAX_INDEXED_FILES 200000

/* nftw() has no context argument: the index being built. */
static struct file_index *building;
static int build_err;

static int add_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct indexed_file *f;
	struct elf_file *ef;
	uint8_t hash[FILE_ID_HTLHASH_LEN];

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size < 64)
		return 0;
	if (building->n_files == MAX_INDEXED_FILES) {
		pr_warn("--debug-dir: more than %d files; the rest are not looked at",
			MAX_INDEXED_FILES);
		return 1;
	}
	if (elf_file__open(path, -1, &ef)) {
		building->skipped++;
		return 0;
	}
	if (array__grow(building->files, building->cap_files, building->n_files))
		goto enomem;
	f = &building->files[building->n_files];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	f->build_id = ef->build_id ? strdup(ef->build_id) : NULL;
	f->go_build_id = ef->go_build_id ? strdup(ef->go_build_id) : NULL;
	if (!f->path || (ef->build_id && !f->build_id) || (ef->go_build_id && !f->go_build_id)) {
		free(f->path);
		free(f->build_id);
		free(f->go_build_id);
		goto enomem;
	}
	if (!file_id__htlhash(ef->fd, ef->size, hash))
		file_id__hex(hash, f->file_hash);
	building->n_files++;
	elf_file__close(ef);
	return 0;
enomem:
	elf_file__close(ef);
	build_err = -ENOMEM;
	return 1;
}

int file_index__build(struct file_index *fi, const char *const *dirs, size_t n)
{
	memset(fi, 0, sizeof(*fi));
	building = fi;
	build_err = 0;
	for (size_t i = 0; i < n && !build_err; i++)
		if (nftw(dirs[i], add_file, 32, 0) < 0)
			pr_warn("--debug-dir %s: %s", dirs[i], strerror(errno));
	building = NULL;
	return build_err;
}

void file_index__clear(struct file_index *fi)
{
	if (!fi)
		return;
	for (size_t i = 0; i < fi->n_files; i++) {
		free(fi->files[i].path);
		free(fi->files[i].build_id);
		free(fi->files[i].go_build_id);
	}
	free(fi->files);
	memset(fi, 0, sizeof(*fi));
}

static bool same(const char *a, const char *b)
{
	return a && b && *a && !strcasecmp(a, b);
}

size_t file_index__match(const struct file_index *fi, const char *build_id, const char *go_build_id,
			 const char *file_hash, const struct indexed_file **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < fi->n_files && n < max; i++) {
		const struct indexed_file *f = &fi->files[i];

		if (same(f->build_id, build_id) || same(f->go_build_id, go_build_id) ||
		    same(f->file_hash, file_hash))
			out[n++] = f;
	}
	return n;
}
