build-m/tests/unit/test_pprof: tests/unit/test_pprof.c \
 src/export/exporters.h src/profile/profile.h
src/export/exporters.h:
src/profile/profile.h:
