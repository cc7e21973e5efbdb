build-m/tests/unit/test_otlp: tests/unit/test_otlp.c src/export/otlp.h \
 build-m/gen/otlp_profiles_service.pb-c.h \
 build-m/gen/otlp_profiles.pb-c.h build-m/gen/otlp_common.pb-c.h \
 build-m/gen/otlp_resource.pb-c.h src/profile/profile.h
src/export/otlp.h:
build-m/gen/otlp_profiles_service.pb-c.h:
build-m/gen/otlp_profiles.pb-c.h:
build-m/gen/otlp_common.pb-c.h:
build-m/gen/otlp_resource.pb-c.h:
src/profile/profile.h:
