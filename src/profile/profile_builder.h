/* SPDX-License-Identifier: Apache-2.0 */
/* Turns aggregated traces into the symbolized profile the exporters read. */
#ifndef OMNIPROF_PROFILE_PROFILE_BUILDER_H
#define OMNIPROF_PROFILE_PROFILE_BUILDER_H

struct profile;
struct symbolizer;
struct trace_table;

/* Adds every trace of tt to p, naming frames with sym. 0 or -ENOMEM. */
int profile_builder__build(struct profile *p, const struct trace_table *tt, struct symbolizer *sym);

#endif
