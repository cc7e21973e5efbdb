build-m/tests/unit/test_file_id: tests/unit/test_file_id.c \
 src/elf/file_id.h tests/lib/testutil.h
src/elf/file_id.h:
tests/lib/testutil.h:
