build-m/tests/unit/test_stack_copy: tests/unit/test_stack_copy.c \
 src/proc/process_table.h src/util/hashmap.h src/unwind/stack_copy.h \
 bpf/types.h
src/proc/process_table.h:
src/util/hashmap.h:
src/unwind/stack_copy.h:
bpf/types.h:
