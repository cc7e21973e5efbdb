build-m/tests/unit/test_folded: tests/unit/test_folded.c \
 src/export/exporters.h src/export/frame_text.h src/profile/profile.h \
 src/util/hashmap.h
src/export/exporters.h:
src/export/frame_text.h:
src/profile/profile.h:
src/util/hashmap.h:
