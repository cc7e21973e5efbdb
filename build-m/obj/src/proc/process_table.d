build-m/obj/src/proc/process_table.o: src/proc/process_table.c \
 src/proc/process_table.h src/util/hashmap.h src/elf/elf_file.h \
 src/elf/file_cache.h src/proc/proc_maps.h bpf/types.h \
 src/unwind/unwind_maps.h src/util/log.h
src/proc/process_table.h:
src/util/hashmap.h:
src/elf/elf_file.h:
src/elf/file_cache.h:
src/proc/proc_maps.h:
bpf/types.h:
src/unwind/unwind_maps.h:
src/util/log.h:
