build-m/obj/src/export/pyroscope.o: src/export/pyroscope.c \
 src/export/pyroscope.h src/export/export_queue.h src/export/otlp.h \
 src/export/exporters.h src/profile/profile.h
src/export/pyroscope.h:
src/export/export_queue.h:
src/export/otlp.h:
src/export/exporters.h:
src/profile/profile.h:
