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
#include "util/safe_open.h"

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

/*
 * Whether the CRC32 of the whole file is want. fd went through safe_open, so
 * the file is regular and at most SAFE_OPEN_MAX_ELF bytes; the loop still
 * stops at the size fstat gave, whatever the file does meanwhile.
 */
static bool file_crc_matches(struct debuginfo *d, int fd, uint32_t want)
{
	unsigned char buf[64 * 1024];
	uLong crc = crc32(0, Z_NULL, 0);
	struct stat st;
	off_t off = 0, size;

	if (fstat(fd, &st) || st.st_size < 0 || (uint64_t)st.st_size > SAFE_OPEN_MAX_ELF)
		return false;
	size = st.st_size;
	while (off < size) {
		size_t want_n =
		    (size_t)(size - off) < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		ssize_t n = pread(fd, buf, want_n, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false; /* shorter than it said: not the file the link names */
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	d->stats.crc_bytes += (uint64_t)off;
	return (uint32_t)crc == want;
}

/*
 * Checks the candidate open on fd (owned) is the right debug file. Returns
 * fd, or -ENOENT (the binary itself), -EBADF when it does not match.
 */
static int check_candidate(struct debuginfo *d, int fd, const char *candidate,
			   const struct debuginfo_query *q, bool check_crc)
{
	uint8_t got[64];
	struct stat st, self;
	size_t got_len;

	if (fstat(fd, &st) || (q->self_fd >= 0 && !fstat(q->self_fd, &self) &&
			       self.st_dev == st.st_dev && self.st_ino == st.st_ino)) {
		close(fd);
		return -ENOENT;
	}
	if (q->build_id_len) {
		got_len = file_build_id(fd, got, sizeof(got));
		if (got_len == q->build_id_len && !memcmp(got, q->build_id, got_len))
			return fd;
		/* A debuglink target without a build id is judged by its CRC. */
		if (!(got_len == 0 && check_crc && file_crc_matches(d, fd, q->crc)))
			goto mismatch;
		return fd;
	}
	if (check_crc && !file_crc_matches(d, fd, q->crc))
		goto mismatch;
	return fd;
mismatch:
	d->stats.mismatched++;
	pr_debug("%s: not the debug file of %s (build id or CRC differs)", candidate,
		 q->path ? q->path : "the binary");
	close(fd);
	return -EBADF;
}

/* A candidate under a folder the host controls (debug roots). */
static int try_host_candidate(struct debuginfo *d, const char *candidate,
			      const struct debuginfo_query *q, bool check_crc)
{
	/* Symlinks are followed: distributions link .build-id entries to the files. */
	int fd = safe_open(candidate, 0, SAFE_OPEN_MAX_ELF);

	if (fd < 0) {
		d->stats.refused += safe_open__is_refusal(fd);
		return -ENOENT;
	}
	return check_candidate(d, fd, candidate, q, check_crc);
}

/* A candidate next to the binary: inside the root the binary came from. */
static int try_root_candidate(struct debuginfo *d, int root_fd, const char *candidate,
			      const struct debuginfo_query *q)
{
	int fd = safe_open_in_root(root_fd, candidate, 0, SAFE_OPEN_MAX_ELF, NULL);

	if (fd < 0) {
		d->stats.refused += safe_open__is_refusal(fd);
		return -ENOENT;
	}
	return check_candidate(d, fd, candidate, q, true);
}

static int by_build_id(struct debuginfo *d, const struct debuginfo_query *q, char **found)
{
	char cand[PATH_MAX], hex[2 * 64 + 1];
	size_t len = q->build_id_len;

	if (len < 2 || len > 64)
		return -ENOENT;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", q->build_id[i]);
	for (size_t r = 0; r < d->n_roots; r++) {
		int fd;

		snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s.debug", d->roots[r], hex,
			 hex + 2);
		fd = try_host_candidate(d, cand, q, false);
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

/*
 * A .gnu_debuglink comes from the target's file: only a plain file name is
 * looked up, never a path, "." or "..", nor anything with control bytes.
 */
static bool debuglink_name_ok(const char *link)
{
	size_t n = link ? strlen(link) : 0;

	if (!n || n > NAME_MAX || strchr(link, '/') || strstr(link, ".."))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)link[i] < 0x20 || link[i] == 0x7f)
			return false;
	return strcmp(link, ".") != 0;
}

/* The binary's folder as the process named it: absolute, no "." or ".." components. */
static bool binary_dir_ok(const char *dir)
{
	return dir[0] == '/' && !strstr(dir, "/../") && !strstr(dir, "/./") &&
	       !(strlen(dir) >= 3 && !strcmp(dir + strlen(dir) - 3, "/..")) &&
	       !(strlen(dir) >= 2 && !strcmp(dir + strlen(dir) - 2, "/."));
}

/* The folder the binary's root is: /proc/PID/root, or the host's. An O_PATH fd or -errno. */
static int open_binary_root(const struct debuginfo_query *q)
{
	char root[64];
	int fd;

	if (q->root_pid > 0)
		snprintf(root, sizeof(root), "/proc/%d/root", q->root_pid);
	else
		snprintf(root, sizeof(root), "/");
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

static int by_debuglink(struct debuginfo *d, const struct debuginfo_query *q, char **found)
{
	char dir[PATH_MAX], cand[PATH_MAX];
	const char *link = q->debuglink, *path = q->path;
	const char *slash;
	int fd = -ENOENT, root_fd = -1;

	if (!link)
		return -ENOENT;
	if (!debuglink_name_ok(link)) {
		d->stats.bad_links++;
		if (!d->logged_bad_link) {
			d->logged_bad_link = true;
			pr_warn("ignoring a .gnu_debuglink that is not a plain file name (in %s); "
				"further ones are only counted",
				path ? path : "a binary");
		}
		return -ENOENT;
	}
	dir[0] = '\0';
	slash = path ? strrchr(path, '/') : NULL;
	if (slash) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		if (!binary_dir_ok(slash == path ? "/" : dir))
			slash = NULL;
	}
	if (slash) {
		root_fd = open_binary_root(q);
		if (root_fd < 0)
			d->stats.root_gone++; /* the process left: its folder is out of reach */
	}
	if (root_fd >= 0) {
		const char *const fmts[] = {"%s/%s", "%s/.debug/%s"};

		for (size_t i = 0; i < 2 && fd < 0; i++) {
			snprintf(cand, sizeof(cand), fmts[i], dir, link);
			fd = try_root_candidate(d, root_fd, cand, q);
		}
		close(root_fd);
	}
	for (size_t r = 0; r < d->n_roots && fd < 0; r++) {
		if (slash) {
			snprintf(cand, sizeof(cand), "%s%s/%s", d->roots[r], dir, link);
			fd = try_host_candidate(d, cand, q, true);
		}
		/* The --debug-dir roots may also be flat folders of debug files. */
		if (fd < 0 && r + 1 < d->n_roots) {
			snprintf(cand, sizeof(cand), "%s/%s", d->roots[r], link);
			fd = try_host_candidate(d, cand, q, true);
		}
	}
	if (fd >= 0) {
		*found = strdup(cand);
		if (!*found) {
			close(fd);
			return -ENOMEM;
		}
	}
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

int debuginfo__find(struct debuginfo *d, const struct debuginfo_query *q, char **found)
{
	int fd;

	*found = NULL;
	fd = by_build_id(d, q, found);
	if (fd >= 0 || fd == -ENOMEM) {
		d->stats.by_build_id += fd >= 0;
		return fd;
	}
	fd = by_debuglink(d, q, found);
	if (fd >= 0 || fd == -ENOMEM) {
		d->stats.by_debuglink += fd >= 0;
		return fd;
	}
	fd = by_debuginfod(d, q->build_id, q->build_id_len, found);
	if (fd >= 0) {
		d->stats.by_debuginfod++;
		return fd;
	}
	d->stats.not_found++;
	return -ENOENT;
}
