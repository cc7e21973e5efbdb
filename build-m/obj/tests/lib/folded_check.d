build-m/obj/tests/lib/folded_check.o: tests/lib/folded_check.c \
 tests/lib/folded_check.h
tests/lib/folded_check.h:
