build-m/tests/unit/test_native_unwind: tests/unit/test_native_unwind.c \
 bpf/types.h bpf/unwind/native_unwind.h
bpf/types.h:
bpf/unwind/native_unwind.h:
