build-m/obj/src/unwind/user_unwind.o: src/unwind/user_unwind.c \
 src/unwind/user_unwind.h bpf/types.h src/elf/stack_deltas.h \
 bpf/unwind/native_unwind.h
src/unwind/user_unwind.h:
bpf/types.h:
src/elf/stack_deltas.h:
bpf/unwind/native_unwind.h:
