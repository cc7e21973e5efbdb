/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading what the tests check in a profile: a gzipped pprof file, and the
 * line of a workload's source a frame must be at.
 */
#ifndef OMNIPROF_TESTS_PPROF_READ_H
#define OMNIPROF_TESTS_PPROF_READ_H

#include <stdbool.h>

#include "profile.pb-c.h"

/* The profile in the gzipped pprof file at path, or NULL (also when it breaks a
 * rule of tu_pprof_spec_ok(), said on stderr). Free with
 * perftools__profiles__profile__free_unpacked(p, NULL). */
Perftools__Profiles__Profile *tu_read_pprof(const char *path);

/*
 * The rules of pprof's proto/profile.proto: string_table[0] is "", every
 * string index in the table, ids non-zero and unique, every id a sample,
 * location or line refers to exists, one value per sample type; and ours:
 * no line of a location in a file mapping names a made-up "file+0xOFFSET" function.
 * false after one line on stderr saying which rule broke.
 */
bool tu_pprof_spec_ok(const Perftools__Profiles__Profile *p);

/*
 * Which locations (by index in p->location) the samples of process pid (the
 * "pid" label) refer to: an array of p->n_location flags, the caller's to
 * free; NULL when out of memory or when p has no "pid" label.
 */
bool *tu_pprof_pid_locations(const Perftools__Profiles__Profile *p, int pid);

/* 1-based line number of the first line of text that contains needle, 0 if none. */
long tu_line_of(const char *text, const char *needle);

#endif
