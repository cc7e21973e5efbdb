build-m/tests/unit/test_elf_file: tests/unit/test_elf_file.c \
 src/elf/elf_file.h tests/lib/testutil.h
src/elf/elf_file.h:
tests/lib/testutil.h:
