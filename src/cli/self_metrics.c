// SPDX-License-Identifier: Apache-2.0
/*
 * The sampling part of the self-metrics page, shared by record and agent
 * (see self_metrics.h).
 */
#include "cli/self_metrics.h"

#include "engine/session.h"
#include "sampler/sampler.h"
#include "util/memory.h"

void self_metrics__line(FILE *f, const char *name, unsigned long long v)
{
	fprintf(f, "%s %llu\n", name, v);
}

void self_metrics__head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void self_metrics__write_sampling(FILE *f, struct session *ss, uint64_t samples_total,
				  const char *samples_help)
{
	static const struct {
		int stat;
		const char *reason;
	} dropped[] =
	    {
		{OP_STAT_RINGBUF_FULL, "ring_buffer_full"},
		{OP_STAT_STACK_COPY_LOST, "stack_copy_ring_buffer_full"},
	    },
	  truncated[] = {
	      {OP_STAT_KERNEL_STACK_ERR, "kernel_stack_unavailable"},
	      {OP_STAT_USER_REGS_ERR, "user_registers_unavailable"},
	      {OP_STAT_USER_READ_ERR, "user_stack_unreadable"},
	      {OP_STAT_USER_MAX_DEPTH, "user_stack_too_deep"},
	      {OP_STAT_USER_BAD_FP, "bad_frame_pointer"},
	      {OP_STAT_USER_NO_RULE, "no_unwind_rule"},
	      {OP_STAT_USER_BAD_CFA, "impossible_cfa"},
	      {OP_STAT_USER_ANON_STOP, "jit_code_without_frame_pointer"},
	  };
	const struct session_tables *t = &ss->tables;
	uint64_t bpf[OP_STAT__COUNT] = {0};
	char name[160];

	if (ss->s)
		sampler__read_stats(ss->s, bpf);
	self_metrics__head(f, "omniprof_bpf_program_runs_total", "counter",
			   "Samples the BPF program handled (every CPU, idle included).");
	self_metrics__line(f, "omniprof_bpf_program_runs_total", bpf[OP_STAT_SAMPLES]);
	self_metrics__head(f, "omniprof_samples_total", "counter", samples_help);
	self_metrics__line(f, "omniprof_samples_total", samples_total);
	self_metrics__head(f, "omniprof_samples_idle_total", "counter",
			   "Idle CPU samples (not recorded).");
	self_metrics__line(f, "omniprof_samples_idle_total", bpf[OP_STAT_IDLE]);
	self_metrics__head(f, "omniprof_samples_dropped_total", "counter",
			   "Samples lost, by reason.");
	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
		snprintf(name, sizeof(name), "omniprof_samples_dropped_total{reason=\"%s\"}",
			 dropped[i].reason);
		self_metrics__line(f, name, bpf[dropped[i].stat]);
	}
	self_metrics__line(f, "omniprof_samples_dropped_total{reason=\"malformed_record\"}",
			   ss->c.stats.bad_records);
	self_metrics__line(f, "omniprof_samples_dropped_total{reason=\"out_of_memory\"}",
			   ss->c.stats.enomem);
	self_metrics__line(f, "omniprof_samples_dropped_total{reason=\"interval_stack_budget\"}",
			   t->traces_dropped);
	self_metrics__head(f, "omniprof_samples_truncated_total", "counter",
			   "Samples kept with an incomplete stack, by reason.");
	for (size_t i = 0; i < sizeof(truncated) / sizeof(truncated[0]); i++) {
		snprintf(name, sizeof(name), "omniprof_samples_truncated_total{reason=\"%s\"}",
			 truncated[i].reason);
		self_metrics__line(f, name, bpf[truncated[i].stat]);
	}
	/* What the tables hold now (the sampling thread owns them): a recording's single
	 * interval never ends before the page is rendered. */
	self_metrics__head(f, "omniprof_processes_tracked", "gauge", "Processes the tables hold.");
	self_metrics__line(f, "omniprof_processes_tracked", ss->c.procs.by_pid.len);
	self_metrics__head(f, "omniprof_files_tracked", "gauge",
			   "Executable files the tables hold.");
	self_metrics__line(f, "omniprof_files_tracked", ss->c.files.n_open);
	self_metrics__head(f, "omniprof_runtime_objects", "gauge",
			   "Code objects the language runtimes' namers hold.");
	self_metrics__line(f, "omniprof_runtime_objects", t->runtime_objects);
	self_metrics__head(f, "omniprof_symbol_cache_bytes", "gauge",
			   "Memory charged to the symbol cache.");
	self_metrics__line(f, "omniprof_symbol_cache_bytes", ss->sym.cache.cost);
	{
		size_t n_maps, map_bytes = memory__bpf_map_bytes(&n_maps);

		self_metrics__head(f, "omniprof_bpf_map_bytes", "gauge",
				   "Kernel memory of the BPF maps (tables) the agent holds.");
		self_metrics__line(f, "omniprof_bpf_map_bytes", map_bytes);
		self_metrics__head(f, "omniprof_bpf_maps", "gauge", "BPF maps the agent holds.");
		self_metrics__line(f, "omniprof_bpf_maps", n_maps);
	}
	self_metrics__head(f, "omniprof_heap_bytes", "gauge", "Heap in use (every arena).");
	self_metrics__line(f, "omniprof_heap_bytes", memory__heap_in_use());
}
