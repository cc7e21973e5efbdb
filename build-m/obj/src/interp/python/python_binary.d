build-m/obj/src/interp/python/python_binary.o: \
 src/interp/python/python_binary.c src/interp/python/python_binary.h \
 bpf/python_types.h src/elf/elf_file.h src/interp/python/python_layout.h
src/interp/python/python_binary.h:
bpf/python_types.h:
src/elf/elf_file.h:
src/interp/python/python_layout.h:
