build-m/tests/unit/test_debuginfo: tests/unit/test_debuginfo.c \
 src/elf/elf_file.h src/symbol/debuginfo.h src/symbol/native_symbols.h \
 src/symbol/demangle.h tests/lib/testutil.h
src/elf/elf_file.h:
src/symbol/debuginfo.h:
src/symbol/native_symbols.h:
src/symbol/demangle.h:
tests/lib/testutil.h:
