/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's own metrics for the people who run it (--metrics-listen): an
 * HTTP server (libmicrohttpd, its own thread) answering GET /metrics with
 * the Prometheus text format. The sampling thread renders the page after
 * each interval and publishes it here; the server adds the process's
 * resident memory, read at each scrape. Nothing else is served.
 */
#ifndef OMNIPROF_EXPORT_METRICS_SERVER_H
#define OMNIPROF_EXPORT_METRICS_SERVER_H

#include <stddef.h>

struct metrics_server;

/*
 * Parses listen ("IPV4:PORT" or "[IPV6]:PORT", port 1..65535): 0, or
 * -EINVAL with why (static text). Used to refuse a bad value at start.
 */
int metrics_server__check_address(const char *listen, const char **why);

/* Listens on listen: 0 and *out (free with metrics_server__free()), or -errno after one
 * clear line (address in use...). */
int metrics_server__start(const char *listen, struct metrics_server **out);
/* Replaces the page (text copied). Thread safe. */
int metrics_server__publish(struct metrics_server *m, const char *text, size_t len);
/* Stops the server and frees m; accepts NULL. */
void metrics_server__free(struct metrics_server *m);

#endif
