build-m/tests/e2e/test_python: tests/e2e/test_python.c \
 tests/lib/folded_check.h build-m/gen/profile.pb-c.h tests/lib/testutil.h
tests/lib/folded_check.h:
build-m/gen/profile.pb-c.h:
tests/lib/testutil.h:
