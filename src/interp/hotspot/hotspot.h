/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HotSpot (OpenJDK's JVM) on the host side:
 *
 *   - finds libjvm.so (the file exporting gHotSpotVMStructs and the entry
 *     layout symbols, inspected once per file) and, in each process mapping
 *     it, reads the JVM's self-description (hotspot_vm.h) and its code cache
 *     (heaps, segment maps, the interpreter) from the live process: the
 *     `jvm_procs` BPF entry (struct op_jvm_proc) and one code range the walk
 *     hands to hotspot_step() (OP_INTERP_RANGE_F_UNWINDS). A JVM not set up
 *     yet is asked again on the next maps read;
 *   - names Java frames: each (pid, Method*) read while the process lives
 *     (hotspot_method.h), checked against the ConstMethod the walker read,
 *     kept in the runtime's frame store, and trusted only for frames of the
 *     collection epoch it was read in (the JVM's collection count, which
 *     the walker puts in each frame): a class unloading frees its methods'
 *     memory for the next class only in a collection, so a name is read
 *     again in each new epoch, and a frame sampled before a collection that
 *     ran since is not named (hotspot.c: resolve_method()).
 */
#ifndef OMNIPROF_INTERP_HOTSPOT_H
#define OMNIPROF_INTERP_HOTSPOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interp/frame_store.h"
#include "interp/hotspot/hotspot_vm.h"
#include "interp/interp.h"
#include "omniprof/interp/hotspot_abi.h"
#include "util/hashmap.h"

struct hotspot_stats {
	uint64_t processes;   /* processes whose JVM was found and published */
	uint64_t not_ready;   /* attaches before the JVM had set up its tables or code cache */
	uint64_t unsupported; /* JVMs whose tables lack what the walker needs */
	uint64_t map_errors;  /* jvm_procs updates that failed */
	uint64_t methods;     /* methods (and stub names) read */
	uint64_t method_ns;   /* time spent reading them (the naming cost per new Method*) */
	uint64_t reused;      /* a Method* found holding another method */
	uint64_t errors;      /* methods that could not be read */
	uint64_t rechecked;   /* names read again after a collection, found the same */
	uint64_t raced;	      /* frames not named: a collection ran since their sample */
	uint64_t over_budget; /* frames not named: a byte budget was full */
	uint64_t redefinable; /* JVMs found able to redefine classes (safepoints in their epoch) */
	uint64_t unsure;      /* frames not named: classes redefinable, no safepoint count */
};

/*
 * Reads of a JVM's tables before it is given up, and the time they span at
 * least: a JVM is asked from the moment libjvm is mapped (every maps read
 * while its tables are built, about every 200 ms), and a loaded machine
 * stretches its start-up over seconds.
 */
#define HOTSPOT_MAX_TRIES  16
#define HOTSPOT_MIN_TRY_NS (30ull * 1000 * 1000 * 1000)

#define HOTSPOT_METHODS_PER_PROCESS 16384
#define HOTSPOT_BYTES_PER_PROCESS   (16u << 20)
#define HOTSPOT_BYTES_MAX	    (64u << 20)

/* libjvm.so: where its self-description symbols are (file vaddrs): inspect_file's data. */
struct hotspot_file {
	uint64_t sym[HS_SYM__COUNT];
	/*
	 * NMethodSweeper::_traversals (a long) in its .symtab, 0: none (a
	 * stripped libjvm, or JDK 20+ which has no sweeper): the code count of
	 * op_jvm_proc.code_count.
	 */
	uint64_t sweeper_traversals;
};

struct hotspot {
	struct file_cache *files;
	struct interp_env env;	    /* its memory reads (interp_env__memory) */
	int procs_fd;		    /* the jvm_procs BPF map, -1: none */
	struct hashmap procs;	    /* pid -> struct hotspot_proc */
	struct frame_store methods; /* struct hotspot_method */
	struct hotspot_stats stats;
	uint64_t raced_ns; /* when a frame was last refused for a collection since its sample */
	uint64_t bpf_stats[OP_JVM_STAT__COUNT];
	uint32_t last_gen; /* the last op_jvm_proc.gen given to a JVM image */
};

/* HotSpot's entry in the runtime registry (src/interp/registry.c). */
extern const struct interp_ops hotspot_interp_ops;

#endif
