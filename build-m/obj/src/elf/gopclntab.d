build-m/obj/src/elf/gopclntab.o: src/elf/gopclntab.c src/elf/gopclntab.h
src/elf/gopclntab.h:
