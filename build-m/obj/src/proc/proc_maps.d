build-m/obj/src/proc/proc_maps.o: src/proc/proc_maps.c \
 src/proc/proc_maps.h src/util/read_file.h
src/proc/proc_maps.h:
src/util/read_file.h:
