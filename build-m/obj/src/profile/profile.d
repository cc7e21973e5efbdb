build-m/obj/src/profile/profile.o: src/profile/profile.c \
 src/profile/profile.h src/util/hashmap.h
src/profile/profile.h:
src/util/hashmap.h:
