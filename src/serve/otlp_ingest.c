// SPDX-License-Identifier: Apache-2.0
/*
 * OTLP profiles into the store. The whole request is validated before the
 * store is touched (every index in range, counts positive), then resolved
 * in one transaction: a malformed request changes nothing, and a kill -9
 * loses at most the request in flight. Dictionary entries are resolved to
 * store ids once per request (locations, stacks), samples are counted per
 * second of their timestamps.
 */
#include "serve/ingest.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otlp_profiles_service.pb-c.h"
#include "serve/store.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
    pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__Profile pb_profile;
typedef Opentelemetry__Proto__Profiles__V1development__Sample pb_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Location pb_location;
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_key_value;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any_value;

#define MAX_COUNT 1000000000LL

struct ingest {
	struct store *s;
	const pb_dictionary *d;
	char *why;
	size_t why_len;
	int64_t **loc_frames; /* per location: store frame ids, innermost first */
	uint32_t *loc_n;
	int64_t *stack_ids; /* per stack_table entry, 0 = not resolved yet */
	int64_t *frame_buf;
	size_t frame_cap;
	int64_t n_samples;
};

static int bad(struct ingest *g, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->why, g->why_len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *str_at(const pb_dictionary *d, int32_t i)
{
	return i > 0 && (size_t)i < d->n_string_table ? d->string_table[i] : "";
}

static bool str_ok(const pb_dictionary *d, int32_t i)
{
	return i >= 0 && (i == 0 || (size_t)i < d->n_string_table);
}

static bool attrs_ok(const pb_dictionary *d, const int32_t *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i] < 0 || (size_t)a[i] >= d->n_attribute_table || !d->attribute_table[a[i]] ||
		    !str_ok(d, d->attribute_table[a[i]]->key_strindex))
			return false;
	}
	return true;
}

/* Checks every index the samples reach; the reason in g->why. */
static int validate(struct ingest *g, const pb_request *req)
{
	const pb_dictionary *d = req->dictionary;

	if (!req->n_resource_profiles)
		return 0;
	if (!d)
		return bad(g, "profiles without a dictionary");
	for (size_t i = 0; i < d->n_mapping_table; i++) {
		if (!str_ok(d, d->mapping_table[i]->filename_strindex) ||
		    !attrs_ok(d, d->mapping_table[i]->attribute_indices,
			      d->mapping_table[i]->n_attribute_indices))
			return bad(g, "mapping %zu: index out of range", i);
	}
	for (size_t i = 0; i < d->n_function_table; i++) {
		if (!str_ok(d, d->function_table[i]->name_strindex) ||
		    !str_ok(d, d->function_table[i]->filename_strindex) ||
		    !str_ok(d, d->function_table[i]->system_name_strindex))
			return bad(g, "function %zu: string index out of range", i);
	}
	for (size_t i = 0; i < d->n_location_table; i++) {
		const pb_location *l = d->location_table[i];

		if (l->mapping_index < 0 ||
		    (l->mapping_index && (size_t)l->mapping_index >= d->n_mapping_table))
			return bad(g, "location %zu: mapping index %d out of range", i,
				   l->mapping_index);
		if (!attrs_ok(d, l->attribute_indices, l->n_attribute_indices))
			return bad(g, "location %zu: attribute index out of range", i);
		for (size_t j = 0; j < l->n_lines; j++)
			if (l->lines[j]->function_index < 0 ||
			    (size_t)l->lines[j]->function_index >= d->n_function_table)
				return bad(g, "location %zu: function index out of range", i);
	}
	for (size_t i = 0; i < d->n_stack_table; i++)
		for (size_t j = 0; j < d->stack_table[i]->n_location_indices; j++)
			if (d->stack_table[i]->location_indices[j] < 0 ||
			    (size_t)d->stack_table[i]->location_indices[j] >= d->n_location_table)
				return bad(g, "stack %zu: location index out of range", i);
	for (size_t r = 0; r < req->n_resource_profiles; r++) {
		const Opentelemetry__Proto__Profiles__V1development__ResourceProfiles *rp =
		    req->resource_profiles[r];

		for (size_t sp = 0; sp < rp->n_scope_profiles; sp++) {
			for (size_t p = 0; p < rp->scope_profiles[sp]->n_profiles; p++) {
				const pb_profile *pr = rp->scope_profiles[sp]->profiles[p];

				if ((pr->sample_type &&
				     !str_ok(d, pr->sample_type->type_strindex)) ||
				    (pr->period_type && !str_ok(d, pr->period_type->type_strindex)))
					return bad(g, "profile: type index out of range");
				for (size_t k = 0; k < pr->n_samples; k++) {
					const pb_sample *s = pr->samples[k];

					if (s->stack_index < 0 ||
					    (size_t)s->stack_index >= d->n_stack_table)
						return bad(g,
							   "sample %zu: stack index %d out of "
							   "range",
							   k, s->stack_index);
					if (!attrs_ok(d, s->attribute_indices,
						      s->n_attribute_indices))
						return bad(g,
							   "sample %zu: attribute index out of "
							   "range",
							   k);
					if (s->n_values > 1)
						return bad(g,
							   "sample %zu: %zu values, one expected",
							   k, s->n_values);
					if (s->n_values &&
					    (s->values[0] < 0 || s->values[0] > MAX_COUNT))
						return bad(
						    g, "sample %zu: count %" PRId64 " out of range",
						    k, s->values[0]);
				}
			}
		}
	}
	return 0;
}

static const pb_any_value *attr_value(const pb_dictionary *d, const int32_t *a, size_t n,
				      const char *key)
{
	for (size_t i = 0; i < n; i++) {
		const Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit *kv =
		    d->attribute_table[a[i]];

		if (!strcmp(str_at(d, kv->key_strindex), key))
			return kv->value;
	}
	return NULL;
}

static const char *attr_str(const pb_dictionary *d, const int32_t *a, size_t n, const char *key)
{
	const pb_any_value *v = attr_value(d, a, n, key);

	return v && v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE
		   ? v->string_value
		   : NULL;
}

static int64_t attr_int(const pb_dictionary *d, const int32_t *a, size_t n, const char *key,
			int64_t dflt)
{
	const pb_any_value *v = attr_value(d, a, n, key);

	return v && v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE
		   ? v->int_value
		   : dflt;
}

/* Store frame ids of location li (innermost first), resolved once per request. */
static int resolve_location(struct ingest *g, int32_t li)
{
	const pb_dictionary *d = g->d;
	const pb_location *l = d->location_table[li];
	const char *map_file = "", *build = "", *type;
	size_t n = l->n_lines ? l->n_lines : 1;
	char addr[64];

	if (g->loc_frames[li])
		return 0;
	if (l->mapping_index) {
		const Opentelemetry__Proto__Profiles__V1development__Mapping *m =
		    d->mapping_table[l->mapping_index];
		const char *b;

		map_file = str_at(d, m->filename_strindex);
		if ((b = attr_str(d, m->attribute_indices, m->n_attribute_indices,
				  "process.executable.build_id.gnu")) ||
		    (b = attr_str(d, m->attribute_indices, m->n_attribute_indices,
				  "process.executable.build_id.go")) ||
		    (b = attr_str(d, m->attribute_indices, m->n_attribute_indices,
				  "process.executable.build_id.htlhash")))
			build = b;
	}
	type = attr_str(d, l->attribute_indices, l->n_attribute_indices, "profile.frame.type");
	g->loc_frames[li] = calloc(n, sizeof(int64_t));
	if (!g->loc_frames[li])
		return -ENOMEM;
	for (size_t j = 0; j < n; j++) {
		struct store_frame f = {.mapping = map_file, .build_id = build, .type = type};
		int64_t id;

		if (l->n_lines) {
			const Opentelemetry__Proto__Profiles__V1development__Function *fn =
			    d->function_table[l->lines[j]->function_index];

			f.function = str_at(d, fn->name_strindex);
			if (!*f.function)
				f.function = str_at(d, fn->system_name_strindex);
			f.file = str_at(d, fn->filename_strindex);
			f.line = l->lines[j]->line;
		}
		if (!f.function || !*f.function) {
			const char *base = strrchr(map_file, '/');

			snprintf(addr, sizeof(addr), "%.40s+0x%" PRIx64,
				 base	     ? base + 1
				 : *map_file ? map_file
					     : "?",
				 l->address);
			f.function = addr;
		}
		id = store__frame(g->s, &f);
		if (id < 0)
			return (int)id;
		g->loc_frames[li][j] = id;
	}
	g->loc_n[li] = n;
	return 0;
}

static int64_t resolve_stack(struct ingest *g, int32_t si)
{
	const Opentelemetry__Proto__Profiles__V1development__Stack *st = g->d->stack_table[si];
	size_t n = 0;
	int err;

	if (g->stack_ids[si])
		return g->stack_ids[si];
	for (size_t j = 0; j < st->n_location_indices; j++) {
		int32_t li = st->location_indices[j];

		if ((err = resolve_location(g, li)))
			return err;
		if (n + g->loc_n[li] > g->frame_cap) {
			size_t cap = (n + g->loc_n[li]) * 2;
			int64_t *nb = realloc(g->frame_buf, cap * sizeof(*nb));

			if (!nb)
				return -ENOMEM;
			g->frame_buf = nb;
			g->frame_cap = cap;
		}
		memcpy(&g->frame_buf[n], g->loc_frames[li], g->loc_n[li] * sizeof(int64_t));
		n += g->loc_n[li];
	}
	g->stack_ids[si] = store__stack(g->s, g->frame_buf, n);
	return g->stack_ids[si];
}

static int store_profile(struct ingest *g, const pb_profile *pr, int64_t res)
{
	const pb_dictionary *d = g->d;
	const char *ptname = "";
	int64_t ptype, last_tid = -1, last_thread = 0;
	const char *last_tname = NULL;

	if (pr->period_type)
		ptname = str_at(d, pr->period_type->type_strindex);
	if (!*ptname && pr->sample_type)
		ptname = str_at(d, pr->sample_type->type_strindex);
	ptype = store__ptype(g->s, *ptname ? ptname : "cpu");
	if (ptype < 0)
		return (int)ptype;
	for (size_t k = 0; k < pr->n_samples; k++) {
		const pb_sample *s = pr->samples[k];
		int64_t stack = resolve_stack(g, s->stack_index), tid, cpu, thread;
		const char *tname;
		int err;

		if (stack < 0)
			return (int)stack;
		tid = attr_int(d, s->attribute_indices, s->n_attribute_indices, "thread.id", 0);
		cpu = attr_int(d, s->attribute_indices, s->n_attribute_indices,
			       "cpu.logical_number", -1);
		tname = attr_str(d, s->attribute_indices, s->n_attribute_indices, "thread.name");
		if (!tname)
			tname = "";
		/* Samples come grouped by thread: one lookup per run. */
		if (tid == last_tid && last_tname && !strcmp(tname, last_tname)) {
			thread = last_thread;
		} else {
			thread = store__thread(g->s, tid, tname);
			if (thread < 0)
				return (int)thread;
			last_tid = tid;
			last_tname = tname;
			last_thread = thread;
		}
		if (s->n_values) {
			int64_t ts =
			    (int64_t)(s->n_timestamps_unix_nano ? s->timestamps_unix_nano[0]
								: pr->time_unix_nano) /
			    1000000000;

			if (!s->values[0])
				continue;
			if ((err = store__add(g->s, ts, ptype, res, stack, thread, cpu,
					      s->values[0])))
				return err;
			g->n_samples += s->values[0];
			continue;
		}
		/* Timestamps alone: one event each, counted per second. */
		for (size_t t = 0; t < s->n_timestamps_unix_nano;) {
			int64_t ts = (int64_t)(s->timestamps_unix_nano[t] / 1000000000), n = 0;

			while (t < s->n_timestamps_unix_nano &&
			       (int64_t)(s->timestamps_unix_nano[t] / 1000000000) == ts) {
				n++;
				t++;
			}
			if ((err = store__add(g->s, ts, ptype, res, stack, thread, cpu, n)))
				return err;
			g->n_samples += n;
		}
	}
	return 0;
}

static const char *res_str(const Opentelemetry__Proto__Resource__V1__Resource *r, const char *key)
{
	for (size_t i = 0; r && i < r->n_attributes; i++)
		if (!strcmp(r->attributes[i]->key, key) && r->attributes[i]->value &&
		    r->attributes[i]->value->value_case ==
			OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE)
			return r->attributes[i]->value->string_value;
	return "";
}

static int64_t res_int(const Opentelemetry__Proto__Resource__V1__Resource *r, const char *key)
{
	for (size_t i = 0; r && i < r->n_attributes; i++)
		if (!strcmp(r->attributes[i]->key, key) && r->attributes[i]->value &&
		    r->attributes[i]->value->value_case ==
			OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE)
			return r->attributes[i]->value->int_value;
	return 0;
}

static int store_request(struct ingest *g, const pb_request *req)
{
	for (size_t r = 0; r < req->n_resource_profiles; r++) {
		const Opentelemetry__Proto__Profiles__V1development__ResourceProfiles *rp =
		    req->resource_profiles[r];
		const Opentelemetry__Proto__Resource__V1__Resource *rs = rp->resource;
		struct store_resource sr = {
		    .host = res_str(rs, "host.name"),
		    .service = res_str(rs, "service.name"),
		    .container = res_str(rs, "container.id"),
		    .comm = res_str(rs, "process.executable.name"),
		    .exe = res_str(rs, "process.executable.path"),
		    .pid = res_int(rs, "process.pid"),
		};
		int64_t res = store__resource(g->s, &sr);

		if (res < 0)
			return (int)res;
		for (size_t sp = 0; sp < rp->n_scope_profiles; sp++)
			for (size_t p = 0; p < rp->scope_profiles[sp]->n_profiles; p++) {
				int err =
				    store_profile(g, rp->scope_profiles[sp]->profiles[p], res);

				if (err)
					return err;
			}
	}
	return 0;
}

int otlp_ingest(struct store *s, const uint8_t *buf, size_t len, char *why, size_t why_len,
		int64_t *n_samples)
{
	struct ingest g = {.s = s, .why = why, .why_len = why_len};
	pb_request *req;
	int err;

	*n_samples = 0;
	if (why_len)
		why[0] = '\0';
	req =
	    opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	if (!req)
		return bad(&g, "not an ExportProfilesServiceRequest (protobuf decoding failed)");
	err = validate(&g, req);
	if (err)
		goto cleanup;
	if (!req->n_resource_profiles)
		goto cleanup;
	g.d = req->dictionary;
	g.loc_frames = calloc(g.d->n_location_table + 1, sizeof(*g.loc_frames));
	g.loc_n = calloc(g.d->n_location_table + 1, sizeof(*g.loc_n));
	g.stack_ids = calloc(g.d->n_stack_table + 1, sizeof(*g.stack_ids));
	if (!g.loc_frames || !g.loc_n || !g.stack_ids) {
		err = -ENOMEM;
		goto cleanup;
	}
	if ((err = store__begin(s)))
		goto cleanup;
	err = store_request(&g, req);
	if (!err)
		err = store__commit(s);
	if (err) {
		store__rollback(s);
		if (err == -EINVAL)
			bad(&g, "a stack or frame the store refuses (too deep or too many frame "
				"types)");
		g.n_samples = 0;
	}
	*n_samples = g.n_samples;
cleanup:
	if (g.loc_frames)
		for (size_t i = 0; i < g.d->n_location_table; i++)
			free(g.loc_frames[i]);
	free(g.loc_frames);
	free(g.loc_n);
	free(g.stack_ids);
	free(g.frame_buf);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
	    req, NULL);
	return err;
}
