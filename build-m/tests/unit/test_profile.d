build-m/tests/unit/test_profile: tests/unit/test_profile.c \
 src/profile/profile.h src/util/hashmap.h
src/profile/profile.h:
src/util/hashmap.h:
