// SPDX-License-Identifier: Apache-2.0
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "symbol/demangle.h"

struct expect {
	const char *mangled;
	const char *by_mode[4]; /* none, simplified, templates, full */
};

static const struct expect cases[] = {
    {"_ZN4tmpl9spin_leafImEET_S1_",
     {"_ZN4tmpl9spin_leafImEET_S1_", "tmpl::spin_leaf", "tmpl::spin_leaf<unsigned long>",
      "unsigned long tmpl::spin_leaf<unsigned long>(unsigned long)"}},
    {"_ZN4tmpl5StageILi3EE3runEm.cold",
     {"_ZN4tmpl5StageILi3EE3runEm.cold", "tmpl::Stage::run", "tmpl::Stage<3>::run",
      "tmpl::Stage<3>::run(unsigned long) [clone .cold]"}},
    {"_ZN3FooltERKS_",
     {"_ZN3FooltERKS_", "Foo::operator<", "Foo::operator<", "Foo::operator<(Foo const&)"}},
    /* Rust legacy: the hash is left out. */
    {"_ZN4core3ptr13drop_in_place17h0123456789abcdefE",
     {"_ZN4core3ptr13drop_in_place17h0123456789abcdefE", "core::ptr::drop_in_place",
      "core::ptr::drop_in_place", "core::ptr::drop_in_place"}},
    /* Rust v0, with a generic argument. */
    {"_RINvNtCs9ltgdHTiPiY_4core3ptr13drop_in_placeNtCs3vFpLgj5Pf9_5alloc6StringEB4_",
     {"_RINvNtCs9ltgdHTiPiY_4core3ptr13drop_in_placeNtCs3vFpLgj5Pf9_5alloc6StringEB4_",
      "core::ptr::drop_in_place", "core::ptr::drop_in_place::<alloc::String>",
      "core::ptr::drop_in_place::<alloc::String>"}},
    /* Not mangled: left alone in every mode. */
    {"main", {"main", "main", "main", "main"}},
    {"_Zgarbage", {"_Zgarbage", "_Zgarbage", "_Zgarbage", "_Zgarbage"}},
};

static void test_modes(void **state)
{
	char buf[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int m = DEMANGLE_NONE; m <= DEMANGLE_FULL; m++)
			assert_string_equal(
			    demangle(cases[i].mangled, (enum demangle_mode)m, buf, sizeof(buf)),
			    cases[i].by_mode[m]);
}

static void test_truncates(void **state)
{
	char buf[8];

	(void)state;
	assert_string_equal(
	    demangle("_ZN4tmpl9spin_leafImEET_S1_", DEMANGLE_TEMPLATES, buf, sizeof(buf)),
	    "tmpl::s");
}

static void test_strip_templates(void **state)
{
	static const char *const in_out[][2] = {
	    {"ns::f<int, std::vector<int> >", "ns::f"},
	    {"operator<<", "operator<<"},
	    {"A<int>::operator<=>", "A::operator<=>"},
	    {"B::operator-><int>", "B::operator->"},
	    {"core::ptr::drop_in_place::<alloc::String>", "core::ptr::drop_in_place"},
	    {"kern::mix<long unsigned int>", "kern::mix"},
	    {"unbalanced>>", "unbalanced>>"},
	};
	char buf[128];

	(void)state;
	for (size_t i = 0; i < sizeof(in_out) / sizeof(in_out[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", in_out[i][0]);
		demangle__strip_templates(buf);
		assert_string_equal(buf, in_out[i][1]);
	}
}

static void test_parse_mode(void **state)
{
	enum demangle_mode m;

	(void)state;
	assert_int_equal(demangle__parse_mode("full", &m), 0);
	assert_int_equal(m, DEMANGLE_FULL);
	assert_int_equal(demangle__parse_mode("none", &m), 0);
	assert_int_equal(m, DEMANGLE_NONE);
	assert_int_equal(demangle__parse_mode("Full", &m), -EINVAL);
	assert_int_equal(demangle__parse_mode(NULL, &m), -EINVAL);
	assert_string_equal(demangle__mode_name(DEMANGLE_DEFAULT), "templates");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_modes),
	    cmocka_unit_test(test_truncates),
	    cmocka_unit_test(test_strip_templates),
	    cmocka_unit_test(test_parse_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
