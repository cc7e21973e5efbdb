/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OpenTelemetry SDK's environment conventions the agent follows: the
 * "key1=value1,key2=value2" lists of OTEL_EXPORTER_OTLP_HEADERS and
 * OTEL_RESOURCE_ATTRIBUTES (whitespace around entries, keys and values
 * ignored; values percent-decoded), and its booleans.
 */
#ifndef OMNIPROF_CLI_OTEL_ENV_H
#define OMNIPROF_CLI_OTEL_ENV_H

#include <stdbool.h>
#include <stddef.h>

struct otel_kv {
	char *key, *value;
};

/*
 * Parses text into *out (n entries; free with otel__kv_free()). Empty
 * entries ("a=1,,b=2") are skipped. 0, or -EINVAL with why (static text)
 * for an entry without '=' or key, or a bad percent escape; -ENOMEM.
 */
int otel__parse_kv_list(const char *text, struct otel_kv **out, size_t *n, const char **why);
void otel__kv_free(struct otel_kv *kv, size_t n); /* accepts NULL */

/* The spec's boolean: "true" in any case is true, anything else false. */
bool otel__bool(const char *text);

#endif
