build-m/obj/src/export/summary.o: src/export/summary.c \
 src/export/exporters.h src/export/frame_text.h src/profile/profile.h \
 src/util/hashmap.h
src/export/exporters.h:
src/export/frame_text.h:
src/profile/profile.h:
src/util/hashmap.h:
