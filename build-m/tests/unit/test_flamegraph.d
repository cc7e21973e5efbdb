build-m/tests/unit/test_flamegraph: tests/unit/test_flamegraph.c \
 src/export/exporters.h src/profile/profile.h
src/export/exporters.h:
src/profile/profile.h:
