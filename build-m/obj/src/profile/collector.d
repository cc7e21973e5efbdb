build-m/obj/src/profile/collector.o: src/profile/collector.c \
 src/profile/collector.h src/elf/file_cache.h src/util/hashmap.h \
 src/proc/process_table.h src/profile/trace_table.h bpf/types.h \
 src/unwind/stack_copy.h src/interp/python/python.h bpf/python_types.h \
 src/util/log.h
src/profile/collector.h:
src/elf/file_cache.h:
src/util/hashmap.h:
src/proc/process_table.h:
src/profile/trace_table.h:
bpf/types.h:
src/unwind/stack_copy.h:
src/interp/python/python.h:
bpf/python_types.h:
src/util/log.h:
