build-m/obj/src/export/otlp.o: src/export/otlp.c src/export/otlp.h \
 src/cli/cli.h build-m/gen/otlp_profiles_service.pb-c.h \
 build-m/gen/otlp_profiles.pb-c.h build-m/gen/otlp_common.pb-c.h \
 build-m/gen/otlp_resource.pb-c.h src/profile/profile.h \
 src/util/hashmap.h
src/export/otlp.h:
src/cli/cli.h:
build-m/gen/otlp_profiles_service.pb-c.h:
build-m/gen/otlp_profiles.pb-c.h:
build-m/gen/otlp_common.pb-c.h:
build-m/gen/otlp_resource.pb-c.h:
src/profile/profile.h:
src/util/hashmap.h:
