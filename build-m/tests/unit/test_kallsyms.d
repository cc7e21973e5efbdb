build-m/tests/unit/test_kallsyms: tests/unit/test_kallsyms.c \
 src/symbol/kallsyms.h
src/symbol/kallsyms.h:
