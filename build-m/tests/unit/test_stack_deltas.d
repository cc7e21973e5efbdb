build-m/tests/unit/test_stack_deltas: tests/unit/test_stack_deltas.c \
 src/elf/elf_file.h src/elf/stack_deltas.h bpf/types.h \
 tests/lib/testutil.h
src/elf/elf_file.h:
src/elf/stack_deltas.h:
bpf/types.h:
tests/lib/testutil.h:
