// SPDX-License-Identifier: Apache-2.0
/*
 * A Python frame through every exporter. The profile is shaped as
 * src/profile/profile_builder.c shapes a CPython sample: Python frames are
 * locations without a mapping, kind PROFILE_FRAME_PYTHON, whose address is
 * the instruction offset and whose one line names the function (qualified
 * name), the script and the line; the interpreter's own frames are native
 * frames of its mapping, interleaved. Each exporter's output is read back
 * (pprof and Pyroscope with protobuf-c's pprof decoder after gunzip, OTLP with
 * protobuf-c's OTLP decoder, folded and flame graph as text) and must carry
 * the Python frames' names in stack order, and where the format has them
 * their file and line; OTLP must type them `cpython` (the semantic
 * conventions' profile.frame.type) and the interpreter's frames `native`.
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
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "export/exporters.h"
#include "export/otlp.h"
#include "export/pyroscope.h"
#include "otlp_profiles_service.pb-c.h"
#include "profile.pb-c.h"
#include "profile/profile.h"
#include "testutil.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
    pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dictionary;

#define PID	    4242
#define COUNT	    7
#define SCRIPT	    "/srv/app/py_chain.py"
#define INTERP	    "/usr/bin/python3.11"
#define LEAF	    "Worker.py_leaf"
#define LEAF_LINE   17
#define LEAF_OFFSET 42 /* instruction offset: a Python location's address */
#define MODULE	    "<module>"
#define MODULE_LINE 80
#define MODULE_OFF  6
#define EVAL	    "_PyEval_EvalFrameDefault"

/* A frame of the test stack, leaf first, as every exporter must report it. */
struct want_frame {
	const char *name;
	const char *file; /* "" for none */
	int64_t line;
	bool python;
	bool kernel;
};

static const struct want_frame want[] = {
    {"do_syscall_64", "", 0, false, true},	  {LEAF, SCRIPT, LEAF_LINE, true, false},
    {EVAL, "Python/ceval.c", 4321, false, false}, {MODULE, SCRIPT, MODULE_LINE, true, false},
    {EVAL, "Python/ceval.c", 4321, false, false}, {"main", "Programs/python.c", 15, false, false},
};
#define N_FRAMES (sizeof(want) / sizeof(want[0]))

/* The profile the builder would make of COUNT samples of one CPython thread. */
static struct profile *python_profile(void)
{
	struct profile *p = profile__new(99);
	uint32_t interp, kmap, stack[N_FRAMES];
	uint64_t native_addr = 0x1100;

	assert_non_null(p);
	p->time_ns = 1700000000000000000ull;
	p->duration_ns = 1000000000ull;
	interp = profile__add_file_mapping(p, 0x1000, 0x400000, 0, INTERP, "0123abcd", NULL,
					   "00112233445566778899aabbccddeeff");
	kmap = profile__add_mapping(p, 0, UINT64_MAX, 0, "[kernel.kallsyms]", "");
	assert_true(interp && kmap);
	for (size_t i = 0; i < N_FRAMES; i++) {
		struct profile_line line = {
		    profile__add_function(p, want[i].name, want[i].name, want[i].file),
		    want[i].line};

		assert_true(line.function_id);
		if (want[i].python)
			stack[i] = profile__add_location(
			    p, 0, want[i].line == LEAF_LINE ? LEAF_OFFSET : MODULE_OFF,
			    PROFILE_FRAME_PYTHON, &line, 1);
		else if (want[i].kernel)
			stack[i] = profile__add_location(p, kmap, 0xffffffff81000000ull,
							 PROFILE_FRAME_KERNEL, &line, 1);
		else
			stack[i] = profile__add_location(p, interp, native_addr += 0x100,
							 PROFILE_FRAME_NATIVE, &line, 1);
		assert_true(stack[i]);
	}
	assert_int_equal(
	    profile__add_sample(p, stack, N_FRAMES, PID, PID, "python3.11", "MainThread", COUNT),
	    0);
	p->stats.samples = COUNT;
	p->stats.processes = 1;
	return p;
}

/* gunzip of len bytes: a new buffer (caller frees) and *out_len. */
static uint8_t *gunzip(const uint8_t *in, size_t len, size_t *out_len)
{
	z_stream z = {0};
	size_t cap = 1 << 16;
	uint8_t *out = malloc(cap);
	int rc = Z_OK;

	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	while (rc != Z_STREAM_END) {
		if (z.total_out == cap) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		z.next_out = out + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		rc = inflate(&z, Z_NO_FLUSH);
		assert_true(rc == Z_OK || rc == Z_STREAM_END);
	}
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

static const Perftools__Profiles__Location *pprof_location(const Perftools__Profiles__Profile *pp,
							   uint64_t id)
{
	for (size_t i = 0; i < pp->n_location; i++)
		if (pp->location[i]->id == id)
			return pp->location[i];
	fail_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Function *pprof_function(const Perftools__Profiles__Profile *pp,
							   uint64_t id)
{
	for (size_t i = 0; i < pp->n_function; i++)
		if (pp->function[i]->id == id)
			return pp->function[i];
	fail_msg("no function %llu", (unsigned long long)id);
	return NULL;
}

/* The gzip'ed pprof bytes hold the sample with every frame: name, file, line, no mapping for
 * Python. */
static void check_pprof(const uint8_t *gz, size_t len, const char *who)
{
	size_t raw_len;
	uint8_t *raw = gunzip(gz, len, &raw_len);
	Perftools__Profiles__Profile *pp = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	const Perftools__Profiles__Sample *s = NULL;
	size_t python = 0;

	assert_non_null(pp);
	for (size_t i = 0; i < pp->n_sample; i++)
		if (pp->sample[i]->n_location_id == N_FRAMES)
			s = pp->sample[i];
	if (!s)
		fail_msg("%s: no sample of %zu frames", who, N_FRAMES);
	assert_int_equal(s->value[0], COUNT);
	for (size_t i = 0; i < N_FRAMES; i++) {
		const Perftools__Profiles__Location *loc = pprof_location(pp, s->location_id[i]);
		const Perftools__Profiles__Function *fn;

		assert_int_equal(loc->n_line, 1);
		fn = pprof_function(pp, loc->line[0]->function_id);
		assert_string_equal(pp->string_table[fn->name], want[i].name);
		assert_string_equal(pp->string_table[fn->filename], want[i].file);
		assert_int_equal(loc->line[0]->line, want[i].line);
		if (want[i].python) {
			/* A code object belongs to no file mapping: its address is the offset. */
			assert_int_equal(loc->mapping_id, 0);
			assert_int_equal(loc->address,
					 want[i].line == LEAF_LINE ? LEAF_OFFSET : MODULE_OFF);
			python++;
		} else {
			assert_int_not_equal(loc->mapping_id, 0);
		}
	}
	assert_int_equal(python, 2);
	printf("    %s: %zu frames, 2 Python frames with file and line\n", who, N_FRAMES);
	perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
}

static void test_pprof(void **state)
{
	struct profile *p = python_profile();
	char *dir = tu_mkdtemp(), path[512];
	uint8_t *gz;
	size_t len;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/profile.pb.gz", dir);
	assert_int_equal(pprof__write(p, path), 0);
	gz = (uint8_t *)tu_read_file(path, &len);
	assert_non_null(gz);
	check_pprof(gz, len, "pprof");
	free(gz);
	tu_rmtree(dir);
	free(dir);
	profile__free(p);
}

static int describe(void *ctx, uint32_t pid, const char *comm, struct otlp_resource *out)
{
	(void)ctx;
	(void)comm;
	assert_int_equal(pid, PID);
	out->service_name = "checkout";
	out->executable_name = "python3.11";
	out->executable_path = INTERP;
	return 0;
}

static const char *frame_type(const pb_dictionary *d, const int32_t *idx, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit *a =
		    d->attribute_table[idx[i]];

		if (!strcmp(d->string_table[a->key_strindex], "profile.frame.type"))
			return a->value->string_value;
	}
	return NULL;
}

static void test_otlp(void **state)
{
	struct profile *p = python_profile();
	Opentelemetry__Proto__Profiles__V1development__Profile *prof;
	const Opentelemetry__Proto__Profiles__V1development__Stack *stack;
	uint8_t *buf = NULL;
	size_t len = 0;
	pb_request *req;
	const pb_dictionary *d;

	(void)state;
	assert_int_equal(otlp__encode(p, describe, NULL, &buf, &len), 0);
	req =
	    opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	assert_non_null(req);
	d = req->dictionary;
	assert_int_equal(req->n_resource_profiles, 1);
	prof = req->resource_profiles[0]->scope_profiles[0]->profiles[0];
	assert_int_equal(prof->n_samples, 1);
	stack = d->stack_table[prof->samples[0]->stack_index];
	assert_int_equal(stack->n_location_indices, N_FRAMES);
	for (size_t i = 0; i < N_FRAMES; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Location *loc =
		    d->location_table[stack->location_indices[i]];
		const Opentelemetry__Proto__Profiles__V1development__Function *fn;
		const char *type = frame_type(d, loc->attribute_indices, loc->n_attribute_indices);

		assert_int_equal(loc->n_lines, 1);
		fn = d->function_table[loc->lines[0]->function_index];
		assert_string_equal(d->string_table[fn->name_strindex], want[i].name);
		assert_string_equal(d->string_table[fn->filename_strindex], want[i].file);
		assert_int_equal(loc->lines[0]->line, want[i].line);
		assert_non_null(type);
		assert_string_equal(type, want[i].python   ? "cpython"
					  : want[i].kernel ? "kernel"
							   : "native");
		if (want[i].python)
			assert_int_equal(loc->mapping_index, 0);
		else
			assert_int_not_equal(loc->mapping_index, 0);
	}
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
	    req, NULL);
	free(buf);
	profile__free(p);
}

static void test_pyroscope(void **state)
{
	struct profile *p = python_profile();
	struct export_batch *b;

	(void)state;
	b = pyroscope__batch(p, "http://127.0.0.1:4040", describe, NULL);
	assert_non_null(b);
	assert_int_equal(b->n, 1);
	assert_non_null(strstr(b->requests[0].url, "name=checkout"));
	check_pprof(b->requests[0].body, b->requests[0].len, "pyroscope");
	export_batch__free(b);
	profile__free(p);
}

static char *write_with(int (*write)(const struct profile *, FILE *), const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(write(p, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(buf);
	return buf;
}

static void test_folded(void **state)
{
	struct profile *p = python_profile();
	char *out = write_with(folded__write, p), line[512];
	size_t off;

	(void)state;
	/* comm, then root to leaf; kernel frames marked. */
	off = (size_t)snprintf(line, sizeof(line), "python3.11");
	for (size_t i = N_FRAMES; i-- > 0;)
		off += (size_t)snprintf(line + off, sizeof(line) - off, ";%s%s", want[i].name,
					want[i].kernel ? "_[k]" : "");
	snprintf(line + off, sizeof(line) - off, " %d\n", COUNT);
	assert_string_equal(out, line);
	free(out);
	profile__free(p);
}

static int write_page(const struct profile *p, FILE *f)
{
	return flamegraph__write(p, f, "python");
}

/* Index of the JSON string s in the array that starts at arr ("[\"a\",\"b\"]"), or -1. */
static long json_index(const char *arr, const char *s)
{
	char quoted[256];
	const char *hit, *end = strchr(arr, ']');
	long idx = 0;

	snprintf(quoted, sizeof(quoted), "\"%s\"", s);
	hit = strstr(arr, quoted);
	if (!hit || hit > end)
		return -1;
	for (const char *c = arr; c < hit; c++)
		idx += *c == ',';
	return idx;
}

static void test_flamegraph(void **state)
{
	struct profile *p = python_profile();
	char *page = write_with(write_page, p);
	const char *names = strstr(page, "\"names\":["), *kinds = strstr(page, "\"kinds\":[");
	const char *nodes = strstr(page, "\"nodes\":[");
	long python_kind, leaf_name, module_name;
	size_t found = 0;

	(void)state;
	assert_non_null(names);
	assert_non_null(kinds);
	assert_non_null(nodes);
	python_kind = json_index(kinds, "python");
	leaf_name = json_index(names, LEAF);
	/* "<module>" travels escaped, as every '<' in the page's JSON does. */
	module_name = json_index(names, "\\u003cmodule\\u003e");
	assert_true(python_kind >= 0 && leaf_name >= 0 && module_name >= 0);
	/* Nodes are (name, kind, total, children): both Python frames are Python nodes. */
	nodes += strlen("\"nodes\":[");
	while (*nodes != ']') {
		long v[4];
		char *end;

		for (int k = 0; k < 4; k++) {
			v[k] = strtol(nodes, &end, 10);
			assert_true(end > nodes);
			nodes = *end == ',' ? end + 1 : end;
		}
		if (v[0] == leaf_name || v[0] == module_name) {
			assert_int_equal(v[1], python_kind);
			assert_int_equal(v[2], COUNT);
			found++;
		}
	}
	assert_int_equal(found, 2);
	free(page);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pprof),      cmocka_unit_test(test_otlp),
	    cmocka_unit_test(test_pyroscope),  cmocka_unit_test(test_folded),
	    cmocka_unit_test(test_flamegraph),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
