/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A file's stable identity, the same on every host: the first 16 bytes of
 * SHA-256 over (first 4096 bytes || last 4096 bytes || length as big-endian
 * uint64) — the OpenTelemetry profiler's "htlhash". Cheap (8 KiB read)
 * however large the file, and equal for copies of one file: the identifier
 * exported to backends. Not a trust key: anyone can make a different file
 * with the same htlhash, so stack-delta tables are keyed by a hash of their
 * inputs (stack_deltas__table_id()) instead.
 */
#ifndef OMNIPROF_ELF_FILE_ID_H
#define OMNIPROF_ELF_FILE_ID_H

#include <stdint.h>

#define FILE_ID_HTLHASH_LEN 16

/* Hashes the file open on fd (size bytes long). 0 or -errno. */
int file_id__htlhash(int fd, uint64_t size, uint8_t out[FILE_ID_HTLHASH_LEN]);
/*
 * SHA-256 (first 16 bytes) of all size bytes of fd, for small images whose
 * identity must cover every byte (the vDSO copy): -EFBIG above
 * FILE_ID_CONTENT_MAX. 0 or -errno.
 */
#define FILE_ID_CONTENT_MAX (1u << 20)
int file_id__content_hash(int fd, uint64_t size, uint8_t out[FILE_ID_HTLHASH_LEN]);
/* The 64-bit id BPF maps use: the hash's first 8 bytes, big endian; never 0. */
uint64_t file_id__from_htlhash(const uint8_t hash[FILE_ID_HTLHASH_LEN]);
/* Lowercase hex (33 bytes with the NUL). */
void file_id__hex(const uint8_t hash[FILE_ID_HTLHASH_LEN], char out[2 * FILE_ID_HTLHASH_LEN + 1]);

#endif
