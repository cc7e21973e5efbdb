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
 *      DEBUGINFOD_URLS is set.
 *
 * A candidate counts only when it matches: same build id when the binary
 * has one, else the CRC32 the debuglink states. MiniDebugInfo
 * (.gnu_debugdata) needs no file: libdwfl reads it from the binary itself.
 *
 * Lookups can read whole files (CRC) and, with debuginfod, wait on the
 * network: they run when a profile is named, never while sampling.
 */
#ifndef OMNIPROF_SYMBOL_DEBUGINFO_H
#define OMNIPROF_SYMBOL_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEBUGINFO_GLOBAL_DIR "/usr/lib/debug"

struct debuginfo_stats {
	uint64_t by_build_id;
	uint64_t by_debuglink;
	uint64_t by_debuginfod;
	uint64_t not_found;
	uint64_t mismatched; /* candidates refused: wrong build id or CRC */
};

struct debuginfo {
	char **roots; /* owned: --debug-dir roots, then the global folder */
	size_t n_roots;
	bool use_debuginfod;
	void *debuginfod; /* debuginfod_client *, begun on first use */
	bool debuginfod_tried;
	struct debuginfo_stats stats;
};

/*
 * Prepares a search over dirs (n entries, may be 0) plus the global folder;
 * use_debuginfod asks debuginfod servers when DEBUGINFOD_URLS is set.
 * Returns 0 or -ENOMEM. Clear with debuginfo__clear().
 */
int debuginfo__init(struct debuginfo *d, const char *const *dirs, size_t n, bool use_debuginfod);
void debuginfo__clear(struct debuginfo *d); /* accepts NULL */

/*
 * Looks for the debug file of the binary at path (as the process saw it;
 * may be NULL), with build id bytes (may be NULL/0) and debuglink name +
 * crc (name may be NULL). Returns an fd open for reading and *found (the
 * file's path, caller frees), or -ENOENT / -ENOMEM.
 */
int debuginfo__find(struct debuginfo *d, const char *path, const uint8_t *build_id,
		    size_t build_id_len, const char *debuglink, uint32_t crc, char **found);

#endif
