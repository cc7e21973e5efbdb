build-m/obj/src/cli/checks.o: src/cli/checks.c src/cli/cli.h \
 src/util/log.h
src/cli/cli.h:
src/util/log.h:
