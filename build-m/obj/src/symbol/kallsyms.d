build-m/obj/src/symbol/kallsyms.o: src/symbol/kallsyms.c \
 src/symbol/kallsyms.h src/util/read_file.h src/util/hashmap.h
src/symbol/kallsyms.h:
src/util/read_file.h:
src/util/hashmap.h:
