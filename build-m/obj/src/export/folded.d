build-m/obj/src/export/folded.o: src/export/folded.c \
 src/export/exporters.h src/export/frame_text.h src/profile/profile.h \
 src/util/hashmap.h
src/export/exporters.h:
src/export/frame_text.h:
src/profile/profile.h:
src/util/hashmap.h:
