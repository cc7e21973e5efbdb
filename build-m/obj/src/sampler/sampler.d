build-m/obj/src/sampler/sampler.o: src/sampler/sampler.c \
 src/sampler/sampler.h bpf/types.h src/util/read_file.h \
 build-m/gen/sampler.skel.h src/util/log.h
src/sampler/sampler.h:
bpf/types.h:
src/util/read_file.h:
build-m/gen/sampler.skel.h:
src/util/log.h:
