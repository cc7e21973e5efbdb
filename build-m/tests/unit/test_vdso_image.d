build-m/tests/unit/test_vdso_image: tests/unit/test_vdso_image.c \
 src/elf/elf_file.h src/elf/file_cache.h src/util/hashmap.h \
 src/elf/stack_deltas.h bpf/types.h src/elf/vdso_image.h \
 src/proc/proc_maps.h src/symbol/symbolizer.h src/symbol/debuginfo.h \
 src/symbol/native_symbols.h src/symbol/demangle.h \
 src/symbol/symbol_cache.h
src/elf/elf_file.h:
src/elf/file_cache.h:
src/util/hashmap.h:
src/elf/stack_deltas.h:
bpf/types.h:
src/elf/vdso_image.h:
src/proc/proc_maps.h:
src/symbol/symbolizer.h:
src/symbol/debuginfo.h:
src/symbol/native_symbols.h:
src/symbol/demangle.h:
src/symbol/symbol_cache.h:
