/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The self-metrics page of --metrics-listen (Prometheus text format), the
 * part record and agent share: what sampling sees (BPF counters, samples
 * dropped and truncated by reason, what the tables hold, memory). The agent
 * adds its intervals and export queues; export/metrics_server.c serves the
 * page and adds the resident memory at each scrape.
 */
#ifndef OMNIPROF_CLI_SELF_METRICS_H
#define OMNIPROF_CLI_SELF_METRICS_H

#include <stdint.h>
#include <stdio.h>

struct session;

/* One counter or gauge sample line (name may carry {labels}). */
void self_metrics__line(FILE *f, const char *name, unsigned long long v);
/* A family's HELP and TYPE lines, before its samples. */
void self_metrics__head(FILE *f, const char *name, const char *type, const char *help);

/*
 * Writes the sampling families from ss (read on the sampling thread: the BPF
 * counters are read here). samples_total: the samples counted so far, as
 * samples_help says (the agent: in the profiles built; record: received).
 */
void self_metrics__write_sampling(FILE *f, struct session *ss, uint64_t samples_total,
				  const char *samples_help);

#endif
