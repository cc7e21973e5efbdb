build-m/obj/src/cli/session.o: src/cli/session.c src/cli/session.h \
 src/interp/python/python.h bpf/python_types.h src/util/hashmap.h \
 src/profile/collector.h src/elf/file_cache.h src/proc/process_table.h \
 src/profile/trace_table.h bpf/types.h src/unwind/stack_copy.h \
 src/sampler/sampler.h src/symbol/symbolizer.h src/symbol/debuginfo.h \
 src/symbol/native_symbols.h src/symbol/demangle.h \
 src/symbol/symbol_cache.h src/unwind/unwind_maps.h src/profile/profile.h \
 src/profile/profile_builder.h src/util/log.h
src/cli/session.h:
src/interp/python/python.h:
bpf/python_types.h:
src/util/hashmap.h:
src/profile/collector.h:
src/elf/file_cache.h:
src/proc/process_table.h:
src/profile/trace_table.h:
bpf/types.h:
src/unwind/stack_copy.h:
src/sampler/sampler.h:
src/symbol/symbolizer.h:
src/symbol/debuginfo.h:
src/symbol/native_symbols.h:
src/symbol/demangle.h:
src/symbol/symbol_cache.h:
src/unwind/unwind_maps.h:
src/profile/profile.h:
src/profile/profile_builder.h:
src/util/log.h:
