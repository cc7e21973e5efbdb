/* SPDX-License-Identifier: Apache-2.0 */
/*
 * OTLP profiles exporter: struct profile -> one
 * opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest
 * (opentelemetry-proto 1.10 / 1.11 layout), the bytes both the gRPC and the
 * OTLP/HTTP transports send.
 */
#ifndef OMNIPROF_EXPORT_OTLP_H
#define OMNIPROF_EXPORT_OTLP_H

#include <stddef.h>
#include <stdint.h>

struct profile;

/* Resource attributes of the agent's own (OTEL_RESOURCE_ATTRIBUTES) a resource may add. */
#define OTLP_MAX_EXTRA_ATTRS 16

/* What the resource of one process says; NULL or "" leaves an attribute out. */
struct otlp_resource {
	const char *service_name;    /* service.name */
	const char *host_name;	     /* host.name */
	const char *executable_name; /* process.executable.name */
	const char *executable_path; /* process.executable.path */
	const char *container_id;    /* container.id */
	/* n_extra more attributes as key, value pairs (extra[2 * i], extra[2 * i + 1]), at
	 * most OTLP_MAX_EXTRA_ATTRS; a key the agent sets itself keeps the agent's value. */
	const char *const *extra;
	size_t n_extra;
};

/*
 * Describes process pid (comm: the process name its samples carry). The
 * strings must stay valid until otlp__encode() returns. A non-zero return
 * leaves the resource with process.pid and the executable name from comm.
 */
typedef int (*otlp_resource_fn)(void *ctx, uint32_t pid, const char *comm,
				struct otlp_resource *out);

/*
 * Encodes p: one ResourceProfiles per process (service.name, host.name,
 * process.pid, process.executable.*, container.id), each with one CPU
 * profile (sample type samples/count, period type cpu/nanoseconds), all
 * sharing one dictionary whose tables start with their zero entry. Samples
 * carry thread.name, thread.id and, when p->has_events, cpu.logical_number
 * and one timestamp per event.
 *
 * Returns 0 with *buf (malloc'ed, the caller frees it) and *len, or -errno.
 */
/* The semantic conventions version the attributes follow (ResourceProfiles' and ScopeProfiles'
 * schema_url). */
#define OTLP_SCHEMA_URL "https://opentelemetry.io/schemas/1.44.0"

/*
 * Reads an ExportProfilesServiceResponse: 1 when it holds a partial success
 * (profiles rejected or a message: *rejected and msg set), 0 for a full
 * success (an empty reply too), -EPROTO when it does not decode.
 */
int otlp__partial_success(const uint8_t *reply, size_t len, char *msg, size_t msg_len,
			  int64_t *rejected);

int otlp__encode(const struct profile *p, otlp_resource_fn describe, void *ctx, uint8_t **buf,
		 size_t *len);

/* The most profiles one request carries: an interval's CPU and off-CPU ones. */
#define OTLP_MAX_PROFILES 2

/*
 * Encodes n (1..OTLP_MAX_PROFILES) profiles of the same interval in one
 * request, as the reference agent sends its off_cpu profile beside the CPU
 * one: one ResourceProfiles per process, its ScopeProfiles holding one
 * Profile per ps[] entry with samples of that process (in ps order), all
 * sharing the request's one dictionary. The first profile's ids are the
 * dictionary's indices as with otlp__encode(). Same returns.
 */
int otlp__encode_set(const struct profile *const *ps, size_t n, otlp_resource_fn describe,
		     void *ctx, uint8_t **buf, size_t *len);

#endif
