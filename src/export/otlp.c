// SPDX-License-Identifier: Apache-2.0
/*
 * OTLP profiles encoder. The model's ids are almost the dictionary's
 * indices: mapping, location and function id i (1-based) of the request's
 * first profile is table entry i, after the zero entry every table starts
 * with; a second profile (the interval's off-CPU one) has its tables after
 * the first's, its ids offset by their lengths (one dictionary per request,
 * shared by its profiles; entries both profiles name are there twice, which
 * costs bytes, not meaning). Strings, attributes and
 * stacks are interned here. The whole request is built as protobuf-c structs
 * pointing into the profile (its strings and arrays stay valid meanwhile) and
 * packed once: an interval's profile is small, and the transports want one
 * contiguous body anyway.
 */
#include "export/otlp.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "otlp_profiles_service.pb-c.h"
#include "profile/profile.h"
#include "util/version.h"
#include "util/array.h"
#include "util/hashmap.h"
#include "util/string_intern.h"
#include "util/utf8.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
    pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles pb_resource_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles pb_scope_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__Profile pb_profile;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType pb_value_type;
typedef Opentelemetry__Proto__Profiles__V1development__Sample pb_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping pb_mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Location pb_location;
typedef Opentelemetry__Proto__Profiles__V1development__Line pb_line;
typedef Opentelemetry__Proto__Profiles__V1development__Function pb_function;
typedef Opentelemetry__Proto__Profiles__V1development__Stack pb_stack;
typedef Opentelemetry__Proto__Profiles__V1development__Link pb_link;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit pb_attribute;
typedef Opentelemetry__Proto__Resource__V1__Resource pb_resource;
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_key_value;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any_value;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope pb_scope;

#define MAX_RESOURCE_ATTRS (6 + OTLP_MAX_EXTRA_ATTRS)
#define MAX_SAMPLE_ATTRS   3
#define MAX_MAPPING_ATTRS  3

/* ---- interning ----------------------------------------------------------- */

struct attr {
	int32_t key;
	bool is_int;
	int64_t i;
	const char *s;
};

struct attrtab {
	struct hashmap index; /* entry: (void *)(uintptr_t)i, i > 0 */
	struct attr *v;
	size_t n, cap;
};

static bool attr_equal(const void *entry, const void *key, void *ctx)
{
	const struct attrtab *t = ctx;
	const struct attr *a = &t->v[(uintptr_t)entry], *b = key;

	return a->key == b->key && a->is_int == b->is_int &&
	       (a->is_int ? a->i == b->i : strcmp(a->s, b->s) == 0);
}

static int32_t attrtab_intern(struct attrtab *t, const struct attr *a)
{
	uint64_t h = hash_u64((uint64_t)a->key * 2 + a->is_int);
	void *found;

	h = a->is_int ? hash_u64(h ^ (uint64_t)a->i) : hash_str(a->s, h);
	found = hashmap__find(&t->index, h, a);
	if (found)
		return (int32_t)(uintptr_t)found;
	if (array__reserve_max(t->v, t->cap, t->n + 1, INT32_MAX)) /* indices are int32 */
		return -ENOMEM;
	t->v[t->n] = *a;
	if (hashmap__insert(&t->index, h, (void *)(uintptr_t)t->n))
		return -ENOMEM;
	return (int32_t)t->n++;
}

/*
 * Stacks point at the samples' location id arrays (in the profile's pool);
 * base: what the request's location table adds to that profile's ids.
 */
struct stack_ref {
	const uint32_t *ids;
	uint32_t n;
	uint32_t base;
};

struct stacktab {
	struct hashmap index; /* entry: (void *)(uintptr_t)i, i > 0 */
	struct stack_ref *v;
	size_t n, cap;
};

static bool stack_equal(const void *entry, const void *key, void *ctx)
{
	const struct stacktab *t = ctx;
	const struct stack_ref *a = &t->v[(uintptr_t)entry], *b = key;

	return a->n == b->n && a->base == b->base &&
	       !memcmp(a->ids, b->ids, a->n * sizeof(*a->ids));
}

static int32_t stacktab_intern(struct stacktab *t, const uint32_t *ids, uint32_t n, uint32_t base)
{
	struct stack_ref k = {ids, n, base};
	uint64_t h = hash_mem(ids, n * sizeof(*ids), hash_u64(((uint64_t)base << 32) | n));
	void *found = hashmap__find(&t->index, h, &k);

	if (found)
		return (int32_t)(uintptr_t)found;
	if (array__reserve_max(t->v, t->cap, t->n + 1, INT32_MAX)) /* indices are int32 */
		return -ENOMEM;
	t->v[t->n] = k;
	if (hashmap__insert(&t->index, h, (void *)(uintptr_t)t->n))
		return -ENOMEM;
	return (int32_t)t->n++;
}

/* ---- the encoder ----------------------------------------------------------- */

/* Where one profile's entries start in the request's shared tables. */
struct enc_part {
	const struct profile *p;
	uint32_t mapping_base, function_base, location_base; /* added to the model's ids */
	size_t sample_base;				     /* its first sample in order */
};

/* One sample of the request: the profile it comes from and its index there. */
struct sample_ref {
	uint32_t part;
	uint32_t pid;
	size_t i;
};

struct encoder {
	struct enc_part parts[OTLP_MAX_PROFILES];
	size_t n_parts;
	size_t n_mappings, n_functions, n_locations, n_samples; /* over all parts */
	/* Strings are borrowed (profile pool or constants): they outlive the encoder. */
	struct string_intern strings;
	/* Repaired copies of strings that were not UTF-8 (proto3 strings must be). */
	struct string_intern owned;
	struct attrtab attrs;
	struct stacktab stacks;
	int err; /* first interning failure */

	/* Dictionary storage: element i is table entry i (0 = zero value). */
	pb_mapping *mappings;
	pb_mapping **mapping_ptrs;
	int32_t *mapping_attrs; /* MAX_MAPPING_ATTRS per mapping */
	pb_location *locations;
	pb_location **location_ptrs;
	int32_t *location_attrs; /* one per location */
	pb_line *lines;
	pb_line **line_ptrs;
	pb_function *functions;
	pb_function **function_ptrs;
	pb_stack *stack_msgs;
	pb_stack **stack_ptrs;
	int32_t *stack_ids; /* every stack's location indices, back to back */
	pb_attribute *attr_msgs;
	pb_attribute **attr_ptrs;
	pb_any_value *attr_values;
	char **string_ptrs;

	/* Per sample, in resource order. */
	struct sample_ref *order; /* the samples sorted by pid, then profile */
	pb_sample *samples;
	pb_sample **sample_ptrs;
	int32_t *sample_attrs; /* MAX_SAMPLE_ATTRS per sample */
	int64_t *values;       /* one per sample, for those sent without times */

	/* Per process. */
	size_t n_resources;
	pb_resource_profiles *rps;
	pb_resource_profiles **rp_ptrs;
	pb_resource *resources;
	pb_key_value *kvs; /* MAX_RESOURCE_ATTRS per resource */
	pb_key_value **kv_ptrs;
	pb_any_value *kv_values;
	pb_scope_profiles *sps;
	pb_scope_profiles **sp_ptrs;
	pb_profile *profiles;	      /* OTLP_MAX_PROFILES per resource */
	pb_profile **profile_ptrs;    /* idem */
	uint8_t (*profile_ids)[16];   /* idem */
	char (*pid_names)[24];	      /* fallback executable names */
	char (*unknown_services)[40]; /* fallback service names: "unknown_service:COMM" */
};

/*
 * s as UTF-8: itself, or a repaired copy (invalid bytes as U+FFFD) owned by e;
 * names from other processes' files and paths are any bytes, and a receiver
 * decoding proto3 strings refuses the request otherwise. NULL on ENOMEM
 * (noted in e->err).
 */
static const char *enc_utf8(struct encoder *e, const char *s)
{
	char *clean;
	int64_t i;

	if (!s || utf8__valid(s))
		return s;
	clean = utf8__sanitize(s);
	i = clean ? string_intern__add(&e->owned, clean) : -ENOMEM;
	free(clean);
	if (i < 0) {
		if (!e->err)
			e->err = (int)i;
		return NULL;
	}
	return string_intern__at(&e->owned, (size_t)i);
}

static int32_t enc_str(struct encoder *e, const char *s)
{
	int32_t i;

	s = enc_utf8(e, s);
	i = (int32_t)string_intern__add(&e->strings, s);

	if (i < 0) {
		if (!e->err)
			e->err = i;
		return 0;
	}
	return i;
}

static int32_t enc_attr_str(struct encoder *e, const char *key, const char *value)
{
	struct attr a = {.key = enc_str(e, key), .s = enc_utf8(e, value)};
	int32_t i;

	if (!a.s || !*a.s)
		return 0;
	i = attrtab_intern(&e->attrs, &a);
	if (i < 0) {
		if (!e->err)
			e->err = i;
		return 0;
	}
	return i;
}

static int32_t enc_attr_int(struct encoder *e, const char *key, int64_t value)
{
	struct attr a = {.key = enc_str(e, key), .is_int = true, .i = value};
	int32_t i = attrtab_intern(&e->attrs, &a);

	if (i < 0) {
		if (!e->err)
			e->err = i;
		return 0;
	}
	return i;
}

static void encoder_free(struct encoder *e)
{
	string_intern__free(&e->strings);
	string_intern__free(&e->owned);
	hashmap__clear(&e->attrs.index);
	free(e->attrs.v);
	hashmap__clear(&e->stacks.index);
	free(e->stacks.v);
	free(e->mappings);
	free(e->mapping_ptrs);
	free(e->mapping_attrs);
	free(e->locations);
	free(e->location_ptrs);
	free(e->location_attrs);
	free(e->lines);
	free(e->line_ptrs);
	free(e->functions);
	free(e->function_ptrs);
	free(e->stack_msgs);
	free(e->stack_ptrs);
	free(e->stack_ids);
	free(e->attr_msgs);
	free(e->attr_ptrs);
	free(e->attr_values);
	free(e->string_ptrs);
	free(e->order);
	free(e->samples);
	free(e->sample_ptrs);
	free(e->sample_attrs);
	free(e->values);
	free(e->rps);
	free(e->rp_ptrs);
	free(e->resources);
	free(e->kvs);
	free(e->kv_ptrs);
	free(e->kv_values);
	free(e->sps);
	free(e->sp_ptrs);
	free(e->profiles);
	free(e->profile_ptrs);
	free(e->profile_ids);
	free(e->pid_names);
	free(e->unknown_services);
}

/* calloc(n ? n : 1, size): every table has at least its zero entry. */
static void *alloc_n(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

/*
 * The semantic conventions' value for a location, from
 * omniprof/frame_kinds.h: machine code of a Go binary (a mapping with a Go
 * build id) is "go", as the reference agent types it.
 */
static const char *frame_type(const struct profile *p, const struct profile_location *l)
{
	if (l->kind == PROFILE_FRAME_NATIVE && l->mapping_id) {
		const char *go = p->mappings[l->mapping_id - 1].go_build_id;

		if (go && *go)
			return "go";
	}
	return profile_frame_kind__otlp_type(l->kind);
}

static int encode_mappings(struct encoder *e)
{
	size_t n = e->n_mappings + 1, i = 1;

	e->mappings = alloc_n(n, sizeof(*e->mappings));
	e->mapping_ptrs = alloc_n(n, sizeof(*e->mapping_ptrs));
	e->mapping_attrs = alloc_n(n * MAX_MAPPING_ATTRS, sizeof(*e->mapping_attrs));
	if (!e->mappings || !e->mapping_ptrs || !e->mapping_attrs)
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__mapping__init(&e->mappings[0]);
	e->mapping_ptrs[0] = &e->mappings[0];
	for (size_t k = 0; k < e->n_parts; k++) {
		const struct profile *p = e->parts[k].p;

		for (size_t pi = 0; pi < p->n_mappings; pi++, i++) {
			pb_mapping *m = &e->mappings[i];
			int32_t *attrs = &e->mapping_attrs[i * MAX_MAPPING_ATTRS];
			const struct profile_mapping *pm = &p->mappings[pi];
			size_t na = 0;

			opentelemetry__proto__profiles__v1development__mapping__init(m);
			e->mapping_ptrs[i] = m;
			m->memory_start = pm->start;
			m->memory_limit = pm->limit;
			m->file_offset = pm->file_offset;
			m->filename_strindex = enc_str(e, pm->filename);
			if (pm->build_id && *pm->build_id)
				attrs[na++] = enc_attr_str(e, "process.executable.build_id.gnu",
							   pm->build_id);
			if (pm->go_build_id && *pm->go_build_id)
				attrs[na++] = enc_attr_str(e, "process.executable.build_id.go",
							   pm->go_build_id);
			if (pm->file_hash && *pm->file_hash)
				attrs[na++] = enc_attr_str(e, "process.executable.build_id.htlhash",
							   pm->file_hash);
			m->attribute_indices = attrs;
			m->n_attribute_indices = na;
		}
	}
	return 0;
}

static int encode_functions(struct encoder *e)
{
	size_t n = e->n_functions + 1, i = 1;

	e->functions = alloc_n(n, sizeof(*e->functions));
	e->function_ptrs = alloc_n(n, sizeof(*e->function_ptrs));
	if (!e->functions || !e->function_ptrs)
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__function__init(&e->functions[0]);
	e->function_ptrs[0] = &e->functions[0];
	for (size_t k = 0; k < e->n_parts; k++) {
		const struct profile *p = e->parts[k].p;

		for (size_t pi = 0; pi < p->n_functions; pi++, i++) {
			pb_function *f = &e->functions[i];
			const struct profile_function *pf = &p->functions[pi];

			opentelemetry__proto__profiles__v1development__function__init(f);
			e->function_ptrs[i] = f;
			f->name_strindex = enc_str(e, pf->name);
			f->system_name_strindex = enc_str(e, pf->system_name);
			f->filename_strindex = enc_str(e, pf->filename);
			f->start_line = pf->start_line;
		}
	}
	return 0;
}

static int encode_locations(struct encoder *e)
{
	size_t n = e->n_locations + 1, n_lines = 0, li = 0, i = 1;

	for (size_t k = 0; k < e->n_parts; k++)
		for (size_t pi = 0; pi < e->parts[k].p->n_locations; pi++)
			n_lines += e->parts[k].p->locations[pi].n_lines;
	e->locations = alloc_n(n, sizeof(*e->locations));
	e->location_ptrs = alloc_n(n, sizeof(*e->location_ptrs));
	e->location_attrs = alloc_n(n, sizeof(*e->location_attrs));
	e->lines = alloc_n(n_lines, sizeof(*e->lines));
	e->line_ptrs = alloc_n(n_lines, sizeof(*e->line_ptrs));
	if (!e->locations || !e->location_ptrs || !e->location_attrs || !e->lines || !e->line_ptrs)
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__location__init(&e->locations[0]);
	e->location_ptrs[0] = &e->locations[0];
	for (size_t k = 0; k < e->n_parts; k++) {
		const struct enc_part *part = &e->parts[k];
		const struct profile *p = part->p;

		for (size_t pi = 0; pi < p->n_locations; pi++, i++) {
			pb_location *l = &e->locations[i];
			const struct profile_location *pl = &p->locations[pi];

			opentelemetry__proto__profiles__v1development__location__init(l);
			e->location_ptrs[i] = l;
			if (pl->mapping_id > p->n_mappings)
				return -EINVAL;
			l->mapping_index =
			    pl->mapping_id ? (int32_t)(pl->mapping_id + part->mapping_base) : 0;
			l->address = pl->address;
			e->location_attrs[i] =
			    enc_attr_str(e, "profile.frame.type", frame_type(p, pl));
			l->attribute_indices = &e->location_attrs[i];
			l->n_attribute_indices = 1;
			/* Both orders agree: innermost (inlined) function first, outermost caller
			 * last. */
			l->lines = &e->line_ptrs[li];
			l->n_lines = profile_location__unnamed(p, pl) ? 0 : pl->n_lines;
			for (uint32_t j = 0; j < l->n_lines; j++, li++) {
				pb_line *line = &e->lines[li];

				if (!pl->lines[j].function_id ||
				    pl->lines[j].function_id > p->n_functions)
					return -EINVAL;
				opentelemetry__proto__profiles__v1development__line__init(line);
				line->function_index =
				    (int32_t)(pl->lines[j].function_id + part->function_base);
				line->line = pl->lines[j].line;
				e->line_ptrs[li] = line;
			}
		}
	}
	return 0;
}

static int cmp_by_pid(const void *a, const void *b)
{
	const struct sample_ref *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static const struct profile_sample *sample_at(const struct encoder *e, size_t k)
{
	return &e->parts[e->order[k].part].p->samples[e->order[k].i];
}

static int encode_samples(struct encoder *e)
{
	size_t n = e->n_samples, g = 0;

	e->order = alloc_n(n, sizeof(*e->order));
	e->samples = alloc_n(n, sizeof(*e->samples));
	e->sample_ptrs = alloc_n(n, sizeof(*e->sample_ptrs));
	e->sample_attrs = alloc_n(n * MAX_SAMPLE_ATTRS, sizeof(*e->sample_attrs));
	e->values = alloc_n(n, sizeof(*e->values));
	if (!e->order || !e->samples || !e->sample_ptrs || !e->sample_attrs || !e->values)
		return -ENOMEM;
	for (size_t k = 0; k < e->n_parts; k++)
		for (size_t i = 0; i < e->parts[k].p->n_samples; i++, g++)
			e->order[g] =
			    (struct sample_ref){(uint32_t)k, e->parts[k].p->samples[i].pid, i};
	qsort(e->order, n, sizeof(*e->order), cmp_by_pid);

	for (size_t k = 0; k < n; k++) {
		const struct enc_part *part = &e->parts[e->order[k].part];
		const struct profile *p = part->p;
		const struct profile_sample *ps = sample_at(e, k);
		pb_sample *s = &e->samples[k];
		int32_t *attrs = &e->sample_attrs[k * MAX_SAMPLE_ATTRS];
		size_t na = 0;
		int32_t stack;

		for (uint32_t j = 0; j < ps->n_locations; j++)
			if (!ps->location_ids[j] || ps->location_ids[j] > p->n_locations)
				return -EINVAL;
		stack = stacktab_intern(&e->stacks, ps->location_ids, ps->n_locations,
					part->location_base);
		if (stack < 0)
			return stack;
		opentelemetry__proto__profiles__v1development__sample__init(s);
		e->sample_ptrs[k] = s;
		s->stack_index = stack;
		if (ps->thread_name && *ps->thread_name)
			attrs[na++] = enc_attr_str(e, "thread.name", ps->thread_name);
		attrs[na++] = enc_attr_int(e, "thread.id", ps->tid);
		if (p->has_events)
			attrs[na++] = enc_attr_int(e, "cpu.logical_number", ps->cpu);
		s->attribute_indices = attrs;
		s->n_attribute_indices = na;
		if (ps->n_timestamps && (int64_t)ps->n_timestamps == ps->count) {
			/* Timestamps alone: each one is an event of value 1. */
			s->timestamps_unix_nano = (uint64_t *)ps->timestamps; /* only read */
			s->n_timestamps_unix_nano = ps->n_timestamps;
		} else {
			e->values[k] = ps->count;
			s->values = &e->values[k];
			s->n_values = 1;
		}
	}
	return 0;
}

static int encode_stacks(struct encoder *e)
{
	size_t n = e->stacks.n, total = 0, off = 0;

	for (size_t i = 1; i < n; i++)
		total += e->stacks.v[i].n;
	e->stack_msgs = alloc_n(n, sizeof(*e->stack_msgs));
	e->stack_ptrs = alloc_n(n, sizeof(*e->stack_ptrs));
	e->stack_ids = alloc_n(total, sizeof(*e->stack_ids));
	if (!e->stack_msgs || !e->stack_ptrs || !e->stack_ids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct stack_ref *r = &e->stacks.v[i];
		pb_stack *s = &e->stack_msgs[i];

		opentelemetry__proto__profiles__v1development__stack__init(s);
		e->stack_ptrs[i] = s;
		if (!i)
			continue;
		s->location_indices = &e->stack_ids[off];
		s->n_location_indices = r->n;
		for (uint32_t j = 0; j < r->n; j++)
			e->stack_ids[off++] = (int32_t)(r->ids[j] + r->base);
	}
	return 0;
}

/* The attribute and string tables: last, once everything was interned. */
static int encode_attributes_and_strings(struct encoder *e)
{
	size_t n = e->attrs.n;

	e->attr_msgs = alloc_n(n, sizeof(*e->attr_msgs));
	e->attr_ptrs = alloc_n(n, sizeof(*e->attr_ptrs));
	e->attr_values = alloc_n(n, sizeof(*e->attr_values));
	e->string_ptrs = alloc_n(string_intern__count(&e->strings), sizeof(*e->string_ptrs));
	if (!e->attr_msgs || !e->attr_ptrs || !e->attr_values || !e->string_ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		pb_attribute *a = &e->attr_msgs[i];
		pb_any_value *v = &e->attr_values[i];

		opentelemetry__proto__profiles__v1development__key_value_and_unit__init(a);
		opentelemetry__proto__common__v1__any_value__init(v);
		e->attr_ptrs[i] = a;
		if (!i)
			continue; /* the zero entry: no key, no value */
		a->key_strindex = e->attrs.v[i].key;
		if (e->attrs.v[i].is_int) {
			v->value_case =
			    OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
			v->int_value = e->attrs.v[i].i;
		} else {
			v->value_case =
			    OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
			v->string_value = (char *)e->attrs.v[i].s; /* only read */
		}
		a->value = v;
	}
	for (size_t i = 0; i < string_intern__count(&e->strings); i++)
		e->string_ptrs[i] = (char *)string_intern__at(&e->strings, i); /* only read */
	return 0;
}

/* Appends key=value to a resource's attributes; empty values are left out. */
static void add_kv_str(pb_key_value *kvs, pb_any_value *vals, size_t *n, const char *key,
		       const char *value)
{
	if (!value || !*value)
		return;
	opentelemetry__proto__common__v1__key_value__init(&kvs[*n]);
	opentelemetry__proto__common__v1__any_value__init(&vals[*n]);
	kvs[*n].key = (char *)key; /* only read */
	vals[*n].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	vals[*n].string_value = (char *)value;
	kvs[*n].value = &vals[*n];
	(*n)++;
}

static void add_kv_int(pb_key_value *kvs, pb_any_value *vals, size_t *n, const char *key,
		       int64_t value)
{
	opentelemetry__proto__common__v1__key_value__init(&kvs[*n]);
	opentelemetry__proto__common__v1__any_value__init(&vals[*n]);
	kvs[*n].key = (char *)key; /* only read */
	vals[*n].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
	vals[*n].int_value = value;
	kvs[*n].value = &vals[*n];
	(*n)++;
}

/*
 * One ResourceProfiles per run of samples with the same pid, its one
 * ScopeProfiles holding one Profile per part that has samples of that pid.
 */
static int encode_resources(struct encoder *e, otlp_resource_fn describe, void *ctx,
			    pb_scope *scope, pb_value_type *sample_types,
			    pb_value_type *period_types)
{
	size_t n = 0, np = 0;

	for (size_t k = 0; k < e->n_samples; k++)
		if (!k || e->order[k].pid != e->order[k - 1].pid)
			n++;
	e->rps = alloc_n(n, sizeof(*e->rps));
	e->rp_ptrs = alloc_n(n, sizeof(*e->rp_ptrs));
	e->resources = alloc_n(n, sizeof(*e->resources));
	e->kvs = alloc_n(n * MAX_RESOURCE_ATTRS, sizeof(*e->kvs));
	e->kv_ptrs = alloc_n(n * MAX_RESOURCE_ATTRS, sizeof(*e->kv_ptrs));
	e->kv_values = alloc_n(n * MAX_RESOURCE_ATTRS, sizeof(*e->kv_values));
	e->sps = alloc_n(n, sizeof(*e->sps));
	e->sp_ptrs = alloc_n(n, sizeof(*e->sp_ptrs));
	e->profiles = alloc_n(n * OTLP_MAX_PROFILES, sizeof(*e->profiles));
	e->profile_ptrs = alloc_n(n * OTLP_MAX_PROFILES, sizeof(*e->profile_ptrs));
	e->profile_ids = alloc_n(n * OTLP_MAX_PROFILES, sizeof(*e->profile_ids));
	e->pid_names = alloc_n(n, sizeof(*e->pid_names));
	e->unknown_services = alloc_n(n, sizeof(*e->unknown_services));
	if (!e->unknown_services || !e->rps || !e->rp_ptrs || !e->resources || !e->kvs ||
	    !e->kv_ptrs || !e->kv_values || !e->sps || !e->sp_ptrs || !e->profiles ||
	    !e->profile_ptrs || !e->profile_ids || !e->pid_names)
		return -ENOMEM;
	e->n_resources = n;

	for (size_t r = 0, k = 0; r < n; r++) {
		const struct profile_sample *first = sample_at(e, k);
		struct otlp_resource info = {0};
		pb_key_value *kvs = &e->kvs[r * MAX_RESOURCE_ATTRS];
		pb_key_value **kv_ptrs = &e->kv_ptrs[r * MAX_RESOURCE_ATTRS];
		pb_any_value *vals = &e->kv_values[r * MAX_RESOURCE_ATTRS];
		size_t nkv = 0, first_profile = np;

		if (!describe || describe(ctx, first->pid, first->comm, &info)) {
			memset(&info, 0, sizeof(info));
			snprintf(e->pid_names[r], sizeof(e->pid_names[r]), "%s", first->comm);
			snprintf(e->unknown_services[r], sizeof(e->unknown_services[r]),
				 "unknown_service:%s", first->comm);
			info.executable_name = e->pid_names[r];
			/* What OpenTelemetry's SDKs say when nothing names the service. */
			info.service_name = e->unknown_services[r];
		}
		/* The names come from the process's files (any bytes): proto3 strings are UTF-8. */
		add_kv_str(kvs, vals, &nkv, "service.name", enc_utf8(e, info.service_name));
		add_kv_str(kvs, vals, &nkv, "host.name", enc_utf8(e, info.host_name));
		add_kv_int(kvs, vals, &nkv, "process.pid", first->pid);
		add_kv_str(kvs, vals, &nkv, "process.executable.name",
			   enc_utf8(e, info.executable_name));
		add_kv_str(kvs, vals, &nkv, "process.executable.path",
			   enc_utf8(e, info.executable_path));
		add_kv_str(kvs, vals, &nkv, "container.id", enc_utf8(e, info.container_id));
		for (size_t i = 0; i < info.n_extra && i < OTLP_MAX_EXTRA_ATTRS; i++) {
			const char *key = info.extra[2 * i];
			bool taken = false;

			for (size_t j = 0; j < nkv && !taken; j++)
				taken = !strcmp(kvs[j].key, key);
			if (!taken)
				add_kv_str(kvs, vals, &nkv, key,
					   enc_utf8(e, info.extra[2 * i + 1]));
		}
		for (size_t i = 0; i < nkv; i++)
			kv_ptrs[i] = &kvs[i];

		opentelemetry__proto__resource__v1__resource__init(&e->resources[r]);
		e->resources[r].attributes = kv_ptrs;
		e->resources[r].n_attributes = nkv;

		/* One Profile per part: the samples are sorted by part within a pid. */
		while (k < e->n_samples && e->order[k].pid == first->pid) {
			uint32_t part = e->order[k].part;
			const struct profile *p = e->parts[part].p;
			pb_profile *prof = &e->profiles[np];
			size_t start = k;

			while (k < e->n_samples && e->order[k].pid == first->pid &&
			       e->order[k].part == part)
				k++;
			opentelemetry__proto__profiles__v1development__profile__init(prof);
			prof->sample_type = &sample_types[part];
			prof->period_type = &period_types[part];
			prof->period = p->off_cpu		  ? 1
				       : p->period_ns > INT64_MAX ? INT64_MAX
								  : (int64_t)p->period_ns;
			prof->time_unix_nano = p->time_ns;
			prof->duration_nano = p->duration_ns;
			prof->samples = &e->sample_ptrs[start];
			prof->n_samples = k - start;
			/* Random and non-zero: backends may deduplicate on it. */
			if (getrandom(e->profile_ids[np], 16, 0) != 16)
				memset(e->profile_ids[np], 0, 16);
			e->profile_ids[np][0] |= 1;
			prof->profile_id.data = e->profile_ids[np];
			prof->profile_id.len = 16;
			e->profile_ptrs[np++] = prof;
		}

		opentelemetry__proto__profiles__v1development__scope_profiles__init(&e->sps[r]);
		e->sps[r].scope = scope;
		e->sps[r].schema_url = (char *)OTLP_SCHEMA_URL; /* only read */
		e->sps[r].profiles = &e->profile_ptrs[first_profile];
		e->sps[r].n_profiles = np - first_profile;
		e->sp_ptrs[r] = &e->sps[r];

		opentelemetry__proto__profiles__v1development__resource_profiles__init(&e->rps[r]);
		e->rps[r].schema_url = (char *)OTLP_SCHEMA_URL; /* only read */
		e->rps[r].resource = &e->resources[r];
		e->rps[r].scope_profiles = &e->sp_ptrs[r];
		e->rps[r].n_scope_profiles = 1;
		e->rp_ptrs[r] = &e->rps[r];
	}
	return 0;
}

int otlp__encode_set(const struct profile *const *ps, size_t n_ps, otlp_resource_fn describe,
		     void *ctx, uint8_t **buf, size_t *len)
{
	static uint8_t zero_trace_id[16], zero_span_id[8];
	struct encoder e = {0};
	pb_request req =
	    OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	pb_dictionary dict =
	    OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	pb_link zero_link = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINK__INIT;
	pb_link *link_ptr = &zero_link;
	pb_value_type sample_types[OTLP_MAX_PROFILES], period_types[OTLP_MAX_PROFILES];
	pb_scope scope = OPENTELEMETRY__PROTO__COMMON__V1__INSTRUMENTATION_SCOPE__INIT;
	uint8_t *out = NULL;
	size_t size;
	int err;

	if (!ps || !n_ps || n_ps > OTLP_MAX_PROFILES || !buf || !len)
		return -EINVAL;
	*buf = NULL;
	*len = 0;
	/* Each part's tables follow the previous ones': its ids plus the entries before it. */
	for (size_t k = 0; k < n_ps; k++) {
		const struct profile *p = ps[k];

		if (!p)
			return -EINVAL;
		if (e.n_mappings + p->n_mappings >= INT32_MAX ||
		    e.n_functions + p->n_functions >= INT32_MAX ||
		    e.n_locations + p->n_locations >= INT32_MAX)
			return -E2BIG; /* indices are int32 */
		e.parts[k] = (struct enc_part){p, (uint32_t)e.n_mappings, (uint32_t)e.n_functions,
					       (uint32_t)e.n_locations, e.n_samples};
		e.n_mappings += p->n_mappings;
		e.n_functions += p->n_functions;
		e.n_locations += p->n_locations;
		e.n_samples += p->n_samples;
	}
	e.n_parts = n_ps;
	hashmap__init(&e.attrs.index, attr_equal, &e.attrs);
	hashmap__init(&e.stacks.index, stack_equal, &e.stacks);

	/* The zero entries, outside the indexes: nothing interned later may land on them. */
	err = -ENOMEM;
	if (string_intern__init(&e.strings, STRING_INTERN_EMPTY_ZERO) ||
	    string_intern__init(&e.owned, STRING_INTERN_COPY) ||
	    array__grow(e.attrs.v, e.attrs.cap, 0) || array__grow(e.stacks.v, e.stacks.cap, 0))
		goto cleanup;
	e.attrs.v[e.attrs.n++] = (struct attr){.s = ""};
	e.stacks.v[e.stacks.n++] = (struct stack_ref){NULL, 0, 0};

	/* Off-CPU: its own profile (the reference agent's off_cpu type), values in ns. */
	for (size_t k = 0; k < n_ps; k++) {
		bool off = ps[k]->off_cpu;

		opentelemetry__proto__profiles__v1development__value_type__init(&sample_types[k]);
		opentelemetry__proto__profiles__v1development__value_type__init(&period_types[k]);
		sample_types[k].type_strindex = enc_str(&e, off ? "off_cpu" : "samples");
		sample_types[k].unit_strindex = enc_str(&e, off ? "nanoseconds" : "count");
		period_types[k].type_strindex = enc_str(&e, off ? "off_cpu" : "cpu");
		period_types[k].unit_strindex = enc_str(&e, "nanoseconds");
	}
	scope.name = "omniprof";
	scope.version = OMNIPROF_VERSION;

	err = encode_mappings(&e);
	if (!err)
		err = encode_functions(&e);
	if (!err)
		err = encode_locations(&e);
	if (!err)
		err = encode_samples(&e);
	if (!err)
		err = encode_stacks(&e);
	if (!err)
		err = encode_resources(&e, describe, ctx, &scope, sample_types, period_types);
	if (!err)
		err = e.err;
	if (!err)
		err = encode_attributes_and_strings(&e);
	if (err)
		goto cleanup;

	zero_link.trace_id.data = zero_trace_id;
	zero_link.trace_id.len = sizeof(zero_trace_id);
	zero_link.span_id.data = zero_span_id;
	zero_link.span_id.len = sizeof(zero_span_id);

	dict.mapping_table = e.mapping_ptrs;
	dict.n_mapping_table = e.n_mappings + 1;
	dict.location_table = e.location_ptrs;
	dict.n_location_table = e.n_locations + 1;
	dict.function_table = e.function_ptrs;
	dict.n_function_table = e.n_functions + 1;
	dict.link_table = &link_ptr;
	dict.n_link_table = 1;
	dict.string_table = e.string_ptrs;
	dict.n_string_table = string_intern__count(&e.strings);
	dict.attribute_table = e.attr_ptrs;
	dict.n_attribute_table = e.attrs.n;
	dict.stack_table = e.stack_ptrs;
	dict.n_stack_table = e.stacks.n;
	req.dictionary = &dict;
	req.resource_profiles = e.rp_ptrs;
	req.n_resource_profiles = e.n_resources;

	size = protobuf_c_message_get_packed_size(&req.base);
	out = malloc(size ? size : 1);
	if (!out) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (protobuf_c_message_pack(&req.base, out) != size) {
		err = -EIO;
		goto cleanup;
	}
	*buf = out;
	*len = size;
	out = NULL;
	err = 0;
cleanup:
	free(out);
	encoder_free(&e);
	return err;
}

int otlp__encode(const struct profile *p, otlp_resource_fn describe, void *ctx, uint8_t **buf,
		 size_t *len)
{
	if (!p)
		return -EINVAL;
	return otlp__encode_set(&p, 1, describe, ctx, buf, len);
}

int otlp__partial_success(const uint8_t *reply, size_t len, char *msg, size_t msg_len,
			  int64_t *rejected)
{
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse *r;
	int found = 0;

	msg[0] = '\0';
	*rejected = 0;
	if (!len)
		return 0; /* an empty reply: full success */
	r = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__unpack(
	    NULL, len, reply);
	if (!r)
		return -EPROTO;
	if (r->partial_success &&
	    (r->partial_success->rejected_profiles ||
	     (r->partial_success->error_message && *r->partial_success->error_message))) {
		*rejected = r->partial_success->rejected_profiles;
		snprintf(msg, msg_len, "%s",
			 r->partial_success->error_message ? r->partial_success->error_message
							   : "");
		found = 1;
	}
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__free_unpacked(
	    r, NULL);
	return found;
}
