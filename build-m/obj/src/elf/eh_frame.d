build-m/obj/src/elf/eh_frame.o: src/elf/eh_frame.c src/elf/stack_deltas.h \
 bpf/types.h src/elf/elf_file.h
src/elf/stack_deltas.h:
bpf/types.h:
src/elf/elf_file.h:
