build-m/tests/unit/test_proc_maps: tests/unit/test_proc_maps.c \
 src/proc/proc_maps.h src/sampler/sampler.h bpf/types.h
src/proc/proc_maps.h:
src/sampler/sampler.h:
bpf/types.h:
