build-m/obj/src/export/pprof.o: src/export/pprof.c src/export/exporters.h \
 build-m/gen/profile.pb-c.h src/profile/profile.h src/util/hashmap.h
src/export/exporters.h:
build-m/gen/profile.pb-c.h:
src/profile/profile.h:
src/util/hashmap.h:
