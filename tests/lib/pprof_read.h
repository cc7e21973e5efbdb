/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading what the tests check in a profile: a gzipped pprof file, and the
 * line of a workload's source a frame must be at.
 */
#ifndef OMNIPROF_TESTS_PPROF_READ_H
#define OMNIPROF_TESTS_PPROF_READ_H

#include "profile.pb-c.h"

/* The profile in the gzipped pprof file at path, or NULL. Free with
 * perftools__profiles__profile__free_unpacked(p, NULL). */
Perftools__Profiles__Profile *tu_read_pprof(const char *path);

/* 1-based line number of the first line of text that contains needle, 0 if none. */
long tu_line_of(const char *text, const char *needle);

#endif
