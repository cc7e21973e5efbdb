build-m/obj/src/symbol/symbol_cache.o: src/symbol/symbol_cache.c \
 src/symbol/symbol_cache.h src/util/hashmap.h
src/symbol/symbol_cache.h:
src/util/hashmap.h:
