// SPDX-License-Identifier: Apache-2.0
/*
 * pprof exporter tests. The written file is read back by decoders that share
 * no code with the writer: `go tool pprof -raw` (pprof's own reader, which also
 * resolves ids and inline frames) and protoc's text decoder, given a schema
 * this file writes out itself rather than proto/profile.proto, so a wrong
 * field number in the project's schema would be caught too.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "export/exporters.h"
#include "profile/profile.h"

#define TEST_HZ	      100
#define TEST_PERIOD   10000000ll /* 1e9 / TEST_HZ */
#define TEST_TIME     1700000000123456789ull
#define TEST_DURATION 2500000000ull
#define KERNEL_ADDR_1 0xffffffff81000100ull
#define KERNEL_ADDR_2 0xffffffff81000200ull

#define APP_PATH     "/usr/bin/omni_test_app"
#define LIB_PATH     "/usr/lib/libomni_test.so"
#define APP_BUILD_ID "abcdef0123456789"

struct fixture {
	char dir[64];
	char path[128]; /* the profile every decoder test reads */
	struct profile *p;
};

/* ---- helpers ------------------------------------------------------------- */

/* Runs cmd through sh and returns its stdout (caller frees); *status = exit code. */
static char *run(const char *cmd, int *status)
{
	FILE *f = popen(cmd, "r");
	size_t len = 0, cap = 64 * 1024;
	char *out = malloc(cap);
	size_t n;
	int rc;

	assert_non_null(f);
	assert_non_null(out);
	while ((n = fread(out + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len - 1 == 0) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
	}
	out[len] = '\0';
	rc = pclose(f);
	*status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
	return out;
}

static void require_tool(const char *tool, const char *package)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	if (system(cmd) != 0)
		fail_msg("`%s` is not installed: this test needs it as an independent pprof "
			 "decoder (Debian package %s)",
			 tool, package);
}

static void copy_str(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < size && src[i]; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* ---- fixture: a hand-built profile ------------------------------------------ */

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct profile *p;
	uint32_t m_app, m_lib, f_main, f_run, f_compute, f_helper, f_k1, f_k2;
	uint32_t l_main, l_run, l_inline, l_k1, l_k2;
	struct profile_line line;
	struct profile_line inlined[2];

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/omniprof_test_pprof.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/profile.pb.gz", fx->dir);

	p = profile__new(TEST_HZ);
	if (!p)
		return -1;
	fx->p = p;
	p->time_ns = TEST_TIME;
	p->duration_ns = TEST_DURATION;

	m_app = profile__add_mapping(p, 0x1000, 0x5000, 0, APP_PATH, APP_BUILD_ID);
	m_lib = profile__add_mapping(p, 0x0, 0x9000, 0x1000, LIB_PATH, "");
	f_main = profile__add_function(p, "main", "main", "app.c");
	f_run = profile__add_function(p, "ns::Work::run()", "_ZN2ns4Work3runEv", "app.c");
	f_compute = profile__add_function(p, "lib_compute", "lib_compute", "lib.c");
	f_helper = profile__add_function(p, "lib_inlined_helper", "lib_inlined_helper", "lib.c");
	f_k1 = profile__add_function(p, "do_syscall_64", "do_syscall_64", "");
	f_k2 = profile__add_function(p, "entry_SYSCALL_64_after_hwframe",
				     "entry_SYSCALL_64_after_hwframe", "");
	if (!m_app || !m_lib || !f_main || !f_run || !f_compute || !f_helper || !f_k1 || !f_k2)
		return -1;

	line = (struct profile_line){.function_id = f_main, .line = 10};
	l_main = profile__add_location(p, m_app, 0x1100, PROFILE_FRAME_NATIVE, &line, 1);
	line = (struct profile_line){.function_id = f_run, .line = 20};
	l_run = profile__add_location(p, m_app, 0x1200, PROFILE_FRAME_NATIVE, &line, 1);
	/* lib_inlined_helper (line 42) was inlined into lib_compute at line 7. */
	inlined[0] = (struct profile_line){.function_id = f_helper, .line = 42};
	inlined[1] = (struct profile_line){.function_id = f_compute, .line = 7};
	l_inline = profile__add_location(p, m_lib, 0x2300, PROFILE_FRAME_NATIVE, inlined, 2);
	line = (struct profile_line){.function_id = f_k1, .line = 0};
	l_k1 = profile__add_location(p, 0, KERNEL_ADDR_1, PROFILE_FRAME_KERNEL, &line, 1);
	line = (struct profile_line){.function_id = f_k2, .line = 0};
	l_k2 = profile__add_location(p, 0, KERNEL_ADDR_2, PROFILE_FRAME_KERNEL, &line, 1);
	if (!l_main || !l_run || !l_inline || !l_k1 || !l_k2)
		return -1;

	{
		uint32_t user_stack[] = {l_inline, l_run, l_main};
		uint32_t kernel_stack[] = {l_k1, l_k2, l_run, l_main};

		if (profile__add_sample(p, user_stack, 3, 1234, 1235, "omni_app", "worker", 7) ||
		    profile__add_sample(p, kernel_stack, 4, 1234, 1234, "omni_app", "omni_app", 3))
			return -1;
	}

	if (pprof__write(p, fx->path))
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	if (!fx)
		return 0;
	profile__free(fx->p);
	/* The directory came from mkdtemp(); go may have left a cache in it. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", fx->dir);
	free(fx);
	return 0;
}

/* ---- go tool pprof -raw ------------------------------------------------------ */

#define MAX_ITEMS 16
#define MAX_NAME  96

struct raw_sample {
	long long count, cpu;
	int locs[MAX_ITEMS];
	int n_locs;
	char labels[256];
};

struct raw_location {
	int id;
	int mapping; /* 0 when the line has no M= */
	int n_funcs;
	char funcs[MAX_ITEMS][MAX_NAME]; /* innermost first, as -raw lists them */
	char files[MAX_ITEMS][MAX_NAME]; /* "file:line" */
};

struct raw_mapping {
	int id;
	char file[MAX_NAME];
	char build_id[MAX_NAME];
};

struct raw_profile {
	char sample_header[128];
	int n_samples, n_locations, n_mappings;
	struct raw_sample samples[MAX_ITEMS];
	struct raw_location locations[MAX_ITEMS];
	struct raw_mapping mappings[MAX_ITEMS];
};

/* Parses the text of `pprof -raw`: Samples, Locations and Mappings sections. */
static void raw_parse(char *text, struct raw_profile *rp)
{
	enum { NONE, SAMPLES, LOCATIONS, MAPPINGS } section = NONE;
	char *save = NULL;

	memset(rp, 0, sizeof(*rp));
	for (char *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(ln, "Samples:")) {
			section = SAMPLES;
			continue;
		} else if (!strcmp(ln, "Locations")) {
			section = LOCATIONS;
			continue;
		} else if (!strcmp(ln, "Mappings")) {
			section = MAPPINGS;
			continue;
		}

		if (section == SAMPLES) {
			long long count, cpu;
			int off;

			if (strstr(ln, "samples/count")) {
				copy_str(rp->sample_header, sizeof(rp->sample_header), ln);
			} else if (sscanf(ln, " %lld %lld:%n", &count, &cpu, &off) == 2) {
				struct raw_sample *s = &rp->samples[rp->n_samples++];
				char *rest = ln + off, *end;

				assert_true(rp->n_samples <= MAX_ITEMS);
				s->count = count;
				s->cpu = cpu;
				for (long id; (id = strtol(rest, &end, 10)), end != rest;
				     rest = end) {
					assert_true(s->n_locs < MAX_ITEMS);
					s->locs[s->n_locs++] = (int)id;
				}
			} else if (rp->n_samples) {
				struct raw_sample *s = &rp->samples[rp->n_samples - 1];

				strncat(s->labels, ln, sizeof(s->labels) - strlen(s->labels) - 2);
				strcat(s->labels, " ");
			}
		} else if (section == LOCATIONS) {
			char tok[4][MAX_NAME];
			int id, n = sscanf(ln, " %d: %95s %95s %95s %95s", &id, tok[0], tok[1],
					   tok[2], tok[3]);
			struct raw_location *l;
			int t = 0;

			if (n >= 3) {
				/* "  ID: ADDR [M=N] FUNC FILE:LINE s=.." */
				l = &rp->locations[rp->n_locations++];
				assert_true(rp->n_locations <= MAX_ITEMS);
				l->id = id;
				t = 1;
				if (!strncmp(tok[t], "M=", 2))
					l->mapping = atoi(tok[t++] + 2);
			} else {
				/* "        FUNC FILE:LINE s=..": a further (outer) line */
				n = sscanf(ln, " %95s %95s", tok[0], tok[1]);
				assert_int_equal(n, 2);
				assert_true(rp->n_locations > 0);
				l = &rp->locations[rp->n_locations - 1];
			}
			assert_true(l->n_funcs < MAX_ITEMS);
			copy_str(l->funcs[l->n_funcs], MAX_NAME, tok[t]);
			copy_str(l->files[l->n_funcs], MAX_NAME, tok[t + 1]);
			l->n_funcs++;
		} else if (section == MAPPINGS) {
			struct raw_mapping *m = &rp->mappings[rp->n_mappings++];
			char range[MAX_NAME], third[MAX_NAME] = "";

			assert_true(rp->n_mappings <= MAX_ITEMS);
			assert_true(
			    sscanf(ln, "%d: %95s %95s %95s", &m->id, range, m->file, third) >= 3);
			if (third[0] != '[') /* flags like [FN] follow the build id */
				copy_str(m->build_id, sizeof(m->build_id), third);
		}
	}
}

static const struct raw_location *raw_location(const struct raw_profile *rp, int id)
{
	for (int i = 0; i < rp->n_locations; i++)
		if (rp->locations[i].id == id)
			return &rp->locations[i];
	fail_msg("pprof -raw: location %d is not listed", id);
	return NULL;
}

static const struct raw_mapping *raw_mapping(const struct raw_profile *rp, int id)
{
	for (int i = 0; i < rp->n_mappings; i++)
		if (rp->mappings[i].id == id)
			return &rp->mappings[i];
	fail_msg("pprof -raw: mapping %d is not listed", id);
	return NULL;
}

/* The sample whose count is count; fails unless exactly one has it. */
static const struct raw_sample *raw_sample_by_count(const struct raw_profile *rp, long long count)
{
	const struct raw_sample *found = NULL;

	for (int i = 0; i < rp->n_samples; i++) {
		if (rp->samples[i].count == count) {
			assert_null(found);
			found = &rp->samples[i];
		}
	}
	assert_non_null(found);
	return found;
}

/* Asserts that frame i of s is location with these functions in this mapping file. */
static void expect_frame(const struct raw_profile *rp, const struct raw_sample *s, int i,
			 const char *mapping_file, const char *func, const char *file_line)
{
	const struct raw_location *l;

	assert_true(i < s->n_locs);
	l = raw_location(rp, s->locs[i]);
	assert_int_equal(l->n_funcs, 1);
	assert_string_equal(l->funcs[0], func);
	assert_string_equal(l->files[0], file_line);
	if (mapping_file)
		assert_string_equal(raw_mapping(rp, l->mapping)->file, mapping_file);
	else
		assert_int_equal(l->mapping, 0);
}

static void test_go_pprof_raw(void **state)
{
	struct fixture *fx = *state;
	struct raw_profile *rp = calloc(1, sizeof(*rp));
	const struct raw_sample *user, *kern;
	const struct raw_location *inl;
	char cmd[1024];
	char *out;
	int status;

	assert_non_null(rp);
	require_tool("go", "golang-go");
	/* A private HOME and Go cache: the test must not touch the user's. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%1$s' && HOME='%1$s' GOCACHE='%1$s/gocache' GOPATH='%1$s/gopath' "
		 "PPROF_TMPDIR='%1$s' GOFLAGS= GOTOOLCHAIN=local "
		 "go tool pprof -raw '%2$s' 2>'%1$s/pprof.err'",
		 fx->dir, fx->path);
	out = run(cmd, &status);
	if (status != 0) {
		char errcmd[256];
		char *err;

		snprintf(errcmd, sizeof(errcmd), "cat '%s/pprof.err'", fx->dir);
		err = run(errcmd, &status);
		fail_msg("go tool pprof -raw failed:\n%s", err);
	}
	raw_parse(out, rp);

	/* Both value types, cpu marked as the default one. */
	assert_non_null(strstr(rp->sample_header, "samples/count"));
	assert_non_null(strstr(rp->sample_header, "cpu/nanoseconds[dflt]"));

	assert_int_equal(rp->n_samples, 2);
	assert_int_equal(rp->n_locations, 5);
	assert_int_equal(rp->n_mappings, 2);

	user = raw_sample_by_count(rp, 7);
	assert_int_equal(user->cpu, 7 * TEST_PERIOD);
	assert_int_equal(user->n_locs, 3);
	/* Leaf: one location holding the inlined helper and then its caller. */
	inl = raw_location(rp, user->locs[0]);
	assert_int_equal(inl->n_funcs, 2);
	assert_string_equal(inl->funcs[0], "lib_inlined_helper");
	assert_string_equal(inl->files[0], "lib.c:42");
	assert_string_equal(inl->funcs[1], "lib_compute");
	assert_string_equal(inl->files[1], "lib.c:7");
	assert_string_equal(raw_mapping(rp, inl->mapping)->file, LIB_PATH);
	expect_frame(rp, user, 1, APP_PATH, "ns::Work::run()", "app.c:20");
	expect_frame(rp, user, 2, APP_PATH, "main", "app.c:10");
	assert_non_null(strstr(user->labels, "pid:[1234]"));
	assert_non_null(strstr(user->labels, "tid:[1235]"));
	assert_non_null(strstr(user->labels, "comm:[omni_app]"));
	assert_non_null(strstr(user->labels, "thread_name:[worker]"));

	kern = raw_sample_by_count(rp, 3);
	assert_int_equal(kern->cpu, 3 * TEST_PERIOD);
	assert_int_equal(kern->n_locs, 4);
	expect_frame(rp, kern, 0, NULL, "do_syscall_64", ":0");
	expect_frame(rp, kern, 1, NULL, "entry_SYSCALL_64_after_hwframe", ":0");
	expect_frame(rp, kern, 2, APP_PATH, "ns::Work::run()", "app.c:20");
	expect_frame(rp, kern, 3, APP_PATH, "main", "app.c:10");
	assert_non_null(strstr(kern->labels, "tid:[1234]"));
	assert_non_null(strstr(kern->labels, "thread_name:[omni_app]"));

	/* Mapping ids are ours (index + 1): app first, then the library. */
	assert_string_equal(raw_mapping(rp, 1)->file, APP_PATH);
	assert_string_equal(raw_mapping(rp, 1)->build_id, APP_BUILD_ID);
	assert_string_equal(raw_mapping(rp, 2)->file, LIB_PATH);
	assert_string_equal(raw_mapping(rp, 2)->build_id, "");

	free(out);
	free(rp);
}

/* ---- protoc --decode ------------------------------------------------------- */

/*
 * The message layout as the test states it, independently of
 * proto/profile.proto: if the schema the writer was generated from had a
 * wrong field number, protoc would put the value under the wrong name here.
 * (--decode_raw cannot be used: it shows any string that happens to parse as
 * a message, such as many hex build ids, as a nested message.)
 */
static const char test_schema[] =
    "syntax = \"proto3\";\n"
    "package perftools.profiles;\n"
    "message Profile {\n"
    "  repeated ValueType sample_type = 1; repeated Sample sample = 2;\n"
    "  repeated Mapping mapping = 3; repeated Location location = 4;\n"
    "  repeated Function function = 5; repeated string string_table = 6;\n"
    "  int64 drop_frames = 7; int64 keep_frames = 8; int64 time_nanos = 9;\n"
    "  int64 duration_nanos = 10; ValueType period_type = 11; int64 period = 12;\n"
    "  repeated int64 comment = 13; int64 default_sample_type = 14;\n"
    "}\n"
    "message ValueType { int64 type = 1; int64 unit = 2; }\n"
    "message Sample {\n"
    "  repeated uint64 location_id = 1; repeated int64 value = 2; repeated Label label = 3;\n"
    "}\n"
    "message Label { int64 key = 1; int64 str = 2; int64 num = 3; int64 num_unit = 4; }\n"
    "message Mapping {\n"
    "  uint64 id = 1; uint64 memory_start = 2; uint64 memory_limit = 3;\n"
    "  uint64 file_offset = 4; int64 filename = 5; int64 build_id = 6;\n"
    "  bool has_functions = 7; bool has_filenames = 8; bool has_line_numbers = 9;\n"
    "  bool has_inline_frames = 10;\n"
    "}\n"
    "message Location {\n"
    "  uint64 id = 1; uint64 mapping_id = 2; uint64 address = 3;\n"
    "  repeated Line line = 4; bool is_folded = 5;\n"
    "}\n"
    "message Line { uint64 function_id = 1; int64 line = 2; int64 column = 3; }\n"
    "message Function {\n"
    "  uint64 id = 1; int64 name = 2; int64 system_name = 3; int64 filename = 4;\n"
    "  int64 start_line = 5;\n"
    "}\n";

/* Writes test_schema into dir and returns the protoc decode pipeline for path. */
static void decode_command(const struct fixture *fx, const char *path, char *cmd, size_t size)
{
	char schema[128];
	FILE *f;

	snprintf(schema, sizeof(schema), "%s/test_profile.proto", fx->dir);
	f = fopen(schema, "w");
	assert_non_null(f);
	assert_int_equal(fputs(test_schema, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	/* bash for pipefail: a gzip failure must not hide behind protoc's status. */
	snprintf(cmd, size,
		 "bash -c \"set -o pipefail; gzip -dc '%s' | protoc --proto_path='%s' "
		 "--decode=perftools.profiles.Profile test_profile.proto\"",
		 path, fx->dir);
}

#define MAX_KV	    16
#define MAX_BLOCKS  64
#define MAX_STRINGS 64
#define MAX_KEY	    24

/* One top-level message element: its scalar fields and nested-message counts. */
struct text_block {
	char name[MAX_KEY];
	int n_kv;
	char keys[MAX_KV][MAX_KEY];
	unsigned long long vals[MAX_KV];
	int n_sub; /* nested messages (label, line) */
};

struct text_profile {
	int n_strings;
	char strings[MAX_STRINGS][MAX_NAME];
	int n_blocks;
	struct text_block blocks[MAX_BLOCKS];
	int n_kv;
	char keys[MAX_KV][MAX_KEY];
	unsigned long long vals[MAX_KV];
};

static unsigned long long text_value(const char *v)
{
	if (!strcmp(v, "true"))
		return 1;
	if (!strcmp(v, "false"))
		return 0;
	return strtoull(v, NULL, 0);
}

/* Parses protoc's text format of a Profile down to the second nesting level. */
static void text_parse(char *text, struct text_profile *tp)
{
	struct text_block *cur = NULL;
	char *save = NULL;
	int depth = 0;

	memset(tp, 0, sizeof(*tp));
	for (char *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		int indent = (int)strspn(ln, " ");
		char key[MAX_KEY], val[MAX_NAME];
		char *s = ln + indent;

		if (!strcmp(s, "}")) {
			depth--;
			assert_int_equal(indent, 2 * depth);
			continue;
		}
		assert_int_equal(indent, 2 * depth);
		if (sscanf(s, "%23s {", key) == 1 && s[strlen(s) - 1] == '{') {
			if (depth == 0) {
				assert_true(tp->n_blocks < MAX_BLOCKS);
				cur = &tp->blocks[tp->n_blocks++];
				copy_str(cur->name, sizeof(cur->name), key);
			} else if (depth == 1) {
				cur->n_sub++;
			}
			depth++;
			continue;
		}
		assert_int_equal(sscanf(s, "%23[a-z_]: %95[^\n]", key, val), 2);
		if (depth == 0 && !strcmp(key, "string_table")) {
			size_t len = strlen(val);

			/* Our strings are plain ASCII: no escapes to undo. */
			assert_true(len >= 2 && val[0] == '"' && val[len - 1] == '"');
			assert_true(tp->n_strings < MAX_STRINGS);
			val[len - 1] = '\0';
			copy_str(tp->strings[tp->n_strings++], MAX_NAME, val + 1);
		} else if (depth == 0) {
			assert_true(tp->n_kv < MAX_KV);
			copy_str(tp->keys[tp->n_kv], MAX_KEY, key);
			tp->vals[tp->n_kv++] = text_value(val);
		} else if (depth == 1) {
			assert_true(cur->n_kv < MAX_KV);
			copy_str(cur->keys[cur->n_kv], MAX_KEY, key);
			cur->vals[cur->n_kv++] = text_value(val);
		}
	}
	assert_int_equal(depth, 0);
}

/* A scalar field of a block, or 0 when proto3 left it out (zero value). */
static unsigned long long block_get(const struct text_block *b, const char *key)
{
	for (int i = 0; i < b->n_kv; i++)
		if (!strcmp(b->keys[i], key))
			return b->vals[i];
	return 0;
}

static unsigned long long top_get(const struct text_profile *tp, const char *key)
{
	for (int i = 0; i < tp->n_kv; i++)
		if (!strcmp(tp->keys[i], key))
			return tp->vals[i];
	fail_msg("top-level field %s missing", key);
	return 0;
}

static int count_blocks(const struct text_profile *tp, const char *name)
{
	int n = 0;

	for (int i = 0; i < tp->n_blocks; i++)
		n += !strcmp(tp->blocks[i].name, name);
	return n;
}

static int string_index(const struct text_profile *tp, const char *s)
{
	for (int i = 0; i < tp->n_strings; i++)
		if (!strcmp(tp->strings[i], s))
			return i;
	fail_msg("\"%s\" is not in the string table", s);
	return -1;
}

static const char *string_at(const struct text_profile *tp, unsigned long long i)
{
	assert_true(i < (unsigned long long)tp->n_strings);
	return tp->strings[i];
}

static void check_mapping(const struct text_profile *tp, const struct text_block *b)
{
	unsigned long long id = block_get(b, "id");
	const char *file = string_at(tp, block_get(b, "filename"));

	assert_int_equal(block_get(b, "has_functions"), 1);
	if (id == 1) {
		assert_string_equal(file, APP_PATH);
		assert_string_equal(string_at(tp, block_get(b, "build_id")), APP_BUILD_ID);
		assert_int_equal(block_get(b, "memory_start"), 0x1000);
		assert_int_equal(block_get(b, "memory_limit"), 0x5000);
		assert_int_equal(block_get(b, "has_line_numbers"), 1);
		assert_int_equal(block_get(b, "has_inline_frames"), 0);
	} else {
		assert_int_equal(id, 2);
		assert_string_equal(file, LIB_PATH);
		assert_int_equal(block_get(b, "build_id"), 0); /* "" */
		assert_int_equal(block_get(b, "file_offset"), 0x1000);
		assert_int_equal(block_get(b, "memory_limit"), 0x9000);
		assert_int_equal(block_get(b, "has_inline_frames"), 1);
	}
}

static void test_protoc_decode(void **state)
{
	struct fixture *fx = *state;
	struct text_profile *tp = calloc(1, sizeof(*tp));
	static const char *const expected[] = {
	    "samples",
	    "count",
	    "cpu",
	    "nanoseconds",
	    "pid",
	    "tid",
	    "comm",
	    "thread_name",
	    "omni_app",
	    "worker",
	    APP_PATH,
	    LIB_PATH,
	    APP_BUILD_ID,
	    "main",
	    "ns::Work::run()",
	    "_ZN2ns4Work3runEv",
	    "lib_compute",
	    "lib_inlined_helper",
	    "app.c",
	    "lib.c",
	    "do_syscall_64",
	    "entry_SYSCALL_64_after_hwframe",
	};
	int n_sample_type = 0, n_inline = 0, n_kernel = 0, n_func = 0;
	char cmd[512];
	char *out;
	int status;

	assert_non_null(tp);
	require_tool("protoc", "protobuf-compiler");
	require_tool("gzip", "gzip");
	decode_command(fx, fx->path, cmd, sizeof(cmd));
	out = run(cmd, &status);
	assert_int_equal(status, 0);
	text_parse(out, tp);

	/* String table: "" first, every string once. */
	assert_true(tp->n_strings > 0);
	assert_string_equal(tp->strings[0], "");
	for (int i = 0; i < tp->n_strings; i++)
		for (int j = i + 1; j < tp->n_strings; j++)
			if (!strcmp(tp->strings[i], tp->strings[j]))
				fail_msg("\"%s\" is in the string table twice", tp->strings[i]);
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		assert_true(string_index(tp, expected[i]) > 0);

	assert_int_equal(count_blocks(tp, "sample_type"), 2);
	assert_int_equal(count_blocks(tp, "sample"), 2);
	assert_int_equal(count_blocks(tp, "mapping"), 2);
	assert_int_equal(count_blocks(tp, "location"), 5);
	assert_int_equal(count_blocks(tp, "function"), 6);
	assert_int_equal(count_blocks(tp, "period_type"), 1);

	assert_int_equal(top_get(tp, "time_nanos"), TEST_TIME);
	assert_int_equal(top_get(tp, "duration_nanos"), TEST_DURATION);
	assert_int_equal(top_get(tp, "period"), TEST_PERIOD);
	assert_string_equal(string_at(tp, top_get(tp, "default_sample_type")), "cpu");

	for (int i = 0; i < tp->n_blocks; i++) {
		const struct text_block *b = &tp->blocks[i];

		if (!strcmp(b->name, "sample_type")) {
			/* samples/count first, then cpu/nanoseconds */
			assert_string_equal(string_at(tp, block_get(b, "type")),
					    n_sample_type ? "cpu" : "samples");
			assert_string_equal(string_at(tp, block_get(b, "unit")),
					    n_sample_type ? "nanoseconds" : "count");
			n_sample_type++;
		} else if (!strcmp(b->name, "period_type")) {
			assert_string_equal(string_at(tp, block_get(b, "type")), "cpu");
			assert_string_equal(string_at(tp, block_get(b, "unit")), "nanoseconds");
		} else if (!strcmp(b->name, "sample")) {
			assert_int_equal(b->n_sub, 4); /* pid, tid, comm, thread_name */
		} else if (!strcmp(b->name, "mapping")) {
			check_mapping(tp, b);
		} else if (!strcmp(b->name, "location")) {
			unsigned long long addr = block_get(b, "address");

			assert_true(block_get(b, "id") >= 1);
			if (addr == KERNEL_ADDR_1 || addr == KERNEL_ADDR_2) {
				assert_int_equal(block_get(b, "mapping_id"), 0);
				n_kernel++;
			} else {
				assert_true(block_get(b, "mapping_id") >= 1);
			}
			if (b->n_sub == 2) {
				assert_int_equal(addr, 0x2300);
				assert_int_equal(block_get(b, "mapping_id"), 2);
				n_inline++;
			} else {
				assert_int_equal(b->n_sub, 1);
			}
		} else if (!strcmp(b->name, "function")) {
			const char *name = string_at(tp, block_get(b, "name"));

			assert_int_equal(block_get(b, "id"), (unsigned long long)++n_func);
			if (!strcmp(name, "ns::Work::run()")) {
				assert_string_equal(string_at(tp, block_get(b, "system_name")),
						    "_ZN2ns4Work3runEv");
				assert_string_equal(string_at(tp, block_get(b, "filename")),
						    "app.c");
			}
		}
	}
	assert_int_equal(n_sample_type, 2);
	assert_int_equal(n_inline, 1);
	assert_int_equal(n_kernel, 2);
	assert_int_equal(n_func, 6);

	free(out);
	free(tp);
}

/* ---- failures and file handling -------------------------------------------- */

static void test_unwritable_path(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(pprof__write(fx->p, "/nonexistent/dir/x.pb.gz"), -ENOENT);
	assert_false(exists("/nonexistent/dir/x.pb.gz"));
	assert_false(exists("/nonexistent/dir/x.pb.gz.tmp"));
}

/* The temporary file is created, then rename() fails: it must be removed. */
static void test_rename_failure_leaves_nothing(void **state)
{
	struct fixture *fx = *state;
	char dir[160], tmp[170], inner[180];
	struct stat st;
	int err;

	snprintf(dir, sizeof(dir), "%s/occupied", fx->dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", dir);
	snprintf(inner, sizeof(inner), "%s/keep", dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	/* A non-empty directory cannot be replaced by a file. */
	assert_int_equal(mkdir(inner, 0755), 0);

	err = pprof__write(fx->p, dir);
	assert_true(err < 0);
	assert_false(exists(tmp));
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/*
 * An existing profile is replaced, and a leftover "<path>.tmp" (here a
 * symlink, as someone could plant in a shared directory) is not written
 * through (the writer's temporaries are random names created O_EXCL).
 */
static void test_replaces_existing_file(void **state)
{
	struct fixture *fx = *state;
	unsigned char magic[2] = {0};
	char path[160], tmp[170], victim[160], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/old.pb.gz", fx->dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(victim, sizeof(victim), "%s/victim", fx->dir);
	write_text(path, "not a profile");
	write_text(victim, "precious");
	assert_int_equal(symlink(victim, tmp), 0);

	assert_int_equal(pprof__write(fx->p, path), 0);
	/* The writer's temporaries have random names: the planted link is left as it was. */
	{
		char target[160];
		ssize_t n = readlink(tmp, target, sizeof(target) - 1);

		assert_true(n > 0);
		target[n] = '\0';
		assert_string_equal(target, victim);
	}
	f = fopen(victim, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "precious");
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(magic, 1, 2, f), 2);
	fclose(f);
	/* gzip magic number */
	assert_int_equal(magic[0], 0x1f);
	assert_int_equal(magic[1], 0x8b);
}

static void test_dangling_location_id_is_rejected(void **state)
{
	struct fixture *fx = *state;
	struct profile_sample *s = &fx->p->samples[0];
	uint32_t saved = s->location_ids[0];
	char path[160], tmp[170];
	int err;

	snprintf(path, sizeof(path), "%s/bad.pb.gz", fx->dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	s->location_ids[0] = (uint32_t)fx->p->n_locations + 1;
	err = pprof__write(fx->p, path);
	s->location_ids[0] = saved;
	assert_int_equal(err, -EINVAL);
	assert_false(exists(path));
	assert_false(exists(tmp));
}

/* ---- scale ------------------------------------------------------------------ */

#define BIG_N 100000

/*
 * A profile the size of a busy system-wide run: every location and function
 * distinct. Checks that nothing is lost or duplicated at that size (a
 * quadratic writer would also make this test crawl).
 */
static void test_many_locations(void **state)
{
	struct fixture *fx = *state;
	struct profile *p = profile__new(TEST_HZ);
	uint32_t m = 0;
	char path[160], cmd[1024], name[32];
	char *out;
	int status;

	require_tool("protoc", "protobuf-compiler");
	require_tool("gzip", "gzip");
	assert_non_null(p);
	m = profile__add_mapping(p, 0, 1ull << 40, 0, "/usr/bin/big", "");
	assert_int_not_equal(m, 0);
	for (uint32_t i = 0; i < BIG_N; i++) {
		struct profile_line line;
		uint32_t loc[2];

		snprintf(name, sizeof(name), "fn_%u", i);
		line.function_id = profile__add_function(p, name, name, "big.c");
		line.line = i + 1;
		assert_int_not_equal(line.function_id, 0);
		loc[0] =
		    profile__add_location(p, m, 0x1000 + 16ull * i, PROFILE_FRAME_NATIVE, &line, 1);
		assert_int_not_equal(loc[0], 0);
		loc[1] = loc[0] > 1 ? loc[0] - 1 : loc[0];
		/* pids cycle so comm strings repeat: they must be stored once. */
		snprintf(name, sizeof(name), "comm_%u", i % 7);
		assert_int_equal(profile__add_sample(p, loc, 2, i % 7, i, name, name, 1), 0);
	}
	snprintf(path, sizeof(path), "%s/big.pb.gz", fx->dir);
	assert_int_equal(pprof__write(p, path), 0);
	profile__free(p);

	/* Counts of top-level samples, locations, functions and strings. */
	decode_command(fx, path, cmd, sizeof(cmd) / 2);
	strcat(cmd, " | awk '/^sample \\{/{s++} /^location \\{/{l++} /^function \\{/{f++} "
		    "/^string_table: /{t++} END{printf \"%d %d %d %d\\n\", s, l, f, t}'");
	out = run(cmd, &status);
	assert_int_equal(status, 0);
	{
		long s = -1, l = -1, f = -1, t = -1;

		assert_int_equal(sscanf(out, "%ld %ld %ld %ld", &s, &l, &f, &t), 4);
		assert_int_equal(s, BIG_N);
		assert_int_equal(l, BIG_N);
		assert_int_equal(f, BIG_N);
		/*
		 * "" + 4 sample/period type names + 4 label keys + 7 comms +
		 * "/usr/bin/big" + BIG_N function names + "big.c" + the comment.
		 */
		assert_int_equal(t, 1 + 4 + 4 + 7 + 1 + BIG_N + 1 + 1);
	}
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_go_pprof_raw),
	    cmocka_unit_test(test_protoc_decode),
	    cmocka_unit_test(test_unwritable_path),
	    cmocka_unit_test(test_rename_failure_leaves_nothing),
	    cmocka_unit_test(test_replaces_existing_file),
	    cmocka_unit_test(test_dangling_location_id_is_rejected),
	    cmocka_unit_test(test_many_locations),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
