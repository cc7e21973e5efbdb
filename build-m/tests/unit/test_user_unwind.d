build-m/tests/unit/test_user_unwind: tests/unit/test_user_unwind.c \
 src/elf/elf_file.h src/proc/proc_maps.h src/symbol/native_symbols.h \
 src/symbol/demangle.h src/unwind/user_unwind.h bpf/types.h
src/elf/elf_file.h:
src/proc/proc_maps.h:
src/symbol/native_symbols.h:
src/symbol/demangle.h:
src/unwind/user_unwind.h:
bpf/types.h:
