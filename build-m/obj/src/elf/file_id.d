build-m/obj/src/elf/file_id.o: src/elf/file_id.c src/elf/file_id.h
src/elf/file_id.h:
