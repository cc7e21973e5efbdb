build-m/obj/src/elf/vdso_image.o: src/elf/vdso_image.c \
 src/elf/vdso_image.h
src/elf/vdso_image.h:
