build-m/obj/src/export/export_queue.o: src/export/export_queue.c \
 src/export/export_queue.h src/util/log.h
src/export/export_queue.h:
src/util/log.h:
