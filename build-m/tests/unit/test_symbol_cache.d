build-m/tests/unit/test_symbol_cache: tests/unit/test_symbol_cache.c \
 src/symbol/symbol_cache.h src/util/hashmap.h
src/symbol/symbol_cache.h:
src/util/hashmap.h:
