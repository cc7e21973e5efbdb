build-m/obj/src/util/read_file.o: src/util/read_file.c \
 src/util/read_file.h
src/util/read_file.h:
