// SPDX-License-Identifier: Apache-2.0
/*
 * Java frames in stacks.folded carry the flame-graph Java palette's suffix
 * of their type (interpreted _[0], JIT-compiled _[j], inlined _[i]; a stub
 * none), read from the location's address (the walker's aux: bci and type);
 * the function's name in the profile (pprof, OTLP) stays package.Class.method.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "export/frame_text.h"
#include "omniprof/interp/hotspot_abi.h"
#include "profile/profile.h"

static uint64_t aux(uint32_t type, uint32_t bci)
{
	return (bci & OP_JVM_BCI_MASK) | ((uint64_t)type << OP_JVM_AUX_TYPE_SHIFT);
}

static void test_suffixes(void **state)
{
	static const struct {
		uint32_t type, bci;
		const char *name, *text;
	} cases[] = {
	    {OP_JVM_T_INTERPRETED, 7, "com.acme.Main.main", "com.acme.Main.main_[0]"},
	    {OP_JVM_T_COMPILED, 12, "com.acme.Main.run", "com.acme.Main.run_[j]"},
	    {OP_JVM_T_INLINED, 3, "com.acme.Main$Inner.lambda$run$0",
	     "com.acme.Main$Inner.lambda$run$0_[i]"},
	    {OP_JVM_T_COMPILED, OP_JVM_BCI_NONE, "com.acme.Main.work", "com.acme.Main.work_[j]"},
	    {OP_JVM_T_STUB, OP_JVM_BCI_NONE, "StubRoutines (1)", "StubRoutines (1)"},
	};
	struct profile *p = profile__new(199);
	char buf[256];

	(void)state;
	assert_non_null(p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct profile_line line = {0, 42};
		const struct profile_location *loc;
		const struct profile_function *f;
		uint32_t id;

		line.function_id =
		    profile__add_function(p, cases[i].name, cases[i].name, "Main.java");
		assert_true(line.function_id > 0);
		id = profile__add_location(p, 0, aux(cases[i].type, cases[i].bci),
					   PROFILE_FRAME_HOTSPOT, &line, 1);
		assert_true(id > 0);
		loc = profile__location(p, id);
		assert_int_equal(frame_text__format(p, loc, 0, buf, sizeof(buf)),
				 strlen(cases[i].text));
		assert_string_equal(buf, cases[i].text);
		/* The name the profile keeps (pprof's and OTLP's) has no suffix. */
		f = profile__function(p, loc->lines[0].function_id);
		assert_string_equal(f->name, cases[i].name);
	}
	/* One method in two modes: two locations, two texts. */
	assert_true(profile__add_location(p, 0, aux(OP_JVM_T_INTERPRETED, 12),
					  PROFILE_FRAME_HOTSPOT, &(struct profile_line){2, 42},
					  1) !=
		    profile__add_location(p, 0, aux(OP_JVM_T_COMPILED, 12), PROFILE_FRAME_HOTSPOT,
					  &(struct profile_line){2, 42}, 1));
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_suffixes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
