/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Aggregation of identical traces. A trace is a sample after its user
 * addresses were resolved to (file slot, file address) while the process lived:
 * frames are stored leaf first, kernel frames before user frames, and two
 * samples with the same process, thread, names and frames share one entry.
 */
#ifndef OMNIPROF_PROFILE_TRACE_TABLE_H
#define OMNIPROF_PROFILE_TRACE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omniprof/abi.h"
#include "util/hashmap.h"

struct trace_frame {
	uint64_t addr; /* kernel: absolute; native: in file_slot's terms; runtime: the offset;
			* error: the reason */
	union {
		uint32_t file_slot; /* native: file cache slot, 0 when in no known mapping */
		uint32_t frame_id;  /* runtime: its frame-store id (interp__resolve) */
	};
	uint8_t kind;  /* enum op_frame_kind */
	uint8_t flags; /* enum op_frame_flags */
	uint16_t reserved;
};
_Static_assert(sizeof(struct trace_frame) == 16, "trace_frame layout");

struct trace {
	uint32_t pid;
	uint32_t tid;
	char comm[OP_TASK_COMM_LEN];  /* thread name */
	char pcomm[OP_TASK_COMM_LEN]; /* process name */
	uint32_t flags;		      /* enum op_trace_flags */
	uint32_t n_frames;
	uint32_t cpu;	   /* with keep_events only (it splits traces), else 0 */
	uint32_t reserved; /* 0: part of the key */
	uint64_t count;
	/* Events (keep_events): the wall-clock time of each sample, in arrival order. */
	uint64_t time_ns; /* on trace_table__add(): this sample's time */
	uint64_t *timestamps;
	uint32_t n_timestamps; /* < count when the table's budget ran out */
	uint32_t cap_timestamps;
	struct trace_frame frames[];
};

/*
 * A continuous exporter wants one entry per event (OTLP: a timestamp per
 * sample, and the CPU as a sample attribute). With keep_events set, the CPU
 * becomes part of a trace's identity and each sample's time is kept, up to
 * max_timestamps for the whole table (then samples are only counted), so
 * memory stays bounded whatever the sampling rate. max_bytes bounds the
 * distinct traces the same way (an agent's interval).
 */
struct trace_table {
	struct hashmap traces; /* of struct trace, owned */
	uint64_t samples;
	uint64_t truncated; /* samples whose stack ended with an error frame */
	bool keep_events;
	uint64_t max_timestamps;
	uint64_t n_timestamps;
	uint64_t timestamps_dropped; /* samples counted without their time */
	uint64_t max_bytes;	     /* bound of the traces' memory; 0: none */
	uint64_t bytes;		     /* memory the traces hold (without timestamps) */
	uint64_t dropped;	     /* samples of new traces refused at max_bytes */
	/* The earliest and latest sample times added (0: none). A held stack copy
	 * is added after its interval ended: the profile's window must cover it. */
	uint64_t first_time_ns, last_time_ns;
};

void trace_table__init(struct trace_table *tt);
void trace_table__clear(struct trace_table *tt); /* frees every trace; accepts NULL */
/*
 * Counts one sample of t (copied when new). A new trace that would take the
 * table past max_bytes is not kept: the sample is counted in dropped. 0 or -ENOMEM.
 */
int trace_table__add(struct trace_table *tt, const struct trace *t);
/* The same with a weight (off-CPU: nanoseconds) instead of one sample. */
int trace_table__add_weighted(struct trace_table *tt, const struct trace *t, uint64_t weight);

#endif
