build-m/obj/src/proc/cgroup.o: src/proc/cgroup.c src/proc/cgroup.h \
 src/util/read_file.h
src/proc/cgroup.h:
src/util/read_file.h:
