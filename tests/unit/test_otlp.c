// SPDX-License-Identifier: Apache-2.0
/*
 * OTLP encoder: a small profile encoded and read back with protobuf-c. The
 * wire layout itself is checked end to end against an independent decoder
 * (tests/e2e/otlp/); this test pins the mapping from the model: zero entries,
 * ids as indices, one resource per process, attributes, times or counts.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "export/otlp.h"
#include "otlp_profiles_service.pb-c.h"
#include "profile/profile.h"
#include "util/utf8.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
    pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dictionary;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any_value;

#define HTLHASH "00112233445566778899aabbccddeeff"

static int describe(void *ctx, uint32_t pid, const char *comm, struct otlp_resource *out)
{
	(void)ctx;
	(void)comm;
	if (pid != 100)
		return -ENOENT; /* the encoder falls back to pid and comm */
	out->service_name = "checkout";
	out->host_name = "host-a";
	out->executable_name = "app";
	out->executable_path = "/usr/bin/app";
	out->container_id = "";
	return 0;
}

static const char *str(const pb_dictionary *d, int32_t i)
{
	assert_true(i >= 0 && (size_t)i < d->n_string_table);
	return d->string_table[i];
}

/* The value of attribute key among indices, as a string or (int_out) a number. */
static const pb_any_value *find_attr(const pb_dictionary *d, const int32_t *idx, size_t n,
				     const char *key)
{
	for (size_t i = 0; i < n; i++) {
		assert_true(idx[i] > 0 && (size_t)idx[i] < d->n_attribute_table);
		if (!strcmp(str(d, d->attribute_table[idx[i]]->key_strindex), key))
			return d->attribute_table[idx[i]]->value;
	}
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *resource_str(Opentelemetry__Proto__Resource__V1__Resource *r, const char *key)
{
	for (size_t i = 0; i < r->n_attributes; i++)
		if (!strcmp(r->attributes[i]->key, key))
			return r->attributes[i]->value->value_case ==
				       OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE
				   ? r->attributes[i]->value->string_value
				   : "(int)";
	return NULL;
}

static int64_t resource_int(Opentelemetry__Proto__Resource__V1__Resource *r, const char *key)
{
	for (size_t i = 0; i < r->n_attributes; i++)
		if (!strcmp(r->attributes[i]->key, key))
			return r->attributes[i]->value->int_value;
	return -1;
}

static void test_encode(void **state)
{
	struct profile *p = profile__new(20);
	uint32_t app, kmap, lib, f_main, f_inl, f_k, f_err, f_unnamed, l_native, l_kernel, l_err,
	    l_unnamed, stack[4];
	struct profile_line lines[2];
	uint64_t times[3] = {1700000000100000000ull, 1700000000200000000ull,
			     1700000000300000000ull};
	uint8_t *buf = NULL;
	size_t len = 0;
	pb_request *req;
	const pb_dictionary *d;
	const pb_any_value *v;

	(void)state;
	assert_non_null(p);
	p->time_ns = 1700000000000000000ull;
	p->duration_ns = 1000000000ull;
	p->has_events = true;
	app = profile__add_file_mapping(p, 0, 0x5000, 0, "/usr/bin/app", "abcdef", "go-id/x",
					HTLHASH);
	kmap = profile__add_mapping(p, 0, UINT64_MAX, 0, "[kernel.kallsyms]", "");
	f_main = profile__add_function(p, "main", "main", "app.c");
	f_inl = profile__add_function(p, "inlined", "inlined", "app.c");
	f_k = profile__add_function(p, "do_syscall_64", "do_syscall_64", "");
	f_err = profile__add_function(p, "[unwind stopped]", "[unwind stopped]", "");
	lines[0] = (struct profile_line){f_inl, 7};
	lines[1] = (struct profile_line){f_main, 3};
	l_native = profile__add_location(p, app, 0x1234, PROFILE_FRAME_NATIVE, lines, 2);
	l_kernel = profile__add_location(p, kmap, 0xffffffff81000000ull, PROFILE_FRAME_KERNEL,
					 &(struct profile_line){f_k, 0}, 1);
	l_err = profile__add_location(p, 0, 1, PROFILE_FRAME_ERROR,
				      &(struct profile_line){f_err, 0}, 1);
	lib = profile__add_mapping(p, 0, 0x40000, 0, "/usr/lib/liblzma.so.5.4.1", "77aa");
	f_unnamed = profile__add_function(p, "liblzma.so.5.4.1+0x1692b", "", "");
	l_unnamed = profile__add_location(p, lib, 0x1692b, PROFILE_FRAME_NATIVE,
					  &(struct profile_line){f_unnamed, 0}, 1);
	stack[0] = l_kernel;
	stack[1] = l_native;
	stack[2] = l_err;
	stack[3] = l_unnamed;
	assert_int_equal(profile__add_sample(p, stack, 4, 100, 101, "app", "worker", 3), 0);
	assert_int_equal(profile__set_sample_events(p, 1, times, 3), 0);
	assert_int_equal(profile__add_sample(p, stack + 1, 1, 200, 200, "other", "other", 5), 0);
	assert_int_equal(profile__set_sample_events(p, 0, NULL, 0), 0); /* times lost: a count */
	assert_int_equal(profile__add_sample(p, stack, 4, 100, 102, "app", "", 1), 0);
	assert_int_equal(profile__set_sample_events(p, 1, times, 1), 0);
	/* A count of 3 cannot have 2 times. */
	assert_int_equal(profile__set_sample_events(p, 1, times, 2), -EINVAL);

	assert_int_equal(otlp__encode(p, describe, NULL, &buf, &len), 0);
	req =
	    opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	assert_non_null(req);
	d = req->dictionary;
	assert_non_null(d);

	/* Zero entries, and the model's ids as indices. */
	assert_string_equal(d->string_table[0], "");
	assert_int_equal(d->n_mapping_table, 4);
	assert_int_equal(d->mapping_table[0]->filename_strindex, 0);
	assert_int_equal(d->mapping_table[0]->n_attribute_indices, 0);
	assert_int_equal(d->n_location_table, 5);
	assert_int_equal(d->location_table[0]->n_lines, 0);
	assert_int_equal(d->n_function_table, 6);
	assert_int_equal(d->function_table[0]->name_strindex, 0);
	assert_int_equal(d->n_link_table, 1);
	assert_int_equal(d->link_table[0]->trace_id.len, 16);
	assert_int_equal(d->link_table[0]->span_id.len, 8);
	assert_int_equal(d->attribute_table[0]->key_strindex, 0);
	assert_null(d->attribute_table[0]->value);
	assert_int_equal(d->stack_table[0]->n_location_indices, 0);
	assert_string_equal(str(d, d->mapping_table[app]->filename_strindex), "/usr/bin/app");

	/* Mapping ids, frame types, inline lines innermost first. */
	v = find_attr(d, d->mapping_table[app]->attribute_indices,
		      d->mapping_table[app]->n_attribute_indices,
		      "process.executable.build_id.gnu");
	assert_non_null(v);
	assert_string_equal(v->string_value, "abcdef");
	v = find_attr(d, d->mapping_table[app]->attribute_indices,
		      d->mapping_table[app]->n_attribute_indices, "process.executable.build_id.go");
	assert_non_null(v);
	assert_string_equal(v->string_value, "go-id/x");
	v = find_attr(d, d->mapping_table[app]->attribute_indices,
		      d->mapping_table[app]->n_attribute_indices,
		      "process.executable.build_id.htlhash");
	assert_non_null(v);
	assert_string_equal(v->string_value, HTLHASH);
	assert_null(find_attr(d, d->mapping_table[kmap]->attribute_indices,
			      d->mapping_table[kmap]->n_attribute_indices,
			      "process.executable.build_id.gnu"));
	assert_int_equal(d->location_table[l_native]->n_lines, 2);
	assert_int_equal(d->location_table[l_native]->lines[0]->function_index, f_inl);
	assert_int_equal(d->location_table[l_native]->lines[0]->line, 7);
	assert_int_equal(d->location_table[l_native]->lines[1]->function_index, f_main);
	assert_int_equal(d->location_table[l_native]->mapping_index, app);
	assert_string_equal(
	    find_attr(d, d->location_table[l_native]->attribute_indices, 1, "profile.frame.type")
		->string_value,
	    "go"); /* app has a Go build id: its machine code is Go's */
	assert_string_equal(
	    find_attr(d, d->location_table[l_kernel]->attribute_indices, 1, "profile.frame.type")
		->string_value,
	    "kernel");
	assert_int_equal(d->location_table[l_err]->mapping_index, 0);
	/* The unwinder's stop: a semantic-conventions type, its function saying why. */
	assert_string_equal(
	    find_attr(d, d->location_table[l_err]->attribute_indices, 1, "profile.frame.type")
		->string_value,
	    "native");
	assert_int_equal(d->location_table[l_err]->n_lines, 1);
	/* A frame nothing named: mapping and address, no line (backends name it by build id). */
	assert_int_equal(d->location_table[l_unnamed]->mapping_index, lib);
	assert_int_equal(d->location_table[l_unnamed]->address, 0x1692b);
	assert_int_equal(d->location_table[l_unnamed]->n_lines, 0);
	assert_string_equal(
	    find_attr(d, d->location_table[l_unnamed]->attribute_indices, 1, "profile.frame.type")
		->string_value,
	    "native");

	/* One resource per process, sorted by pid; the fallback for an undescribed one. */
	assert_int_equal(req->n_resource_profiles, 2);
	/* The semantic conventions the attributes follow. */
	for (size_t i = 0; i < req->n_resource_profiles; i++) {
		assert_string_equal(req->resource_profiles[i]->schema_url,
				    "https://opentelemetry.io/schemas/1.44.0");
		assert_string_equal(req->resource_profiles[i]->scope_profiles[0]->schema_url,
				    "https://opentelemetry.io/schemas/1.44.0");
	}
	{
		Opentelemetry__Proto__Resource__V1__Resource *r0 =
		    req->resource_profiles[0]->resource;
		Opentelemetry__Proto__Resource__V1__Resource *r1 =
		    req->resource_profiles[1]->resource;
		Opentelemetry__Proto__Profiles__V1development__Profile *prof =
		    req->resource_profiles[0]->scope_profiles[0]->profiles[0];
		Opentelemetry__Proto__Profiles__V1development__Sample *s;

		assert_int_equal(resource_int(r0, "process.pid"), 100);
		assert_string_equal(resource_str(r0, "service.name"), "checkout");
		assert_string_equal(resource_str(r0, "host.name"), "host-a");
		assert_string_equal(resource_str(r0, "process.executable.path"), "/usr/bin/app");
		assert_null(resource_str(r0, "container.id")); /* empty: left out */
		assert_int_equal(resource_int(r1, "process.pid"), 200);
		assert_string_equal(resource_str(r1, "process.executable.name"), "other");
		assert_string_equal(resource_str(r1, "service.name"), "unknown_service:other");

		assert_string_equal(str(d, prof->sample_type->type_strindex), "samples");
		assert_string_equal(str(d, prof->sample_type->unit_strindex), "count");
		assert_string_equal(str(d, prof->period_type->type_strindex), "cpu");
		assert_string_equal(str(d, prof->period_type->unit_strindex), "nanoseconds");
		assert_int_equal(prof->period, 50000000);
		assert_int_equal(prof->time_unix_nano, 1700000000000000000ull);
		assert_int_equal(prof->duration_nano, 1000000000ull);
		assert_int_equal(prof->profile_id.len, 16);
		assert_int_equal(prof->n_samples, 2);

		s = prof->samples[0];
		assert_int_equal(s->n_timestamps_unix_nano, 3);
		assert_int_equal(s->n_values, 0);
		assert_int_equal(s->timestamps_unix_nano[2], times[2]);
		assert_int_equal(d->stack_table[s->stack_index]->n_location_indices, 4);
		assert_int_equal(d->stack_table[s->stack_index]->location_indices[0], l_kernel);
		assert_string_equal(
		    find_attr(d, s->attribute_indices, s->n_attribute_indices, "thread.name")
			->string_value,
		    "worker");
		assert_int_equal(
		    find_attr(d, s->attribute_indices, s->n_attribute_indices, "thread.id")
			->int_value,
		    101);
		assert_int_equal(
		    find_attr(d, s->attribute_indices, s->n_attribute_indices, "cpu.logical_number")
			->int_value,
		    1);
		/* The same stack is one stack entry. */
		assert_int_equal(prof->samples[1]->stack_index, s->stack_index);
		assert_null(find_attr(d, prof->samples[1]->attribute_indices,
				      prof->samples[1]->n_attribute_indices, "thread.name"));

		s = req->resource_profiles[1]->scope_profiles[0]->profiles[0]->samples[0];
		assert_int_equal(s->n_timestamps_unix_nano, 0);
		assert_int_equal(s->n_values, 1);
		assert_int_equal(s->values[0], 5);
	}
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
	    req, NULL);
	free(buf);
	profile__free(p);
}

static void test_empty_profile(void **state)
{
	struct profile *p = profile__new(20);
	uint8_t *buf = NULL;
	size_t len = 0;
	pb_request *req;

	(void)state;
	assert_int_equal(otlp__encode(p, NULL, NULL, &buf, &len), 0);
	req =
	    opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	assert_non_null(req);
	assert_int_equal(req->n_resource_profiles, 0);
	assert_int_equal(req->dictionary->n_string_table, 1 + 4); /* "", value type names */
	assert_int_equal(req->dictionary->n_mapping_table, 1);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
	    req, NULL);
	free(buf);
	profile__free(p);
	assert_int_equal(otlp__encode(NULL, NULL, NULL, &buf, &len), -EINVAL);
}

static int describe_odd(void *ctx, uint32_t pid, const char *comm, struct otlp_resource *out)
{
	(void)ctx;
	(void)pid;
	(void)comm;
	out->service_name = "app\xff";
	out->executable_name = "app\xff";
	out->executable_path = "/tmp/odd-\xfe\xc3(/app\xff";
	return 0;
}

/* Names that are not UTF-8 (a path is any bytes) are sent repaired: proto3 strings
 * must be UTF-8, and a receiver's decoder refuses the whole request otherwise. */
static void test_strings_are_utf8(void **state)
{
	struct profile *p = profile__new(20);
	uint32_t m, f, l;
	uint8_t *buf = NULL;
	size_t len = 0;
	pb_request *req;
	const pb_dictionary *d;

	(void)state;
	m = profile__add_mapping(p, 0, 0x5000, 0, "/tmp/odd-\xfe\xc3(/app\xff", "");
	f = profile__add_function(p, "f\x80n", "f\x80n", "/src/\xed\xa0\x80.c");
	l = profile__add_location(p, m, 0x1234, PROFILE_FRAME_NATIVE, &(struct profile_line){f, 3},
				  1);
	assert_int_equal(profile__add_sample(p, &l, 1, 100, 100, "app\xff", "t\xff", 1), 0);
	assert_int_equal(otlp__encode(p, describe_odd, NULL, &buf, &len), 0);
	req =
	    opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	assert_non_null(req);
	d = req->dictionary;
	for (size_t i = 0; i < d->n_string_table; i++)
		assert_true(utf8__valid(d->string_table[i]));
	for (size_t i = 1; i < d->n_attribute_table; i++)
		if (d->attribute_table[i]->value->value_case ==
		    OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE)
			assert_true(utf8__valid(d->attribute_table[i]->value->string_value));
	assert_int_equal(req->n_resource_profiles, 1);
	assert_string_equal(
	    resource_str(req->resource_profiles[0]->resource, "process.executable.path"),
	    "/tmp/odd-\xef\xbf\xbd\xef\xbf\xbd(/app\xef\xbf\xbd");
	assert_string_equal(resource_str(req->resource_profiles[0]->resource, "service.name"),
			    "app\xef\xbf\xbd");
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
	    req, NULL);
	free(buf);
	profile__free(p);
}

/*
 * The sample lines of every profile of type `type` in req, each as
 * "pid|thread|f1;f2;...|mapping file|value", the functions leaf first,
 * resolved through the dictionary (whose indices are checked), sorted into
 * one string: what the profile says, whatever its indices are.
 */
static char *profile_text(const pb_request *req, const char *type)
{
	const pb_dictionary *d = req->dictionary;
	char **lines = NULL, *out;
	size_t n = 0, total = 1;

	for (size_t r = 0; r < req->n_resource_profiles; r++) {
		Opentelemetry__Proto__Profiles__V1development__ResourceProfiles *rp =
		    req->resource_profiles[r];

		assert_int_equal(rp->n_scope_profiles, 1);
		for (size_t k = 0; k < rp->scope_profiles[0]->n_profiles; k++) {
			Opentelemetry__Proto__Profiles__V1development__Profile *prof =
			    rp->scope_profiles[0]->profiles[k];

			if (strcmp(str(d, prof->sample_type->type_strindex), type))
				continue;
			for (size_t i = 0; i < prof->n_samples; i++) {
				Opentelemetry__Proto__Profiles__V1development__Sample *s =
				    prof->samples[i];
				char line[1024];
				size_t len;
				const pb_any_value *tid = find_attr(
				    d, s->attribute_indices, s->n_attribute_indices, "thread.id");

				assert_true(s->stack_index > 0 &&
					    (size_t)s->stack_index < d->n_stack_table);
				assert_non_null(tid);
				len = (size_t)snprintf(
				    line, sizeof(line), "%lld|%lld|",
				    (long long)resource_int(rp->resource, "process.pid"),
				    (long long)tid->int_value);
				for (size_t j = 0;
				     j < d->stack_table[s->stack_index]->n_location_indices; j++) {
					int32_t li =
					    d->stack_table[s->stack_index]->location_indices[j];
					const Opentelemetry__Proto__Profiles__V1development__Location
					    *l;

					assert_true(li > 0 && (size_t)li < d->n_location_table);
					l = d->location_table[li];
					assert_true(l->mapping_index >= 0 &&
						    (size_t)l->mapping_index < d->n_mapping_table);
					for (size_t m = 0; m < l->n_lines; m++) {
						int32_t fi = l->lines[m]->function_index;

						assert_true(fi > 0 &&
							    (size_t)fi < d->n_function_table);
						len += (size_t)snprintf(
						    line + len, sizeof(line) - len, "%s:%lld;",
						    str(d, d->function_table[fi]->name_strindex),
						    (long long)l->lines[m]->line);
					}
					len += (size_t)snprintf(
					    line + len, sizeof(line) - len, "@%s+%llx;",
					    str(d, d->mapping_table[l->mapping_index]
						       ->filename_strindex),
					    (unsigned long long)l->address);
				}
				snprintf(line + len, sizeof(line) - len, "|%lld",
					 s->n_values ? (long long)s->values[0]
						     : (long long)s->n_timestamps_unix_nano);
				lines = realloc(lines, (n + 1) * sizeof(*lines));
				assert_non_null(lines);
				lines[n] = strdup(line);
				assert_non_null(lines[n]);
				total += strlen(line) + 1;
				n++;
			}
		}
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	out = calloc(1, total);
	assert_non_null(out);
	for (size_t i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
		free(lines[i]);
	}
	free(lines);
	return out;
}

/* A small profile: pid 100 in main -> work, pid (pid_b) in main -> wait. */
static struct profile *small_profile(bool off_cpu, uint32_t pid_b, const char *leaf_b)
{
	struct profile *p = profile__new(20);
	uint32_t app, f_main, f_work, f_b, l_main, l_work, l_b, stack[2];

	assert_non_null(p);
	p->off_cpu = off_cpu;
	p->time_ns = 1700000000000000000ull;
	p->duration_ns = 1000000000ull;
	app = profile__add_file_mapping(p, 0, 0x5000, 0, "/usr/bin/app", "abcdef", "", HTLHASH);
	/* Different orders: the same names land on different model ids in each profile. */
	if (off_cpu)
		f_b = profile__add_function(p, leaf_b, leaf_b, "app.c");
	f_main = profile__add_function(p, "main", "main", "app.c");
	f_work = profile__add_function(p, "work", "work", "app.c");
	if (!off_cpu)
		f_b = profile__add_function(p, leaf_b, leaf_b, "app.c");
	l_main = profile__add_location(p, app, 0x1000, PROFILE_FRAME_NATIVE,
				       &(struct profile_line){f_main, 3}, 1);
	l_work = profile__add_location(p, app, 0x2000, PROFILE_FRAME_NATIVE,
				       &(struct profile_line){f_work, 9}, 1);
	l_b = profile__add_location(p, app, 0x3000, PROFILE_FRAME_NATIVE,
				    &(struct profile_line){f_b, 12}, 1);
	stack[0] = l_work;
	stack[1] = l_main;
	assert_int_equal(
	    profile__add_sample(p, stack, 2, 100, 101, "app", "worker", off_cpu ? 7000000 : 4), 0);
	stack[0] = l_b;
	assert_int_equal(
	    profile__add_sample(p, stack, 2, pid_b, pid_b, "other", "other", off_cpu ? 2500000 : 2),
	    0);
	return p;
}

static pb_request *encode_set(const struct profile *const *ps, size_t n, uint8_t **buf)
{
	size_t len = 0;
	pb_request *req;

	assert_int_equal(otlp__encode_set(ps, n, describe, NULL, buf, &len), 0);
	req =
	    opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, *buf);
	assert_non_null(req);
	return req;
}

/*
 * The CPU and off-CPU profiles of an interval in one request: one resource
 * per process with a profile per type that has its samples, one dictionary
 * for both, and each profile saying exactly what it says encoded alone.
 */
static void test_encode_set(void **state)
{
	struct profile *cpu = small_profile(false, 200, "spin"),
		       *off = small_profile(true, 300, "wait");
	const struct profile *both[2] = {cpu, off};
	uint8_t *buf_both = NULL, *buf_cpu = NULL, *buf_off = NULL;
	pb_request *req_both, *req_cpu, *req_off;
	const pb_dictionary *d;
	char *a, *b;

	(void)state;
	req_both = encode_set(both, 2, &buf_both);
	req_cpu = encode_set(both, 1, &buf_cpu);
	req_off = encode_set(both + 1, 1, &buf_off);
	d = req_both->dictionary;
	assert_int_equal(d->n_mapping_table, 1 + cpu->n_mappings + off->n_mappings);
	assert_int_equal(d->n_function_table, 1 + cpu->n_functions + off->n_functions);
	assert_int_equal(d->n_location_table, 1 + cpu->n_locations + off->n_locations);

	/* pids 100 (both types), 200 (CPU only), 300 (off-CPU only), in pid order. */
	assert_int_equal(req_both->n_resource_profiles, 3);
	assert_int_equal(resource_int(req_both->resource_profiles[0]->resource, "process.pid"),
			 100);
	assert_int_equal(req_both->resource_profiles[0]->scope_profiles[0]->n_profiles, 2);
	assert_int_equal(req_both->resource_profiles[1]->scope_profiles[0]->n_profiles, 1);
	assert_int_equal(req_both->resource_profiles[2]->scope_profiles[0]->n_profiles, 1);
	{
		Opentelemetry__Proto__Profiles__V1development__Profile **pr =
		    req_both->resource_profiles[0]->scope_profiles[0]->profiles;

		assert_string_equal(str(d, pr[0]->sample_type->type_strindex), "samples");
		assert_string_equal(str(d, pr[0]->sample_type->unit_strindex), "count");
		assert_string_equal(str(d, pr[0]->period_type->type_strindex), "cpu");
		assert_int_equal(pr[0]->period, 50000000);
		assert_string_equal(str(d, pr[1]->sample_type->type_strindex), "off_cpu");
		assert_string_equal(str(d, pr[1]->sample_type->unit_strindex), "nanoseconds");
		assert_string_equal(str(d, pr[1]->period_type->type_strindex), "off_cpu");
		assert_int_equal(pr[1]->period, 1);
		assert_int_equal(pr[1]->n_samples, 1);
		assert_int_equal(pr[1]->samples[0]->values[0], 7000000);
		assert_memory_not_equal(pr[0]->profile_id.data, pr[1]->profile_id.data, 16);
	}

	/* Each profile in the shared dictionary says what it says alone. */
	a = profile_text(req_both, "samples");
	b = profile_text(req_cpu, "samples");
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "|spin:12;"));
	assert_null(strstr(a, "wait"));
	free(a);
	free(b);
	a = profile_text(req_both, "off_cpu");
	b = profile_text(req_off, "off_cpu");
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "300|300|wait:12;@/usr/bin/app+3000;main:3;"));
	assert_null(strstr(a, "spin"));
	free(a);
	free(b);
	/* The first profile's ids stay the dictionary's indices. */
	assert_int_equal(req_both->dictionary->location_table[2]->address,
			 req_cpu->dictionary->location_table[2]->address);
	assert_int_equal(req_both->dictionary->location_table[2]->lines[0]->function_index,
			 req_cpu->dictionary->location_table[2]->lines[0]->function_index);

	assert_int_equal(otlp__encode_set(both, 3, describe, NULL, &buf_off, &(size_t){0}),
			 -EINVAL);
	assert_int_equal(otlp__encode_set(both, 0, describe, NULL, &buf_off, &(size_t){0}),
			 -EINVAL);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
	    req_both, NULL);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
	    req_cpu, NULL);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
	    req_off, NULL);
	free(buf_both);
	free(buf_cpu);
	free(buf_off);
	profile__free(cpu);
	profile__free(off);
}

/* A receiver's ExportProfilesServiceResponse, as protobuf-c packs it. */
static size_t pack_response(uint8_t *buf, int64_t rejected, const char *msg)
{
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse r =
	    OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_RESPONSE__INIT;
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesPartialSuccess ps =
	    OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_PARTIAL_SUCCESS__INIT;

	ps.rejected_profiles = rejected;
	ps.error_message = (char *)msg;
	r.partial_success = &ps;
	return protobuf_c_message_pack(&r.base, buf);
}

static void test_partial_success(void **state)
{
	uint8_t buf[256] = {0};
	char msg[64];
	int64_t rejected;
	size_t n;

	(void)state;
	/* An empty reply, or an empty partial_success: full success. */
	assert_int_equal(otlp__partial_success(buf, 0, msg, sizeof(msg), &rejected), 0);
	n = pack_response(buf, 0, "");
	assert_int_equal(otlp__partial_success(buf, n, msg, sizeof(msg), &rejected), 0);
	n = pack_response(buf, 3, "3 profiles had no samples");
	assert_int_equal(otlp__partial_success(buf, n, msg, sizeof(msg), &rejected), 1);
	assert_int_equal(rejected, 3);
	assert_string_equal(msg, "3 profiles had no samples");
	n = pack_response(buf, 0, "dropped attribute process.foo");
	assert_int_equal(otlp__partial_success(buf, n, msg, sizeof(msg), &rejected), 1);
	assert_int_equal(rejected, 0);
	buf[0] = 0xff; /* not a message */
	assert_int_equal(otlp__partial_success(buf, n, msg, sizeof(msg), &rejected), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_encode),	     cmocka_unit_test(test_empty_profile),
	    cmocka_unit_test(test_strings_are_utf8), cmocka_unit_test(test_encode_set),
	    cmocka_unit_test(test_partial_success),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
