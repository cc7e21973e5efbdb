build-m/tests/unit/test_demangle: tests/unit/test_demangle.c \
 src/symbol/demangle.h
src/symbol/demangle.h:
