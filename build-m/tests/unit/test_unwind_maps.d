build-m/tests/unit/test_unwind_maps: tests/unit/test_unwind_maps.c \
 src/elf/elf_file.h src/elf/file_id.h src/elf/stack_deltas.h bpf/types.h \
 tests/lib/testutil.h src/unwind/unwind_maps.h src/util/hashmap.h
src/elf/elf_file.h:
src/elf/file_id.h:
src/elf/stack_deltas.h:
bpf/types.h:
tests/lib/testutil.h:
src/unwind/unwind_maps.h:
src/util/hashmap.h:
