build-m/obj/src/profile/profile_builder.o: src/profile/profile_builder.c \
 src/profile/profile_builder.h src/elf/elf_file.h src/elf/file_cache.h \
 src/util/hashmap.h src/elf/file_id.h src/interp/python/python.h \
 bpf/python_types.h src/profile/profile.h src/profile/trace_table.h \
 bpf/types.h src/symbol/symbolizer.h src/symbol/debuginfo.h \
 src/symbol/native_symbols.h src/symbol/demangle.h \
 src/symbol/symbol_cache.h
src/profile/profile_builder.h:
src/elf/elf_file.h:
src/elf/file_cache.h:
src/util/hashmap.h:
src/elf/file_id.h:
src/interp/python/python.h:
bpf/python_types.h:
src/profile/profile.h:
src/profile/trace_table.h:
bpf/types.h:
src/symbol/symbolizer.h:
src/symbol/debuginfo.h:
src/symbol/native_symbols.h:
src/symbol/demangle.h:
src/symbol/symbol_cache.h:
