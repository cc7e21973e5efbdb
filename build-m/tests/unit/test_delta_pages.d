build-m/tests/unit/test_delta_pages: tests/unit/test_delta_pages.c \
 bpf/types.h src/unwind/delta_pages.h bpf/unwind/delta_search.h
bpf/types.h:
src/unwind/delta_pages.h:
bpf/unwind/delta_search.h:
