build-m/tests/unit/test_summary: tests/unit/test_summary.c \
 src/export/exporters.h src/profile/profile.h
src/export/exporters.h:
src/profile/profile.h:
