build-m/obj/src/symbol/debuginfo.o: src/symbol/debuginfo.c \
 src/symbol/debuginfo.h src/util/log.h
src/symbol/debuginfo.h:
src/util/log.h:
