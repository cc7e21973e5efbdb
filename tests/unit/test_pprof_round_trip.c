// SPDX-License-Identifier: Apache-2.0
/*
 * What pprof's own tool makes of our pprof, and what survives it. A profile
 * shaped as the builder makes a CPython process's (Python functions
 * "<module>", "<lambda>", "<listcomp>" among the interpreter's native frames,
 * one native frame nothing could name) is written, then:
 *   - read back with protobuf-c's decoder against the pprof spec's rules
 *     (ids non-zero and resolvable, string indices in the table, an unnamed
 *     frame is mapping + address with no line, Python functions start_line);
 *   - `go tool pprof -traces` (its default symbolization and demangling
 *     heuristics) must show the Python names as they are, and its `File:`
 *     line the main binary;
 *   - `go tool pprof -proto` renumbers the profile: what `omniprof symbolize`
 *     needs (the Go build id and file hash of files without a GNU build id)
 *     must still be attached to the right file afterwards.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "export/exporters.h"
#include "export/pprof_symbolize.h"
#include "pprof_read.h"
#include "profile.pb-c.h"
#include "profile/profile.h"

typedef Perftools__Profiles__Profile pb_profile;

#define PYTHON	   "/opt/omni_rt/bin/python3.11"
#define LIBLZMA	   "/opt/omni_rt/lib/liblzma.so.5.4.1"
#define GOBIN	   "/opt/omni_rt/bin/gosvc"
#define LIBC	   "/opt/omni_rt/lib/libc.so.6"
#define SCRIPT	   "/srv/app/job.py"
#define PY_GNU_ID  "aabbccdd00112233"
#define GO_BUILD   "goBuildId/abc/def"
#define GO_HASH	   "0123456789abcdef0123456789abcdef"
#define LZMA_HASH  "fedcba9876543210fedcba9876543210"
#define UNNAMED_PC 0x1692bull
#define LAMBDA_1ST 40

struct fixture {
	char dir[64];
	char path[128];
};

static char *run(const char *cmd, int *status)
{
	FILE *f = popen(cmd, "r");
	size_t len = 0, cap = 1 << 16, n;
	char *out = malloc(cap);
	int rc;

	assert_non_null(f);
	assert_non_null(out);
	while ((n = fread(out + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
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

/* go tool pprof ARGS in a private HOME and Go cache; its stdout (caller frees). */
static char *go_pprof(const struct fixture *fx, const char *args)
{
	char cmd[1024];
	char *out;
	int status;

	if (system("command -v go >/dev/null 2>&1") != 0)
		fail_msg("`go` is not installed: this test needs pprof's own reader (golang-go)");
	snprintf(cmd, sizeof(cmd),
		 "cd '%1$s' && HOME='%1$s' GOCACHE='%1$s/gocache' GOPATH='%1$s/gopath' "
		 "PPROF_TMPDIR='%1$s' PPROF_BINARY_PATH='%1$s/none' GOFLAGS= GOTOOLCHAIN=local "
		 "go tool pprof %2$s 2>'%1$s/pprof.err'",
		 fx->dir, args);
	out = run(cmd, &status);
	if (status != 0) {
		char errcmd[256];

		snprintf(errcmd, sizeof(errcmd), "cat '%s/pprof.err'", fx->dir);
		fail_msg("go tool pprof %s failed:\n%s", args, run(errcmd, &status));
	}
	return out;
}

/*
 * The builder's shape: a Go service's frames and a CPython process's, whose
 * runtime functions carry name == system name as the model allows (the
 * writer must not let pprof strip them).
 */
static struct profile *python_profile(void)
{
	struct profile *p = profile__new(99);
	uint32_t m_py, m_lzma, m_go, f_eval, f_main, f_mod, f_lambda, f_listcomp, f_unnamed, f_go;
	uint32_t l_eval, l_main, l_mod, l_lambda, l_listcomp, l_unnamed, l_go;

	assert_non_null(p);
	p->time_ns = 1700000000000000000ull;
	p->duration_ns = 1000000000ull;
	/* The Go service first: the writer must still put the main binary first. */
	m_go = profile__add_file_mapping(p, 0x400000, 0x800000, 0, GOBIN, "", GO_BUILD, GO_HASH);
	m_lzma = profile__add_file_mapping(p, 0, 0x40000, 0, LIBLZMA, "", NULL, LZMA_HASH);
	m_py = profile__add_file_mapping(p, 0x1000, 0x400000, 0, PYTHON, PY_GNU_ID, NULL,
					 "00112233445566778899aabbccddeeff");
	f_eval = profile__add_function(p, "_PyEval_EvalFrameDefault", "_PyEval_EvalFrameDefault",
				       "Python/ceval.c");
	f_main = profile__add_function(p, "main", "main", "Programs/python.c");
	f_mod = profile__add_function_at(p, "<module>", "<module>", SCRIPT, 1);
	f_lambda = profile__add_function_at(p, "<lambda>", "<lambda>", SCRIPT, LAMBDA_1ST);
	f_listcomp = profile__add_function_at(p, "<listcomp>", "<listcomp>", SCRIPT, 30);
	f_unnamed = profile__add_function(p, "liblzma.so.5.4.1+0x1692b", "", "");
	f_go = profile__add_function(p, "main.work", "main.work", "work.go");
	assert_true(m_py && m_lzma && m_go && f_eval && f_main && f_mod && f_lambda && f_listcomp &&
		    f_unnamed && f_go);
	l_eval = profile__add_location(p, m_py, 0x2000, PROFILE_FRAME_NATIVE,
				       &(struct profile_line){f_eval, 4321}, 1);
	l_main = profile__add_location(p, m_py, 0x1100, PROFILE_FRAME_NATIVE,
				       &(struct profile_line){f_main, 15}, 1);
	l_mod = profile__add_location(p, 0, 6, PROFILE_FRAME_PYTHON,
				      &(struct profile_line){f_mod, 80}, 1);
	l_lambda = profile__add_location(p, 0, 8, PROFILE_FRAME_PYTHON,
					 &(struct profile_line){f_lambda, 41}, 1);
	l_listcomp = profile__add_location(p, 0, 10, PROFILE_FRAME_PYTHON,
					   &(struct profile_line){f_listcomp, 31}, 1);
	l_unnamed = profile__add_location(p, m_lzma, UNNAMED_PC, PROFILE_FRAME_NATIVE,
					  &(struct profile_line){f_unnamed, 0}, 1);
	l_go = profile__add_location(p, m_go, 0x401000, PROFILE_FRAME_NATIVE,
				     &(struct profile_line){f_go, 12}, 1);
	assert_true(l_eval && l_main && l_mod && l_lambda && l_listcomp && l_unnamed && l_go);
	{
		uint32_t py[] = {l_unnamed, l_listcomp, l_eval, l_lambda,
				 l_eval,    l_mod,	l_eval, l_main};

		assert_int_equal(profile__add_sample(p, py, 8, 4242, 4242, "python3", "python3", 9),
				 0);
		assert_int_equal(profile__add_sample(p, &l_go, 1, 77, 77, "gosvc", "gosvc", 1), 0);
	}
	{
		/* The heaviest stacks start in libc (threads): the program is still python. */
		uint32_t m_libc = profile__add_mapping(p, 0, 0x200000, 0, LIBC, "cc00");
		uint32_t f_start = profile__add_function(p, "start_thread", "start_thread", "");
		uint32_t l_start = profile__add_location(p, m_libc, 0x9000, PROFILE_FRAME_NATIVE,
							 &(struct profile_line){f_start, 0}, 1);
		uint32_t thread[] = {l_eval, l_start};

		assert_true(m_libc && f_start && l_start);
		assert_int_equal(
		    profile__add_sample(p, thread, 2, 4242, 4243, "python3", "worker", 20), 0);
	}
	return p;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct profile *p;
	int err;

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/omniprof_test_pprof_rt.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/profile.pb.gz", fx->dir);
	p = python_profile();
	err = pprof__write(p, fx->path);
	profile__free(p);
	*state = fx;
	return err ? -1 : 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd) != 0)
		return -1;
	free(fx);
	return 0;
}

static const char *str(const pb_profile *pp, int64_t i)
{
	assert_true(i >= 0 && (uint64_t)i < pp->n_string_table);
	return pp->string_table[i];
}

static const Perftools__Profiles__Function *function_named(const pb_profile *pp, const char *name)
{
	for (size_t i = 0; i < pp->n_function; i++)
		if (!strcmp(str(pp, pp->function[i]->name), name))
			return pp->function[i];
	return NULL;
}

/* The pprof spec's rules (proto/profile.proto's comments) and our frames' shape. */
static void test_spec_rules(void **state)
{
	struct fixture *fx = *state;
	pb_profile *pp = tu_read_pprof(fx->path);
	const Perftools__Profiles__Function *f;
	bool unnamed_seen = false;

	assert_non_null(pp);
	assert_true(pp->n_string_table > 0);
	assert_string_equal(pp->string_table[0], "");
	for (size_t i = 0; i < pp->n_mapping; i++) {
		assert_true(pp->mapping[i]->id != 0);
		str(pp, pp->mapping[i]->filename);
		str(pp, pp->mapping[i]->build_id);
	}
	/* pprof's File: line is the first mapping's: the main binary. */
	assert_string_equal(str(pp, pp->mapping[0]->filename), PYTHON);
	for (size_t i = 0; i < pp->n_function; i++) {
		assert_true(pp->function[i]->id != 0);
		str(pp, pp->function[i]->name);
		str(pp, pp->function[i]->system_name);
		str(pp, pp->function[i]->filename);
		/* No function is there for a frame that names none. */
		assert_null(strstr(str(pp, pp->function[i]->name), "+0x"));
	}
	for (size_t i = 0; i < pp->n_location; i++) {
		const Perftools__Profiles__Location *l = pp->location[i];
		bool mapped = false;

		assert_true(l->id != 0);
		for (size_t m = 0; m < pp->n_mapping; m++)
			mapped |= pp->mapping[m]->id == l->mapping_id;
		assert_true(mapped || l->mapping_id == 0);
		for (size_t j = 0; j < l->n_line; j++) {
			bool found = false;

			for (size_t k = 0; k < pp->n_function; k++)
				found |= pp->function[k]->id == l->line[j]->function_id;
			assert_true(found);
		}
		if (l->address == UNNAMED_PC) {
			/* Mapping and address, no line: a symbolizer can name it by build id. */
			assert_int_equal(l->n_line, 0);
			assert_true(l->mapping_id != 0);
			unnamed_seen = true;
		}
	}
	assert_true(unnamed_seen);
	for (size_t i = 0; i < pp->n_comment; i++)
		assert_null(strstr(str(pp, pp->comment[i]), "mapping id="));

	/* Python functions: their name, no system name, their first line. */
	f = function_named(pp, "<lambda>");
	assert_non_null(f);
	assert_string_equal(str(pp, f->system_name), "");
	assert_int_equal(f->start_line, LAMBDA_1ST);
	assert_non_null(function_named(pp, "<module>"));
	assert_non_null(function_named(pp, "<listcomp>"));
	/* Native ones keep their symbol. */
	f = function_named(pp, "_PyEval_EvalFrameDefault");
	assert_non_null(f);
	assert_string_equal(str(pp, f->system_name), "_PyEval_EvalFrameDefault");
	perftools__profiles__profile__free_unpacked(pp, NULL);
}

/* go tool pprof's view: the Python names as they are, the main binary named. */
static void test_go_pprof_keeps_names(void **state)
{
	struct fixture *fx = *state;
	char args[256];
	char *out;

	snprintf(args, sizeof(args), "-traces '%s'", fx->path);
	out = go_pprof(fx, args);
	assert_non_null(strstr(out, "File: python3.11"));
	assert_non_null(strstr(out, "<module>"));
	assert_non_null(strstr(out, "<lambda>"));
	assert_non_null(strstr(out, "<listcomp>"));
	assert_null(strstr(out, "<unknown>"));
	free(out);
}

/* After `go tool pprof -proto` renumbers everything, each file keeps its identities. */
static void test_identities_survive_proto_round_trip(void **state)
{
	struct fixture *fx = *state;
	char args[512], out_path[160];
	struct pprof_file_ids ids;
	pb_profile *pp;
	char *out;
	int matched = 0;

	snprintf(out_path, sizeof(out_path), "%s/renumbered.pb.gz", fx->dir);
	snprintf(args, sizeof(args), "-proto -output '%s' '%s'", out_path, fx->path);
	out = go_pprof(fx, args);
	free(out);
	pp = tu_read_pprof(out_path);
	assert_non_null(pp);
	assert_int_equal(pprof_file_ids__read(pp, &ids), 0);
	for (size_t i = 0; i < pp->n_mapping; i++) {
		const char *file = str(pp, pp->mapping[i]->filename);
		const char *go = NULL, *hash = NULL;

		pprof_file_ids__find(&ids, file, str(pp, pp->mapping[i]->build_id), &go, &hash);
		if (!strcmp(file, GOBIN)) {
			assert_non_null(go);
			assert_string_equal(go, GO_BUILD);
			assert_string_equal(hash, GO_HASH);
			matched++;
		} else if (!strcmp(file, LIBLZMA)) {
			assert_null(go);
			assert_string_equal(hash, LZMA_HASH);
			matched++;
		} else if (!strcmp(file, PYTHON)) {
			/* A GNU build id names it: nothing more is carried. */
			assert_null(go);
			assert_null(hash);
		}
	}
	assert_int_equal(matched, 2);
	pprof_file_ids__free(&ids);
	perftools__profiles__profile__free_unpacked(pp, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spec_rules),
	    cmocka_unit_test(test_go_pprof_keeps_names),
	    cmocka_unit_test(test_identities_survive_proto_round_trip),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
