build-m/obj/src/interp/python/python_lines.o: \
 src/interp/python/python_lines.c src/interp/python/python_lines.h \
 src/interp/python/python_layout.h bpf/python_types.h
src/interp/python/python_lines.h:
src/interp/python/python_layout.h:
bpf/python_types.h:
