build-m/obj/src/elf/elf_file.o: src/elf/elf_file.c src/elf/elf_file.h
src/elf/elf_file.h:
