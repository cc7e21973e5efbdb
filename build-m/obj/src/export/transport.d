build-m/obj/src/export/transport.o: src/export/transport.c \
 src/export/transport.h
src/export/transport.h:
