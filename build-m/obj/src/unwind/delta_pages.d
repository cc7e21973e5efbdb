build-m/obj/src/unwind/delta_pages.o: src/unwind/delta_pages.c \
 src/unwind/delta_pages.h bpf/types.h
src/unwind/delta_pages.h:
bpf/types.h:
