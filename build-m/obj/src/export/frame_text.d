build-m/obj/src/export/frame_text.o: src/export/frame_text.c \
 src/export/frame_text.h src/profile/profile.h src/util/hashmap.h
src/export/frame_text.h:
src/profile/profile.h:
src/util/hashmap.h:
