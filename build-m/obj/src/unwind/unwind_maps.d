build-m/obj/src/unwind/unwind_maps.o: src/unwind/unwind_maps.c \
 src/unwind/unwind_maps.h bpf/types.h src/util/hashmap.h \
 src/elf/elf_file.h src/elf/stack_deltas.h src/unwind/delta_pages.h \
 src/util/log.h bpf/unwind/delta_search.h
src/unwind/unwind_maps.h:
bpf/types.h:
src/util/hashmap.h:
src/elf/elf_file.h:
src/elf/stack_deltas.h:
src/unwind/delta_pages.h:
src/util/log.h:
bpf/unwind/delta_search.h:
