build-m/obj/src/profile/trace_table.o: src/profile/trace_table.c \
 src/profile/trace_table.h bpf/types.h src/util/hashmap.h
src/profile/trace_table.h:
bpf/types.h:
src/util/hashmap.h:
