build-m/tests/unit/test_export_queue: tests/unit/test_export_queue.c \
 src/export/export_queue.h
src/export/export_queue.h:
