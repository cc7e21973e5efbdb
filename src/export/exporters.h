/* SPDX-License-Identifier: Apache-2.0 */
/* The writers that turn a struct profile into files and terminal output. */
#ifndef OMNIPROF_EXPORT_EXPORTERS_H
#define OMNIPROF_EXPORT_EXPORTERS_H

#include <stdio.h>

struct output_dir;
struct profile;

/* pprof protobuf, gzip-compressed, to path. 0 or -errno. */
int pprof__write(const struct profile *p, const char *path);
/* The same bytes to an open file descriptor (not closed). 0 or -errno. */
int pprof__write_fd(const struct profile *p, int fd);
/*
 * Pyroscope keeps only string-valued sample labels (numeric ones are dropped
 * on ingest): with this flag pid and tid are written as decimal strings.
 */
#define PPROF_STRING_LABELS 0x1u
/* The comment prefix carrying a build-id-less file's other identities (pprof.c). */
#define PPROF_FILE_COMMENT "omniprof.file"
/* pprof__write_fd() with PPROF_* flags. */
int pprof__write_fd_flags(const struct profile *p, int fd, unsigned int flags);
/* Folded stacks: "comm;root;...;leaf COUNT" per unique stack. 0 or -errno. */
int folded__write(const struct profile *p, FILE *f);
/* A self-contained interactive flame graph page. 0 or -errno. */
int flamegraph__write(const struct profile *p, FILE *f, const char *title);
/* Samples, processes, drops and the top_n functions by self and total. */
void summary__print(const struct profile *p, FILE *f, int top_n);
/* An off-CPU profile's total and its top_n stacks by time off CPU. */
void summary__print_offcpu(const struct profile *p, FILE *f, int top_n);
/*
 * `record`'s three files, profile.pb.gz, stacks.folded and flamegraph.html,
 * as one set in dir (output_set.h): a crash or a full disk leaves the
 * previous set whole. 0, or -errno after one clear line.
 */
int record_set__write(const struct profile *p, struct output_dir *dir);
/* The same with the off-CPU files offcpu.pb.gz, offcpu.folded and offcpu.html of
 * offcpu (NULL: none) in the same set. */
int record_set__write_all(const struct profile *p, const struct profile *offcpu,
			  struct output_dir *dir);

#endif
