build-m/obj/src/unwind/stack_copy.o: src/unwind/stack_copy.c \
 src/unwind/stack_copy.h bpf/types.h src/proc/process_table.h \
 src/util/hashmap.h src/unwind/unwind_maps.h src/unwind/user_unwind.h
src/unwind/stack_copy.h:
bpf/types.h:
src/proc/process_table.h:
src/util/hashmap.h:
src/unwind/unwind_maps.h:
src/unwind/user_unwind.h:
