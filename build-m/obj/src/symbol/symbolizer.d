build-m/obj/src/symbol/symbolizer.o: src/symbol/symbolizer.c \
 src/symbol/symbolizer.h src/symbol/debuginfo.h \
 src/symbol/native_symbols.h src/symbol/demangle.h \
 src/symbol/symbol_cache.h src/util/hashmap.h src/elf/file_cache.h \
 src/symbol/kallsyms.h bpf/types.h src/util/log.h src/util/read_file.h
src/symbol/symbolizer.h:
src/symbol/debuginfo.h:
src/symbol/native_symbols.h:
src/symbol/demangle.h:
src/symbol/symbol_cache.h:
src/util/hashmap.h:
src/elf/file_cache.h:
src/symbol/kallsyms.h:
bpf/types.h:
src/util/log.h:
src/util/read_file.h:
