build-m/tests/unit/test_gopclntab: tests/unit/test_gopclntab.c \
 src/elf/gopclntab.h tests/lib/testutil.h
src/elf/gopclntab.h:
tests/lib/testutil.h:
