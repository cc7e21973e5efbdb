build-m/obj/src/proc/process_labels.o: src/proc/process_labels.c \
 src/proc/process_labels.h src/proc/cgroup.h bpf/types.h \
 src/util/hashmap.h
src/proc/process_labels.h:
src/proc/cgroup.h:
bpf/types.h:
src/util/hashmap.h:
