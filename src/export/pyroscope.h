/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Grafana Pyroscope push: one pprof body per service (and container) of an
 * interval's profile, each POSTed to
 *   BASE/ingest?name=SERVICE{service_name=SERVICE,container_id=ID}
 *              &from=UNIX_S&until=UNIX_S&sampleRate=HZ&spyName=omniprof&format=pprof
 */
#ifndef OMNIPROF_EXPORT_PYROSCOPE_H
#define OMNIPROF_EXPORT_PYROSCOPE_H

#include "export/export_queue.h"
#include "export/otlp.h"

struct profile;

/*
 * Splits p by (service name, container id) as describe reports them and
 * returns one request per group (NULL on error, errno set; a profile without
 * samples gives a batch of 0 requests). base_url: "http://host:4040".
 */
struct export_batch *pyroscope__batch(const struct profile *p, const char *base_url,
				      otlp_resource_fn describe, void *ctx);

#endif
