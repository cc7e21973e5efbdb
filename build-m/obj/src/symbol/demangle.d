build-m/obj/src/symbol/demangle.o: src/symbol/demangle.c \
 src/symbol/demangle.h
src/symbol/demangle.h:
