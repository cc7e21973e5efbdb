build-m/obj/src/interp/python/python.o: src/interp/python/python.c \
 src/interp/python/python.h bpf/python_types.h src/util/hashmap.h \
 src/elf/file_cache.h src/interp/python/python_binary.h \
 src/interp/python/python_code.h src/interp/python/python_layout.h \
 src/interp/python/python_lines.h src/proc/process_table.h src/util/log.h
src/interp/python/python.h:
bpf/python_types.h:
src/util/hashmap.h:
src/elf/file_cache.h:
src/interp/python/python_binary.h:
src/interp/python/python_code.h:
src/interp/python/python_layout.h:
src/interp/python/python_lines.h:
src/proc/process_table.h:
src/util/log.h:
