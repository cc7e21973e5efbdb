/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every kind of frame a trace can hold, in one table: the value carried in
 * struct op_frame's kind (and enum profile_frame_kind), the OpenTelemetry
 * `profile.frame.type` an exporter sends (the values the semantic
 * conventions and the reference agent use), and the short display name
 * (frame_text__kind_name(), the flame graph's legend).
 *
 *   X(NAME, value, otlp_type, display_name)
 *
 * Values are dense, in order, and never reused: records and profiles carry
 * them. A runtime's frames get one row here; what the frame's payload means
 * is documented in that runtime's ABI header (omniprof/interp/<runtime>_abi.h)
 * and user space resolves and names them through src/interp/interp.h.
 * The unwinder's stop (ERROR) has no type of its own in the conventions:
 * as the reference agent marks an unfinished stack (an error frame of the
 * unwinder it stopped in, typed as that unwinder's frames), it is a
 * "native" frame whose function says why. Exporters type a native frame of
 * a Go binary "go" (they know the mapping's Go build id).
 */
#ifndef OMNIPROF_FRAME_KINDS_H
#define OMNIPROF_FRAME_KINDS_H

#define OP_FRAME_KINDS(X)                                                                          \
	X(NATIVE, 0, "native", "native")                                                           \
	X(KERNEL, 1, "kernel", "kernel")                                                           \
	X(ERROR, 2, "native", "error") /* the unwinder stopped: addr holds an op_unwind_error */   \
	X(PYTHON, 3, "cpython", "python") /* CPython: see omniprof/interp/python_abi.h */          \
	X(HOTSPOT, 4, "jvm", "java")	  /* HotSpot: see omniprof/interp/hotspot_abi.h */         \
	X(V8, 5, "v8js", "js")		  /* V8: see omniprof/interp/v8_abi.h */                   \
	X(RUBY, 6, "ruby", "ruby")	  /* CRuby: see omniprof/interp/ruby_abi.h */              \
	X(PERL, 7, "perl", "perl")	  /* Perl: see omniprof/interp/perl_abi.h */               \
	X(PHP, 8, "php", "php")		  /* PHP: see omniprof/interp/php_abi.h */

/*
 * The runtimes whose code the walk hands to their step (enum op_interp:
 * the id in the `interp_procs` ranges and src/interp/interp.h's ops),
 * one row per runtime:
 *
 *   X(NAME, value, step)
 *
 * step: the runtime's global BPF step function, defined in its kernel
 * header bpf/interp/<runtime>.bpf.h and called through bpf/interp_steps.h.
 * Values are dense from 1 (0 is OP_INTERP_NONE), in order, never reused.
 */
#define OP_INTERPS(X)                                                                              \
	X(PYTHON, 1, python_step)   /* CPython's eval loop */                                      \
	X(HOTSPOT, 2, hotspot_step) /* HotSpot's code cache */                                     \
	X(V8, 3, v8_step)	    /* V8's builtins and JIT code */                               \
	X(RUBY, 4, ruby_step)	    /* CRuby's VM loop (rb_vm_exec) */                             \
	X(PERL, 5, perl_step)	    /* Perl's runops loop */                                       \
	X(PHP, 6, php_step)	    /* the Zend VM (execute_ex) and OPcache's JIT code */

/* Generators for the enums built from the tables. */
#define OP_FRAME_KIND_ENUM(name, value, otlp, display)	   OP_FRAME_##name = value,
#define OP_FRAME_KIND_SIZE_ONE(name, value, otlp, display) char kind_##name[(value) + 1];
#define OP_INTERP_ENUM(name, value, step)		   OP_INTERP_##name = value,

/*
 * One more than the largest kind (values 0 .. OP_FRAME_KIND_COUNT - 1): the
 * size of a union of char[value + 1] per row, so a branch that holds some
 * runtimes' rows and not others (values given out ahead) still sizes its
 * tables right; a value with no row has no name.
 */
#define OP_FRAME_KIND_COUNT sizeof(union {OP_FRAME_KINDS(OP_FRAME_KIND_SIZE_ONE)})

/* How many rows the table has (tests: no two rows share a value). */
#define OP_FRAME_KIND_COUNT_ONE(name, value, otlp, display) +1
#define OP_FRAME_KIND_ROWS				    (0 OP_FRAME_KINDS(OP_FRAME_KIND_COUNT_ONE))

#endif
