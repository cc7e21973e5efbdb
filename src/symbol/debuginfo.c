// SPDX-License-Identifier: Apache-2.0
#include "symbol/debuginfo.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/log.h"

int debuginfo__init(struct debuginfo *d, const char *const *dirs, size_t n, bool use_debuginfod)
{
	memset(d, 0, sizeof(*d));
	d->roots = calloc(n + 1, sizeof(*d->roots));
	if (!d->roots)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		d->roots[i] = strdup(dirs[i]);
		if (!d->roots[i])
			goto enomem;
		d->n_roots++;
	}
	d->roots[n] = strdup(DEBUGINFO_GLOBAL_DIR);
	if (!d->roots[n])
		goto enomem;
	d->n_roots++;
	d->use_debuginfod = use_debuginfod;
	return 0;
enomem:
	debuginfo__clear(d);
	return -ENOMEM;
}

void debuginfo__clear(struct debuginfo *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_roots; i++)
		free(d->roots[i]);
	free(d->roots);
	if (d->debuginfod)
		debuginfod_end(d->debuginfod);
	memset(d, 0, sizeof(*d));
}

/* The GNU build id of the ELF file open on fd into buf: its length, 0 when it has none. */
static size_t file_build_id(int fd, uint8_t *buf, size_t size)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t found = 0;

	if (!elf)
		return 0;
	while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		GElf_Nhdr nhdr;
		Elf_Data *data;
		size_t off = 0, next, name_off, desc_off;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		while (off < data->d_size &&
		       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
			off = next;
			if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + name_off, "GNU", 4) && nhdr.n_descsz &&
			    nhdr.n_descsz <= size) {
				memcpy(buf, (char *)data->d_buf + desc_off, nhdr.n_descsz);
				found = nhdr.n_descsz;
				break;
			}
		}
	}
	elf_end(elf);
	return found;
}

static bool file_crc_matches(int fd, uint32_t want)
{
	unsigned char buf[64 * 1024];
	uLong crc = crc32(0, Z_NULL, 0);
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);

		if (n < 0)
			return false;
		if (n == 0)
			break;
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	return (uint32_t)crc == want;
}

/*
 * Opens candidate and checks it is the right debug file. Returns an fd, or
 * -ENOENT (absent, not a regular file, or the binary itself), -EBADF when it
 * does not match.
 */
static int try_candidate(struct debuginfo *d, const char *candidate, const char *path,
			 const uint8_t *build_id, size_t build_id_len, bool check_crc, uint32_t crc)
{
	uint8_t got[64];
	struct stat st, self;
	size_t got_len;
	int fd = open(candidate, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (path && !stat(path, &self) && self.st_dev == st.st_dev && self.st_ino == st.st_ino)) {
		close(fd);
		return -ENOENT;
	}
	if (build_id_len) {
		got_len = file_build_id(fd, got, sizeof(got));
		if (got_len == build_id_len && !memcmp(got, build_id, got_len))
			return fd;
		/* A debuglink target without a build id is judged by its CRC. */
		if (!(got_len == 0 && check_crc && file_crc_matches(fd, crc)))
			goto mismatch;
		return fd;
	}
	if (check_crc && !file_crc_matches(fd, crc))
		goto mismatch;
	return fd;
mismatch:
	d->stats.mismatched++;
	pr_debug("%s: not the debug file of %s (build id or CRC differs)", candidate,
		 path ? path : "the binary");
	close(fd);
	return -EBADF;
}

static int by_build_id(struct debuginfo *d, const char *path, const uint8_t *id, size_t len,
		       char **found)
{
	char cand[PATH_MAX], hex[2 * 64 + 1];

	if (len < 2 || len > 64)
		return -ENOENT;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	for (size_t r = 0; r < d->n_roots; r++) {
		int fd;

		snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s.debug", d->roots[r], hex,
			 hex + 2);
		fd = try_candidate(d, cand, path, id, len, false, 0);
		if (fd >= 0) {
			*found = strdup(cand);
			if (!*found) {
				close(fd);
				return -ENOMEM;
			}
			return fd;
		}
	}
	return -ENOENT;
}

static int by_debuglink(struct debuginfo *d, const char *path, const uint8_t *id, size_t len,
			const char *link, uint32_t crc, char **found)
{
	char dir[PATH_MAX], cand[PATH_MAX];
	const char *slash;
	size_t n_cands = 0;
	char *cands[64];
	int fd = -ENOENT;

	/* A debuglink is a file name, never a path. */
	if (!link || !*link || strchr(link, '/'))
		return -ENOENT;
	dir[0] = '\0';
	slash = path ? strrchr(path, '/') : NULL;
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);

#define ADD(...)                                                                                   \
	do {                                                                                       \
		snprintf(cand, sizeof(cand), __VA_ARGS__);                                         \
		if (n_cands < sizeof(cands) / sizeof(cands[0]) && (cands[n_cands] = strdup(cand))) \
			n_cands++;                                                                 \
	} while (0)
	if (slash) {
		ADD("%s/%s", dir, link);
		ADD("%s/.debug/%s", dir, link);
	}
	for (size_t r = 0; r < d->n_roots; r++) {
		if (slash)
			ADD("%s%s/%s", d->roots[r], dir, link);
		/* The --debug-dir roots may also be flat folders of debug files. */
		if (r + 1 < d->n_roots)
			ADD("%s/%s", d->roots[r], link);
	}
#undef ADD
	for (size_t i = 0; i < n_cands && fd < 0; i++) {
		fd = try_candidate(d, cands[i], path, id, len, true, crc);
		if (fd >= 0) {
			*found = cands[i];
			cands[i] = NULL;
		}
	}
	for (size_t i = 0; i < n_cands; i++)
		free(cands[i]);
	return fd >= 0 ? fd : -ENOENT;
}

static int by_debuginfod(struct debuginfo *d, const uint8_t *id, size_t len, char **found)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	int fd;

	if (!d->use_debuginfod || !len || !urls || !*urls)
		return -ENOENT;
	if (!d->debuginfod_tried) {
		d->debuginfod_tried = true;
		d->debuginfod = debuginfod_begin();
		if (!d->debuginfod)
			pr_warn(
			    "debuginfod: cannot start a client; debug files come from disk only");
	}
	if (!d->debuginfod)
		return -ENOENT;
	fd = debuginfod_find_debuginfo(d->debuginfod, id, (int)len, found);
	if (fd < 0) {
		pr_debug("debuginfod: no debug file for this build id: %s", strerror(-fd));
		return -ENOENT;
	}
	return fd;
}

int debuginfo__find(struct debuginfo *d, const char *path, const uint8_t *build_id,
		    size_t build_id_len, const char *debuglink, uint32_t crc, char **found)
{
	int fd;

	*found = NULL;
	fd = by_build_id(d, path, build_id, build_id_len, found);
	if (fd >= 0 || fd == -ENOMEM) {
		d->stats.by_build_id += fd >= 0;
		return fd;
	}
	fd = by_debuglink(d, path, build_id, build_id_len, debuglink, crc, found);
	if (fd >= 0) {
		d->stats.by_debuglink++;
		return fd;
	}
	fd = by_debuginfod(d, build_id, build_id_len, found);
	if (fd >= 0) {
		d->stats.by_debuginfod++;
		return fd;
	}
	d->stats.not_found++;
	return -ENOENT;
}
