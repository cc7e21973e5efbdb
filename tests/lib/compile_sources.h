/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sources the compiler e2e tests compile (test_deep_compile alone,
 * test_whole_system beside other workloads): one text, so both measure the
 * same deep stacks.
 */
#ifndef OMNIPROF_TESTS_COMPILE_SOURCES_H
#define OMNIPROF_TESTS_COMPILE_SOURCES_H

/* Each deep() call nests about ten frames of cc1plus's constexpr evaluator. */
static const char deep_compile_src[] = "constexpr unsigned long deep(int n, unsigned long a)\n"
				       "{\n"
				       "\tif (n == 0) {\n"
				       "\t\tunsigned long s = a;\n"
				       "\t\tfor (int i = 0; i < 200000; i++)\n"
				       "\t\t\ts = s * 31 + i;\n"
				       "\t\treturn s;\n"
				       "\t}\n"
				       "\treturn deep(n - 1, a * 7 + n) + 1;\n"
				       "}\n"
				       "constexpr unsigned long v0 = deep(60, 0);\n"
				       "constexpr unsigned long v1 = deep(60, 1);\n";

#endif
