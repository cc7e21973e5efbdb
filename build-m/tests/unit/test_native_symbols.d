build-m/tests/unit/test_native_symbols: tests/unit/test_native_symbols.c \
 src/elf/elf_file.h src/symbol/native_symbols.h src/symbol/demangle.h \
 tests/lib/testutil.h
src/elf/elf_file.h:
src/symbol/native_symbols.h:
src/symbol/demangle.h:
tests/lib/testutil.h:
