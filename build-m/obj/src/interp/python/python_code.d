build-m/obj/src/interp/python/python_code.o: \
 src/interp/python/python_code.c src/interp/python/python_code.h \
 src/interp/python/python_layout.h bpf/python_types.h
src/interp/python/python_code.h:
src/interp/python/python_layout.h:
bpf/python_types.h:
