/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finding the separate debug file of a binary, the way gdb does:
 *
 *   1. by build id: ROOT/.build-id/xx/rest.debug for each root (the
 *      --debug-dir roots, then the global debug folder /usr/lib/debug);
 *   2. by .gnu_debuglink (a file name + CRC32): next to the binary, in its
 *      .debug/ folder, then ROOT/<binary's folder>/NAME under each root
 *      (and ROOT/NAME under the --debug-dir roots, for flat folders);
 *   3. debuginfod (libdebuginfod, with its own cache) when enabled and
 *      DEBUGINFOD_URLS is set: bounded in time and size (below), and what it
 *      serves must carry the build id asked for (else it is removed from
 *      the cache and counted). The agent never asks debuginfod.
 *
 * A candidate counts only when it matches: same build id when the binary
 * has one, else the CRC32 the debuglink states. MiniDebugInfo
 * (.gnu_debugdata) needs no file: libdwfl reads it from the binary itself.
 *
 * A debuglink is the target's word: only a plain file name is looked up, and
 * a CRC is computed only over a file safe_open accepted (capped size).
 * Lookups can read whole files (CRC) and, with debuginfod, wait on the
 * network: they run when a profile is named, never while sampling.
 */
#ifndef OMNIPROF_SYMBOL_DEBUGINFO_H
#define OMNIPROF_SYMBOL_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEBUGINFO_GLOBAL_DIR "/usr/lib/debug"

/*
 * debuginfod bounds (defaults; the user's DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXTIME
 * and DEBUGINFOD_MAXSIZE apply when set, and only lower the last two):
 * a server that says nothing for DEBUGINFOD_STALL_S is given up, one request
 * lasts at most DEBUGINFOD_REQUEST_S, all requests of a run together at most
 * DEBUGINFOD_TOTAL_S (later build ids are not asked for), and a download over
 * DEBUGINFOD_MAX_BYTES is aborted.
 */
#define DEBUGINFOD_STALL_S_STR "5"
#define DEBUGINFOD_REQUEST_S   10
#define DEBUGINFOD_TOTAL_S     30
#define DEBUGINFOD_TOTAL_S_STR "30"
#define DEBUGINFOD_MAX_BYTES   (1ULL << 30)

enum debuginfod_abort {
	DEBUGINFOD_ABORT_NONE,
	DEBUGINFOD_ABORT_TOO_BIG,
	DEBUGINFOD_ABORT_TIMEOUT,
};

struct debuginfo_stats {
	uint64_t by_build_id;
	uint64_t by_debuglink;
	uint64_t by_debuginfod;
	uint64_t not_found;
	uint64_t mismatched; /* candidates refused: wrong build id or CRC */
	uint64_t refused;    /* candidates safe_open refused (FIFO, device, too big, ...) */
	uint64_t bad_links;  /* debuglinks that were not a plain file name */
	uint64_t root_gone;  /* the binary's root was gone: its folder not searched */
	uint64_t crc_bytes;  /* bytes read to check CRCs */
	uint64_t debuginfod_timeouts; /* requests given up: no answer in time */
	uint64_t debuginfod_too_big;  /* downloads aborted at the size cap */
	uint64_t debuginfod_invalid;  /* files served that were not the debug file asked for */
	uint64_t debuginfod_skipped;  /* build ids not asked for: the run's time budget was spent */
	uint64_t inflated_used;	      /* debug files read from their inflated copy */
	uint64_t inflated_written;    /* inflated copies written */
	uint64_t inflated_failed;     /* copies that could not be written or were refused */
};

struct debuginfo {
	char **roots; /* owned: --debug-dir roots, then the global folder */
	size_t n_roots;
	bool use_debuginfod;
	void *debuginfod; /* debuginfod_client *, begun on first use */
	bool debuginfod_tried;
	bool logged_bad_link;
	/* debuginfod request state (see by_debuginfod) */
	uint64_t dfd_max_bytes;
	double dfd_request_s;
	double dfd_request_deadline; /* CLOCK_MONOTONIC seconds */
	double dfd_total_deadline;
	enum debuginfod_abort dfd_abort;
	unsigned dfd_logged; /* kinds of failure logged once */
	int inflate_dir_fd;  /* where inflated copies live (debuginfo__set_inflate_dir), or -1 */
	uint64_t inflated_bytes;  /* bytes of inflated copies written by this run */
	uint64_t inflated_budget; /* ... and at most this many (debuginfo__init: 256 MiB) */
	struct debuginfo_stats stats;
};

/*
 * Prepares a search over dirs (n entries, may be 0) plus the global folder;
 * use_debuginfod asks debuginfod servers when DEBUGINFOD_URLS is set.
 * Returns 0 or -ENOMEM. Clear with debuginfo__clear().
 */
int debuginfo__init(struct debuginfo *d, const char *const *dirs, size_t n, bool use_debuginfod);
void debuginfo__clear(struct debuginfo *d); /* accepts NULL */

/* What is known of the binary whose debug file is looked for. */
struct debuginfo_query {
	const char *path;	 /* as the process saw it; may be NULL */
	int root_pid;		 /* path is inside /proc/root_pid/root; 0: the host's root */
	int self_fd;		 /* the binary itself (never its own debug file), or -1 */
	const uint8_t *build_id; /* may be NULL (build_id_len 0) */
	size_t build_id_len;
	const char *debuglink; /* .gnu_debuglink name, may be NULL; untrusted */
	uint32_t crc;
};

/*
 * Looks for the debug file of q's binary. Every candidate is opened with
 * util/safe_open.h (regular files of at most SAFE_OPEN_MAX_ELF bytes): the
 * ones next to the binary inside the binary's root, the ones under the debug
 * roots as host paths. Returns an fd open for reading and *found (the
 * file's path, caller frees), or -ENOENT / -ENOMEM.
 */
int debuginfo__find(struct debuginfo *d, const struct debuginfo_query *q, char **found);

/*
 * A file by its build id only, under the debug roots (the dwz alt file of a
 * debug file). An fd and *found (caller frees), or -ENOENT / -ENOMEM.
 */
int debuginfo__find_by_build_id(struct debuginfo *d, const void *id, size_t len, char **found);

/*
 * Debug files whose DWARF sections are compressed (SHF_COMPRESSED: Debian's
 * libc6-dbg) cost their whole inflated size in the heap for as long as libdw
 * holds them: libdw inflates every debug section when it opens the file, the
 * location lists it never reads here included (libc's: 9.6 MB, the largest
 * part of a whole-system agent's heap). Written once inflated to a private
 * folder and read from there, the same bytes are clean file pages, which the
 * symbolizer gives back after each pass (symbolizer__drop_file_pages) like
 * any other file's, and no load inflates them again.
 *
 * debuginfo__set_inflate_dir() names the folder (the table cache's: it must
 * be owned by this user and closed to others, as table_cache__open() checks;
 * its bound and trim, least recently used first, cover these files too).
 * NULL or an unusable folder: no copies (0 is returned either way; the reason
 * is logged at debug level).
 */
int debuginfo__set_inflate_dir(struct debuginfo *d, const char *dir);

/*
 * The debug file open on fd (owned; it matched build id id) as a file to read
 * in place: the fd of its inflated copy (fd closed), written first when the
 * folder lacks it, or fd itself when it has nothing compressed, without a
 * build id, without a folder, or when the copy fails (counted in stats).
 * The copy is named by the build id and a hash of it and the file's device,
 * inode, size and modification time,
 * written to a temporary name and renamed, and used only when it is a
 * regular file of this user that carries the same build id.
 */
int debuginfo__inflated(struct debuginfo *d, int fd, const uint8_t *id, size_t id_len);

#endif
