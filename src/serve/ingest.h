/* SPDX-License-Identifier: Apache-2.0 */
/* Loading profiles into the serve store: OTLP requests (otlp_ingest.c) and record's pprof files
 * (import.c). */
#ifndef OMNIPROF_SERVE_INGEST_H
#define OMNIPROF_SERVE_INGEST_H

#include <stddef.h>
#include <stdint.h>

struct store;

/*
 * Decodes one ExportProfilesServiceRequest and stores its samples in one
 * transaction. 0 (*n_samples: samples stored); -EINVAL when the request is
 * malformed, with the reason in why (nothing stored); another -errno when
 * the store failed (nothing stored either).
 */
int otlp_ingest(struct store *s, const uint8_t *buf, size_t len, char *why, size_t why_len,
		int64_t *n_samples);

/*
 * --import: a record output folder (its profile.pb.gz files, any depth 1) or
 * one pprof file, gzip'ed or not. 0 and *n_samples, or -errno after one line.
 */
int serve_import(struct store *s, const char *path, int64_t *n_samples);

#endif
