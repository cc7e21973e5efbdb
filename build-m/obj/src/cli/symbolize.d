build-m/obj/src/cli/symbolize.o: src/cli/symbolize.c src/cli/cli.h \
 src/elf/elf_file.h build-m/gen/profile.pb-c.h src/symbol/file_index.h \
 src/symbol/symbolizer.h src/symbol/debuginfo.h \
 src/symbol/native_symbols.h src/symbol/demangle.h \
 src/symbol/symbol_cache.h src/util/hashmap.h src/util/log.h
src/cli/cli.h:
src/elf/elf_file.h:
build-m/gen/profile.pb-c.h:
src/symbol/file_index.h:
src/symbol/symbolizer.h:
src/symbol/debuginfo.h:
src/symbol/native_symbols.h:
src/symbol/demangle.h:
src/symbol/symbol_cache.h:
src/util/hashmap.h:
src/util/log.h:
