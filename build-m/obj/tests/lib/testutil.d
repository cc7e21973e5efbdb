build-m/obj/tests/lib/testutil.o: tests/lib/testutil.c \
 tests/lib/testutil.h
tests/lib/testutil.h:
