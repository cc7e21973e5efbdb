build-m/tests/e2e/test_unwind: tests/e2e/test_unwind.c \
 tests/lib/folded_check.h tests/lib/testutil.h
tests/lib/folded_check.h:
tests/lib/testutil.h:
