build-m/tests/unit/test_python_lines: tests/unit/test_python_lines.c \
 src/interp/python/python_layout.h bpf/python_types.h \
 src/interp/python/python_lines.h tests/lib/testutil.h
src/interp/python/python_layout.h:
bpf/python_types.h:
src/interp/python/python_lines.h:
tests/lib/testutil.h:
