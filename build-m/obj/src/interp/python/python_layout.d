build-m/obj/src/interp/python/python_layout.o: \
 src/interp/python/python_layout.c src/interp/python/python_layout.h \
 bpf/python_types.h
src/interp/python/python_layout.h:
bpf/python_types.h:
