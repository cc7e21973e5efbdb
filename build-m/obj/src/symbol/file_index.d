build-m/obj/src/symbol/file_index.o: src/symbol/file_index.c \
 src/symbol/file_index.h src/elf/elf_file.h src/elf/file_id.h \
 src/util/log.h
src/symbol/file_index.h:
src/elf/elf_file.h:
src/elf/file_id.h:
src/util/log.h:
