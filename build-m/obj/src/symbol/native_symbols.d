build-m/obj/src/symbol/native_symbols.o: src/symbol/native_symbols.c \
 src/symbol/native_symbols.h src/symbol/demangle.h src/elf/elf_file.h \
 src/elf/gopclntab.h src/symbol/debuginfo.h src/util/log.h
src/symbol/native_symbols.h:
src/symbol/demangle.h:
src/elf/elf_file.h:
src/elf/gopclntab.h:
src/symbol/debuginfo.h:
src/util/log.h:
