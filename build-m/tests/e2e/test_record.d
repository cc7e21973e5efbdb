build-m/tests/e2e/test_record: tests/e2e/test_record.c \
 tests/lib/folded_check.h tests/lib/testutil.h
tests/lib/folded_check.h:
tests/lib/testutil.h:
