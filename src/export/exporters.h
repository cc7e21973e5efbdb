/* SPDX-License-Identifier: Apache-2.0 */
/* The writers that turn a struct profile into files and terminal output. */
#ifndef OMNIPROF_EXPORT_EXPORTERS_H
#define OMNIPROF_EXPORT_EXPORTERS_H

#include <stdio.h>

struct profile;

/* pprof protobuf, gzip-compressed, to path. 0 or -errno. */
int pprof__write(const struct profile *p, const char *path);
/* The same bytes to an open file descriptor (not closed). 0 or -errno. */
int pprof__write_fd(const struct profile *p, int fd);
/* Folded stacks: "comm;root;...;leaf COUNT" per unique stack. 0 or -errno. */
int folded__write(const struct profile *p, FILE *f);
/* A self-contained interactive flame graph page. 0 or -errno. */
int flamegraph__write(const struct profile *p, FILE *f, const char *title);
/* Samples, processes, drops and the top_n functions by self and total. */
void summary__print(const struct profile *p, FILE *f, int top_n);

#endif
