build-m/obj/src/elf/file_cache.o: src/elf/file_cache.c \
 src/elf/file_cache.h src/util/hashmap.h src/elf/elf_file.h \
 src/elf/file_id.h src/elf/vdso_image.h src/proc/proc_maps.h \
 src/util/log.h
src/elf/file_cache.h:
src/util/hashmap.h:
src/elf/elf_file.h:
src/elf/file_id.h:
src/elf/vdso_image.h:
src/proc/proc_maps.h:
src/util/log.h:
