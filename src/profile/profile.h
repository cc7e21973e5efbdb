/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symbolized profile: the one model every exporter reads (pprof, folded
 * stacks, flame graph, terminal summary, OTLP).
 *
 * It follows pprof's shape because pprof and OTLP share it: samples point at
 * locations (leaf first), a location has one line per function (innermost
 * first, so inline frames are several lines of one location) and may belong to
 * a mapping (the file it came from). Mappings, functions and locations are
 * interned: adding the same one twice returns the same id. Ids are 1-based;
 * 0 means "none" for a mapping and "out of memory" for a returned id.
 *
 * All strings are copied into the profile; callers keep ownership of theirs.
 */
#ifndef OMNIPROF_PROFILE_H
#define OMNIPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/frame_kinds.h"

/*
 * The kinds of omniprof/frame_kinds.h (same values as enum op_frame_kind):
 * PROFILE_FRAME_NATIVE (user-space machine code: C, C++, Rust, Go, ...),
 * PROFILE_FRAME_KERNEL, PROFILE_FRAME_ERROR (the unwinder stopped here: the
 * name says why) and one per runtime (address: the runtime's offset in its
 * function, e.g. an instruction offset).
 */
#define PROFILE_FRAME_KIND_ENUM(name, value, otlp, display) PROFILE_FRAME_##name = value,
enum profile_frame_kind { OP_FRAME_KINDS(PROFILE_FRAME_KIND_ENUM) };
#define PROFILE_FRAME_KIND_COUNT OP_FRAME_KIND_COUNT

/* OTLP `profile.frame.type` of kind, a semantic-conventions value ("native" for an unknown one). */
const char *profile_frame_kind__otlp_type(enum profile_frame_kind kind);
/* true for a runtime's frames (Python, Java, ...): not machine code, kernel or the unwinder's stop.
 */
static inline bool profile_frame_kind__is_runtime(enum profile_frame_kind kind)
{
	return kind != PROFILE_FRAME_NATIVE && kind != PROFILE_FRAME_KERNEL &&
	       kind != PROFILE_FRAME_ERROR;
}
/* Short lower-case display name of kind ("native", "kernel", ...; NULL: unknown kind). */
const char *profile_frame_kind__name(enum profile_frame_kind kind);

struct profile_mapping {
	uint64_t start; /* file-relative addresses the locations use */
	uint64_t limit;
	uint64_t file_offset;
	const char *filename; /* path as the process saw it, "" for none */
	const char *build_id; /* hex GNU build id, "" when unknown */
	/* More identities for naming frames later (omniprof symbolize, a backend): */
	const char *go_build_id; /* Go's build id, "" when none */
	const char *file_hash;	 /* hex htlhash of the file (see elf/file_id.h), "" when unknown */
};

struct profile_function {
	const char *name; /* display name, demangled when possible */
	/*
	 * Name as found in the binary. "" marks a native frame nothing could
	 * name (name then reads "file+0xOFFSET"): exporters report such
	 * mappings as not symbolized.
	 */
	const char *system_name;
	const char *filename; /* source file, "" when unknown */
	int64_t start_line;   /* line the function starts at in filename, 0 when unknown */
};

struct profile_line {
	uint32_t function_id; /* 1-based */
	int64_t line;	      /* 0 when unknown */
};

struct profile_location {
	uint32_t mapping_id; /* 1-based, 0 for kernel / none */
	/*
	 * Native frames: the ELF virtual address in the mapping's file (for a
	 * return address, the call instruction: return address - 1), so the
	 * file alone names it. Kernel: the absolute address.
	 */
	uint64_t address;
	enum profile_frame_kind kind;
	uint32_t n_lines;	    /* >= 1 */
	struct profile_line *lines; /* innermost (inlined) first, outermost caller last */
};

struct profile_sample {
	uint32_t n_locations;
	uint32_t *location_ids; /* 1-based, leaf first */
	uint32_t pid;
	uint32_t tid;
	const char *comm;	 /* the process's command name */
	const char *thread_name; /* the sampled thread's name */
	int64_t count;		 /* number of samples with exactly this stack */
	/* Events, when the session kept them (profile__set_sample_events()). */
	uint32_t cpu;		    /* the CPU every one of these samples ran on */
	uint32_t n_timestamps;	    /* == count, or 0: only the count is known */
	const uint64_t *timestamps; /* wall clock, ns since the epoch */
};

/* Totals the exporters and the summary report. */
struct profile_stats {
	uint64_t samples;   /* samples in the profile (sum of counts) */
	uint64_t processes; /* distinct pids */
	uint64_t dropped;   /* samples lost before aggregation (all reasons) */
	uint64_t truncated; /* samples kept with an incomplete stack */
};

struct profile {
	uint32_t frequency_hz;
	uint64_t period_ns; /* 1e9 / frequency_hz */
	uint64_t time_ns;   /* wall-clock start, ns since the epoch */
	uint64_t duration_ns;
	bool has_events; /* samples carry their CPU and, within budget, per-event times */
	/* Off-CPU: counts are nanoseconds off CPU (scaled by 1/P), not samples;
	 * the sample type is off_cpu/nanoseconds. */
	bool off_cpu;
	struct profile_stats stats;

	/* Read-only for exporters: element i has id i + 1. */
	struct profile_mapping *mappings;
	size_t n_mappings;
	struct profile_function *functions;
	size_t n_functions;
	struct profile_location *locations;
	size_t n_locations;
	struct profile_sample *samples;
	size_t n_samples;

	struct profile_intern *intern; /* private: interning tables, string pool */
};

/* Returns a new empty profile (free with profile__free()), NULL on ENOMEM. */
struct profile *profile__new(uint32_t frequency_hz);
void profile__free(struct profile *p); /* accepts NULL */

uint32_t profile__add_mapping(struct profile *p, uint64_t start, uint64_t limit,
			      uint64_t file_offset, const char *filename, const char *build_id);
/* The same with every identity of the file (go_build_id, file_hash may be NULL). */
uint32_t profile__add_file_mapping(struct profile *p, uint64_t start, uint64_t limit,
				   uint64_t file_offset, const char *filename, const char *build_id,
				   const char *go_build_id, const char *file_hash);
uint32_t profile__add_function(struct profile *p, const char *name, const char *system_name,
			       const char *filename);
/* The same with the function's first line (0: unknown). */
uint32_t profile__add_function_at(struct profile *p, const char *name, const char *system_name,
				  const char *filename, int64_t start_line);
uint32_t profile__add_location(struct profile *p, uint32_t mapping_id, uint64_t address,
			       enum profile_frame_kind kind, const struct profile_line *lines,
			       uint32_t n_lines);
/* Samples are not merged: the caller aggregates. Returns 0 or -ENOMEM. */
int profile__add_sample(struct profile *p, const uint32_t *location_ids, uint32_t n_locations,
			uint32_t pid, uint32_t tid, const char *comm, const char *thread_name,
			int64_t count);

/* Gives the last sample added its CPU and per-event times (copied; n == its count or 0).
 * 0, -EINVAL or -ENOMEM. */
int profile__set_sample_events(struct profile *p, uint32_t cpu, const uint64_t *timestamps,
			       uint32_t n);

/* Name of a location's outermost function (the one a flat listing shows). */
static inline const struct profile_function *profile__function(const struct profile *p,
							       uint32_t function_id)
{
	return &p->functions[function_id - 1];
}

static inline const struct profile_location *profile__location(const struct profile *p,
							       uint32_t location_id)
{
	return &p->locations[location_id - 1];
}

/*
 * A native frame nothing named: one line, its function "file+0xOFFSET" with
 * no system name. Our own displays show that name; pprof and OTLP send the
 * location with its mapping and address and no line, since backends name a
 * location by build id and address only when it has none.
 */
bool profile_location__unnamed(const struct profile *p, const struct profile_location *l);

#endif
