build-m/tests/e2e/test_symbolize: tests/e2e/test_symbolize.c \
 src/elf/elf_file.h tests/lib/folded_check.h tests/lib/testutil.h
src/elf/elf_file.h:
tests/lib/folded_check.h:
tests/lib/testutil.h:
